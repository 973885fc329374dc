"""Small synthetic profiles with constant costs, for mechanism tests with hand-computed answers."""
from maskcost.calibrate.profile import (ApplyCost, ApplyPoint, BackendCosts, CompileCost, FillTrace, ForwardCurve,
                                        ForwardPoint, HostInfo, PoolPoint, Profile)


def constant_profile(fill_us=100.0, accept_us=0.0, forward_ms=5.0, sync_forward_ms=None, apply_us=0.0,
                     compile_ms=0.0, trace_len=50, nproc=16, pool_excess_us=0.0, heavy_tail=False,
                     variant_ms=None):
    fills = tuple(fill_us * (20.0 if heavy_tail and i % 7 == 3 else 1.0) for i in range(trace_len))
    trace = FillTrace("s", fills, (accept_us,) * trace_len, tuple(i % 10 == 0 for i in range(trace_len)))
    trace2 = FillTrace("s", tuple(reversed(fills)), (accept_us,) * trace_len, (False,) * trace_len)
    pool = tuple(PoolPoint(w, r, 1.0, 1.0 + pool_excess_us, 1.0) for w in (1, 2, 4, 8) for r in (16, 128, 512))
    costs = BackendCosts((trace, trace2), (CompileCost("s", compile_ms, 0.01, 1000, variant_ms),), pool, ())
    fw = (ForwardPoint(1, forward_ms, forward_ms), ForwardPoint(512, forward_ms, forward_ms))
    sync = () if sync_forward_ms is None else (ForwardPoint(1, sync_forward_ms, sync_forward_ms),
                                               ForwardPoint(512, sync_forward_ms, sync_forward_ms))
    return Profile(name="synthetic", created_utc="2026-11-30T00:00:00Z", provenance={"command": "test"},
                   host=HostInfo("test cpu", nproc, nproc, 1000.0, "test"), tokenizer="llama3", vocab_size=128256,
                   backends={"xgrammar": costs, "guidance": costs},
                   forward=ForwardCurve("synthetic", fw, sync, 0.0, 0.0),
                   apply=ApplyCost("synthetic", (ApplyPoint(1, apply_us), ApplyPoint(1024, apply_us))))
