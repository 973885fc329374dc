"""Post hoc on shape runs 6-10 (docs/validation.md finding 42): what the engine thread's CPU a step follows on
llguidance's server once the fill pool runs (its calibration speed point at 224 clients, its held-out points at 256):
the engine process's busiest thread's CPU share (the sweep's server_cpu) x the engine's step (its /metrics), against
the running rows and the requests that end a step (requests/s x step). Each run's flat/nested ratio at 256 clients
and each 256-client point over the calibration point.
  python validation/h200-vllm-0.25.1/shape/posthoc/engine_thread.py [RUN ...]  -> stdout (engine_thread.txt)"""
import json
import statistics
import sys
from pathlib import Path

SHAPE = Path(__file__).resolve().parent.parent


def points(path: Path, clients: int) -> list[dict]:
    got = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        e = d.get("engine") or {}
        eng = [p for p in (e.get("server_cpu") or {}).get("by_process", ()) if "Engine" in p["name"]]
        if d["arm"] != "on" or d["concurrency"] != clients or not eng or not e.get("step_ms"):
            continue
        ended = d["out_tok_per_s"] / d["output_tokens_mean"] * e["step_ms"] / 1e3
        got.append({"rows": e["running_mean"], "ended": ended, "ms": eng[0]["threads"][0] * e["step_ms"]})
    return got


def mean(ps: list[dict], k: str) -> float:
    return statistics.fmean(p[k] for p in ps)


def main(runs: list[str]) -> None:
    for run in runs:
        cal = points(SHAPE / run / "xg" / "host.speed-sweep-guidance.jsonl", 224)
        got = {s: points(SHAPE / run / "gd" / f"{s}.jsonl", 256) for s in ("flat", "nested")}
        line = [f"{run}: calibration c224 {mean(cal, 'ms'):.1f} ms a step at {mean(cal, 'rows'):.0f} rows, "
                f"{mean(cal, 'ended'):.1f} ended a step"]
        for s, ps in got.items():
            line.append(f"{s} c256 {mean(ps, 'ms'):.1f} ms at {mean(ps, 'rows'):.0f} rows, {mean(ps, 'ended'):.1f} ended "
                        f"(x{mean(ps, 'ms') / mean(cal, 'ms'):.2f} the calibration point)")
        f, n = got["flat"], got["nested"]
        line.append(f"flat / nested {mean(f, 'ms') / mean(n, 'ms'):.2f}; the difference a request ended "
                    f"{(mean(f, 'ms') - mean(n, 'ms')) / (mean(f, 'ended') - mean(n, 'ended')):.1f} ms")
        print("; ".join(line))


if __name__ == "__main__":
    main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10"])
