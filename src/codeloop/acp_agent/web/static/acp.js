// An ACP (v1, JSON-RPC 2.0) client over the WebSocket at /acp of the page's own origin. It
// reconnects after a dropped socket (with a growing pause) and tells the page, which then
// loads its session again (the replay is the whole transcript: nothing lost, nothing twice).

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

export class RpcError extends Error {
  constructor(error) {
    super(error?.data?.message || error?.message || "request failed");
    this.code = error?.code;
  }
}

export class AcpClient {
  // handlers: onNotification(method, params), onRequest(method, params) -> result (or a
  // promise of it), onOpen() after every (re)connection, onStatus(text, state) as it changes.
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.nextId = 1;
    this.pending = new Map();
    this.retryMs = RETRY_FIRST_MS;
    this.socket = null;
    this.connect();
  }

  connect() {
    this.handlers.onStatus("connecting", "busy");
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retryMs = RETRY_FIRST_MS;
      this.handlers.onOpen();
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      for (const { reject } of this.pending.values()) {
        reject(new RpcError({ message: "the connection to codeloop was lost" }));
      }
      this.pending.clear();
      this.handlers.onStatus("disconnected: reconnecting…", "down");
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.socket?.readyState !== WebSocket.OPEN) {
        reject(new RpcError({ message: "not connected to codeloop" }));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method, params) {
    if (this.socket?.readyState === WebSocket.OPEN) this.send({ jsonrpc: "2.0", method, params });
  }

  send(message) {
    this.socket.send(JSON.stringify(message));
  }

  async receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return; // not JSON-RPC: nothing to answer
    }
    if (message.method === undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new RpcError(message.error));
      else waiting.resolve(message.result);
      return;
    }
    if (message.id === undefined) {
      this.handlers.onNotification(message.method, message.params);
      return;
    }
    try {
      const result = await this.handlers.onRequest(message.method, message.params);
      this.send({ jsonrpc: "2.0", id: message.id, result });
    } catch (error) {
      const code = error instanceof RpcError && error.code ? error.code : -32603;
      this.send({ jsonrpc: "2.0", id: message.id, error: { code, message: String(error.message) } });
    }
  }
}
