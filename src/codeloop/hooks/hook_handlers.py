"""Running one hook handler: a command (shell or exec form), an HTTP POST, or a prompt a model
judges. Each comes back as a `HookRun` whose exit code and output the runner folds exactly as
it folds a command's, so the three types share one output contract.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from codeloop.hooks.hook_config import HookCommand
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.procs import Finished, child_env, run_bounded
from codeloop.system.valueclass import valueclass

# Asks a model (None: the session's) one question and returns its text answer.
Judge = Callable[[str | None, str], Awaitable[str]]

_PLACEHOLDER = LazyPattern(r"\$\{(CLAUDE_PROJECT_DIR|CLAUDE_PLUGIN_ROOT|CLAUDE_PLUGIN_DATA)\}")
_HEADER_VAR = LazyPattern(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")

JUDGE_INSTRUCTIONS = (
    "You are evaluating a hook in a coding agent. Answer with one JSON object and nothing "
    'else: {"ok": true} to allow, or {"ok": false, "reason": "why"} to block'
    ' (add "impossible": true when the condition can never be met).'
)


@valueclass(slots=True)
class HookRun:
    """What one handler did."""

    command: str
    exit_code: int | None  # None: it timed out, or could not be started
    stdout: str
    stderr: str
    timed_out: bool = False


async def run_callback(hook: HookCommand, body: Mapping[str, Any], *, time_limit: float) -> HookRun:
    """A function hook: its answer is folded as a command's JSON output would be. One that
    raises, times out or answers something else decides nothing, or blocks with
    `on_failure="block"`; it never hangs the run."""
    assert hook.callback is not None
    try:
        answer = await asyncio.wait_for(hook.callback(dict(body)), time_limit)
    except TimeoutError:
        why = f"timed out after {time_limit:g} s"
    except Exception as exc:
        why = f"failed: {type(exc).__name__}: {exc}" if str(exc) else f"failed: {exc!r}"
    else:
        if isinstance(answer, Mapping):
            return HookRun(hook.label, 0, json.dumps(dict(answer), default=str), "")
        why = f"answered {type(answer).__name__}, not an object"
    if hook.on_failure == "block":
        return HookRun(hook.label, 2, "", f"hook callback {hook.label} {why}")
    return HookRun(hook.label, None, "", why, why.startswith("timed out"))


@valueclass
class HttpPolicy:
    """`allowedHttpHookUrls` and `httpHookAllowedEnvVars` from the settings (None: unset)."""

    urls: tuple[str, ...] | None = None
    env_vars: tuple[str, ...] | None = None


async def run_command(
    hook: HookCommand,
    stdin: bytes,
    *,
    time_limit: float,
    cwd: Path,
    env: Mapping[str, str],
) -> HookRun:
    """Shell form (`sh -c command`) or, with `args`, exec form: no shell, placeholders
    substituted as plain strings."""
    label = hook.label
    target: str | list[str] = hook.command
    if hook.args is not None:
        import shutil  # with its compression modules: only for exec-form hooks

        program = _substitute(hook.command, env)
        resolved = shutil.which(program, path=env.get("PATH")) or program
        target = [resolved, *(_substitute(a, env) for a in hook.args)]
    try:
        done: Finished = await run_bounded(
            target, time_limit=time_limit, cwd=cwd, env=env, stdin=stdin
        )
    except OSError as exc:
        return HookRun(label, None, "", f"could not start: {exc}")
    if done.timed_out:
        return HookRun(label, None, "", f"timed out after {time_limit:g} s", True)
    return HookRun(label, done.returncode, done.stdout, done.stderr)


async def run_http(
    hook: HookCommand,
    body: bytes,
    *,
    time_limit: float,
    env: Mapping[str, str],
    policy: HttpPolicy,
) -> HookRun:
    """POST the input; a 2xx JSON object is the hook's answer, anything else a non-blocking
    error (HTTP hooks cannot block by status alone)."""
    import httpx

    label = hook.url
    if policy.urls is not None and not any(_url_matches(p, hook.url) for p in policy.urls):
        return HookRun(label, 1, "", "the URL is not in allowedHttpHookUrls; not sent")
    allowed = set(hook.allowed_env_vars)
    if policy.env_vars is not None:
        allowed &= set(policy.env_vars)

    def interpolate(value: str) -> str:
        return _HEADER_VAR.sub(
            lambda m: env.get(m.group(1), "") if m.group(1) in allowed else "", value
        )

    headers = {"Content-Type": "application/json"}
    headers |= {name: interpolate(value).strip() for name, value in hook.headers.items()}
    try:
        async with httpx.AsyncClient(timeout=time_limit, trust_env=False) as client:
            response = await client.post(hook.url, content=body, headers=headers)
    except httpx.TimeoutException:
        return HookRun(label, None, "", f"timed out after {time_limit:g} s", True)
    except httpx.HTTPError as exc:
        return HookRun(label, 1, "", f"request failed: {exc}")
    text = response.text
    if not 200 <= response.status_code < 300:
        return HookRun(label, 1, "", f"HTTP {response.status_code}: {text[:200]}")
    if text.strip() and not text.lstrip().startswith("{"):
        return HookRun(label, 1, "", f"the response is not a JSON object: {text[:200]}")
    return HookRun(label, 0, text, "")


async def run_prompt(hook: HookCommand, payload: Mapping[str, Any], judge: Judge | None) -> HookRun:
    """Ask the model; its `{"ok": ..., "reason": ...}` answer becomes the hook's JSON output
    (`_prompt_verdict`, read by the runner)."""
    label = hook.label
    if judge is None:
        return HookRun(label, 1, "", "prompt hooks need a model, and this session has none")
    arguments = json.dumps(payload, ensure_ascii=False)
    if "$ARGUMENTS" in hook.prompt:
        text = re.sub(r"(?<!\\)\$ARGUMENTS", lambda _: arguments, hook.prompt)
    else:
        text = f"{hook.prompt}\n\n{arguments}"
    text = text.replace("\\$", "$")
    try:
        answer = await judge(hook.model, f"{JUDGE_INSTRUCTIONS}\n\n{text}")
    except Exception as exc:  # a failing judge is a hook error, never a crash
        return HookRun(label, 1, "", f"the model could not judge: {exc}")
    verdict = parse_verdict(answer)
    if verdict is None:
        return HookRun(label, 1, "", f"the model's answer is not a verdict: {answer[:200]}")
    return HookRun(label, 0, json.dumps({"_prompt_verdict": verdict}), "")


def parse_verdict(answer: str) -> dict[str, Any] | None:
    """The first JSON object in a model's answer with a boolean `ok` (prompt hooks' and the
    auto-mode classifier's verdict); None when there is none."""
    for match in re.finditer(r"\{.*\}", answer, re.DOTALL):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("ok"), bool):
            return data
    return None


