"""`codeloop`, above every face: the console script and `python -m codeloop` start here. It
picks the face the command line asks for (`codeloop batch ...`: the batch runner; `codeloop
acp`: the Agent Client Protocol agent, with the command line's flags; `codeloop serve` and
`codeloop web`: that agent over WebSocket, for browsers and programs; anything else: the
command line's own faces, codeloop.cli.main) and turns what escapes it into one line
and an exit status, never a traceback. A face is imported only once it is the one to run, so
start-up pays for that face alone."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from codeloop.errors import CodeloopError


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(sys.argv[1:] if argv is None else list(argv))
    except CodeloopError as exc:  # the user's to fix: one line, and its exit status
        print(f"codeloop: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:  # Ctrl+C before the run installed its own handler
        print("codeloop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (`codeloop ... | head`)
        sys.stderr.close()
        return 141
    except Exception as exc:  # a bug in codeloop: say so, and keep the details
        from codeloop.cli.bugs import report_bug

        print(report_bug(exc), file=sys.stderr)
        return 1


def _run(argv: list[str]) -> int:
    if argv[:1] == ["batch"]:
        from codeloop.batch.cli import run_batch

        return run_batch(argv[1:])
    if argv[:1] == ["acp"]:  # an editor drives codeloop over the Agent Client Protocol
        from codeloop.acp_agent.serve import run_acp
        from codeloop.cli.main import build_parser  # the same flags make the same session

        return run_acp(build_parser().parse_args(argv[1:]))
    if argv[:1] in (["serve"], ["web"]):  # browsers and programs, over ACP on WebSocket
        from codeloop.acp_agent.web.command import run_serve
        from codeloop.cli.main import build_parser

        return run_serve(argv[0], argv[1:], build_parser().parse_args([]))
    from codeloop.cli.main import run_cli
    from codeloop.system.collector import hold

    hold()  # until the session is built (Conversation.open): start-up makes little garbage
    return run_cli(argv)


if __name__ == "__main__":
    sys.exit(main())
