"""Post hoc on shape runs 6-12 (docs/validation.md finding 51): a structured stream's token priced as the schema-off
stream's (one token, one SSE chunk to detokenize and send, with or without a schema), and a structured request's cost
fitted on the schema-on points with that token cost held: where calibrate.api_cpu fits the schema-on stream's token and
request on two servers' points (xgrammar's 39-41 tokens a request, llguidance's 28-30), whose requests need not cost the
loop alike (each backend validates its schema in the API server), so the length's price and the backend's are one
column. Through calibrate's chain and scored as registered (api_split.py, api_cpu.py: a copy of the run under /tmp), the
window's rates.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_token.py [RUN ...]   (repository root) -> api_token.txt
  Ran with calibrate.api_cpu as it was up to 7be063f (a structured request's cost fitted apart from its tokens');
  finding 54 replaced that fit: run it from that commit (`git worktree add /tmp/at 7be063f`)."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402
import api_split  # noqa: E402
import api_window  # noqa: E402,F401  (the window's rates, held-out points too)
from maskcost.calibrate.api_cpu import ApiCpuFit, fit_api_cpu, loop_cpus, window_tokens_per_s  # noqa: E402


def token_held_fit(points) -> ApiCpuFit | None:
    """calibrate.api_cpu's fit, then a structured request's whole cost refitted with its tokens at the off stream's."""
    got = fit_api_cpu(points)
    if got is None:
        return None
    on = [s for s in points if s.arm == "on" and s.concurrency >= 8 and loop_cpus(s) and window_tokens_per_s(s)]
    tok_us = got.token_us
    per_req = [(loop_cpus(s) - window_tokens_per_s(s) * tok_us / 1e6) / (window_tokens_per_s(s) / s.output_tokens_mean)
               for s in on]
    rq = np.array([window_tokens_per_s(s) / s.output_tokens_mean for s in on])
    b = np.array([loop_cpus(s) - window_tokens_per_s(s) * tok_us / 1e6 for s in on])
    req_s = max(0.0, float(rq @ b / (rq @ rq)))  # least squares through 0, the request's cost alone
    model = rq * req_s + np.array([window_tokens_per_s(s) for s in on]) * tok_us / 1e6
    err = float(np.median(np.abs(model / np.array([loop_cpus(s) for s in on]) - 1))) * 100
    print(f"  token held at {tok_us:.0f} us: a structured request {1e3 * req_s:.2f} ms (per point "
          f"{', '.join(f'{1e3 * x:.2f}' for x in per_req)}), median |error| {err:.0f}% over {len(on)} schema-on points")
    return ApiCpuFit(structured_ms=1e3 * req_s, token_us=tok_us, points=len(on), median_abs_error_pct=err,
                     structured_token_us=tok_us)


api_cpu.fit_api_cpu = token_held_fit

if __name__ == "__main__":
    for run in sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11", "run12"]:
        api_cpu.main([run])
        sys.stdout.flush()
