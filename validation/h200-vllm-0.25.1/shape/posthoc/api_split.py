"""Post hoc on shape runs 6-10 (docs/validation.md finding 44): the API server's loop costs fitted as calibrate.api_cpu
now does where two servers' schema-on points give two lengths (xgrammar's 39-41 tokens a request, llguidance's
28-29): the schema-on stream's token and request on those points alone, the schema-off stream's token on the
forward sweep alone; before, one token cost over both arms (a request's own 0). The held-out points' loop CPU
first (each point's own rates times the fitted costs, over the loop thread's CPU the sweep read), then calibrate's
chain run again with the new fit (api_cpu.py's refit: the speed read, llguidance's fill factor) and each run
scored as registered (check.py score, a copy under /tmp): its "loop CPU fit" lines; its "as registered" lines are
the run's own score (runs 6-9 before the loop-CPU fit was shipped: api_cpu.txt has them with the one-cost fit).
  python validation/h200-vllm-0.25.1/shape/posthoc/api_split.py [RUN ...]   (repository root) -> api_split.txt
  ONE_COST=1: the chain with the one-cost fit instead (run 11, registered with the arms apart: its counterfactual,
      api_split-run11-one-cost.txt)
  Ran with calibrate.api_cpu as it was up to 7be063f (a structured request's cost fitted apart from its tokens');
  finding 54 replaced that fit: run it from that commit (`git worktree add /tmp/at 7be063f`)."""
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402  (this folder's: refit, summary, running)
from maskcost.calibrate.api_cpu import ApiCpuFit, fit_api_cpu, loop_cpus  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402

SHAPE = api_cpu.SHAPE
api_cpu.TMP = Path("/tmp/api_split_posthoc")
ONE_COST = bool(os.environ.get("ONE_COST"))


def rates(s) -> tuple[float, float]:
    return s.out_tok_per_s / s.output_tokens_mean, s.out_tok_per_s


def one_cost_fit(points) -> ApiCpuFit:
    """The fit before finding 44: one token cost over both arms, a structured request's extra, no request cost."""
    use = [s for s in points if s.concurrency >= 8 and s.out_tok_per_s and s.output_tokens_mean and loop_cpus(s)]
    a = np.array([(rates(s)[0] if s.arm == "on" else 0.0, s.out_tok_per_s) for s in use])
    b = np.array([loop_cpus(s) for s in use])
    x, _ = nnls(a, b)
    return ApiCpuFit(structured_ms=1e3 * x[0], token_us=1e6 * x[1], points=len(use),
                     median_abs_error_pct=float(np.median(np.abs(a @ x / b - 1))) * 100)


def held_out(run: str, fits: dict[str, ApiCpuFit]) -> str:
    """Each held-out schema-alone point's loop CPU by the fit, over the measured: the median by server and schema."""
    out = []
    for label, f in fits.items():
        got = {}
        for srv in ("gd", "xg"):
            for s in ("flat", "nested", "deep"):
                path = SHAPE / run / srv / f"{s}.jsonl"
                if not path.exists():
                    continue
                for p in read_summaries(path):
                    busy = loop_cpus(p)
                    if p.arm != "on" or not busy or not p.out_tok_per_s:
                        continue
                    rq, tok = rates(p)
                    model = rq * (f.request_ms + f.structured_ms) / 1e3 + tok * (f.structured_token_us or f.token_us) / 1e6
                    got.setdefault(f"{srv} {s}", []).append(model / busy - 1)
        out.append(f"{label}: " + ", ".join(f"{k} {100 * statistics.median(v):+.0f}%" for k, v in got.items()))
    return "; ".join(out)


def main(runs: list[str]) -> None:
    for run in runs:
        d = SHAPE / run / "xg"
        pts = [*read_summaries(d / "host.forward-sweep.jsonl"), *read_summaries(d / "host.speed-sweep.jsonl"),
               *read_summaries(d / "host.speed-sweep-guidance.jsonl")]
        print(f"{run}: the held-out points' loop CPU, modelled over measured: "
              + held_out(run, {"one token cost": one_cost_fit(pts), "the arms apart": fit_api_cpu(pts)}))
        if ONE_COST:  # the counterfactual: calibrate's chain with the one-cost fit
            api_cpu.fit_api_cpu = one_cost_fit
        api_cpu.main([run])
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10"])
