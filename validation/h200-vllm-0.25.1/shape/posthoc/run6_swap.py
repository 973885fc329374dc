"""Post hoc on run 6 (docs/validation.md finding 24): which part of run 6's calibration made its held-out points
miss. Run 6's own profile scored by check.py's rule with one part at a time taken from run 5's profile (another
machine's, calibrated a day earlier): the API server's fitted costs, the whole forward curve, the server's speed
read, llguidance's fitted in-engine factor, the fill traces (both backends, with the host they were timed on);
then run 5's profile whole. Also each run's traced xgrammar fill (mean us a token, per schema) beside its bench.
  python validation/h200-vllm-0.25.1/shape/posthoc/run6_swap.py   (repository root) -> stdout (run6_swap.txt)"""
import copy
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
RUN, OTHER = "run6", "run5"
FRONTEND = ("frontend_token_us", "frontend_request_ms", "frontend_structured_ms", "ttft_fixed_ms")
FILL_PARTS = ("traces", "compiles", "pool", "batch_fill_saving_us", "engine_row_us")


def profile(run: str) -> dict:
    return json.loads(gzip.decompress((HERE / run / "xg" / "host.json.gz").read_bytes()))


def swapped(p: dict, o: dict, parts: tuple[str, ...]) -> dict:
    """`p` with `parts` taken from `o`."""
    p = copy.deepcopy(p)
    for part in parts:
        if part == "frontend":
            p["forward"].update({k: o["forward"][k] for k in FRONTEND})
        elif part == "forward":
            p["forward"] = o["forward"]
        elif part == "speed":
            p["measured_speed"] = o["measured_speed"]
        elif part == "guidance factor":
            p["backends"]["guidance"]["engine_fill"] = o["backends"]["guidance"]["engine_fill"]
        elif part == "traces":
            for be in ("xgrammar", "guidance"):
                p["backends"][be].update({k: o["backends"][be][k] for k in FILL_PARTS})
            p["host"] = o["host"]
    return p


def scored(p: dict, tmp: Path, name: str) -> str:
    """check.py score on a copy of the run with profile `p`: its summary lines."""
    f, d = tmp / f"{name}.json.gz", tmp / name / RUN
    f.write_bytes(gzip.compress(json.dumps(p).encode()))
    shutil.copytree(HERE / RUN, d)
    out = subprocess.run([sys.executable, str(HERE / "check.py"), "score", str(d), str(f)], capture_output=True,
                         text=True, check=True).stdout
    keep = ("nested/flat within", "by backend", "every held-out")
    return "\n  ".join(line.split("; bar")[0] if "within" in line else line.split(", bar")[0]
                       for line in out.splitlines() if line.startswith(keep) or "every held-out" in line)


def trace_means(p: dict) -> str:
    fills: dict[str, list[float]] = {}
    for t in p["backends"]["xgrammar"]["traces"]:
        fills.setdefault(t["schema_id"], []).extend(t["fill_us"])
    m = {k: statistics.fmean(v) for k, v in fills.items()}
    return (" ".join(f"{k} {v:.0f}" for k, v in m.items()) +
            f"; nested/flat {m['nested'] / m['flat']:.2f}; bench {p['host']['bench_us'] / 1e3:.0f} ms")


def main() -> None:
    p, o = profile(RUN), profile(OTHER)
    with tempfile.TemporaryDirectory() as t:
        for parts in ((), ("frontend",), ("forward",), ("speed",), ("guidance factor",), ("traces",),
                      ("traces", "speed"), ("traces", "speed", "guidance factor")):
            name = " + ".join(parts) or "nothing"
            print(f"{RUN}'s profile, {name} from {OTHER}'s:\n  {scored(swapped(p, o, parts), Path(t), name.replace(' ', '_'))}")
        print(f"{OTHER}'s profile whole:\n  {scored(o, Path(t), 'other')}")
    print("\nxgrammar's traced fill, mean us a token per schema (calibrate on each run's machine):")
    for run in ("run1", "run3", "run4", "run5", "run6"):
        print(f"  {run}: {trace_means(profile(run))}")


if __name__ == "__main__":
    main()
