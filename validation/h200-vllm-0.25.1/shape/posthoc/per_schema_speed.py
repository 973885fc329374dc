"""Post hoc on runs 3-6 (docs/validation.md finding 24), an idea tried and not shipped: a speed read a schema. Each
schema's outputs point in calibrate (the schema alone at 32 clients, 40 requests: a window of about 1.2 s) gives
the model's ITL error for that schema; each nested/flat ratio predicted is scaled by nested's over flat's.
  python validation/h200-vllm-0.25.1/shape/posthoc/per_schema_speed.py  (repository root) -> stdout (per_schema_speed.txt)"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
import os
os.chdir(Path(__file__).resolve().parent.parent)
rows=[]
for run in ("run3","run4","run5","run6"):
    prof=f"{run}/xg/host.json.gz"; sc=json.load(open(f"{run}/score.json"))
    for srv,be,f in (("xg","xgrammar","host.outputs.jsonl"),("gd","guidance","host.outputs-guidance.jsonl")):
        with tempfile.TemporaryDirectory() as t:
            r=subprocess.run([sys.executable,"-m","maskcost.cli","report","--sweep",f"{run}/xg/{f}","--profile",prof,"--backend",be,"--out",t],capture_output=True,text=True)
            if r.returncode: print(run,srv,"report failed",r.stderr[-300:]); continue
            rep=json.load(open(Path(t)/"report.json"))["rows"]
        corr={}
        for x in rep:
            sid=("flat","nested","deep")[rep.index(x)]
            corr[sid]=x["metrics"]["ITL ms"]["measured"]/x["metrics"]["ITL ms"]["predicted"]
        for x in sc["rows"]:
            if x["backend"]!=be or x["schema"]!="nested" or x["measured_ratio"] is None: continue
            adj=x["predicted_ratio"]*corr["nested"]/corr["flat"]
            rows.append((run,be,x["load"],x["measured_ratio"],x["predicted_ratio"],adj))
            print(f"{run} {be:9} c{x['load']:3} measured {x['measured_ratio']:.2f} predicted {x['predicted_ratio']:.2f} ({100*(x['predicted_ratio']/x['measured_ratio']-1):+.0f}%) per-schema {adj:.2f} ({100*(adj/x['measured_ratio']-1):+.0f}%)  corr flat {corr['flat']:.2f} nested {corr['nested']:.2f}")
e0=[abs(p/m-1) for *_,m,p,a in rows]; e1=[abs(a/m-1) for *_,m,p,a in rows]
print(f"median |ratio error| as calibrated {100*statistics.median(e0):.1f}%, per-schema speed {100*statistics.median(e1):.1f}%; within 10%: {sum(e<=.1 for e in e0)} vs {sum(e<=.1 for e in e1)} of {len(rows)}")
