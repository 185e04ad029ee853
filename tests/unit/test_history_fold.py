"""What is kept as a history grows equals what a scan of the whole history finds, after any
sequence of appends, compactions, resumes, rewinds and folds of old results."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.context.microcompact import KeepRecent, SettledPrefix, microcompact
from codeloop.context.tokens import HistoryTokens, estimate_messages
from codeloop.history_fold import HistoryFold, shared_prefix
from codeloop.models import openai, responses
from codeloop.models.anthropic import encode_body, encoded_messages, encoded_prompt, request_body
from codeloop.models.base import ModelRequest, ToolSpec
from codeloop.models.shaping import HistoryScans, has_images
from codeloop.models.thinking import prompt_effort
from codeloop.types import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    message_from_dict,
    message_to_dict,
)

PROMPTS = ("fix it", "think hard about it", "ultrathink", "日本語のテスト")


def appended(kind: int, n: int) -> tuple[Message, ...]:
    """One step of a session: a prompt, a tool round (small, big or an image), a reminder."""
    call = ToolUseBlock(f"t{n}", "Read", {"file_path": f"/src/f{n % 3}.py"})
    match kind % 6:
        case 0:
            return (Message.user(PROMPTS[n % len(PROMPTS)]),)
        case 1 | 2:
            text = "line of output\n" * (20 if kind == 1 else 900)
            result = ToolResultBlock(f"t{n}", text)
            return Message("assistant", (TextBlock("Reading."), call)), Message("user", (result,))
        case 3:
            image = ToolResultBlock(f"t{n}", (ImageBlock("image/png", "iVBORw0KGgo="),))
            return Message("assistant", (call,)), Message("user", (image,))
        case 4:  # an answer whose breakpoint cannot go on its last block
            blocks = (TextBlock("Done."), ThinkingBlock("hm", "sig"), TextBlock(""))
            return (Message("assistant", blocks),)
        case _:
            return (Message.user("<system-reminder>ok</system-reminder>", is_meta=True),)


def step(history: tuple[Message, ...], op: tuple[str, int], n: int) -> tuple[Message, ...]:
    name, arg = op
    if name == "append":
        return (*history, *appended(arg, n))
    if name == "rewind":
        return history[: arg % (len(history) + 1)]
    if name == "compact":  # a summary, then the latest messages as new objects
        kept = [read_back(m) for m in history[-(arg % 4) :]]
        return (Message.user("Summary of the conversation so far.", is_meta=True), *kept)
    if name == "resume":  # every message read back from its transcript: equal, not the same
        return tuple(read_back(m) for m in history)
    if not history:  # fold: one old message replaced (microcompact, a media strip)
        return history
    i = arg % len(history)
    return (*history[:i], replace(history[i], content=(TextBlock("[Folded]"),)), *history[i + 1 :])


def read_back(message: Message) -> Message:
    """The message as a transcript gives it back: equal, a new object."""
    copy = message_from_dict(message_to_dict(message))
    return replace(copy, uuid=message.uuid, is_meta=message.is_meta)


OPS = st.lists(
    st.tuples(
        st.sampled_from(("append", "append", "append", "rewind", "compact", "resume", "fold")),
        st.integers(0, 50),
    ),
    max_size=40,
)


SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = (ToolSpec("Read", "Read a file.", SCHEMA), ToolSpec("Bash", "Run a command.", SCHEMA))
# What a request repeats around its history: the same objects, equal copies, other ones.
PROMPTS_AROUND = (
    ("sys", TOOLS),
    ("sys", (ToolSpec("Read", "Read a file.", dict(SCHEMA)), TOOLS[1])),
    ("sys", TOOLS[:1]),
    ("", TOOLS),
    ("other system prompt", ()),
)


@settings(max_examples=150, deadline=None)
@given(OPS, st.lists(st.integers(0, len(PROMPTS_AROUND) - 1), min_size=1))
def test_kept_state_equals_a_scan_from_scratch(
    ops: list[tuple[str, int]], around: list[int]
) -> None:
    tokens = HistoryTokens()
    scans = HistoryScans.kept()
    encoded, prompt = encoded_messages(), encoded_prompt()
    chat_encoded, chat_prompt = openai.encoded_messages(), openai.encoded_prompt()
    items_encoded, items_prompt = responses.encoded_items(), responses.encoded_prompt()
    history: tuple[Message, ...] = ()
    for n, op in enumerate(ops):
        history = step(history, op, n)
        assert tokens(history) == estimate_messages(history)
        assert scans.effort(history) == prompt_effort(history)
        assert scans.images(history) == has_images(history)
        system, tools = PROMPTS_AROUND[around[n % len(around)]]
        request = ModelRequest("claude-sonnet-4-5", history, system=system, tools=tools)
        wire = json.loads(encode_body(request, encoded.each, prompt))
        assert wire == request_body(request) | {"stream": True}
        chat = json.loads(openai.encode_body(request, "max_tokens", chat_encoded.each, chat_prompt))
        assert chat == openai.request_body(request) | openai.STREAMING
        items = json.loads(responses.encode_body(request, items_encoded.each, items_prompt))
        assert items == responses.request_body(request) | {"stream": True}


def test_a_fold_redoes_only_what_follows_the_shared_prefix() -> None:
    seen: list[Message] = []

    def count(total: int, message: Message) -> int:
        seen.append(message)
        return total + 1

    fold = HistoryFold(0, count)
    history = tuple(Message.user(str(i)) for i in range(5))
    assert fold(history) == 5 and len(seen) == 5
    longer = (*history, Message.user("5"))
    assert fold(longer) == 6 and seen[5:] == [longer[5]]
    assert fold(longer[:3]) == 3 and len(seen) == 6  # a rewind: nothing redone
    changed = (*longer[:2], Message.user("new"), *longer[3:])
    assert fold(changed) == 6 and seen[6:] == list(changed[2:])


def test_shared_prefix_counts_equal_messages() -> None:
    a = Message.user("x")
    b = replace(a)
    c = Message.user("y")
    assert a == b and a is not b
    assert shared_prefix((a, a), (a, b)) == 2
    assert shared_prefix((a, c, a), (a, b, a)) == 1
    assert shared_prefix((a,), (a, a)) == 1
    assert shared_prefix((), (a,)) == 0
    history = tuple(Message.user(str(i)) for i in range(100))
    for i in (0, 1, 37, 98, 99):  # one message replaced, wherever it is
        changed = (*history[:i], c, *history[i + 1 :])
        assert shared_prefix(changed, history) == shared_prefix(history, changed) == i
    assert shared_prefix(history, list(history[:60])) == 60  # any sequence


def tool_round(kind: int, n: int) -> tuple[Message, ...]:
    """A call and its result: a Read (small or big) or a Write, of one of three files."""
    path = f"/src/f{n % 3}.py"
    if kind == 2:
        call = ToolUseBlock(f"w{n}", "Write", {"file_path": path, "content": "x"})
        return Message("assistant", (call,)), Message("user", (ToolResultBlock(f"w{n}", "ok"),))
    call = ToolUseBlock(f"r{n}", "Read", {"file_path": path})
    result = ToolResultBlock(f"r{n}", "a line of the file\n" * (10 if kind == 0 else 400))
    return Message("assistant", (TextBlock("Reading."), call)), Message("user", (result,))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("round", "round", "round", "fold", "rewind", "resume", "compact")),
            st.integers(0, 3),
            st.integers(0, 30_000),
        ),
        max_size=50,
    ),
    st.integers(0, 4),
)
def test_microcompact_after_the_settled_prefix_folds_what_a_full_scan_folds(
    ops: list[tuple[str, int, int]], keep_turns: int
) -> None:
    """Folding moves the settled prefix forward, a rewind, resume or compaction moves it back:
    at every step, microcompact from it folds exactly what microcompact over the whole history
    does (the latest result, not answered yet, is never folded)."""
    keep = KeepRecent(keep_turns, 2_000)
    settled = SettledPrefix()
    history: tuple[Message, ...] = (Message.user("go"),)
    for n, (op, kind, need) in enumerate(ops):
        if op == "round":
            history = (*history, *tool_round(kind % 3, n))
        elif op == "rewind":
            history = history[: max(1, len(history) - kind * 2)]
        elif op == "resume":
            history = tuple(read_back(m) for m in history)
        elif op == "compact":  # a summary, then the latest rounds as new objects
            kept = [read_back(m) for m in history[1:][-kind * 2 :]] if kind else []
            history = (Message.user("Summary of the conversation so far.", is_meta=True), *kept)
        else:
            expected = microcompact(history, need, keep)
            history, folded = microcompact(history, need, keep, settled(history))
            assert (history, folded) == expected
