"""Where the guidance server's error at high concurrency comes from (post hoc, written after W was scored;
not a prediction): the running batch. For U's, V's and W's servers, each point at 128 and above: the
engine's running batch measured and predicted, the API server's admission (the probe's mean wall of
OpenAIServingChat.create_chat_completion), each request's time outside the server (the client's mean e2e less
vLLM's own, vllm:e2e_request_latency_seconds, which starts at the API server's arrival stamp), TTFT p50
measured and predicted, and the ITL error at the server's
median ITL speed (all its points: post hoc) read two ways from the grid: at the point's concurrency (what the
rule scores) and at the concurrency whose predicted running matches the measured running (interpolated), the
error the model's step would have with the engine's real batch.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/w/frontend.py > validation/h200-vllm-0.25.1/w/frontend.md"""
import statistics
import sys
from pathlib import Path

import numpy as np

from maskcost.calibrate.profile import load_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.inengine import read_probe, window_stats
from maskcost.validate.report import at_speed
from maskcost.validate.sweep import itl_ms, raw_records_path, read_raw_records, read_summaries

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V))
from scoring import UV_SERVERS, grid, median_itl_speed  # noqa: E402

PROFILE = V / "w" / "profile-u1loop.json.gz"


def client_e2e_ms(sweep: str) -> dict[str, float]:
    """The client's mean e2e per point (the sweep's raw records)."""
    by: dict[str, list[float]] = {}
    for r in read_raw_records(raw_records_path(sweep)):
        if r["e2e_ms"] is not None:
            by.setdefault(r["point"], []).append(r["e2e_ms"])
    return {k: statistics.mean(v) for k, v in by.items()}


def main() -> None:
    profile = load_profile(PROFILE)
    print(f"Profile {profile.name}, W's grids (w/predicted-*.json), each server at the median ITL speed of all its "
          "points. ITL error: predicted at the point's concurrency / at the measured running.\n")
    print("| server | conc | running measured / predicted | admission ms | outside the server ms | "
          "TTFT p50 measured / predicted | ITL error at conc | at measured running |")
    print("|---|---|---|---|---|---|---|---|")
    summary: dict[str, list[tuple[float, float]]] = {}
    for sess in "uvw":
        probe = read_probe(f"{V}/{sess}/probe")
        for i, backend in UV_SERVERS:
            g, doc = grid(f"{V}/w/predicted-{backend}.json")
            cfg = EngineConfig(**doc["points"][0]["config"]["engine"])
            sweep = f"{V}/{sess}/{sess}{i}.jsonl"
            runs = sorted((s for s in read_summaries(sweep) if s["arm"] == "on"), key=lambda s: s["concurrency"])
            speed = median_itl_speed(profile, cfg, runs)
            e2e = client_e2e_ms(sweep)
            at = {c: at_speed(by, speed) for c, by in g.items()}
            concs = sorted(at)
            run_pred = np.array([at[c]["running_mean"] for c in concs])
            itl_pred = np.array([at[c]["itl_ms_mean"] for c in concs])
            for s in runs:
                c, e = s["concurrency"], s["engine"]
                if c < 128:
                    continue
                st = window_stats(probe, [(e["window_start_unix_s"], e["window_start_unix_s"] + e["window_s"])])
                adm = st.get("OpenAIServingChat.create_chat_completion", {}).get("mean_ms", float("nan"))
                k = e["counters"]
                outside = e2e[s["point"]] - 1e3 * k["vllm:e2e_request_latency_seconds_sum"] / \
                    k["vllm:e2e_request_latency_seconds_count"]
                meas = itl_ms(s)
                err_c = 100 * (at[c]["itl_ms_mean"] / meas - 1)
                err_r = 100 * (float(np.interp(e["running_mean"], run_pred, itl_pred)) / meas - 1)
                summary.setdefault(backend, []).append((err_c, err_r))
                print(f"| {sess}{i} {backend} (speed {speed:.2f}) | {c} | {e['running_mean']:.0f} / "
                      f"{at[c]['running_mean']:.0f} | {adm:.0f} | {outside:.0f} | {s['ttft_ms_p50']:.0f} / "
                      f"{at[c]['ttft_ms_p50']:.0f} | "
                      f"{err_c:+.0f}% | {err_r:+.0f}% |")
    print()
    for backend, errs in summary.items():
        a, b = (statistics.median(abs(x[k]) for x in errs) for k in (0, 1))
        sa, sb = (statistics.median(x[k] for x in errs) for k in (0, 1))
        print(f"{backend}, {len(errs)} points at 128 and above: median |ITL error| {a:.1f}% at the concurrency "
              f"(signed {sa:+.1f}%), {b:.1f}% at the measured running (signed {sb:+.1f}%).")


if __name__ == "__main__":
    main()
