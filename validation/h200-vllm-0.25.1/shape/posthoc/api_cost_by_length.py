"""Post hoc (docs/validation.md finding 57): the API server process's CPU a streamed token at calibrate's points
(calibrate.api_cpu: the listening process's CPU over the engine's generated tokens a second over the window it was
read on), per point, for servers whose schemas write outputs of unlike lengths: transfer run 2's (98-101 tokens a
request) and shape run 12's two (xgrammar's 40-41, llguidance's 28-30); then each server's mean beside a + r / L with
a = 65 us a token and r = 4 ms a request.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_cost_by_length.py  (repository root) -> api_cost_by_length.txt"""
import statistics
from pathlib import Path

from maskcost.calibrate.api_cpu import api_cpus, window_tokens_per_s
from maskcost.records import read_summaries

V = Path(__file__).resolve().parents[3] / "h200-vllm-0.25.1"
SERVERS = (("transfer run 2", V / "transfer2/run1-16cores/host.speed-sweep.jsonl"),
           ("shape run 12, xgrammar", V / "shape/run12/xg/host.speed-sweep.jsonl"),
           ("shape run 12, llguidance", V / "shape/run12/xg/host.speed-sweep-guidance.jsonl"))
A_US, R_US = 65.0, 4000.0

for name, path in SERVERS:
    per_tok, lengths = [], []
    for s in read_summaries(path):
        cpus, what = api_cpus(s)
        tok = window_tokens_per_s(s)
        if s.arm != "on" or s.concurrency < 8 or not cpus or not tok:
            continue
        per_tok.append(1e6 * cpus / tok)
        lengths.append(s.output_tokens_mean)
        print(f"{name}: {s.concurrency} clients, {what} {cpus:.2f} CPU, {tok:.0f} tokens/s, {s.output_tokens_mean:.1f} "
              f"tokens a request: {per_tok[-1]:.0f} us a token")
    mean, length = statistics.fmean(per_tok), statistics.fmean(lengths)
    model = A_US + R_US / length
    print(f"{name}: mean {mean:.0f} us a token at {length:.1f} tokens a request; {A_US:.0f} + {R_US:.0f} / L = "
          f"{model:.0f} ({100 * (model / mean - 1):+.1f}%)")
