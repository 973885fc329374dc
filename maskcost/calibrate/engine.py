"""Engine-side calibration: forward (step) time from a schema-off sweep of the live server, read
from the engine's own metrics, and the bitmask copy + apply cost on this host's GPU."""
from __future__ import annotations

import statistics
import time

import numpy as np

from ..records import CLIENT_BUSY_PCT, SweepSummary
from ..profile import ApplyCost, ApplyPoint, ContextPoint, ForwardCurve, ForwardPoint, PrefillPoint


# a schema-off point whose engine ran fewer rows than this share of what its clients offered (up to
# the server's max running requests) did not measure a full batch (forward_points_kept). SGLang 0.5.17
# (runs 2 and 3): 29-55% where requests trickled in past the API server; 75% at concurrency 8 from the
# drain of a 16-request point whose batch held 8 (running_max)
FULL_BATCH_SHARE = 0.75


def short_batch(summary: SweepSummary) -> bool:
    """A point of an engine that runs prefill apart (SGLang) whose engine ran under FULL_BATCH_SHARE of the
    rows its clients offered: the requests waited outside the engine and came in one by one, each a prefill
    step of its own that runs apart from the decode (model/engines.py Sglang.prefill_apart) and, at one new
    token, eager
    (Sglang0517), so its ITL holds those steps more than its decode steps (SGLang 0.5.17 run 2: 64
    running at 192 offered, ITL 24 ms, against 71 running at 128 offered, 11 ms)."""
    from ..model.engines import served_by
    engine = served_by(summary)
    if engine is None or not engine.prefill_apart:
        return False
    cap = summary.provenance.get("server", {}).get("server_args", {}).get("max_running_requests")
    offered = min(summary.concurrency, cap or summary.concurrency)
    return (summary.engine.running_mean or 0.0) < FULL_BATCH_SHARE * offered


def forward_points_kept(summaries: list[SweepSummary]) -> tuple[tuple[ForwardPoint, ...], list[str]]:
    """forward_points of the points that measured a full batch (short_batch), and a word on each left out."""
    short = [s.arm == "off" and short_batch(s) for s in summaries]
    left = [f"{s.point} ({s.engine.running_mean:.0f} running of {s.concurrency} offered)"
            for s, x in zip(summaries, short) if x]
    return forward_points([s for s, x in zip(summaries, short) if not x]), left


def forward_points(summaries: list[SweepSummary]) -> tuple[ForwardPoint, ...]:
    """One point per schema-off sweep point: the engine's mean running count, its step period
    (window / steps it counted) and its ITL mean (records.itl_ms: the engine's own histogram, or
    the client's per-token ITL where the engine has none), and the GPU's busy fraction where the sweep read
    it (NVML: the split of the step between the GPU and the host). Repeats stay separate points."""
    from ..records import itl_ms
    out = []
    for s in summaries:
        e = s.engine
        if s.arm == "off" and e.running_mean and e.step_ms and itl_ms(s):
            busy = e.gpu_busy
            out.append(ForwardPoint(e.running_mean, e.step_ms, itl_ms(s),
                                    busy.get("fraction") if isinstance(busy, dict) else None))
    if not out:
        raise ValueError("no schema-off sweep point carried the engine's running count, step and ITL metrics (points "
                         "too short for the server's /metrics to see requests running: more --min-requests or --rounds)")
    return tuple(sorted(out, key=lambda p: p.batch))


def context_tokens(summary: SweepSummary) -> float:
    """Mean context of a decode row over a point: its prompt plus half its output."""
    if not summary.prompt_tokens_mean or not summary.output_tokens_mean:
        raise ValueError(f"sweep point {summary.point}: no prompt/output token counts (usage) recorded")
    return summary.prompt_tokens_mean + summary.output_tokens_mean / 2


def prefill_tokens(summary: SweepSummary) -> float:
    """Prompt tokens computed per request at a prefill-sweep point: the prompt less the prefix-cache
    hits the engine counted (all of it where it reports none). Prompts led by a nonce
    (--unique-prompts) share nothing past the chat template's first block, so all of it: vLLM
    0.25.1's prefix_cache_hits counter said 33% and 50% hits for nonce-led prompts of 1,536 and
    3,036 tokens on the H200 (session E), while their TTFT grew with the whole prompt."""
    if summary.config.get("unique_prompts"):
        return summary.prompt_tokens_mean
    cached = summary.engine.prompt_cached_fraction or 0.0
    return max(1.0, summary.prompt_tokens_mean * (1.0 - cached))


