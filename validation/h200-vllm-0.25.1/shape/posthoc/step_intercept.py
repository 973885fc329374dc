"""Post hoc (finding 67): on the shape runs that measured deep alone beside flat and nested (runs 1 and 16), each
load's step as a line in the model's serial fill a step: step = a + b x fill, the engines' (their ITL) against
main's model's (its step), each fitted over the three schemas at one load (report on the run's own profile)."""
import json, subprocess, sys, tempfile
from pathlib import Path
import numpy as np
for run in sys.argv[1:]:
    R = Path(run)
    for srv, be in (("xg", "xgrammar"), ("gd", "guidance")):
        rows = {}
        with tempfile.TemporaryDirectory() as t:
            for s in ("flat", "nested", "deep"):
                if not (R / srv / f"{s}.jsonl").exists():
                    continue
                subprocess.run([sys.executable, "-m", "maskcost.cli", "report", "--sweep", str(R / srv / f"{s}.jsonl"),
                                "--profile", str(R / "xg/host.json.gz"), "--backend", be, "--out", f"{t}/{s}"],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for r in json.loads(Path(f"{t}/{s}/report.json").read_text())["rows"]:
                    if r["arm"] == "on":
                        b = r["predicted_breakdown"]
                        rows[s, r["concurrency"]] = (b["serial_fill_step_ms"] or b["pool_fill_step_ms"], b["step_ms"],
                                                     r["metrics"]["ITL ms"]["measured"], r["metrics"]["ITL ms"]["predicted"])
        for c in sorted({c for _, c in rows}):
            pts = [(s,) + rows[s, c] for s in ("flat", "nested", "deep") if (s, c) in rows]
            if len(pts) < 3:
                continue
            fill = np.array([p[1] for p in pts]); step = np.array([p[2] for p in pts]); itl = np.array([p[3] for p in pts])
            bm, am = np.polyfit(fill, step, 1); be_, ae = np.polyfit(fill, itl, 1)
            print(f"{R.name} {be:9s} c{c:<3d} model fill a step " + " ".join(f"{p[0]} {p[1]:.1f}" for p in pts)
                  + f" | engines' ITL = {ae:5.1f} + {be_:.2f} x fill; model's step = {am:5.1f} + {bm:.2f} x fill", flush=True)
