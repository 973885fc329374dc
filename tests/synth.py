"""Small synthetic profiles with constant costs, for mechanism tests with hand-computed answers."""
from maskcost.profile import (ApplyCost, ApplyPoint, BackendCosts, CompileCost, FillTrace, ForwardCurve,
                                        ForwardPoint, HostInfo, PoolPoint, PrefillPoint, Profile)


def constant_profile(fill_us=100.0, accept_us=0.0, forward_ms=5.0, sync_forward_ms=None, apply_us=0.0,
                     compile_ms=0.0, trace_len=50, nproc=16, pool_excess_us=0.0, heavy_tail=False,
                     variant_ms=None, prefill_ms_per_token=None, context_ref_tokens=0.0, context_us_per_ktoken=0.0):
    fills = tuple(fill_us * (20.0 if heavy_tail and i % 7 == 3 else 1.0) for i in range(trace_len))
    trace = FillTrace("s", fills, (accept_us,) * trace_len, tuple(i % 10 == 0 for i in range(trace_len)))
    trace2 = FillTrace("s", tuple(reversed(fills)), (accept_us,) * trace_len, (False,) * trace_len)
    pool = tuple(PoolPoint(w, r, 1.0, 1.0 + pool_excess_us, 1.0) for w in (1, 2, 4, 8) for r in (16, 128, 512))
    costs = BackendCosts((trace, trace2), (CompileCost("s", compile_ms, 0.01, 1000, variant_ms),), pool, ())
    fw = (ForwardPoint(1, forward_ms, forward_ms), ForwardPoint(512, forward_ms, forward_ms))
    sync = () if sync_forward_ms is None else (ForwardPoint(1, sync_forward_ms, sync_forward_ms),
                                               ForwardPoint(512, sync_forward_ms, sync_forward_ms))
    # prefill: a step computing P prompt tokens alone costs forward_ms + (P - 1) x prefill_ms_per_token
    prefill = () if prefill_ms_per_token is None else tuple(
        PrefillPoint(t, forward_ms + (t - 1) * prefill_ms_per_token) for t in (1001.0, 8001.0))
    return Profile(name="synthetic", created_utc="2026-11-30T00:00:00Z", provenance={"command": "test"},
                   host=HostInfo("test cpu", nproc, nproc, 1000.0, "test"), tokenizer="llama3", vocab_size=128256,
                   backends={"xgrammar": costs, "guidance": costs},
                   forward=ForwardCurve("synthetic", fw, sync, ttft_fixed_ms=0.0, prefill_points=prefill,
                                        context_ref_tokens=context_ref_tokens,
                                        context_us_per_ktoken=context_us_per_ktoken),
                   apply=ApplyCost("synthetic", (ApplyPoint(1, apply_us), ApplyPoint(1024, apply_us))))


def summary(d: dict):
    """A sweep summary (records.SweepSummary) from the fields a test names; the others as a point that
    measured nothing (window 1 s)."""
    from maskcost.records import SweepSummary
    base = {"point": "p", "arm": "on", "concurrency": 1, "repeat": 0, "requests": 0, "errors": 0,
            "output_tokens_mean": None, "itl_ms_mean": None, "config": {}}
    return SweepSummary.from_json({**base, **d, "engine": {"window_s": 1.0, **d.get("engine", {})}})
