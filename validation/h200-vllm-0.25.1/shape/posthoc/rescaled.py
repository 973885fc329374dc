"""Post hoc (finding 67): run 16's xgrammar deep/flat and nested/flat with each schema's traces rescaled by the mean
all its speed points' outputs give over the 96 calibrate traced (trace_runs.txt's factors, replayed on the
development VM), main's model otherwise as registered (check.py's predict flags)."""
import gzip, json, subprocess, sys, tempfile
from pathlib import Path
RUN = Path("validation/h200-vllm-0.25.1/shape/run16")
F = {"flat": 1 / 1.002, "nested": 1 / 0.989, "deep": 1 / 1.134}  # all / 96, trace_runs.txt run16
SWEEP = {"flat": (109, 96), "nested": (163, 160), "deep": (189, 176)}
d = json.load(gzip.open(RUN / "xg/host.json.gz", "rt"))
for t in d["backends"]["xgrammar"]["traces"]:
    f = F[t["schema_id"]]; t["fill_us"] = [x * f for x in t["fill_us"]]; t["accept_us"] = [x * f for x in t["accept_us"]]
out = {}
with tempfile.TemporaryDirectory() as tmp:
    p = Path(tmp) / "p.json.gz"
    with gzip.open(p, "wt") as fh:
        json.dump(d, fh)
    for prof, name in ((str(RUN / "xg/host.json.gz"), "as calibrated"), (str(p), "rescaled")):
        for s in F:
            j = Path(tmp) / "o.json"
            subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", prof, "--engine", "vllm",
                            "--engine-version", "0.25.1", "--backend", "xgrammar", "--max-num-seqs", "256", "--schema-id", s,
                            "--prompt-tokens", str(SWEEP[s][0]), "--prompt-cached-tokens", str(SWEEP[s][1]),
                            "--concurrency", "32", "128", "256", "--json", str(j)], check=True, stdout=subprocess.DEVNULL)
            out[name, s] = {p_["concurrency"]: p_["itl_ms_mean"] for p_ in json.loads(j.read_text())["points"]}
        for s in ("nested", "deep"):
            print(name, s + "/flat", " ".join(f"c{c} {out[name, s][c] / out[name, 'flat'][c]:.3f}" for c in (32, 128, 256)), flush=True)
