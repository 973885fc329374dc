"""Post hoc (docs/validation.md finding 57): finding 57's candidate, a structured request's cost to the API process
that falls as the process fills, tried: on the schema-on points busy = a T + r (1 - busy) R (T tokens a second, R
requests a second: linear in a and r, through 0), the schema-off token as calibrate.api_cpu fits it; in the model a
structured request's admission costs r (1 - u), u the API server queue's busy share over the last 100 ms (a hook set in
every process this starts). Shape runs 10-12 through calibrate's chain as api_token_only.py runs them, then transfer run
2 as transfer2/posthoc_api_fit.py scores it.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_request_fill.py  (repository root) -> api_request_fill.txt"""
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

HERE = Path(__file__).resolve().parent
WINDOW_MS = 100.0
HOOK = f'''from maskcost.model import api_server as _a


def _recent_busy(self, now):
    lo, busy = now - {WINDOW_MS}, 0.0
    for s, e in reversed(self.spans):
        if e <= lo:
            break
        busy += max(0.0, min(e, now) - max(s, lo))
    return min(1.0, busy / {WINDOW_MS})


def admit(self, structured, now):
    ms = self.structured_ms * (1.0 - _recent_busy(self, now)) if structured else self.request_ms
    return self.job("admit request", ms * self.cpu_scale, now)


_a.ApiServer.admit = admit
'''


def fill_fit(points):
    from maskcost.calibrate.api_cpu import ApiCpuFit, api_cpus, window_tokens_per_s
    rows = {"off": [], "on": []}
    for s in points:
        cpus, _ = api_cpus(s)
        tok = window_tokens_per_s(s)
        if s.concurrency >= 8 and tok and cpus and s.output_tokens_mean:
            rows[s.arm].append((tok, tok / s.output_tokens_mean, cpus))
    off, on = np.array(rows["off"]), np.array(rows["on"])
    tok_off = float(off[:, 0] @ off[:, 2] / (off[:, 0] @ off[:, 0]))
    a = np.stack([on[:, 0], (1 - on[:, 2]) * on[:, 1]], 1)
    x = nnls(a, on[:, 2])[0]
    err = float(np.median(np.abs(a @ x / on[:, 2] - 1))) * 100
    print(f"  fill fit: a structured token {1e6 * x[0]:.0f} us, a structured request {1e3 * x[1]:.2f} ms x (1 - busy); "
          f"a schema-off token {1e6 * tok_off:.0f} us; median |error| {err:.1f}% over {len(on)} schema-on points",
          flush=True)
    got = ApiCpuFit(token_us=1e6 * tok_off, structured_token_us=1e6 * x[0], points=len(on) + len(off),
                    median_abs_error_pct=err)
    object.__setattr__(got, "structured_ms", 1e3 * x[1])  # (over the class's 0: the hook prices it)
    return got


def main() -> None:
    sys.path.insert(0, str(HERE))
    import api_cpu
    import maskcost.calibrate.api_cpu as lib
    api_cpu.fit_api_cpu = lib.fit_api_cpu = fill_fit
    for run in ("run10", "run11", "run12"):
        api_cpu.main([run])
        sys.stdout.flush()
    print("transfer run 2:")
    sys.stdout.flush()
    runpy.run_path(str(HERE.parents[1] / "transfer2" / "posthoc_api_fit.py"), run_name="__main__")


if __name__ == "__main__":
    if os.environ.get("API_REQUEST_FILL_HOOK"):
        main()
    else:  # again, with the hook in this process and every one it starts
        with tempfile.TemporaryDirectory() as t:
            (Path(t) / "sitecustomize.py").write_text(HOOK)
            env = {**os.environ, "API_REQUEST_FILL_HOOK": "1",
                   "PYTHONPATH": os.pathsep.join(filter(None, [t, os.environ.get("PYTHONPATH")]))}
            sys.exit(subprocess.run([sys.executable, __file__], env=env).returncode)
