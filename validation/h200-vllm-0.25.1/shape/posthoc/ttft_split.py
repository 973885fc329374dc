"""Post hoc on shape runs 10-12 (docs/validation.md finding 51): where a request's time goes before its first token, at
each server's held-out points (the mean of the two repeats): the client's TTFT p50 beside the engine's own TTFT
(vllm:time_to_first_token_seconds, stamped in the API server from when its input processor hands the request on, a
mean), the engine's running count and the API server's loop: its thread's busy share and its CPU a request
(calibrate.api_cpu, the window's rates).
  python validation/h200-vllm-0.25.1/shape/posthoc/ttft_split.py [RUN ...]   (repository root) -> ttft_split.txt"""
import statistics
import sys
from pathlib import Path

from maskcost.calibrate.api_cpu import loop_cpus, window_tokens_per_s
from maskcost.records import read_summaries

SHAPE = Path(__file__).resolve().parents[1]
TTFT = "vllm:time_to_first_token_seconds"


def row(points) -> str:
    mean = lambda f: statistics.fmean(f(s) for s in points)  # noqa: E731
    c = lambda s: s.engine.counters  # noqa: E731
    eng = mean(lambda s: 1e3 * c(s)[f"{TTFT}_sum"] / c(s)[f"{TTFT}_count"])
    per_req = mean(lambda s: 1e3 * loop_cpus(s) * s.output_tokens_mean / window_tokens_per_s(s))
    running = mean(lambda s: s.engine.running_mean)
    return (f"tokens {mean(lambda s: s.output_tokens_mean):4.1f}  running {running:3.0f}  "
            f"TTFT p50 client {mean(lambda s: s.ttft_ms_p50):4.0f} ms, engine (mean) {eng:4.0f} ms  "
            f"loop {mean(loop_cpus):.2f}, {per_req:.2f} ms a request")


def main(runs: list[str]) -> None:
    for run in runs:
        for srv in ("gd", "xg"):
            for schema in ("flat", "nested"):
                for c in (128, 256):
                    pts = [s for s in read_summaries(SHAPE / run / srv / f"{schema}.jsonl") if s.concurrency == c]
                    print(f"{run} {srv} {schema:6s} c{c}: {row(pts)}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["run10", "run11", "run12"])
