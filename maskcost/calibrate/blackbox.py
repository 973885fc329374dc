"""Black-box calibration: the grammar's cost measured through the engine itself.

For an engine whose grammar code maskcost cannot call (llama.cpp's GBNF sampler), run the
schema-on and schema-off arms of the same server at a few low concurrencies. With the step
structure of that engine (llama.cpp: decode, then each slot sampled in turn on the server
thread), the extra inter-token latency per constrained row is the grammar's cost per row:
    ITL_on - ITL_off = step_us + running_on x row_us   (fitted over the calibration concurrencies)
and the extra time to first token at the lowest concurrency is the per-request grammar build.
On vLLM the same numbers are an upper-bound cross-check of the library-measured traces (there
the fill overlaps the forward, so the subtraction is exact only where the fill is exposed).
"""
from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

from ..records import SweepSummary, itl_ms, raw_records_path, read_raw_records
from ..profile import ApplyCost, ApplyPoint, BackendCosts, BlackboxCost, BlackboxPoint, Profile


def output_tokens_by_schema(raw_path: Path, keep: int = 256) -> dict[str, tuple[int, ...]]:
    """Completion lengths per schema of the error-free requests of a schema-on raw file (the first
    `keep`): the model draws each simulated request's length from them."""
    by: dict[str, list[int]] = {}
    for r in read_raw_records(raw_path, "black-box calibration"):
        if r.get("schema_id") and not r.get("error") and r.get("completion_tokens"):
            by.setdefault(r["schema_id"], []).append(int(r["completion_tokens"]))
    return {k: tuple(v[:keep]) for k, v in sorted(by.items())}


def blackbox_from_sweeps(on: list[SweepSummary], off: list[SweepSummary], output_tokens: dict[str, tuple[int, ...]],
                         method: str) -> BlackboxCost:
    offs: dict[int, list[SweepSummary]] = {}
    for s in off:
        if s.arm == "off":
            offs.setdefault(s.concurrency, []).append(s)
    pts = []
    for s in sorted((s for s in on if s.arm == "on"), key=lambda s: (s.concurrency, s.repeat)):
        c = s.concurrency
        if c not in offs:
            raise ValueError(f"black-box calibration: schema-on point {s.point} has no schema-off point at "
                             f"concurrency {c}")
        i_on, running = itl_ms(s), s.engine.running_mean
        # the schema-off twin measured next to it (same repeat) where there is one: a disturbance
        # of the machine then hits both arms
        twins = [o for o in offs[c] if o.repeat == s.repeat] or offs[c]
        i_off = statistics.mean(x for x in (itl_ms(o) for o in twins) if x is not None)
        t_off = statistics.mean(o.ttft_ms_p50 for o in twins)
        if i_on is None or not running:
            raise ValueError(f"black-box calibration: point {s.point} has no ITL or running count")
        pts.append(BlackboxPoint(c, running, i_on, i_off, s.ttft_ms_p50, t_off,
                                 max(0.0, (i_on - i_off) / running * 1e3)))
    if not pts:
        raise ValueError("black-box calibration: no schema-on points")
    low = min(p.concurrency for p in pts)
    # repeats of one concurrency: the least disturbed (noise on a shared CPU only adds time, the
    # rule timeit documents); then the grammar time per step, (ITL on - ITL off), against the
    # constrained rows: step_us + rows x row_us, least squares over the concurrencies. The cost per
    # row falls with the rows sampled together (caches stay warm), which a fixed step part absorbs.
    best: dict[int, BlackboxPoint] = {}
    for p in pts:
        if p.concurrency not in best or p.row_us < best[p.concurrency].row_us:
            best[p.concurrency] = p
    rows = np.array([p.running for p in best.values()])
    extra_us = np.array([max(0.0, p.itl_on_ms - p.itl_off_ms) * 1e3 for p in best.values()])
    step_us, row_us = 0.0, float(extra_us @ rows / (rows @ rows))
    if len(best) > 1:
        slope, icpt = np.polyfit(rows, extra_us, 1)
        if icpt >= 0 and slope > 0:
            step_us, row_us = float(icpt), float(slope)
    # the first token is itself a constrained step: what is left is the grammar build
    launch = statistics.median(max(0.0, p.ttft_on_ms - p.ttft_off_ms - (step_us + row_us) / 1e3) for p in pts
                               if p.concurrency == low)
    return BlackboxCost(method, row_us, launch, output_tokens, tuple(pts), step_us)


def blackbox_method(on: list[SweepSummary], on_path: Path, note: str | None) -> str:
    srv = on[0].provenance["server"]
    return (f"black box: schema-on sweep {on_path.name} minus schema-off sweep of the same server "
            f"({srv.get('base_url')}, version {srv.get('version')}), at concurrency "
            f"{sorted({s.concurrency for s in on})}; row_us = (ITL on - ITL off) / running. {note or ''}").strip()


def blackbox_profile(name: str, on: list[SweepSummary], off: list[SweepSummary], on_path: Path, tokenizer: str,
                     backend: str, command: list[str], notes: list[str], note: str | None = None) -> Profile:
    """A profile for an engine known only through its API: forward curve from the schema-off arm,
    grammar cost per row and per request from on minus off, host fingerprint of this machine."""
    from .engine import forward_from_summaries
    from .host import host_info
    from .run import build_profile
    from .tokenizer import load_vocab
    bb = blackbox_from_sweeps(on, off, output_tokens_by_schema(raw_records_path(on_path)),
                              blackbox_method(on, on_path, note))
    srv = on[0].provenance["server"]
    vocab = load_vocab(tokenizer)
    fw = forward_from_summaries(off, f"schema-off sweep of {srv.get('base_url')} (version {srv.get('version')}); "
                                     f"itl_ms = the engine's ITL histogram, or the client's per-token ITL where the "
                                     f"engine has none. {note or ''}".strip())
    apply = ApplyCost("none: the engine applies the grammar inside sampling on the CPU (counted in row_us)",
                      (ApplyPoint(1, 0.0),))
    return build_profile(name, vocab, host_info(vocab), {backend: BackendCosts((), (), (), (), bb)}, fw, apply,
                         command, notes)
