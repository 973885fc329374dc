"""Where session M's misses come from: the host's speed for the engine, or the model's structure.
For each pre-registered point, the speed at which the model's fill per step equals the fill the probe
timed inside the engine (inengine.fill_speed: bench speed x model fill / measured fill; serial fills
at serial points, pool fills at pool points), and the committed prediction read at that speed (the same grid,
interpolated in 1/speed). Not a prediction: it uses the measured fill. What is left after it is the
model's structure (the engine thread's other work, the forward, the step's shape); what it removes
is the host's speed beyond what its bench said.
usage: python validation/h200-vllm-0.25.1/m/speed_decomposition.py > validation/h200-vllm-0.25.1/m/speed-decomposition.md"""
import json
import statistics

from maskcost.validate.inengine import fill_speed
from maskcost.validate.report import at_speed

M = "validation/h200-vllm-0.25.1/m"
SETS = (("xgrammar", "xgrammar"), ("xgrammar-2", "xgrammar"), ("xgrammar-m2", "xgrammar"), ("taskset4", "taskset4"),
        ("unique", "unique"), ("guidance", "guidance"), ("guidance-m2", "guidance"))
print("| set | conc | bench speed | engine fill speed | ITL measured | at the bench speed | at the engine's |")
print("|---|---|---|---|---|---|---|")
err_bench, err_engine, by_kind = [], [], {"serial": [], "pool": []}
for name, pred in SETS:
    grid = json.load(open(f"{M}/predicted-{pred}.json"))["points"]
    for r in json.load(open(f"{M}/report-{name}/report.json"))["rows"]:
        speed = fill_speed(r)  # what report --speed-from-probe uses
        if speed is None:
            continue
        kind = "pool" if r["predicted_breakdown"]["pool_step_fraction"] > 0.5 else "serial"
        by_speed = {p["config"]["engine"]["cpu_speed"]: p for p in grid if p["concurrency"] == r["concurrency"]}
        itl = r["metrics"]["ITL ms"]
        try:
            at = at_speed(by_speed, speed)["itl_ms_mean"]
        except ValueError:  # outside the grid's speeds
            print(f"| {name} | {r['concurrency']} | {r['cpu_speed']:.3f} | {speed:.3f} ({kind}) | {itl['measured']:.1f} | "
                  f"{itl['predicted']:.1f} ({itl['error_pct']:+.0f}%) | outside the grid (0.60-1.30) |")
            continue
        e = 100.0 * (at - itl["measured"]) / itl["measured"]
        err_bench.append(abs(itl["error_pct"]))
        err_engine.append(abs(e))
        by_kind[kind].append(e)
        print(f"| {name} | {r['concurrency']} | {r['cpu_speed']:.3f} | {speed:.3f} ({kind}) | {itl['measured']:.1f} | "
              f"{itl['predicted']:.1f} ({itl['error_pct']:+.0f}%) | {at:.1f} ({e:+.0f}%) |")
print(f"\n{len(err_bench)} points: median |ITL error| {statistics.median(err_bench):.1f}% at the bench speed, "
      f"{statistics.median(err_engine):.1f}% at the speed of the engine's own fill")
for kind, es in by_kind.items():
    print(f"- {kind} points ({len(es)}): signed error at the engine's fill speed {min(es):+.0f}% to {max(es):+.0f}%, "
          f"median {statistics.median(es):+.1f}%")
