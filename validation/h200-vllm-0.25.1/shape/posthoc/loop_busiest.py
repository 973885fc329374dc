"""Post hoc on shape runs 10-12, in sample (not a transfer test; docs/validation.md finding 52): the API server's loop
costs read where the loop is busiest, at the held-out 256-client points, where each schema ran alone on each server
(flat and nested on the llguidance and the xgrammar server, two repeats each: lengths apart within a server): the loop
thread's CPU = a request's cost, its server's own (each backend validates its schema in the API server) x requests/s
+ one token cost x tokens/s (least squares, the window's rates). Then each run's profile (RUN/xg/host.json.gz) with
that request cost (llguidance's) and token cost for a structured stream, nothing else refitted, predicts llguidance's
flat and nested points at 256 clients (loop_edge.py's predict); the same with the costs a tenth dearer and cheaper. The
engine's ITL and batch at 128 and 256 clients beside: its decode rows a step (generated tokens over its steps).
  python validation/h200-vllm-0.25.1/shape/posthoc/loop_busiest.py [RUN ...]   (repository root) -> loop_busiest.txt
  CPUS=process: on the listening process's CPU, every thread (api_gil.py; the renderer's worker shares the GIL with
      the loop) -> loop_busiest-process.txt"""
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loop_edge  # noqa: E402  (SHAPE, predict)
from maskcost.calibrate.api_cpu import loop_cpus, window_tokens_per_s  # noqa: E402
from maskcost.profile import load_profile, save_profile  # noqa: E402
from maskcost.records import itl_ms, read_summaries  # noqa: E402

SERVERS = ("gd", "xg")
if os.environ.get("CPUS") == "process":
    from api_gil import process_cpus as loop_cpus  # noqa: E402,F811


def busiest_fit(run: str) -> tuple[dict[str, float], float, float]:
    """(each server's request cost ms, the token cost us, median |error| %) over the run's 256-client points."""
    rows, busy = [], []
    for i, srv in enumerate(SERVERS):
        for schema in ("flat", "nested"):
            for s in read_summaries(loop_edge.SHAPE / run / srv / f"{schema}.jsonl"):
                if s.concurrency == 256 and loop_cpus(s):
                    tok = window_tokens_per_s(s)
                    rows.append([tok / s.output_tokens_mean if j == i else 0.0 for j in range(len(SERVERS))] + [tok])
                    busy.append(loop_cpus(s))
    a, b = np.array(rows), np.array(busy)
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    err = float(np.median(np.abs(a @ x / b - 1))) * 100
    return {srv: 1e3 * x[i] for i, srv in enumerate(SERVERS)}, 1e6 * x[-1], err


def engine(run: str, schema: str, c: int) -> str:
    pts = [s for s in read_summaries(loop_edge.SHAPE / run / "gd" / f"{schema}.jsonl") if s.concurrency == c]
    rows = statistics.fmean(s.engine.gen_tokens_per_s * s.engine.window_s / s.engine.steps for s in pts)
    return f"{statistics.fmean(itl_ms(s) for s in pts):.1f} ms / {rows:.0f}"


def main(runs: list[str]) -> None:
    for run in runs:
        req, tok_us, err = busiest_fit(run)
        print(f"{run}: the loop at 256 clients: a request {req['gd']:.2f} ms (llguidance's server), {req['xg']:.2f} ms "
              f"(xgrammar's), a token {tok_us:.0f} us; median |error| {err:.1f}% over its 8 points")
        base = load_profile(loop_edge.SHAPE / run / "xg" / "host.json.gz")
        for c in (128, 256):
            print(f"  {c} clients, the engine's ITL / decode rows a step: flat {engine(run, 'flat', c)}, nested "
                  f"{engine(run, 'nested', c)}")
        for k in (0.9, 1.0, 1.1):
            p = replace(base, forward=replace(base.forward, frontend_structured_ms=k * req["gd"],
                                              frontend_structured_token_us=k * tok_us))
            with tempfile.TemporaryDirectory() as t:
                path = Path(t) / "p.json.gz"
                save_profile(p, path)
                got = {s: loop_edge.predict(path, s) for s in ("flat", "nested")}
            (f_ms, f_n), (n_ms, n_n) = got["flat"], got["nested"]
            meas = [statistics.fmean(itl_ms(s) for s in read_summaries(loop_edge.SHAPE / run / "gd" / f"{x}.jsonl")
                                     if s.concurrency == 256) for x in ("flat", "nested")]
            ratio = n_ms / f_ms
            off = 100 * (ratio / (meas[1] / meas[0]) - 1)
            print(f"  x{k:.1f}, 256 clients, the model: flat {f_ms:.1f} ms / {f_n:.0f}, nested {n_ms:.1f} ms / "
                  f"{n_n:.0f}; nested/flat {ratio:.2f} ({off:+.0f}% of the engine's)")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["run10", "run11", "run12"])
