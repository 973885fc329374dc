"""What a simulated point reports, measured the way `maskcost sweep` measures a live server: over
the window in which the offered load is held (after a short ramp-up, until the last request is
sent), per-token ITL, TTFT of every request, output tokens per second, the engine's running
batch, and the mean per-step time breakdown."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from .step import STEP_FIELDS

if TYPE_CHECKING:  # annotations only: the simulation imports this module
    from .engine import Simulation

RAMP_FRACTION = 0.1  # the first 10% of the window is ramp-up
# the bitmask's host-to-device link: PCIe 5.0 x16, one direction (the H200's host link; an SXM board's
# NVLink-C2C host link on Grace is faster): what bitmask_h2d_link_fraction divides by
H2D_LINK_BYTES_PER_S = 64e9


def _pct(a: np.ndarray, w: np.ndarray | None, q: float) -> float | None:
    if a.size == 0:
        return None
    if w is None:
        return float(np.percentile(a, q))
    order = np.argsort(a)
    cw = np.cumsum(w[order])
    return float(a[order][np.searchsorted(cw, q / 100.0 * cw[-1])])


ITL_BATCHES = 20  # batch means for the ITL mean's confidence interval


def itl_ci95_ms(itl: np.ndarray, w: np.ndarray, batches: int = ITL_BATCHES) -> float | None:
    """Half-width of the 95% confidence interval of the weighted ITL mean by the method of batch means:
    the window's steps (in time order) cut into `batches` runs of equal weight, the Student t interval of
    the runs' means (contiguous runs absorb the steps' correlation). None with too few steps."""
    from scipy.special import stdtrit  # Student t's quantile (what scipy.stats.t.ppf calls), without scipy.stats' import
    if itl.size < 2 * batches:
        return None
    edges = np.searchsorted(np.cumsum(w), np.linspace(0, w.sum(), batches + 1)[1:-1])
    means = [float(np.average(a, weights=b)) for a, b in zip(np.split(itl, edges), np.split(w, edges)) if b.sum() > 0]
    if len(means) < 2:
        return None
    return float(stdtrit(len(means) - 1, 0.975) * np.std(means, ddof=1) / np.sqrt(len(means)))


def waited_gaps(period_ms: np.ndarray, decode_rows: np.ndarray, batch: np.ndarray, running: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where prefill runs as a step of its own (SGLang), a prefill-only step holds back every row alive
    across it (running after it, less the rows it started); their next token waits through it. Each
    decode step takes the waits of the prefill-only steps just before it: its rows that were alive
    before the last of them (all but the rows that one started) have the step's period plus their share
    of those waits (the mean exact; a row's own wait is spread evenly), the others the period alone.
    Returns (the decode steps' indices, the gap of their waiting rows, the waiting rows)."""
    zero = decode_rows == 0
    held = np.where(zero, period_ms * np.clip(running - batch, 0.0, None), 0.0)  # row-ms waited there
    cw = np.concatenate([[0.0], np.cumsum(held)])
    dec = np.flatnonzero(~zero)
    prev = np.concatenate([[0], dec[:-1] + 1]) if dec.size else dec  # the step after the previous decode step
    last_new = np.where((dec > 0) & zero[np.maximum(dec - 1, 0)], batch[np.maximum(dec - 1, 0)], 0.0)
    waited = np.clip(decode_rows[dec] - last_new, 0.0, None)
    extra = cw[dec] - cw[prev]
    gap = period_ms[dec] + np.divide(extra, waited, out=np.zeros_like(extra), where=waited > 0)
    return dec, gap, waited


def step_columns(steps: list) -> dict[str, np.ndarray]:
    """Simulation.steps as one array per StepRecord field."""
    n = len(STEP_FIELDS)  # (from one flat iterator: numpy reads a list of tuples field by field, 4x slower)
    a = np.fromiter(itertools.chain.from_iterable(steps), dtype=float, count=len(steps) * n).reshape(-1, n)
    return {f: a[:, i] for i, f in enumerate(STEP_FIELDS)}


