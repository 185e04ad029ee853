"""Every token of every request charged to what caused it.

A request's prompt tokens are split over its segments (segments.py) in proportion to their
estimated sizes, as whole tokens that add up to what the API reported. The split keeps the
prompt's order: the cache read covers its first tokens, the cache write the next, uncached
input the rest, so a tool result is charged a cache write once and cheap reads after that, in
every request it rode along in. Output tokens belong to the request alone. A request's cost
is shared out in proportion to each part's list price, so the parts add up to the request's
cost whatever the catalog's pricing rules.

Each token thus has exactly one request (turn) and model, at most one tool call (a result it
belongs to) and at most one sub-agent (the agent that sent the request).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from codeloop.models.catalog import cost_usd, model_info
from codeloop.system.valueclass import valueclass
from codeloop.types import Usage
from codeloop.usage.ledger import Request
from codeloop.usage.segments import Segment

TokenType = str  # "cache_read" | "cache_write" | "input" | "output"
TOKEN_TYPES: tuple[TokenType, ...] = ("input", "cache_read", "cache_write", "output")
# A request whose segments were not recorded: its prompt is charged to this kind.
UNRECORDED = "unrecorded"


@valueclass(slots=True)
class Part:
    """Tokens of one type, of one request, charged to one segment (or to the output)."""

    request: Request
    kind: str  # a segment kind, "output", or UNRECORDED
    type: TokenType
    tokens: int
    cost_usd: float
    segment: Segment | None = None

    @property
    def tool_use_id(self) -> str | None:
        return self.segment.tool_use_id if self.segment is not None else None


def parts(requests: Iterable[Request]) -> Iterator[Part]:
    for request in requests:
        yield from request_parts(request)


def request_parts(request: Request) -> Iterator[Part]:
    usage = request.usage
    pieces = list(_prompt_pieces(request))
    if usage.output_tokens:
        pieces.append(("output", None, "output", usage.output_tokens))
    info = model_info(request.model)
    prices = {
        "input": info.input_price,
        "cache_read": info.cache_read_price,
        "cache_write": info.cache_write_price,
        "output": info.output_price,
    }
    listed = sum(prices[kind] * tokens for _, _, kind, tokens in pieces)
    total = cost_usd(request.model, usage)
    for kind, segment, token_type, tokens in pieces:
        share = total * prices[token_type] * tokens / listed if listed else 0.0
        yield Part(request, kind, token_type, tokens, share, segment)


def _prompt_pieces(
    request: Request,
) -> Iterator[tuple[str, Segment | None, TokenType, int]]:
    usage = request.usage
    prompt = usage.context_tokens
    if not prompt:
        return
    segments = [s for s in request.segments or () if s.tokens > 0]
    sizes = _scaled([s.tokens for s in segments], prompt) if segments else []
    if not segments:
        yield from _split(UNRECORDED, None, 0, prompt, usage)
        return
    start = 0
    for segment, size in zip(segments, sizes, strict=True):
        yield from _split(segment.kind, segment, start, size, usage)
        start += size


def _split(
    kind: str, segment: Segment | None, start: int, size: int, usage: Usage
) -> Iterator[tuple[str, Segment | None, TokenType, int]]:
    """The tokens [start, start + size) of the prompt, by where they fall: read from the
    cache, written to it, or plain input."""
    read_end = usage.cache_read_input_tokens
    write_end = read_end + usage.cache_creation_input_tokens
    end = start + size
    for token_type, lo, hi in (
        ("cache_read", 0, read_end),
        ("cache_write", read_end, write_end),
        ("input", write_end, end),
    ):
        overlap = min(end, hi) - max(start, lo)
        if overlap > 0:
            yield kind, segment, token_type, overlap


def _scaled(estimates: list[int], total: int) -> list[int]:
    """Whole numbers in proportion to `estimates` that add up to `total` exactly (largest
    remainders get the leftover tokens)."""
    weight = sum(estimates)
    exact = [e * total / weight for e in estimates]
    sizes = [int(x) for x in exact]
    leftover = total - sum(sizes)
    by_remainder = sorted(range(len(exact)), key=lambda i: sizes[i] - exact[i])
    for i in by_remainder[:leftover]:
        sizes[i] += 1
    return sizes
