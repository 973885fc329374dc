"""Does a server's in-engine fill slow down with its age? Per engine-core process of sessions K and
L: the median per-row time of its serial fills (grammar_bitmask over 16-128 rows, the probe) in 10 s
bins, against the requests it had taken by then (EngineCore.add_request calls), beside the host
meter's 64-row fill per row (another process, its own core). Writes aging.png and prints the table.
usage: python validation/h200-vllm-0.25.1/l/aging.py"""
import gzip
import json

import numpy as np

from maskcost.plotting import save, subplots
from maskcost.validate.inengine import read_probe

V = "validation/h200-vllm-0.25.1"
fig, ax = subplots(figsize=(8, 4.5))
print("| session | engine pid | requests taken | serial fill per row, p50 (us) | meter row (us) |")
print("|---|---|---|---|---|")
for sess in ("k", "l"):
    p = read_probe(f"{V}/{sess}/probe")
    meter = [json.loads(x) for x in gzip.open(f"{V}/{sess}/meter.jsonl.gz", "rt") if "t_unix_s" in x]
    mt = np.array([r["t_unix_s"] for r in meter])
    mrow = np.array([r["batch_row_us"] for r in meter])
    for pid in np.unique(p["pid"][p["name"] == "StructuredOutputManager.grammar_bitmask"]):
        mine = p["pid"] == pid
        adds = np.sort(p["start_s"][mine & (p["name"] == "EngineCore.add_request")])
        fill = mine & (p["name"] == "StructuredOutputManager.grammar_bitmask") & (p["n"] >= 16) & (p["n"] <= 128)
        t, row = p["start_s"][fill], 1e3 * p["dur_ms"][fill] / p["n"][fill]
        xs, ys = [], []
        for b0 in np.arange(t.min(), t.max(), 10.0):
            sel = (t >= b0) & (t < b0 + 10.0)
            if sel.sum() < 20:
                continue
            taken = int(np.searchsorted(adds, b0 + 5.0))
            m = (mt > b0) & (mt <= b0 + 10.0)
            xs.append(taken)
            ys.append(float(np.median(row[sel])))
            print(f"| {sess.upper()} | {pid} | {taken} | {ys[-1]:.0f} | {np.median(mrow[m]):.0f} |" if m.any()
                  else f"| {sess.upper()} | {pid} | {taken} | {ys[-1]:.0f} | |")
        ax.plot(xs, ys, "o-", ms=3, label=f"session {sess.upper()}, engine pid {pid}")
ax.set_xlabel("requests the server had taken")
ax.set_ylabel("serial fill per row, p50 of 10 s (us)")
ax.set_title("In-engine fill per row against the server's age (probe; xgrammar, H200 VM)", fontsize=9)
ax.legend(fontsize=7)
save(fig, f"{V}/l/aging.png")
