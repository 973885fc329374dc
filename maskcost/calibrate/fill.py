"""Per-position fill traces: replay an output token stream through a fresh matcher and time,
for every emitted token, the row's fill and the token's accept, as the engine does each step."""
from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

from .backends import Backend
from .profile import CompileCost, FillTrace
from .schemas import SchemaEntry, unique_schema


def output_text(instance: Any) -> str:
    """An instance as the server writes it with disable_any_whitespace: ', ' and ': ' separators."""
    return json.dumps(instance, ensure_ascii=False)


@dataclass(frozen=True)
class TraceResult:
    traces: tuple[FillTrace, ...]  # one per replayed output; empty on error
    compile: CompileCost | None
    error: str | None


def _replay(backend: Backend, compiled: Any, tokens: list[int], bitmask) -> tuple[list[float], list[float]]:
    m = backend.matcher(compiled)
    fill_us, accept_us = [], []
    clock = time.perf_counter_ns
    for i, tok in enumerate(tokens):
        t0 = clock()
        backend.fill(m, bitmask, 0)
        t1 = clock()
        ok = backend.accept(m, tok)
        t2 = clock()
        if not ok:
            raise ValueError(f"the matcher rejected token {i} ({backend.vocab.tokens[tok]!r}) of the output")
        fill_us.append((t1 - t0) / 1e3)
        accept_us.append((t2 - t1) / 1e3)
    return fill_us, accept_us


def sample_under_mask(backend: Backend, compiled: Any, seed: int, max_tokens: int = 256,
                      p_stop: float = 0.5) -> list[int]:
    """A token stream drawn under the grammar's own mask with a seeded RNG: a uniform pick among
    the allowed tokens (what a random-weight model does under a grammar), EOS with probability
    p_stop whenever the grammar allows it; cut at max_tokens (unbounded strings never close)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    m, bm, size, eos = backend.matcher(compiled), backend.bitmask(1), backend.vocab.size, backend.vocab.eos_id
    out: list[int] = []
    for _ in range(max_tokens):
        backend.fill(m, bm, 0)
        allowed = np.unpackbits(bm[0].numpy().view(np.uint8), bitorder="little")[:size]
        ids = np.flatnonzero(allowed)
        if ids.size == 0:
            break
        tok = eos if allowed[eos] and rng.random() < p_stop else int(rng.choice(ids))
        if not backend.accept(m, tok):
            break
        out.append(tok)
        if tok == eos:
            break
    return out


def trace_schema(backend: Backend, entry: SchemaEntry, texts: list[str] | None = None,
                 repeats: int = 3, max_traces: int = 1, sampled: int = 0, seed: int = 0) -> TraceResult:
    """Compile once (cold, then warm) and replay up to `max_traces` outputs: `texts` if given, else
    `sampled` token streams drawn under the mask (seeded), else the schema's examples. Each
    position's time is the median over `repeats` fresh matchers (a fresh matcher per request, as
    the engine makes). Outputs the matcher rejects are skipped."""
    texts = texts if texts is not None else ([] if sampled else [output_text(x) for x in entry.examples])
    if not texts and not sampled:
        return TraceResult((), None, "no output to replay (the schema has no example instances)")
    try:
        compiled, cold_ms = backend.compile(entry.schema, cache=False)
        backend.compile(entry.schema, cache=True)
        _, warm_ms = backend.compile(entry.schema, cache=True)
        # near-identical schemas (unique-schema traffic) on the compiler that has seen this one
        rng = random.Random(f"variant-{entry.schema_id}")
        variant_ms = statistics.median(backend.compile(unique_schema(entry.schema, rng), cache=True)[1]
                                       for _ in range(3))
    except Exception as e:  # the backend's own words, one line
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        return TraceResult((), None, f"compile failed: {msg}")
    vocab = backend.vocab
    bitmask = backend.bitmask(1)
    last_error = "no output replayed"
    traces: list[FillTrace] = []
    streams = [vocab.encode(t) + [vocab.eos_id] for t in texts] or \
        [sample_under_mask(backend, compiled, seed * 7919 + i) for i in range(sampled)]
    for tokens in streams:
        if len(traces) >= max_traces:
            break
        if not tokens:
            continue
        try:
            runs = [_replay(backend, compiled, tokens, bitmask) for _ in range(repeats)]
        except ValueError as e:
            last_error = f"replay failed: {e}"
            continue
        fill = [statistics.median(r[0][i] for r in runs) for i in range(len(tokens))]
        acc = [statistics.median(r[1][i] for r in runs) for i in range(len(tokens))]
        strad = [t in vocab.straddle_ids for t in tokens]
        traces.append(FillTrace(entry.schema_id, tuple(fill), tuple(acc), tuple(strad)))
    if not traces:
        return TraceResult((), None, last_error)
    return TraceResult(tuple(traces), CompileCost(entry.schema_id, cold_ms, warm_ms,
                                                  backend.memory_bytes(compiled), variant_ms), None)
