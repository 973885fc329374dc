"""Post hoc (finding 80): how far a schema's traced sample moves the model's ratio. Runs 17-20 traced all 512 of
xgrammar's deep outputs; the model's deep ITL at 32, 128, 256 clients (xgrammar, the run's profile, the check's
request) with its deep traces cut to random 96 of them, five draws a run, against all 512."""
import json, random, statistics, subprocess, sys, tempfile
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
                        "--schema-id", schema, "--backend", "xgrammar", "--engine", "vllm", "--engine-version", "0.25.1",
                        "--max-num-seqs", "256", "--concurrency", "32", "128", "256", "--prompt-tokens",
                        str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens", str(SWEEP_PROMPTS[schema][1]),
                        "--json", str(out), "--quiet"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return [p["itl_ms_mean"] for p in sorted(json.loads(out.read_text())["points"], key=lambda p: p["concurrency"])]

rng = random.Random(0)
for r in range(17, 21):
    prof = load_profile(SHAPE / f"run{r}" / "xg" / "host.json.gz")
    b = prof.backends["xgrammar"]
    deep = [t for t in b.traces if t.schema_id == "deep"]; rest = [t for t in b.traces if t.schema_id != "deep"]
    full = itl(prof, "deep")
    draws = []
    for _ in range(5):
        sub = replace(prof, backends={**prof.backends, "xgrammar": replace(b, traces=tuple(rest + rng.sample(deep, 96)))})
        draws.append(itl(sub, "deep"))
    print(f"run{r} deep ITL ms at 32/128/256, all {len(deep)}: " + " ".join(f"{x:.1f}" for x in full) + "; 96-draws relative to all: "
          + " | ".join(" ".join(f"{d[i] / full[i]:.3f}" for d in draws) for i in range(3)), flush=True)
    for i, c in enumerate((32, 128, 256)):
        v = [d[i] / full[i] for d in draws]
        print(f"   {c}: SD of a 96-draw's ITL {100 * statistics.stdev(v):.1f}%, range {min(v):.3f}-{max(v):.3f}")
