"""Post hoc (finding 74): does fitting llguidance's in-engine fill factor at calibration (calibrate --backend-url,
fit_backend_fill) beat leaving the factors as carried (the embedded profile's, scaled by the two hosts' bench)? For
each shape run whose profile reads the factor (runs 5-18, check.py's sweep-request runs), the run's profile with
llguidance's factors divided back by the fitted ones its method names (AS CARRIED), scored as the shape check scores
(check.py score on a copy of the run's records), against the same with the profile as made (AS FITTED), and with each
factor the geometric mean of the fitted one and the median of the other runs' fitted ones (SHRUNK: the record's
typical factor as a prior, leave one run out), all with main's model.
llguidance's median |ITL error| over its points, its nested/flat and deep/flat within 10%; xgrammar's points are the
same in both. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/guidance_carried.py > validation/h200-vllm-0.25.1/shape/posthoc/guidance_carried.txt"""
import json
import os
import re
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
from maskcost.validate.engine_base import fill_scaled  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
FITTED = re.compile(r"x([\d.]+) serial, x([\d.]+) pool over the factors carried")


def guidance_view(score: dict) -> tuple[float, int, int, int, int]:
    """llguidance's median |ITL error| over its points; nested/flat and deep/flat within 10% (of those scored)."""
    rows = [r for r in score["rows"] if r["backend"] == "guidance" and r.get("error_pct") is not None]
    ok = lambda s: [abs(r["error_pct"]) <= 10 for r in rows if r["schema"] == s]  # noqa: E731
    return (score["itl"]["median_abs_pct_by_backend"]["guidance"], sum(ok("nested")), len(ok("nested")),
            sum(ok("deep")), len(ok("deep")))


def scored(run: Path, profile) -> tuple[float, int, int, int, int]:
    """check.py score on a copy of `run`'s records with `profile` (main's model)."""
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("*.raw.jsonl.gz", "*.log.gz", "score.*",
                                                                 "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return guidance_view(json.loads((copy / "score.json").read_text()))


def main() -> None:
    runs = {}
    for n in range(5, 19):
        prof = load_profile(SHAPE / f"run{n}" / "xg" / "host.json.gz")
        m = FITTED.search(prof.backends["guidance"].engine_fill.method or "")
        if m:
            runs[n] = (prof, float(m.group(1)), float(m.group(2)))
        else:
            print(f"run{n}: no fitted factor in its profile")
    print("run    k serial  k pool | llguidance's median |ITL err|, nested/flat and deep/flat within 10%: "
          "AS FITTED | AS CARRIED | SHRUNK (its k serial, pool)")
    got = {"fitted": [], "carried": [], "shrunk": []}
    for n, (prof, ks, kp) in runs.items():
        ef = prof.backends["guidance"].engine_fill
        others = [v for o, v in runs.items() if o != n]
        ss = (ks * statistics.median(v[1] for v in others)) ** 0.5
        sp = (kp * statistics.median(v[2] for v in others)) ** 0.5

        def with_factors(serial: float, pool: float):
            return replace(prof, backends={**prof.backends, "guidance": replace(
                prof.backends["guidance"], engine_fill=fill_scaled(ef, serial, pool))})
        run = SHAPE / f"run{n}"
        views = {"fitted": scored(run, prof), "carried": scored(run, with_factors(1 / ks, 1 / kp)),
                 "shrunk": scored(run, with_factors(ss / ks, sp / kp))}
        for k, v in views.items():
            got[k].append(v[0])
        f = lambda v: f"{v[0]:5.1f}%, {v[1]}/{v[2]}, {v[3]}/{v[4]}"  # noqa: E731
        print(f"run{n:<3d} x{ks:.3f}   x{kp:.3f} | {f(views['fitted'])} | {f(views['carried'])} | "
              f"{f(views['shrunk'])} (x{ss:.3f}, x{sp:.3f})", flush=True)
    for k, v in got.items():
        print(f"{k}: llguidance's median |ITL error| a run, median over runs {statistics.median(v):.1f}%, "
              f"mean {statistics.fmean(v):.1f}% ({len(v)} runs)")
    for k in ("carried", "shrunk"):
        print(f"{k} better than fitted on {sum(c < f for f, c in zip(got['fitted'], got[k]))} of {len(got[k])} runs")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