def itl_samples(col: dict[str, np.ndarray], win: np.ndarray, prefill_apart: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ITL gaps of the steps in `win` and the decode rows that had each, in step order (no drafts):
    a step's period for each of its decode rows; where prefill runs apart, a waiting row's gap also holds
    the prefill steps before it (waited_gaps)."""
    itl, itl_w = col["period_ms"][win], col["decode_rows"][win]
    if prefill_apart:
        dec, gap, waited = waited_gaps(col["period_ms"], col["decode_rows"], col["batch"], col["running"])
        keep_dec = win[dec]
        dec, gap, waited = dec[keep_dec], gap[keep_dec], waited[keep_dec]
        itl = np.stack([gap, col["period_ms"][dec]], 1).ravel()  # in step order (the CI's batches)
        itl_w = np.stack([waited, col["decode_rows"][dec] - waited], 1).ravel()
    keep = itl_w > 0
    return itl[keep], itl_w[keep]


def summarize(sim: Simulation) -> dict[str, Any]:
    col = step_columns(sim.steps)
    n_steps = len(col["period_ms"])
    last = sim.clients.t_last_issue
    t_hi = last if last > 0 else float(col["t_start_ms"][-1] + col["period_ms"][-1])
    t_lo = RAMP_FRACTION * t_hi
    def in_window(t0: np.ndarray | float, period: np.ndarray | float) -> np.ndarray | bool:
        return (t0 >= t_lo) & (t0 + period <= t_hi)
    win = in_window(col["t_start_ms"], col["period_ms"])
    every_step = win.sum() < 5  # tiny runs: use every step
    if every_step:
        win = np.ones(n_steps, bool)
    if sim.cfg.spec_tokens:
        itl, itl_w = _spec_itl_samples(sim, lambda t0, period: every_step or in_window(t0, period))
    else:
        itl, itl_w = itl_samples(col, win, sim.engine.prefill_apart)
    mean_itl = float(np.average(itl, weights=itl_w)) if itl.size else None
    got = ~np.isnan(sim.req.first_t) & ~sim.req.aborted
    ttft = (sim.req.first_t - sim.req.arrival)[got] + sim.costs.profile.forward.ttft_fixed_ms
    # the requests that arrived inside the window, as the engine's histogram over a sweep's window counts
    # them (report.server_ttft_ms): no cold compile of the run's first requests (a sweep warms up first)
    ttft_win = ttft[(sim.req.arrival[got] >= t_lo) & (sim.req.arrival[got] <= t_hi)]
    dur = col["period_ms"][win]
    # wall time of the window, idle gaps included (the engine idles while, e.g., the API server lags)
    span = float(col["t_start_ms"][win][-1] + dur[-1] - col["t_start_ms"][win][0]) if dur.size else 0.0
    tokens = float(col["tokens"][win].sum() + (col["batch"][win] - col["decode_rows"][win]).sum())
    running_mean = float((col["running"][win] * dur).sum() / span) if span > 0 else None
    breakdown = _breakdown(col, win, dur)
    ci = itl_ci95_ms(itl, itl_w) if itl.size else None
    engine_view = what_the_engine_shows(sim, col, win, span, breakdown["step_ms"])
    return {
        "itl_ms_mean": mean_itl,
        "itl_ms_ci95": ci,  # half-width: the mean is known to +- this (batch means, ITL_BATCHES)
        "itl_ms_p50": _pct(itl, itl_w, 50), "itl_ms_p90": _pct(itl, itl_w, 90), "itl_ms_p99": _pct(itl, itl_w, 99),
        "tpot_ms_mean": mean_itl,
        "ttft_ms_mean": float(np.mean(ttft_win)) if ttft_win.size else None,
        "ttft_ms_p50": _pct(ttft, None, 50), "ttft_ms_p90": _pct(ttft, None, 90), "ttft_ms_p99": _pct(ttft, None, 99),
        "out_tok_per_s": tokens / span * 1e3 if span > 0 else None,
        "running_mean": running_mean,
        "structured_rows_mean": float(np.mean(col["structured_rows"][win])),
        "output_tokens_mean": float(np.mean(sim.req.out_len[:max(sim.clients.issued, 1)])),
        "requests_run": int(sim.clients.issued),  # fewer than Workload.requests where its precision was met first
        "straddle_rate": _straddle_rate(sim),
        "aborted": int(sim.req.aborted.sum()),
        "steps": n_steps,
        # the API server's loop: its busy share of the window (None: not modelled); near full, docs/validation.md
        # finding 50 (model/api_server.py LOOP_NEAR_FULL)
        "api_server_busy_fraction": sim.api.busy_share(t_lo, t_hi) if sim.api is not None else None,
        "breakdown": breakdown,
        **engine_view,
    }


def _spec_itl_samples(sim: Simulation, keep) -> tuple[np.ndarray, np.ndarray]:
    """With speculative decoding: each row's ITL gaps in the steps `keep(t0, period)` holds (the step table's
    window: ramp-up and drain left out), each row's tokens of the step sharing its period, and their weights."""
    gaps, wts = [], []
    for t0, period, toks in sim.itl_w:
        if keep(t0, period):
            gaps.append(period / toks)
            wts.append(toks.astype(float))
    return (np.concatenate(gaps) if gaps else np.zeros(0)), (np.concatenate(wts) if wts else np.zeros(0))


