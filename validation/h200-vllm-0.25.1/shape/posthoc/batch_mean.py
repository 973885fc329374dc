"""Post hoc on shape runs 6-12 (docs/validation.md finding 52): the engine's batch read as its decode rows a step over
the point's window (generated tokens over the window / the steps it counted: every running request makes one token a
step, vLLM 0.25.1 without speculative decoding) instead of the mean of the vllm:num_requests_running gauge the sweep
scraped, which the API server sets once per output message and holds until the next (vllm/v1/metrics/loggers.py,
v1/engine/async_llm.py). Every summary calibrate's chain reads gets that batch (the forward curve's points and context
slope made again from the forward and context sweeps, the rest of the curve as calibrated; then the speed read and
llguidance's fill factor, as api_cpu.py's refit with the loop-CPU fit), and the run scored as registered (check.py
score, a copy under /tmp).
  python validation/h200-vllm-0.25.1/shape/posthoc/batch_mean.py [RUN ...]   (repository root) -> batch_mean.txt
  GAUGE=1: the same chain on the gauge's mean (the forward curve made again from the same sweeps)
      -> batch_mean-gauge.txt"""
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402  (this folder's: refit, main)
import api_window  # noqa: E402,F401  (the window's rates)
from maskcost.calibrate.engine import forward_from_summaries  # noqa: E402
from maskcost.profile import load_profile  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402

api_cpu.TMP = Path("/tmp/batch_mean_posthoc")
GAUGE = bool(os.environ.get("GAUGE"))


def rows_a_step(s):
    """The summary with the engine's batch as its decode rows a step over the window (the gauge's mean where the
    point has no steps or no generated-token rate)."""
    e = s.engine
    if GAUGE or not e.steps or not e.gen_tokens_per_s or not e.window_s:
        return s
    return replace(s, engine=replace(e, running_mean=e.gen_tokens_per_s * e.window_s / e.steps))


def summaries(path):
    return [rows_a_step(s) for s in read_summaries(path)]


def profile(path):
    """The run's profile with its forward points and context slope made again from the (re-read) sweeps."""
    p, d = load_profile(path), Path(path).parent
    pre = [s for f in sorted(d.glob("host.prefill*.jsonl")) if "raw" not in f.name for s in summaries(f)]
    ctx = summaries(d / "host.context.jsonl") if (d / "host.context.jsonl").exists() else []
    new = forward_from_summaries(summaries(d / "host.forward-sweep.jsonl"), "", (), pre, ctx)
    fw = replace(p.forward, points=new.points, context_ref_tokens=new.context_ref_tokens,
                 context_us_per_ktoken=new.context_us_per_ktoken, context_points=new.context_points)
    return replace(p, forward=fw)


api_cpu.read_summaries = summaries
api_cpu.load_profile = profile

if __name__ == "__main__":
    api_cpu.main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11", "run12"])
