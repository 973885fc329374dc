"""Engine-side calibration: forward (step) time from a schema-off sweep of the live server, read
from the engine's own metrics, and the bitmask copy + apply cost on this host's GPU."""
from __future__ import annotations

import statistics
import time
from typing import Any

from .profile import ApplyCost, ApplyPoint, ForwardCurve, ForwardPoint


def forward_points(summaries: list[dict[str, Any]]) -> tuple[ForwardPoint, ...]:
    """One point per schema-off sweep point: the engine's mean running count, its step period
    (window / steps it counted) and its ITL mean (blackbox.itl_ms: the engine's own histogram, or
    the client's per-token ITL where the engine has none). Repeats stay separate points."""
    from .blackbox import itl_ms
    out = []
    for s in summaries:
        e = s["engine"]
        if s["arm"] == "off" and e.get("running_mean") and e.get("step_ms") and itl_ms(s):
            out.append(ForwardPoint(e["running_mean"], e["step_ms"], itl_ms(s)))
    if not out:
        raise ValueError("no schema-off sweep point carried the engine's running count, step and ITL metrics")
    return tuple(sorted(out, key=lambda p: p.batch))


def forward_from_summaries(summaries: list[dict[str, Any]], source: str,
                           sync_summaries: list[dict[str, Any]] = ()) -> ForwardCurve:
    """The forward curve of a schema-off sweep (and its --no-async-scheduling twin), plus the fixed
    part of TTFT at concurrency 1."""
    points = forward_points(summaries)
    c1 = [s for s in summaries if s["arm"] == "off" and s["concurrency"] == 1 and s.get("ttft_ms_p50")]
    ttft_fixed = max(0.0, statistics.median(s["ttft_ms_p50"] for s in c1) - points[0].step_ms) if c1 else 0.0
    return ForwardCurve(source=source, points=points,
                        sync_points=forward_points(sync_summaries) if sync_summaries else (),
                        prefill_us_per_token=0.0, ttft_fixed_ms=ttft_fixed)


def measure_apply(vocab_size: int, rows=(1, 8, 32, 64, 128, 256, 512, 1024), repeats: int = 30) -> ApplyCost:
    """Pinned int32 bitmask -> GPU (non_blocking), then xgrammar's Triton masking kernel on float32
    logits, as vLLM's V1 runner does (engines.md Q1); wall time with a device sync, median."""
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
