"""Post hoc (finding 70): the "# compared" block of guidance_k.txt. For each reading, shape runs 8-16's score.json as
check.py score wrote it on each copy: llguidance's median |ITL error| over all its points (score.json itl
median_abs_pct_by_backend) a run, and its nested/flat ratio errors within 10%. "main as made": bench_scale.py at
81ff59b run with BASELINE=1 into /tmp/ph68/base; the others: guidance_k.py at 9f9df50 (MODE POOLED, REGIME) into
/tmp/ph70/MODE. Usage: python guidance_k_compare.py"""
import json, statistics, sys
from pathlib import Path
runs = [f"run{i}" for i in range(8, 17)]
for name, d in (("main as made", "/tmp/ph68/base"), ("pooled k", "/tmp/ph70/POOLED"), ("k at the regime's speed", "/tmp/ph70/REGIME")):
    meds, nf, itl_all = [], [], []
    for r in runs:
        f = Path(d) / r / "score.json"
        if not f.exists(): continue
        s = json.loads(f.read_text())
        meds.append(s["itl"]["median_abs_pct_by_backend"]["guidance"])
        nf += [x["error_pct"] for x in s["rows"] if x["backend"] == "guidance" and x["schema"] == "nested" and x["error_pct"] is not None]
    print(f"{name:26} llguidance median |ITL error| by run: {' '.join(f'{m:.1f}' for m in meds)}; median of runs "
          f"{statistics.median(meds):.1f}; nested/flat within 10% {sum(abs(x) <= 10 for x in nf)} of {len(nf)}")
