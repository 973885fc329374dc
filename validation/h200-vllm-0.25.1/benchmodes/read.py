"""The bench modes' reading (README.md here, its rule written before the run): python3 read.py RUN_DIR"""
import gzip
import json
import statistics
import sys
from pathlib import Path

f = Path(sys.argv[1]) / "bench.jsonl"
text = f.read_text() if f.exists() else gzip.decompress(f.with_name("bench.jsonl.gz").read_bytes()).decode()
rows = [json.loads(x) for x in text.splitlines() if x.strip()]
by = lambda pre: [r["us"] for r in rows if r["phase"].startswith(pre)]  # noqa: E731
med = statistics.median
spread = by("spread-a") + by("spread-b")
b2b = [med([r["us"] for r in rows if r["phase"] == p]) for p in sorted({r["phase"] for r in rows if r["phase"].startswith("b2b")})]
sus = [r for r in rows if r["phase"] == "sustained"]
t0 = sus[0]["t_s"]
first = [r["us"] for r in sus if r["t_s"] - t0 <= 10]
last = [r["us"] for r in sus if r["t_s"] - t0 >= sus[-1]["t_s"] - t0 - 30]
idle = by("spread-a") + by("spread-c")
print(f"rounds: {len(rows)}; one a second (phases a, b) median {med(spread):.0f} us over {len(spread)}; "
      f"{len(b2b)} back-to-back benches, their medians {min(b2b):.0f}-{max(b2b):.0f} us")
print(f"R_b2b (back-to-back benches' median over one-a-second rounds'): {med(b2b) / med(spread):.2f}")
print(f"R_sust (a sustained minute and a half: its last 30 s over its first 10 s): {med(last) / med(first):.2f} "
      f"({med(first):.0f} -> {med(last):.0f} us; {len(sus)} rounds)")
print(f"R_load (one a second beside 12 busy processes over idle one a second, phases a and c): "
      f"{med(by('loaded')) / med(idle):.2f}")
print(f"drift: phase c over phase a (one a second, idle, about 5 min apart): {med(by('spread-c')) / med(by('spread-a')):.2f}")
print("10-s windows, median us: " + ", ".join(
    f"{int(w) * 10}s {med([r['us'] for r in rows if int(r['t_s'] // 10) == w]):.0f}"
    for w in sorted({int(r["t_s"] // 10) for r in rows})))
# post hoc (added after run 1, finding 75; the rule above unchanged): the rounds' two speeds, a round over SLOW_US slow
SLOW_US = 70000
slow, fast = [r["us"] for r in rows if r["us"] > SLOW_US], [r["us"] for r in rows if r["us"] <= SLOW_US]
secs = {}
for r in rows:
    secs.setdefault(int(r["t_s"]), []).append(r["us"])
slow_s = [k for k in sorted(secs) if med(secs[k]) > SLOW_US]
runs, start, last_k = [], None, None
for k in slow_s:
    if start is None or k != last_k + 1:
        if start is not None:
            runs.append(last_k + 1 - start)
        start = k
    last_k = k
if start is not None:
    runs.append(last_k + 1 - start)
print(f"post hoc: rounds over {SLOW_US} us: {len(slow)} of {len(rows)}, median {med(slow):.0f} us against the rest's "
      f"{med(fast):.0f} (x{med(slow) / med(fast):.2f}); seconds whose median is over it: {len(slow_s)} of {len(secs)}, "
      f"in {len(runs)} episodes of {min(runs)}-{max(runs)} s")
