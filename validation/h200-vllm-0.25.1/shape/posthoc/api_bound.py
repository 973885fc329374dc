"""Post hoc (finding 73): at llguidance's deep points of shape run 18, is the model's API server dearer than the
engine's, or is it bound because the model's engine step is too fast? For each deep point, the engine's API process
CPU a streamed token (its listening process's CPU over the engine's tokens a second: running rows / ITL) against the
model's (the profile's structured-token cost over its speed: model/api_server.py scales it by Costs.cpu_scale), then
the model on run 18's profile (predict as check.py runs it, no band) at the speed read and two lower ones: its ITL,
running batch, step and API server busy share. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/api_bound.py > validation/h200-vllm-0.25.1/shape/posthoc/api_bound.txt"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__)).rsplit("/validation/", 1)[0]
sys.path.insert(0, ROOT)
from maskcost.profile import load_profile  # noqa: E402

RUN = f"{ROOT}/validation/h200-vllm-0.25.1/shape/run18"
PROFILE = f"{RUN}/xg/host.json.gz"
p = load_profile(PROFILE)
tok_us = p.forward.frontend_structured_token_us
print(f"run 18's profile: a structured token {tok_us:.0f} us of the API process's CPU at the profile's speed; "
      f"the speed read {p.measured_speed.cpu_speed:.3f} (the model's token {tok_us / p.measured_speed.cpu_speed:.0f} us "
      f"at it)")
print("the engine, llguidance deep alone (each repeat):")
for line in open(f"{RUN}/gd/deep.jsonl"):
    d = json.loads(line)
    e = d["engine"]
    proc = next(x for x in e["server_cpu"]["by_process"] if x.get("listens"))
    rate = e["running_mean"] / d["itl_ms_mean"] * 1e3
    print(f"  c{d['concurrency']}: ITL {d['itl_ms_mean']:.1f} ms, running {e['running_mean']:.0f}, API process "
          f"{proc['cpus']:.2f} CPU (loop thread {proc['threads'][0]:.2f}), {rate:.0f} tokens/s: "
          f"{proc['cpus'] / rate * 1e6:.0f} us a token")
print("the model on run 18's profile, llguidance deep alone (its sweep prompt, no band):")
for speed in (None, 0.65, 0.55):
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "p.json")
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", PROFILE, "--engine", "vllm",
                        "--engine-version", "0.25.1", "--backend", "guidance", "--max-num-seqs", "256",
                        "--schema-id", "deep", "--prompt-tokens", "189", "--prompt-cached-tokens", "176",
                        "--concurrency", "32", "128", "256", "--no-band", "--json", out,
                        *(["--cpu-speed", str(speed)] if speed else [])], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        pts = json.load(open(out))["points"]
    print(f"  speed {'as read' if speed is None else speed}: " + "; ".join(
        f"c{q['concurrency']} ITL {q['itl_ms_mean']:.1f} ms, running {q['running_mean']:.0f}, step "
        f"{q['breakdown']['step_ms']:.1f} ms, API server busy {q['api_server_busy_fraction']:.2f}" for q in pts))