def eager_prefill_ms(summaries: list[SweepSummary]) -> tuple[float, list[SweepSummary]]:
    """A prefill step of one new token (the same prompt every request: the prefix cache holds all but
    its last token) over one of a fresh prompt (--unique-prompts), from schema-off concurrency-1 sweep
    points of both kinds: their median TTFT p50s apart, at least 0 (ForwardCurve.eager_prefill_ms;
    SGLang runs the first without a CUDA graph). Returns it and the fresh-prompt points."""
    c1 = [s for s in summaries if s.arm == "off" and s.concurrency == 1 and s.ttft_ms_p50]
    fresh = [s for s in c1 if s.config.get("unique_prompts")]
    again = [s for s in c1 if not s.config.get("unique_prompts")]
    if not fresh or not again:
        raise ValueError("eager sweep: needs schema-off concurrency-1 points with the same prompt every request "
                         "and with --unique-prompts")
    ms = statistics.median(s.ttft_ms_p50 for s in again) - statistics.median(s.ttft_ms_p50 for s in fresh)
    return max(0.0, ms), fresh


def prefill_points(summaries: list[SweepSummary], ttft_fixed_ms: float) -> tuple[PrefillPoint, ...]:
    """One point per schema-off concurrency-1 sweep point (prompts made unique, so the prefix cache
    misses): the step that computes the prompt = TTFT p50 - the fixed part of TTFT."""
    out = [PrefillPoint(prefill_tokens(s), max(0.0, s.ttft_ms_p50 - ttft_fixed_ms))
           for s in summaries if s.arm == "off" and s.concurrency == 1 and s.ttft_ms_p50
           and s.prompt_tokens_mean]
    if not out:
        raise ValueError("prefill sweep: no schema-off point at concurrency 1 with TTFT and prompt token counts")
    return tuple(sorted(out, key=lambda p: p.tokens))


def context_fit(summaries: list[SweepSummary], curve, ref_tokens: float) -> tuple[float, tuple[ContextPoint, ...]]:
    """The extra forward time per 1,000 context tokens in a step, beyond the forward curve's own
    context: least squares through the origin of (ITL - curve(batch)) on batch x (context - ref),
    over schema-off points whose long prompts the prefix cache holds (little prefill). Returns
    (us per 1,000 tokens, the points)."""
    from ..records import itl_ms
    pts = tuple(ContextPoint(s.engine.running_mean, context_tokens(s), itl_ms(s))
                for s in summaries if s.arm == "off" and s.engine.running_mean and itl_ms(s))
    if not pts:
        raise ValueError("context sweep: no schema-off point with the engine's running count and ITL (points too "
                         "short for the server's /metrics to see requests running: more --min-requests or --rounds)")
    x = np.array([p.batch * (p.context_tokens - ref_tokens) / 1e3 for p in pts])
    y = np.array([(p.itl_ms - curve(p.batch)) * 1e3 for p in pts])
    if not (x ** 2).sum() > 0:
        raise ValueError("context sweep: its context equals the forward sweep's; pad the prompts (--prompt-pad)")
    return max(0.0, float((x * y).sum() / (x ** 2).sum())), pts


def forward_from_summaries(summaries: list[SweepSummary], source: str,
                           sync_summaries: list[SweepSummary] = (),
                           prefill_summaries: list[SweepSummary] = (),
                           context_summaries: list[SweepSummary] = (),
                           eager_summaries: list[SweepSummary] = ()) -> ForwardCurve:
    """The forward curve of a schema-off sweep (and its --no-async-scheduling twin), the fixed part
    of TTFT at concurrency 1, the mean context of its rows; with a prefill sweep (concurrency 1,
    unique prompts of several lengths) the prefill points; with a context sweep (long cached
    prompts) the context slope; with an eager sweep (concurrency 1, the same prompt and fresh ones)
    the one-token prefill step's extra time."""
    from ..model.costs import forward_curve
    points, left = forward_points_kept(summaries)
    if left:
        source = f"{source} Left out of the forward curve (batch not full): {', '.join(left)}."
    offs = [s for s in summaries if s.arm == "off"]
    c1 = [s for s in offs if s.concurrency == 1 and s.ttft_ms_p50]
    eager, fresh = eager_prefill_ms(list(eager_summaries)) if eager_summaries else (0.0, [])
    step1_ms = points[0].step_ms
    if fresh:
        # the fixed part of TTFT: a fresh prompt's prefill replays a graph, as a decode step does (a
        # repeated prompt's, as the forward sweep's own concurrency-1 point sends it, would count the
        # eager step twice); a concurrency-1 point of short requests may sample no running request, so
        # its step is the forward curve's at one row
        c1, step1_ms = fresh, forward_curve(points)(1.0)
    ttft_fixed = max(0.0, statistics.median(s.ttft_ms_p50 for s in c1) - step1_ms) if c1 else 0.0
    with_ctx = [s for s in offs if s.prompt_tokens_mean and s.output_tokens_mean]
    ref = statistics.mean(context_tokens(s) for s in with_ctx) if with_ctx else 0.0
    if prefill_summaries and not c1:
        raise ValueError("prefill sweep given, but the forward sweep has no concurrency-1 point (the fixed part of TTFT)")
    pre = prefill_points(list(prefill_summaries), ttft_fixed) if prefill_summaries else ()
    slope, ctx = 0.0, ()
    if context_summaries:
        if not ref:
            raise ValueError("context sweep given, but the forward sweep recorded no prompt/output token counts")
        slope, ctx = context_fit(list(context_summaries), forward_curve(points), ref)
    return ForwardCurve(source=source, points=points,
                        sync_points=forward_points_kept(sync_summaries)[0] if sync_summaries else (),
                        ttft_fixed_ms=ttft_fixed, prefill_points=pre, context_ref_tokens=ref,
                        context_us_per_ktoken=slope, context_points=ctx, eager_prefill_ms=eager)