def _substitute(text: str, env: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: env.get(m.group(1), m.group(0)), text)


def _url_matches(pattern: str, url: str) -> bool:
    """`*` is a wildcard; the host compares case-insensitively, a trailing dot ignored."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".").lower()
    port = f":{parts.port}" if parts.port else ""
    normal = f"{parts.scheme}://{host}{port}{parts.path or ''}"
    if parts.query:
        normal += f"?{parts.query}"
    return fnmatch.fnmatchcase(normal, pattern.lower()) or fnmatch.fnmatchcase(url, pattern)


def hook_env(
    base: Mapping[str, str], hook: HookCommand, extra: Mapping[str, str]
) -> dict[str, str]:
    env = {**child_env(base), **extra}
    if hook.plugin_root is not None:
        env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
    if hook.plugin_data is not None:
        env["CLAUDE_PLUGIN_DATA"] = str(hook.plugin_data)
    env.pop("CLAUDECODE", None)
    return env


def ensure_file(path: Path) -> None:
    """The CLAUDE_ENV_FILE a hook appends to exists before it runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.touch()
        os.chmod(path, 0o600)


def model_judge(
    call_model: Any,
    default_model: str,
    on_request: Callable[[Any], None] | None = None,
) -> Judge:
    """A Judge asking the session's model (or a hook's `model`) one question, no tools;
    `on_request` gets each request's RequestEnd (what it sent and cost: the session counts
    it, records it and tells its observers)."""

    async def judge(model: str | None, text: str) -> str:
        import time

        from codeloop.events import RequestEnd
        from codeloop.models.assembler import MessageAssembler
        from codeloop.models.base import ModelRequest
        from codeloop.types import Message, TextBlock

        request = ModelRequest(
            model=model or default_model, messages=(Message.user(text),), max_tokens=1024
        )
        assembler = MessageAssembler()
        started = time.monotonic()
        async for event in call_model(request):
            assembler.feed(event)
        if on_request is not None:
            elapsed = (time.monotonic() - started) * 1000
            on_request(RequestEnd(request, 0, 1, assembler.usage, elapsed, purpose="hook"))
        return "".join(b.text for b in assembler.blocks if isinstance(b, TextBlock))

    return judge
