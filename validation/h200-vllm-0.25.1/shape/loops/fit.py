"""The loops experiment's reading (run.sh here; docs/validation.md finding 50): each sweep's rates and the llguidance
server's API-process CPU (the loop thread, the renderer's worker thread, the whole process), per request; then linear
fits (non-negative least squares) of that CPU over all 12 sweeps on a request's and a token's cost (and an engine
step's), each sweep's residual beside it.
  python validation/h200-vllm-0.25.1/shape/loops/fit.py   (repository root) -> fit.txt"""
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from maskcost.calibrate.api_cpu import api_process, window_tokens_per_s
from maskcost.records import read_summaries

HERE = Path(__file__).resolve().parent
ORDER = ("flat-c224", "nested-c224", "deep-c224", "mix-c224", "flat-c96", "nested-c96", "deep-c96", "mix-c96",
         "mix-c224-2", "deep-c224-2", "nested-c224-2", "flat-c224-2")  # the order they ran
FITS = (("request", "token"), ("step", "request", "token"))


def read() -> list[dict]:
    got = []
    for name in ORDER:
        for s in read_summaries(HERE / f"{name}.jsonl"):
            api = api_process(s)
            tok = window_tokens_per_s(s)
            got.append({"name": name, "s": s, "token": tok, "request": tok / s.output_tokens_mean,
                        "step": s.engine.steps / s.engine.window_s, "loop": api["threads"][0],
                        "renderer": api["threads"][1], "process": api["cpus"]})
    return got


def main() -> None:
    pts = read()
    print("sweep          tok/req prompt  req/s steps/s running ITL ms | loop  renderer process | ms a request: loop "
          "process | client")
    for p in pts:
        s, rq = p["s"], p["request"]
        print(f"{p['name']:14s} {s.output_tokens_mean:6.1f} {s.prompt_tokens_mean:6.0f} {rq:6.1f} {p['step']:6.1f} "
              f"{s.engine.running_mean:7.0f} {s.itl_ms_mean:6.1f} | {p['loop']:.3f} {p['renderer']:.3f} "
              f"{p['process']:.3f} | {1e3 * p['loop'] / rq:5.2f} {1e3 * p['process'] / rq:5.2f} | "
              f"{s.client_cpu_pct:.0f}%")
    for cpu in ("loop", "process"):
        for cols in FITS:
            a, b = np.array([[p[c] for c in cols] for p in pts]), np.array([p[cpu] for p in pts])
            x = nnls(a, b)[0]
            res = a @ x / b - 1
            costs = ", ".join(f"{v * 1e6:.0f} us a token" if c == "token" else f"{v * 1e3:.2f} ms a {c}"
                              for c, v in zip(cols, x))
            print(f"\n{cpu}: {costs}; median |residual| {100 * np.median(np.abs(res)):.1f}%\n  "
                  + ", ".join(f"{p['name']} {100 * r:+.0f}%" for p, r in zip(pts, res)))


if __name__ == "__main__":
    main()