def measure_apply(vocab_size: int, rows=(1, 8, 32, 64, 128, 256, 512, 1024), repeats: int = 30) -> ApplyCost:
    """Pinned int32 bitmask -> GPU (non_blocking), then xgrammar's Triton masking kernel on float32
    logits, as vLLM's V1 runner does (docs/engines.md Q1); wall time with a device sync, median."""
    from importlib import metadata

    import torch
    import xgrammar as xgr
    if not torch.cuda.is_available():
        raise RuntimeError("measuring the mask apply needs a CUDA GPU on this host")
    dev = torch.device("cuda")
    points = []
    for b in rows:
        mask = torch.randint(-2**31, 2**31 - 1, (b, (vocab_size + 31) // 32), dtype=torch.int32).pin_memory()
        logits = torch.randn(b, vocab_size, device=dev, dtype=torch.float32)
        times = []
        for i in range(repeats + 3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            m = mask.to(dev, non_blocking=True)
            xgr.apply_token_bitmask_inplace(logits, m)
            torch.cuda.synchronize()
            if i >= 3:
                times.append((time.perf_counter() - t0) * 1e6)
        points.append(ApplyPoint(b, statistics.median(times)))
    name = torch.cuda.get_device_name(0)
    return ApplyCost(f"measured: pinned H2D + xgrammar {metadata.version('xgrammar')} Triton apply_token_bitmask_inplace, "
                     f"float32 logits, vocab {vocab_size}, {name}, torch {torch.__version__}, median of {repeats}",
                     tuple(points))


def apply_or_copied(vocab_size: int, base, notes: list[str]) -> ApplyCost:
    """The mask apply measured on this host's GPU, or, without one, `base` profile's (noted in `notes`);
    neither is a one-line error."""
    try:
        return measure_apply(vocab_size)
    except (RuntimeError, ImportError) as e:
        if base is None:
            raise ValueError(f"calibrate: {e}; give --engine-from PROFILE for the apply cost") from None
        notes.append(f"apply cost copied from {base.name} ({e})")
        return base.apply


def _frontend_error(profile, cfg, points: list[SweepSummary], per_client: int, least: int) -> float:
    """How far the model with `profile` is from the TTFT p50 and the engine's running count that
    `points` (sweep summaries) measured: the sum of the squared log errors. A schema-off point runs
    unstructured at its own fixed length, a schema-on point on its schemas (the report's
    workloads, at cfg's CPU speed), each max(least, per_client x concurrency) requests."""
    err = 0.0
    for s, r in _model_at(profile, cfg, points, lambda c: max(least, per_client * c)):
        err += np.log(r["ttft_ms_p50"] / s.ttft_ms_p50) ** 2 + \
            np.log(r["running_mean"] / s.engine.running_mean) ** 2
    return err


def _model_at(profile, cfg, points: list[SweepSummary], requests):
    """(point, the model's summary of it) for each measured point (sweep summaries), at cfg: the
    point's workload (model.measured.measured_workload), `requests(concurrency)` requests."""
    from ..model.costs import Costs
    from ..model.engine import Simulation
    from ..model.measured import measured_workload, profile_schema_ids
    from ..model.metrics import summarize
    costs = Costs(profile, cfg.backend, cfg.cpu_speed)
    known = set(profile.schema_ids(cfg.backend))
    for s in points:
        wl = measured_workload([s], profile_schema_ids(s, known, cfg.backend), requests(s.concurrency))
        yield s, summarize(Simulation(costs, cfg, wl).run())


def _frontend_points(summaries: list[SweepSummary], arm: str) -> list[SweepSummary]:
    """The points an API-server fit reads: concurrency >= 8, with TTFT, running count, throughput and prompt
    counts, and a client that was not itself the queue (records.client_busy: a busy client offers fewer
    requests than its concurrency, and the fit would put the cap it saw on the API server)."""
    from ..records import client_busy
    return [s for s in summaries if s.arm == arm and s.concurrency >= 8 and s.ttft_ms_p50
            and s.engine.running_mean and s.out_tok_per_s and s.prompt_tokens_mean
            and not client_busy(s)]


def with_api_server(fw0: ForwardCurve, token_us: float, request_ms: float, **more) -> ForwardCurve:
    """`fw0` with the API server's cost a streamed token and a request (and `more` of its fields), its fixed
    TTFT less what the API server now takes of an uncontended request (its own cost and its first token's)."""
    from dataclasses import replace
    return replace(fw0, frontend_token_us=token_us, frontend_request_ms=request_ms,
                   ttft_fixed_ms=max(0.0, fw0.ttft_fixed_ms - request_ms - token_us / 1e3), **more)


def fit_frontend(profile, summaries: list[SweepSummary], log=None) -> ForwardCurve:
    """The API server's per-token and per-request costs (ForwardCurve.frontend_*), fitted on the
    schema-off sweep that made the forward curve (its points are calibration points, never scored):
    the pair whose simulation best matches the TTFT p50 and the engine's running count the sweep
    measured at concurrency >= 8 (squared log errors). The token cost is searched below the inverse
    of the peak streamed rate the sweep saw (a front-end that streams N tokens/s costs at most 1/N
    per token), and a pair is tried only where a request's whole cost (its own and its tokens') fits
    in the time between two requests at each point's measured rate: the model's API server is one
    queue (model/api_server.py), so a dearer pair could not have served the load the sweep measured
    (shape check run 6: unbounded, 6.0 ms a request and 66 us a token, 14.5 ms a request where the
    server took 9.5; llguidance's held-out points then 25.9% off, 5.4% with the bound: docs/validation.md
    finding 26). The fixed part of TTFT becomes the rest: what the API server does not share."""
    from dataclasses import replace

    from ..model.config import EngineConfig
    pts = _frontend_points(summaries, "off")
    if len(pts) < 2:
        raise ValueError("front-end fit: the forward sweep needs >= 2 schema-off points at concurrency >= 8 "
                         f"with TTFT, running count and prompt token counts, whose client was not busy (> "
                         f"{CLIENT_BUSY_PCT:.0f}% a process: spread the load over more client processes)")
    fw0 = profile.forward
    cfg = EngineConfig(backend=next(iter(profile.backends)))
    peak_us = 1e6 / max(s.out_tok_per_s for s in pts)
    # (tokens a request, ms between two requests) at each point's measured rate
    served = [(s.output_tokens_mean, 1e3 * s.output_tokens_mean / s.out_tok_per_s) for s in pts if s.output_tokens_mean]
    best = None
    for tok_us in (0.0, 0.4 * peak_us, 0.6 * peak_us, 0.75 * peak_us, 0.9 * peak_us, peak_us):
        for req_ms in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0):
            if any(req_ms + tok_us * n / 1e3 > gap_ms * (1 + 1e-9) for n, gap_ms in served):
                continue  # it could not have served that point's rate
            fw = with_api_server(fw0, tok_us, req_ms)
            err = _frontend_error(replace(profile, forward=fw), cfg, pts, 3, 64)
            if log:
                log(f"front-end fit: {tok_us:6.1f} us/token {req_ms:4.2f} ms/request: error {err:.3f}")
            if best is None or err < best[0]:
                best = (err, fw)
    return best[1]


# the structured request's extra API-server costs fit_frontend_structured searches (ms), then 0.25 and 0.125
# either side of the best: the probe timed 3.6-4.7 ms (median 4.5) of API-server calls per schema-on
# request at concurrency 8 (create_chat_completion + add_request, sessions U-W) where the schema-off fit
# of session E has 2.0 ms per request in all
FRONTEND_STRUCTURED_MS = tuple(0.5 * i for i in range(13))  # 0 ... 6.0


def fit_frontend_structured(profile, cfg, summaries: list[SweepSummary], log=None) -> ForwardCurve:
    """The API server's extra cost per structured request (ForwardCurve.frontend_structured_ms) fitted
    on a schema-on sweep, the schema-off fit's token and request costs kept: the value of
    FRONTEND_STRUCTURED_MS whose simulation (cfg: the sweep's backend, cores and CPU speed) best matches
    the TTFT p50 and running count measured at concurrency >= 8. A structured request costs the API
    server more than the schema-off sweep's (its schema is parsed, and validated by the backend in
    InputProcessor._validate_params, docs/engines.md Q4), and where the loop saturates, as a fast-stepping
    backend's does at 160-256, that cost sets the running batch."""
    from dataclasses import replace
    pts = _frontend_points(summaries, "on")
    if len(pts) < 2:
        raise ValueError("--fit-frontend: the sweeps need >= 2 schema-on points at concurrency >= 8 with TTFT, "
                         f"the engine's running count and prompt token counts, whose client was not busy (> "
                         f"{CLIENT_BUSY_PCT:.0f}% a process: spread the load over more client processes)")
    fw0 = profile.forward
    tried: dict[float, tuple[float, ForwardCurve]] = {}

    def error(extra_ms: float) -> float:
        if extra_ms not in tried:
            fw = replace(fw0, frontend_structured_ms=extra_ms)
            # the report's workloads (compare: 4 requests a client, at least 200): a saturated API server
            # reaches its steady running batch only after a few rounds
            tried[extra_ms] = (_frontend_error(replace(profile, forward=fw), cfg, pts, 4, 200), fw)
            if log:
                log(f"front-end fit: {fw0.frontend_token_us:.1f} us/token {fw0.frontend_request_ms:.2f} ms/request "
                    f"+ {extra_ms:5.3f} ms/structured request: error {tried[extra_ms][0]:.3f}")
        return tried[extra_ms][0]

    best = min(FRONTEND_STRUCTURED_MS, key=error)
    for step in (0.25, 0.125):
        best = min((best - step, best, best + step), key=lambda r: error(r) if r >= 0 else float("inf"))
    return tried[best][1]


# the search range of fit_engine_rows (us per structured row per step) and its bisection steps
ENGINE_ROW_US_MAX = 2000.0
ENGINE_ROW_STEPS = 14


def _itl_log_error(profile, cfg, points: list[SweepSummary]) -> float:
    """The median over `points` (schema-on sweep summaries) of log(model ITL / measured ITL), each point
    run as predict runs it (Workload.requests requests, at least 3 per client)."""
    from ..model.config import Workload
    from ..records import itl_ms
    return float(np.median([np.log(r["itl_ms_mean"] / itl_ms(s))
                            for s, r in _model_at(profile, cfg, points, lambda c: max(Workload.requests, 3 * c))]))


def fit_engine_rows(profile, cfg, summaries: list[SweepSummary], log=None):
    """The engine thread's own work per structured row per step (BackendCosts.engine_row_us of
    cfg.backend) that makes the model's ITL meet the schema-on points of `summaries` (their median log
    error zero; the points are fit points, never scored): bisection over 0-ENGINE_ROW_US_MAX us, the
    model's ITL growing with it. Where the model is already at or above the points at 0, 0. Returns
    the profile with it."""
    from dataclasses import replace

    from ..records import itl_ms
    pts = [s for s in summaries if s.arm == "on" and itl_ms(s)]
    if not pts:
        raise ValueError("engine-row fit: the sweep has no schema-on point with an ITL")
    b = profile.backends[cfg.backend]

    def at(us: float):
        return replace(profile, backends={**profile.backends, cfg.backend: replace(b, engine_row_us=us)})
    lo, hi = 0.0, ENGINE_ROW_US_MAX
    if _itl_log_error(at(lo), cfg, pts) >= 0:
        return at(0.0)
    if _itl_log_error(at(hi), cfg, pts) < 0:
        raise ValueError(f"engine-row fit: even {hi:.0f} us a row leaves the model under the measured ITL")
    for _ in range(ENGINE_ROW_STEPS):
        mid = (lo + hi) / 2
        err = _itl_log_error(at(mid), cfg, pts)
        if log:
            log(f"engine-row fit: {mid:7.1f} us a row: median ITL error {100 * (np.exp(err) - 1):+.1f}%")
        lo, hi = (mid, hi) if err < 0 else (lo, mid)
    return at(round((lo + hi) / 2, 1))
