"""One model request answered whole, under the loop's own retry policy, watchdog and fallback:
for the calls that need no block-by-block view (the compaction's summary, a tool's side
question).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import field, replace
from typing import Any

from codeloop.events import Event, Notice, RequestEnd, Retrying
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    ModelError,
    ModelRequest,
    Overloaded,
    StreamEvent,
    StreamIdle,
    Transient,
    describe,
)
from codeloop.models.retry import Attempts, Fallback, GiveUp, RetryPolicy
from codeloop.system.aio import Aborted, IdleTimeout, Stalled, unless_aborted, watched
from codeloop.system.valueclass import valueclass
from codeloop.types import Usage

CallModel = Callable[[ModelRequest], AsyncIterator[StreamEvent]]
Sleep = Callable[[float], Awaitable[None]]


@valueclass(frozen=False)
class Completion:
    assembler: MessageAssembler
    model: str  # the model that answered: the fallback, after a switch
    usage: Usage = field(default_factory=Usage)  # every attempt's, failed ones' included
    error: ModelError | None = None  # the last failure, when no try succeeded
    aborted: bool = False
    # Each attempt's RequestEnd (what it cost), retries and switches, for the user and the
    # usage ledger.
    events: list[Event] = field(default_factory=list)


async def complete(
    call_model: CallModel,
    request: ModelRequest,
    policy: RetryPolicy,
    *,
    fallback_model: str | None = None,
    abort: asyncio.Event | None = None,
    sleep: Sleep = asyncio.sleep,
    prompt_tokens: int = 0,
    stream: bool = True,
) -> Completion:
    """Send `request` until it is answered whole, the policy gives up, or `abort` fires;
    `stream=False` asks for the answer in one piece (a short side answer: one read, not an
    event per block)."""
    abort = abort or asyncio.Event()
    attempts = Attempts(policy, fallback_model)
    done = Completion(MessageAssembler(), request.model)
    while True:
        number = attempts.begin()
        done.assembler = MessageAssembler()
        sent = replace(request, model=done.model, stream=stream and not attempts.non_streaming)
        limiter = policy.limiter
        if limiter is not None and not await unless_aborted(limiter.wait(), abort):
            done.aborted = True
            return done
        started = time.monotonic()
        error = await _attempt(call_model, sent, policy, abort, done, prompt_tokens)
        done.usage = done.usage + done.assembler.usage
        done.events.append(
            RequestEnd(
                sent,
                0,
                number,
                done.assembler.usage,
                (time.monotonic() - started) * 1000,
                done.assembler.id,
                describe(error) if error is not None else None,
                error.status if error is not None else None,
                purpose="summary",
            )
        )
        if error is None or done.aborted:
            return done
        step = attempts.after(error)
        if isinstance(step, GiveUp):
            done.error = error
            return done
        if isinstance(step, Fallback):
            switched = attempts.fallback_model or done.model
            done.events.append(
                Notice("warning", f"{done.model} is {step.reason}; switching to {switched}")
            )
            done.model, attempts = switched, Attempts(policy)
            continue
        wait = step.wait
        if limiter is not None and isinstance(error, Overloaded):
            await limiter.hold(wait)  # the quota is shared: every session sharing it waits
        done.events.append(
            Retrying(number, policy.max_attempts, wait, describe(error), error.status)
        )
        if not await unless_aborted(sleep(wait), abort):
            done.aborted = True
            return done


async def _attempt(
    call_model: CallModel,
    request: ModelRequest,
    policy: RetryPolicy,
    abort: asyncio.Event,
    done: Completion,
    prompt_tokens: int,
) -> ModelError | None:
    source = call_model(request)
    first = policy.first_wait(prompt_tokens)
    try:
        async for event in watched(source, abort, policy.idle_timeout, first):
            if not isinstance(event, Stalled):
                done.assembler.feed(event)
    except Aborted:
        done.aborted = True
    except IdleTimeout as exc:
        return StreamIdle(f"the stream stalled: {exc}")
    except ModelError as exc:
        return exc
    except ValueError as exc:  # a malformed stream: worth another try, like a cut one
        return Transient(f"the response was malformed: {exc}")
    return None


@valueclass(frozen=False)
class QuickModel:
    """One question to a model, no tools, answered whole under the session's retry policy:
    the side questions tools ask (WebFetch's prompt about a page). `on_usage` hears what each
    answer cost (the session counts it); a failure that survives the retries raises."""

    call_model: CallModel
    model: str
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    on_usage: Callable[[str, Usage], None] | None = None
    # False: each answer comes in one piece (the side requests', which Claude Code sends
    # without streaming too).
    stream: bool = True

    async def ask(
        self,
        prompt: str,
        *,
        system: str,
        max_tokens: int = 2048,
        server_tools: tuple[Mapping[str, Any], ...] = (),
    ) -> str:
        """`server_tools`: the provider's own tools (Anthropic's web search), run on its side."""
        from codeloop.types import Message, TextBlock

        request = ModelRequest(
            model=self.model,
            messages=(Message.user(prompt),),
            system=system,
            max_tokens=max_tokens,
            extra={"tools": [dict(t) for t in server_tools]} if server_tools else {},
        )
        done = await complete(self.call_model, request, self.policy, stream=self.stream)
        if self.on_usage is not None:
            self.on_usage(done.model, done.usage)
        if done.error is not None:
            raise done.error
        return "".join(b.text for b in done.assembler.blocks if isinstance(b, TextBlock))
