"""Per-position fill traces: replay an output token stream through a fresh matcher and time,
for every emitted token, the row's fill and the token's accept, as the engine does each step."""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

from .backends import Backend
from .profile import CompileCost, FillTrace
from .schemas import SchemaEntry


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


def trace_schema(backend: Backend, entry: SchemaEntry, texts: list[str] | None = None,
                 repeats: int = 3, max_traces: int = 1) -> TraceResult:
    """Compile once (cold, then warm) and replay up to `max_traces` outputs (the schema's examples
    unless `texts` are given); each position's time is the median over `repeats` fresh matchers
    (a fresh matcher per request, as the engine makes). Outputs the matcher rejects are skipped."""
    texts = texts if texts is not None else [output_text(x) for x in entry.examples]
    if not texts:
        return TraceResult((), None, "no output to replay (the schema has no example instances)")
    try:
        compiled, cold_ms = backend.compile(entry.schema, cache=False)
        backend.compile(entry.schema, cache=True)
        _, warm_ms = backend.compile(entry.schema, cache=True)
    except Exception as e:  # the backend's own words, one line
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        return TraceResult((), None, f"compile failed: {msg}")
    vocab = backend.vocab
    bitmask = backend.bitmask(1)
    last_error = "no output replayed"
    traces: list[FillTrace] = []
    for text in texts:
        if len(traces) >= max_traces:
            break
        tokens = vocab.encode(text) + [vocab.eos_id]
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
                                                  backend.memory_bytes(compiled)), None)
