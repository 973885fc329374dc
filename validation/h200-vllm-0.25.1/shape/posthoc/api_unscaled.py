"""Post hoc (finding 77): the API server's costs that calibrate reads from the server's process CPU (calibrate.api_cpu,
shape runs 13-19) are that host's CPU time at the speed it read, and the model scales them by the speed read once
more (model/api_server.py: finding 39 kept that, on runs 6-9's TTFT-fitted and loop-CPU costs). Each run's profile
scored as the shape check scores (check.py score on a copy of its records, main's model) as made (AS MADE) and with
the four API-server costs multiplied by the profile's speed read, so that the model prices them at what calibrate
read (UNSCALED). Per run: median |ITL error| (both backends, llguidance's), nested/flat and deep/flat within 10%,
points inside the interval. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/api_unscaled.py > validation/h200-vllm-0.25.1/shape/posthoc/api_unscaled.txt"""
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
from maskcost.profile import load_profile, save_profile  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
API = ("frontend_token_us", "frontend_request_ms", "frontend_structured_ms", "frontend_structured_token_us")


def scored(run: Path, profile) -> dict:
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("*.raw.jsonl.gz", "*.log.gz", "score.*",
                                                                 "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return json.loads((copy / "score.json").read_text())


def view(d: dict) -> tuple:
    ok = lambda key: sum(abs(r["error_pct"]) <= 10 for r in d["rows"] if r["schema"] == key  # noqa: E731
                         and r.get("error_pct") is not None)
    signed = statistics.median(d["itl"]["errors_pct"]) if d["itl"].get("errors_pct") else float("nan")
    return (d["itl"]["median_abs_pct"], signed, d["itl"]["median_abs_pct_by_backend"]["guidance"],
            ok("nested"), ok("deep"), d["itl"]["inside_interval"], d["itl"]["points"])


def main() -> None:
    print("run   speed | median |ITL err| (signed), llguidance's, nested/flat and deep/flat within 10%, inside the "
          "interval: AS MADE | UNSCALED")
    got = {"made": [], "unscaled": []}
    for n in range(13, 20):
        run = SHAPE / f"run{n}"
        prof = load_profile(run / "xg" / "host.json.gz")
        speed = prof.measured_speed.cpu_speed
        fw = prof.forward
        unscaled = replace(prof, forward=replace(fw, **{k: getattr(fw, k) * speed for k in API}))
        views = {"made": view(scored(run, prof)), "unscaled": view(scored(run, unscaled))}
        f = lambda v: f"{v[0]:5.1f}% ({v[1]:+5.1f}%), {v[2]:5.1f}%, {v[3]}/{v[4]}, {v[5]}/{v[6]}"  # noqa: E731
        print(f"run{n:<3d} {speed:.3f} | {f(views['made'])} | {f(views['unscaled'])}", flush=True)
        for k, v in views.items():
            got[k].append(v)
    for k, vs in got.items():
        print(f"{k}: median over runs of the median |ITL error| {statistics.median(v[0] for v in vs):.1f}%, "
              f"llguidance's {statistics.median(v[2] for v in vs):.1f}%; nested/flat within 10% "
              f"{sum(v[3] for v in vs)}, deep/flat {sum(v[4] for v in vs)}; inside the interval "
              f"{sum(v[5] for v in vs)} of {sum(v[6] for v in vs)}")
    better = sum(u[0] < m[0] for m, u in zip(got["made"], got["unscaled"]))
    print(f"unscaled better (median |ITL error|) on {better} of {len(got['made'])} runs")


if __name__ == "__main__":
    main()
