"""Measured costs of a user's schema on this host, kept so that the same command gives the same
numbers: a schema's fill traces and compile times, and this host's benchmark (the factor that
scales them to a profile's CPU), are measured once and read back afterwards. The benchmark runs
interleaved with the trace's replays, so that both see the host at the same speed (on a shared VM
the speed drifts by 10% between runs a minute apart; their ratio moves far less).

Keyed by what decides the measurement: the schema (canonical JSON) and its examples, the
tokenizer, the backend, and this host (CPU model, usable CPUs, the grammar libraries' versions,
Python). The folder is $MASKCOST_CACHE_DIR, else ~/.cache/maskcost; delete it to measure again.
"""
from __future__ import annotations

import hashlib
import json
import os
import statistics
from pathlib import Path
from typing import Any

from .backends import XGrammarBackend
from .fill import TraceResult, result_from_json, result_to_json, trace_schema
from .host import CACHE_VERSION, SpreadBench, cache_dir, host_key
from .schemas import TIERS, SchemaEntry

# a user's schema, traced for predict: fresh-matcher replays per output (median per position)
LOCAL_REPEATS = 7
# the grammars whose compile times carry a user schema's compile to a profile's host (local.py): the
# built-in tiers a profile calibrates on, all but the bounded tier (seconds to compile), each compiled
# cold this often
COMPILE_REFERENCE_TIERS = ("flat", "nested", "deep")
COMPILE_REFERENCE_REPEATS = 3


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None  # absent or cut short: measured again


def _write(path: Path, d: dict[str, Any]) -> None:
    """Atomically; a cache that cannot be written is only a cache (the numbers stand)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(d))
        tmp.replace(path)
    except OSError:
        pass


def cached_trace(backend_name: str, vocab, entry: SchemaEntry, get_backend,
                 separators: tuple[str, str] | None = None) -> tuple[TraceResult, float, bool]:
    """`trace_schema` of `entry` on the backend `get_backend()` gives (LOCAL_REPEATS fresh matchers per
    output) and this host's bench_us measured between its replays, from the cache when this host
    measured them before (then no backend is built: its import and set-up are seconds).
    Returns (result, bench_us, from_cache). A schema that fails is cached with its error. `separators`: those
    the backend replays outputs written with (make_backend), part of the key."""
    key = json.dumps({"cache": CACHE_VERSION, "host": host_key(), "backend": backend_name, "tokenizer": vocab.name,
                      "vocab_size": vocab.size, "schema": entry.schema, "examples": list(entry.examples),
                      "repeats": LOCAL_REPEATS, **({"separators": list(separators)} if separators else {})},
                     sort_keys=True)
    path = cache_dir() / "traces" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    d = _read(path)
    if d is not None:
        try:
            # the cache is keyed by the schema's content: the same schema under another id (file name) is
            # the same measurement, labelled with this entry's id
            return (result_from_json({**d, "schema_id": entry.schema_id}), float(d.get("bench_us") or 0.0),
                    True)
        except (KeyError, TypeError, ValueError):
            pass
    backend = get_backend()
    bench_be = backend if isinstance(backend, XGrammarBackend) else XGrammarBackend(vocab)
    bench = SpreadBench(vocab, every_s=0.0, least=0, be=bench_be)  # a round before every replay, their median
    r = trace_schema(backend, entry, repeats=LOCAL_REPEATS, before_replay=bench)
    here = bench.bench_us() if bench.rounds else 0.0
    _write(path, {**result_to_json(r, entry.schema_id, backend=backend.name), "bench_us": here,
                  "bench_runs": len(bench.rounds), "host": host_key()})
    return r, here, False


def cached_reference_compiles(backend_name: str, vocab, get_backend) -> dict[str, float]:
    """This host's cold compile of each COMPILE_REFERENCE_TIERS tier on the backend (the median of
    COMPILE_REFERENCE_REPEATS), by schema id, in ms: measured once a host, backend and tokenizer, then
    read back. local.py divides a profile's own compile of the same tiers by them: the factor that carries
    a compile to the profile's host (xgrammar compiles on 8 threads, which a single-thread bench misses)."""
    key = json.dumps({"cache": CACHE_VERSION, "host": host_key(), "backend": backend_name, "tokenizer": vocab.name,
                      "vocab_size": vocab.size, "tiers": COMPILE_REFERENCE_TIERS,
                      "repeats": COMPILE_REFERENCE_REPEATS}, sort_keys=True)
    path = cache_dir() / "compiles" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    d = _read(path)
    if isinstance(d, dict) and all(isinstance(v, (int, float)) for v in d.values()):
        return {k: float(v) for k, v in d.items()}  # ({}: no tier compiled here; local.py then uses the bench)
    backend = get_backend()
    out = {}
    for name in COMPILE_REFERENCE_TIERS:
        e = TIERS[name]
        try:
            out[e.schema_id] = statistics.median(backend.compile(e.schema, cache=False)[1]
                                                 for _ in range(COMPILE_REFERENCE_REPEATS))
        except Exception:  # noqa: BLE001 - a backend that cannot compile a tier: that tier gives no ratio
            continue
    _write(path, out)
    return out
