"""Post hoc (issue 39): the replicas check (../../replicas/) scored again with the quota walked period by
period (model/host_share.py throttled_ms, on main since 2026-12-05) against the mean field it replaced, and
each quota cell's predicted change against the 4-core cpuset beside the measured ones (score.json of runs 1, 2).
  python validation/h200-vllm-0.25.1/shape/posthoc/quota_walk.py   (from the repository root) -> quota_walk.txt"""
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import replicas_extra  # noqa: E402
import maskcost.model.host_share as hs  # noqa: E402

walked = hs.quota_factor


def changes(label: str) -> None:
    import check
    with tempfile.TemporaryDirectory() as t:
        check.HERE = Path(t)
        with contextlib.redirect_stdout(io.StringIO()):
            check.predict()
        cells = json.loads((Path(t) / "predicted.json").read_text())["cells"]
    ref = cells["cpuset4"]["points"]
    for q in ("quota4", "quota2"):
        pct = {c: 100 * (p["on"] / ref[c]["on"] - 1) for c, p in cells[q]["points"].items()}
        print(f"{label}: {q} vs cpuset4, schema on: " + ", ".join(f"{c} clients {v:+.0f}%" for c, v in pct.items()))


for label, factor in (("mean field", lambda cfg, d, segments=None, ran_at=1.0: walked(cfg, d)),
                      ("period walk", walked)):
    hs.quota_factor = factor
    replicas_extra.rescore(label, lambda sim: 0.0)
    changes(label)
for run in ("run1", "run2"):
    pts = json.loads((replicas_extra.REP / run / "score.json").read_text())["points"]
    print(f"measured, {run}: " + ", ".join(f"{p['cell']} {p['load']} clients {p['measured_change_pct']:+.0f}%"
                                         for p in pts if p["cell"].startswith("quota")))
