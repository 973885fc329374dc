"""The exploratory call's sweeps (run.sh; shape/README.md "The GIL's switch interval and the admission wait"), one line
each in the order they ran: the wait before the engine sees a request (the client's TTFT p50 less the engine's TTFT
mean, vllm:time_to_first_token_seconds), the engine's decode rows a step (generated tokens over its steps), its ITL,
finished requests a second, and the API server's CPU (the loop thread, the renderer's worker thread, all threads; with
two API server processes, --api-server-count 2, each process's, "+" between). With two API processes each engine step
reaches /metrics twice (each process logs the step's message for its own requests), so the steps counted are twice the
engine's and the rows a step printed half its own; the running gauge's mean beside it.
  python validation/h200-vllm-0.25.1/shape/gil/read.py [DIR]   (repository root; DIR: gil/'s folder) -> read.txt"""
import sys
from pathlib import Path

from maskcost.calibrate.api_cpu import api_process
from maskcost.records import itl_ms, read_summaries

TTFT = "vllm:time_to_first_token_seconds"
E2E = "vllm:e2e_request_latency_seconds"


def api_cpus(s) -> str:
    """The API server's CPU: its process's (api_process), or each of its VLLM::APIServer children's."""
    children = [p for p in (s.engine.server_cpu or {}).get("by_process", []) if p.get("name") == "VLLM::APIServer"]
    procs = children or [api_process(s) or {}]
    threads = [(p.get("threads") or []) + [0.0, 0.0] for p in procs]
    loop = "+".join(f"{t[0]:.2f}" for t in threads)
    renderer = "+".join(f"{t[1]:.2f}" for t in threads)
    whole = "+".join(f"{p.get('cpus', 0.0):.2f}" for p in procs)
    return f"loop {loop} renderer {renderer} all {whole}"


def line(s) -> str:
    e, c = s.engine, s.engine.counters
    eng_ttft = 1e3 * c[f"{TTFT}_sum"] / c[f"{TTFT}_count"]
    rows = e.gen_tokens_per_s * e.window_s / e.steps
    return (f"{s.config.get('label', s.point):14s} wait {s.ttft_ms_p50 - eng_ttft:4.0f} ms (TTFT client p50 "
            f"{s.ttft_ms_p50:4.0f}, engine {eng_ttft:4.0f})  rows a step {rows:4.0f}"
            f" (gauge {e.running_mean:3.0f}, step {e.step_ms:4.1f} ms)  ITL {itl_ms(s):5.1f} ms  "
            f"{c[f'{E2E}_count'] / e.window_s:4.0f} req/s  API CPU {api_cpus(s)}  tokens {s.output_tokens_mean:.1f}")


def main(d: Path) -> None:
    steps = [x.split()[1] for x in (d / "steps.txt").read_text().splitlines() if " rc=" in x]
    for name in steps:
        for s in read_summaries(d / f"{name}.jsonl"):
            print(line(s))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
