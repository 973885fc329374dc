"""Post hoc (docs/validation.md finding 56): shape runs 6, 9 and 13, the only ones whose profiles hold forward points
within 2% of each other, each scored as registered (check.py score, into a copy under /tmp) with the forward curve as
shipped (model/costs.py: a point within SAME_X = 2% above the knot before it joins that knot) and with SAME_X = 0
(the curve before: only exact repeats one knot; run 13's registered score is this one); each with the profile's forward
knots near the top, and llguidance's 256-client points as the model ran them (its running count and ITL).
  python validation/h200-vllm-0.25.1/shape/posthoc/curve_same_x.py [RUN ...]   (repository root) -> curve_same_x.txt"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPE = Path(__file__).resolve().parents[1]
HOOK = "import os\nfrom maskcost.model import costs\ncosts.SAME_X = float(os.environ['MASKCOST_SAME_X'])\n"


def score(run: str, same_x: float, tmp: Path) -> list[str]:
    hook = tmp / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK)  # (every process check.py starts sets the curve's SAME_X)
    out = tmp / str(same_x) / run  # (check.py reads the run's settings by its folder's name)
    shutil.copytree(SHAPE / run, out)
    env = {**os.environ, "MASKCOST_SAME_X": str(same_x),
           "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    got = subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(out), str(out / "xg" / "host.json.gz")],
                         check=True, capture_output=True, text=True, env=env).stdout
    pred = json.loads((out / "predicted.json").read_text())["points"]
    lines = [x for x in got.splitlines() if x.startswith(("nested/flat", "each point", "6 cores"))]
    gd = [f"{s} {pred[s]['guidance']['256']['running']:.0f} running, ITL {pred[s]['guidance']['256']['itl_ms']:.1f} ms"
          for s in ("flat", "nested")]
    return lines + ["llguidance at 256 clients, the model: " + "; ".join(gd)]


def main(runs: list[str]) -> None:
    import gzip
    for run in runs:
        fw = json.loads(gzip.decompress((SHAPE / run / "xg" / "host.json.gz").read_bytes()))["forward"]["points"]
        top = sorted((p["batch"], p["itl_ms"]) for p in fw)[-3:]
        print(f"{run}: the forward curve's top points (running, ITL ms): "
              + ", ".join(f"({b:.1f}, {i:.2f})" for b, i in top))
        with tempfile.TemporaryDirectory() as t:
            for same_x in (0.02, 0.0):
                print(f"  SAME_X = {same_x}:")
                for line in score(run, same_x, Path(t)):
                    print(f"    {line}")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["run6", "run9", "run13"])