def _straddle_rate(sim: Simulation) -> float | None:
    """The share of the served structured requests' replayed tokens that straddle a terminal (None: a
    black-box profile, llama.cpp, has no token traces)."""
    tr = sim.costs.traces
    if tr is None:
        return None
    served = sim.req.trace[sim.req.structured & ~np.isnan(sim.req.done_t)]
    if not served.size:
        return None
    return float(np.mean(np.concatenate([tr.straddle[tr.off[t]:tr.off[t] + tr.n[t]] for t in served])))


def _breakdown(col: dict[str, np.ndarray], win: np.ndarray, dur: np.ndarray) -> dict[str, Any]:
    """A step's time in named parts, the window's mean; and per step that filled serially / used the pool,
    what a probe of grammar_bitmask times in the engine."""
    b: dict[str, Any] = {f: float(np.mean(col[f][win])) for f in
                         ("prefill_tokens", "forward_ms", "fill_ms", "pool_wait_ms", "apply_ms", "advance_ms",
                          "compile_wait_ms", "cpu_overhead_ms", "exposed_ms")}
    b["step_ms"] = float(np.mean(dur)) if dur.size else None
    b["pool_step_fraction"] = float(np.mean(col["pool_used"][win]))
    serial, pooled = win & (col["thread_fill_ms"] > 0), win & (col["pool_used"] > 0)
    b["serial_fill_step_ms"] = float(np.mean(col["thread_fill_ms"][serial])) if serial.any() else None
    b["pool_fill_step_ms"] = float(np.mean(col["pool_wait_ms"][pooled])) if pooled.any() else None
    return b


def what_the_engine_shows(sim: Simulation, col: dict[str, np.ndarray], win: np.ndarray, span: float,
                          step_ms: float | None) -> dict[str, Any]:
    """What a GPU monitor and the engine's metrics would show over the window: the GPU's busy fraction (its
    kernels' time over the wall time, idle gaps counted as idle: each step's forward less the host's part of
    a schema-off step at its rows, where the profile's sweep read NVML beside it (Costs.forward_host_ms); else
    the whole forward, host work included, an upper bound on NVML's: docs/validation.md finding 20, and
    `gpu_busy_basis` says which), the host's exposed fraction (each step's
    time beyond its forward: the fill, the grammar's and the engine's CPU work that the forward did not
    hide), the bound (host where the exposed time exceeds the whole forward's), and the bitmask's copy to the GPU
    per step at the window's mean rows, with its share of the host link at that step time: the copy is
    not the cost (8.2 MB for 256 rows of a 256,000-token vocabulary, 0.6% of the link at 20 ms)."""
    if not span > 0 or not win.any():
        return {"gpu_busy_fraction": None, "gpu_busy_basis": None, "host_exposed_fraction": None, "bound": None,
                "bitmask_h2d_bytes_per_step": None, "bitmask_h2d_link_fraction": None}
    forward, host = col["forward_ms"][win], sim.costs.forward_host_ms(col["batch"][win])
    busy = float((forward if host is None else np.maximum(forward - host, 0.0)).sum() / span)
    forward_share = float(forward.sum() / span)
    exposed = float(col["exposed_ms"][win].sum() / span)
    structured = round(float(np.mean(col["structured_rows"][win])))
    rows = sim.engine.apply_rows(round(float(np.mean(col["batch"][win]))), structured, structured, sim.cfg.spec_tokens)
    h2d = rows * sim.costs.profile.bitmask_row_bytes
    return {"gpu_busy_fraction": busy, "gpu_busy_basis": "upper bound" if host is None else "nvml split",
            "host_exposed_fraction": exposed, "bound": "host" if exposed > forward_share else "gpu",
            "bitmask_h2d_bytes_per_step": h2d,
            "bitmask_h2d_link_fraction": h2d / (step_ms / 1e3) / H2D_LINK_BYTES_PER_S if step_ms else None}
