"""How `calibrate --base-url` spends its trace time (issue 36): the default plan's outputs a schema and replays an
output (LivePlan.outputs_per_schema, trace_repeats) against the former 32 outputs replayed 3 times each, on the
same recorded outputs: the trace time of each, and how well each knows a schema's mean cost a token
(fill.mean_cost_spread, the delta method). Printed as ratios: time (goal: the default within 1.25x of the former)
and spread (former / default; > 1: the default knows the mean better).

The outputs: a committed vLLM 0.25.1 server's (validation/h200-vllm-0.25.1/shape/run7: the xgrammar and the
llguidance server's schema-on speed sweeps, the engine's own tokens), traced on this machine.
Run: python benchmarks/bench_trace_plan.py   (prints CPU model, nproc, each backend's times and ratios)
"""
import os
import sys
import time
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import mean_cost_spread, trace_schema
from maskcost.calibrate.host import cpu_model
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.schemas import load_schema_file
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile
from maskcost.validate.plan import LivePlan

RUN = Path(__file__).resolve().parent.parent / "validation" / "h200-vllm-0.25.1" / "shape" / "run7"
FORMER = (32, 3)  # outputs a schema, replays an output
GOAL_TIME_RATIO = 1.25
SWEEPS = {"xgrammar": "host.speed-sweep.raw.jsonl.gz", "guidance": "host.speed-sweep-guidance.raw.jsonl.gz"}


def traced(be, entries, outputs, k: int, repeats: int) -> tuple[float, dict]:
    t0 = time.perf_counter()
    traces = [t for e in entries for t in trace_schema(be, e, outputs[e.schema_id][:k], repeats=repeats,
                                                       max_traces=k).traces]
    return time.perf_counter() - t0, mean_cost_spread(traces)


def main() -> None:
    plan = LivePlan()
    p = load_profile(RUN / "xg" / "host.json.gz")
    vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
    entries = [load_schema_file(RUN.parent / "schemas" / f"{s}.json") for s in ("flat", "nested", "deep")]
    print(f"{cpu_model()}, nproc {len(os.sched_getaffinity(0))}, Python {sys.version.split()[0]}; default "
          f"{plan.outputs_per_schema} outputs x {plan.trace_repeats} replay, former {FORMER[0]} x {FORMER[1]}; "
          f"goal: time ratio <= {GOAL_TIME_RATIO}")
    for backend, sweep in SWEEPS.items():
        be = make_backend(backend, vocab)
        outputs = recorded_outputs(RUN / "xg" / sweep, vocab)
        traced(be, entries, outputs, 4, 1)  # warm-up: the compiles and the first matchers, before either is timed
        t_old, s_old = traced(be, entries, outputs, *FORMER)
        t_new, s_new = traced(be, entries, outputs, plan.outputs_per_schema, plan.trace_repeats)
        spread = ", ".join(f"{sid} +-{100 * s_old[sid][1]:.0f}% -> +-{100 * s_new[sid][1]:.0f}% "
                           f"(x{s_old[sid][1] / s_new[sid][1]:.2f})" for sid in sorted(s_new))
        print(f"{backend}: trace time {t_old:.1f} s -> {t_new:.1f} s, ratio {t_new / t_old:.2f} "
              f"({'met' if t_new / t_old <= GOAL_TIME_RATIO else 'missed'}); mean cost a token known to {spread}")


if __name__ == "__main__":
    main()
