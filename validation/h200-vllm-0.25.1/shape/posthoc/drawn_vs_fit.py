"""Run 19's registered comparison (README.md, run 19): llguidance's fill factor as the profile carries it (fitted on
its own server, drawn halfway toward the record's: calibrate --backend-fill-prior record) against the fit alone (each
factor times fitted / drawn, both named in the profile's note: finding 74's AS FITTED), the same records scored by
check.py score on a copy of the run. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/drawn_vs_fit.py run19 > validation/h200-vllm-0.25.1/shape/posthoc/drawn_vs_fit.txt"""
import json
import re
import shutil
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
FIT = re.compile(r"x([\d.]+) serial, x([\d.]+) pool over the factors carried")
DRAWN = re.compile(r"weight [\d.]+ in the log: x([\d.]+) serial, x([\d.]+) pool")


def scored(run: Path, profile) -> dict:
    """check.py score on a copy of `run`'s records with `profile`: its score.json."""
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("*.raw.jsonl.gz", "*.log.gz", "score.*",
                                                                 "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return json.loads((copy / "score.json").read_text())


def view(score: dict) -> str:
    rows = [r for r in score["rows"] if r["backend"] == "guidance" and r.get("error_pct") is not None]
    ok = lambda s: sum(abs(r["error_pct"]) <= 10 for r in rows if r["schema"] == s)  # noqa: E731
    return (f"llguidance's median |ITL error| {score['itl']['median_abs_pct_by_backend']['guidance']:.1f}%, "
            f"nested/flat within 10% {ok('nested')} of 3, deep/flat {ok('deep')} of 3")


def main(run_name: str) -> None:
    run = SHAPE / run_name
    prof = load_profile(run / "xg" / "host.json.gz")
    ef = prof.backends["guidance"].engine_fill
    (ks, kp), (ds, dp) = [tuple(map(float, r.search(ef.method).groups())) for r in (FIT, DRAWN)]
    fit = replace(prof, backends={**prof.backends, "guidance": replace(
        prof.backends["guidance"], engine_fill=fill_scaled(ef, ks / ds, kp / dp))})
    print(f"{run_name}: llguidance's factor fitted x{ks:.3f} serial, x{kp:.3f} pool; drawn x{ds:.3f}, x{dp:.3f}")
    print(f"DRAWN (as the profile carries it): {view(scored(run, prof))}")
    print(f"FIT ALONE:                         {view(scored(run, fit))}")


if __name__ == "__main__":
    main(sys.argv[1])
