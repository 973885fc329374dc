"""Post hoc (finding 80): how far the traced sample moves the model's nested/flat ratio. Runs 17-20's profiles, both
backends: flat's and nested's traces each replaced by 96 drawn with replacement from the run's own (a new calibrate's
sample of the same outputs' population, as near as the traced ones tell), five draws a run; the model's nested/flat
ITL ratio at 32, 128, 256 clients (the check's request) against the run's profile as made."""
import json, random, statistics, subprocess, sys, tempfile, math
from dataclasses import replace
from pathlib import Path
ROOT = Path(__file__).resolve().parents[4]; sys.path.insert(0, str(ROOT))
from maskcost.profile import load_profile, save_profile
SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
sys.path.insert(0, str(SHAPE)); from check import SWEEP_PROMPTS

def itl(profile, schema):
    with tempfile.TemporaryDirectory() as t:
        save_profile(profile, Path(t) / "p.json.gz"); out = Path(t) / "o.json"
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", str(Path(t) / "p.json.gz"),
                        "--schema-id", schema, "--backend", "xgrammar", "guidance", "--engine", "vllm", "--engine-version", "0.25.1",
                        "--max-num-seqs", "256", "--concurrency", "32", "128", "256", "--prompt-tokens",
                        str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens", str(SWEEP_PROMPTS[schema][1]),
                        "--json", str(out), "--quiet"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return {(p["backend"], p["concurrency"]): p["itl_ms_mean"] for p in json.loads(out.read_text())["points"]}

rng = random.Random(1)
allr = {}
for r in range(17, 21):
    prof = load_profile(SHAPE / f"run{r}" / "xg" / "host.json.gz")
    base = {s: itl(prof, s) for s in ("flat", "nested")}
    for d in range(5):
        bk = {}
        for name, b in prof.backends.items():
            tr = [t for t in b.traces if t.schema_id not in ("flat", "nested")]
            for s in ("flat", "nested"):
                own = [t for t in b.traces if t.schema_id == s]
                tr += [rng.choice(own) for _ in range(96)]
            bk[name] = replace(b, traces=tuple(tr))
        p = replace(prof, backends=bk)
        got = {s: itl(p, s) for s in ("flat", "nested")}
        for k in got["flat"]:
            allr.setdefault(k, []).append(math.log((got["nested"][k] / got["flat"][k]) / (base["nested"][k] / base["flat"][k])))
    print(f"run{r} done: " + " ".join(f"{k[0][:2]}{k[1]} {100 * statistics.stdev(v[-5:]):.1f}%" for k, v in sorted(allr.items())), flush=True)
print("over runs 17-20, the SD of a 96-draw's log nested/flat about the run's as made: " +
      ", ".join(f"{k[0]} {k[1]}: {100 * statistics.pstdev(v):.1f}%" for k, v in sorted(allr.items())))
