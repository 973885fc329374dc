"""How steady the engine's CPU work is on one server (post hoc, not a prediction; written after session
V ran): for every scored point of U's and V's six servers, from the probe inside the engine, the speed
of its whole-step fill (StructuredOutputManager.grammar_bitmask: serial at 128 and below, the pool
above) and of the rest of its step (the engine's step time less that fill), each as the grid's
prediction at the profile host's speed (cpu_speed 1.00, u/predicted-*.json) over the measured time;
and the fill's speed in the first and second half of the point's window. A speed that moves from
point to point on one server, in the fill and the rest alike, is what no speed read from other
points can follow. usage (from the repository root):
  python3 validation/h200-vllm-0.25.1/v/fill_noise.py > validation/h200-vllm-0.25.1/v/fill-noise.md"""
import statistics
import sys
from pathlib import Path

import numpy as np

from maskcost.validate.inengine import fill_kind, read_probe, window_stats
from maskcost.validate.sweep import read_summaries

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V))
from scoring import UV_SERVERS, apart_pct, grid  # noqa: E402

SERVERS = tuple((s, f"{s}{i}", b) for s in "uv" for i, b in UV_SERVERS)


def main() -> None:
    pred = {b: {c: by[1.0]["breakdown"] for c, by in grid(f"{V}/u/predicted-{b}.json")[0].items()}
            for b in ("xgrammar", "guidance")}
    print("Per point (in the order the points ran; speed = predicted at cpu_speed 1.00 / measured in the engine):\n")
    print("| server | per point (conc: fill speed, rest-of-step speed; the fill's halves) |")
    print("|---|---|")
    fill_sp, rest_sp, halves, ratio_8_128 = [], [], [], []
    by_conc: dict[int, list[tuple[float, float]]] = {}  # (fill, rest) speed over the server's median of each
    for sess, name, backend in SERVERS:
        probe = read_probe(f"{V}/{sess}/probe")
        runs = sorted((s for s in read_summaries(f"{V}/{sess}/{name}.jsonl") if s["arm"] == "on"),
                      key=lambda s: s["engine"]["window_start_unix_s"])
        cells, per_row, mine = [], {}, []
        for s in runs:
            e, c = s["engine"], s["concurrency"]
            t0, t1 = e["window_start_unix_s"], e["window_start_unix_s"] + e["window_s"]
            kind = fill_kind(pred[backend][c])
            p_fill = pred[backend][c][f"{kind}_fill_step_ms"]
            key = f"grammar_bitmask {kind}"
            st = window_stats(probe, [(t0, t1)])[key]
            h = [window_stats(probe, [w])[key]["mean_ms"] for w in ((t0, (t0 + t1) / 2), ((t0 + t1) / 2, t1))]
            f_sp = p_fill / st["mean_ms"]
            r_sp = (pred[backend][c]["step_ms"] - p_fill) / (e["step_ms"] - st["mean_ms"])
            fill_sp.append(f_sp)
            rest_sp.append(r_sp)
            halves.append(apart_pct(p_fill / h[0], p_fill / h[1]))
            per_row[c] = st["mean_ms"] / st["n_mean"]
            mine.append((c, f_sp, r_sp))
            cells.append(f"{c}: {f_sp:.2f}, {r_sp:.2f}; {p_fill / h[0]:.2f} / {p_fill / h[1]:.2f}")
        mf, mr = statistics.median(x[1] for x in mine), statistics.median(x[2] for x in mine)
        for c, f_sp, r_sp in mine:
            by_conc.setdefault(c, []).append((f_sp / mf, r_sp / mr))
        if 8 in per_row and 128 in per_row and backend == "xgrammar":
            ratio_8_128.append(per_row[8] / per_row[128])
        print(f"| {name} {backend} | {'; '.join(cells)} |")
    f, r = np.array(fill_sp), np.array(rest_sp)
    print(f"\n{len(f)} points. Fill speed: median {np.median(f):.2f}, quartiles {np.percentile(f, 25):.2f}-"
          f"{np.percentile(f, 75):.2f}; rest of the step: median {np.median(r):.2f}, quartiles "
          f"{np.percentile(r, 25):.2f}-{np.percentile(r, 75):.2f}; correlation of the two {np.corrcoef(f, r)[0, 1]:.2f}.")
    print(f"The fill's speed in a point's two halves: median {statistics.median(halves):.1f}% apart.")
    print(f"Serial fill per row at 8 over at 128 on the xgrammar servers: "
          f"{', '.join(f'{x:.2f}' for x in ratio_8_128)} (the profile's own calibration, J: 0.93).")
    print("\nBy concurrency, each speed over its server's median speed (the median over the six servers; below 1: the "
          "model's shape too fast there):\n")
    print("| concurrency | fill | rest of the step |")
    print("|---|---|---|")
    for c in sorted(by_conc):
        print(f"| {c} | {statistics.median(x[0] for x in by_conc[c]):.2f} | {statistics.median(x[1] for x in by_conc[c]):.2f} |")


if __name__ == "__main__":
    main()
