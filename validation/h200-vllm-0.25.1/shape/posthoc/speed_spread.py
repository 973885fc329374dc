"""Post hoc (finding 73): does the spread of calibrate --base-url's own speed reads (Profile.measured_speed.points, four
schema-on points of the server between its phases) say how far a run's held-out points miss? Over every vLLM session of
validation/scored_points.csv whose speed was read at calibration (the shape check's runs, the newcomer, transfer, tools
and fill-probe runs): each profile's speed reads' max/min and SD of their logs against the session's median |ITL error|
and mean log(measured/predicted), as scored. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/speed_spread.py > validation/h200-vllm-0.25.1/shape/posthoc/speed_spread.txt"""
import csv
import glob
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.abspath(__file__)).rsplit("/validation/", 1)[0]
sys.path.insert(0, ROOT)
from maskcost.profile import load_profile
V = f"{ROOT}/validation/h200-vllm-0.25.1"
prof = {}
for r in range(1, 19):
    for f in (f"{V}/shape/run{r}/xg/host.json.gz",):
        if os.path.exists(f):
            prof[f"vllm/shape/run{r}"] = f
for r in (1, 2, 3): prof[f"vllm/newcomer/run{r}"] = f"{V}/newcomer/run{r}/host.json.gz"
prof["vllm/tools/run1"] = f"{V}/tools/run1/host.json.gz"
prof["vllm/fillprobe/run1"] = f"{V}/fillprobe/run1/xg/host.json.gz"
for i, d in ((1, "transfer"), (2, "transfer2"), (3, "transfer3")):
    g = glob.glob(f"{V}/{d}/run1-16cores/**/*.json.gz", recursive=True)
    g = [x for x in g if "raw" not in x]
    if g:
        prof[f"vllm/transfer/run{i}"] = sorted(g, key=len)[0]
print("profiles:", "; ".join(f"{k}: {os.path.relpath(v, ROOT)}" for k, v in prof.items() if "transfer" in k))
rows = [r for r in csv.DictReader(open(f"{ROOT}/validation/scored_points.csv"))
        if r["engine"] == "vllm" and r["speed_read_from"] == "calibration"]
out = []
for s in sorted({r["session"] for r in rows}, key=lambda x: (x.split("/")[1], int(x.rsplit("run", 1)[1]))):
    pts = [r for r in rows if r["session"] == s]
    f = prof.get(s)
    try:
        ms = load_profile(f).measured_speed if f else None
    except OSError:
        ms = None
    if ms is None or not ms.points:
        print(s, "no profile", f)
        continue
    sp = [x for _, x in ms.points]
    logsd = statistics.stdev(math.log(x) for x in sp)
    errs = [float(r["err_read_pct"]) for r in pts]
    lr = [math.log(float(r["measured_itl_ms"]) / float(r["predicted_read_itl_ms"])) for r in pts]
    out.append((s, len(sp), max(sp) / min(sp), logsd, statistics.median(abs(e) for e in errs), statistics.mean(lr), statistics.pstdev(lr), len(pts)))
print(f"{'session':22s} n  max/min  logSD  med|err|%  mean_logratio  sd_logratio  points")
for o in out:
    print(f"{o[0]:22s} {o[1]}  {o[2]:.2f}    {o[3]:.3f}  {o[4]:6.1f}     {o[5]:+.3f}        {o[6]:.3f}     {o[7]:3d}")
from scipy import stats
x = [o[3] for o in out]; y = [o[4] for o in out]; z = [abs(o[5]) for o in out]
for what, v in (("median |ITL error|", y), ("|mean log ratio|", z)):
    rho, pv = stats.spearmanr(x, v)
    print(f"Spearman's rho, the speed reads' log SD against the session's {what}: {rho:+.2f} (p {pv:.2f}, {len(x)} sessions)")

