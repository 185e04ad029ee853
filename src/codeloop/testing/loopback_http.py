"""The threaded HTTP server under the local test servers (web pages, OTLP): 127.0.0.1 on a
free port, served from a daemon thread between `start()` and `stop()`. A handler reaches the
object it serves for as `self.server.owner`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Generic, TypeVar

Owner = TypeVar("Owner")


class OwnedServer(ThreadingHTTPServer, Generic[Owner]):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], owner: Owner) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.owner = owner


class LoopbackHttp(Generic[Owner]):
    def __init__(self, handler: type[BaseHTTPRequestHandler], owner: Owner) -> None:
        self.httpd = OwnedServer(handler, owner)
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()
