"""Post hoc, run 4: the GPU's busy share with the forward split by NVML (model/metrics.py: each step's forward
less the host's part of a schema-off step at its rows, Costs.forward_host_ms). Run 4's calibrate read NVML
beside every schema-off point of its forward sweep (xg/host.forward-sweep.jsonl), but the profile it wrote
predates ForwardPoint.gpu_busy: this puts each point's reading on the profile's forward points (matched by the
engine's running count) and scores the 16 held-out points (validate.report.compare, on the workload each sweep
ran, as workload.py) against NVML, before and after. The held-out points' own NVML readings are not used to fit.
  python posthoc/gpu_split.py        (from validation/h200-vllm-0.25.1/shape)  -> posthoc/gpu_split.md"""
from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "posthoc"))
from workload import model_points  # noqa: E402

from maskcost.calibrate.engine import forward_points  # noqa: E402
from maskcost.profile import load_profile  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402


def split_profile(p, sweep: Path):
    """The profile with each forward point's NVML reading from the sweep it was fitted on."""
    read = {round(f.batch, 3): f.gpu_busy for f in forward_points(read_summaries(sweep))}
    pts = tuple(replace(f, gpu_busy=read[round(f.batch, 3)]) for f in p.forward.points)
    return replace(p, forward=replace(p.forward, points=pts))


def gpu_points(p, run: str) -> dict[tuple, tuple[float, float, float, float]]:
    """(backend, schema, load, cores) -> (NVML, the model's GPU busy, the engine's ITL, the model's), the repeats'
    mean (workload.model_points: the model on each sweep's own workload)."""
    return {k: (v["gpu_measured"], v["gpu"], v["measured_ms"], v["itl_ms"]) for k, v in model_points(run, run, p).items()
            if v["gpu_measured"] is not None and v["gpu"] is not None}


def main() -> None:
    run = "run4"
    p = load_profile(HERE / run / "xg" / "host.json.gz")
    sp = split_profile(p, HERE / run / "xg" / "host.forward-sweep.jsonl")
    lines = [f"Run 4, the GPU's busy share against NVML over the held-out points (post hoc: the split fitted on "
             f"calibrate's schema-off points only). Forward points (running, step ms, NVML busy, GPU ms a step): " +
             ", ".join(f"{f.batch:.0f} {f.step_ms:.2f} {f.gpu_busy:.2f} {f.gpu_busy * f.step_ms:.2f}"
                       for f in sp.forward.points), "",
             "| point | NVML | upper bound (main before) | split by NVML | GPU ms a token step: NVML x ITL | split x the model's ITL | ITL error |",
             "|---|---|---|---|---|---|---|"]
    before, after = gpu_points(p, run), gpu_points(sp, run)
    for k in sorted(after):
        lines.append(f"| {k[0]} {k[1]} {k[2]}{' (6 cores)' if k[3] == 6 else ''} | {after[k][0]:.3f} | "
                     f"{before[k][1]:.3f} | {after[k][1]:.3f} | {after[k][0] * after[k][2]:.2f} | "
                     f"{after[k][1] * after[k][3]:.2f} | {100 * (after[k][3] / after[k][2] - 1):+.0f}% |")
    for name, d in (("upper bound", before), ("split by NVML", after)):
        r = [m / n for n, m, _, _ in d.values()]
        lines.append(f"\n{name}: {len(d)} points, median |model - NVML| "
                     f"{statistics.median(abs(m - n) for n, m, _, _ in d.values()):.3f}, median model / NVML "
                     f"{statistics.median(r):.2f}, range {min(r):.2f}-{max(r):.2f}")
    gms = [(m * im) / (n * ie) for n, m, ie, im in after.values()]
    lines.append(f"\nGPU ms a token step, the split model against NVML x the engine's ITL: median ratio "
                 f"{statistics.median(gms):.2f}, range {min(gms):.2f}-{max(gms):.2f} (what is left of the busy share's "
                 f"error is the model's step time, the ITL error column)")
    text = "\n".join(lines) + "\n"
    (HERE / "posthoc" / "gpu_split.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
