"""Post hoc on runs 3-7 (docs/validation.md finding 32): how noisy is the measured nested/flat ITL ratio the
primary bar scores? Each ratio is the mean of two repeats run minutes apart (run.sh interleaves load, repeat,
schema, server); the two differ. For two draws a, b of one quantity, ((a - b) / 2)^2 estimates the variance of
their mean; pooled over the runs' ratios (each relative to its own mean), its square root is the SD of a
measured ratio. Then: how often a model that predicts each ratio's true value exactly would land within 10% of
the measured one (a normal error of that SD), for one ratio, for a backend's three, for the bar's six; and the same
for the points' ITL itself (the secondary bar's median |error|: an exact model's is 0.674 SD).
  python validation/h200-vllm-0.25.1/shape/posthoc/ratio_noise.py [RUN ...]   (repository root; default runs 3-7)
  -> stdout (ratio_noise.txt: runs 3-7; ratio_noise-run8.txt: run 8 alone, as its registration asked)"""
import json
import math
import statistics
import sys
from pathlib import Path

S = Path(__file__).resolve().parent.parent
RUNS = tuple(sys.argv[1:]) or ("run3", "run4", "run5", "run6", "run7")
BAR = 0.10


def within(sd: float) -> float:
    """P(|N(0, sd)| <= BAR)."""
    return math.erf(BAR / sd / math.sqrt(2))


def itl_noise() -> None:
    """Each held-out point's two repeats' ITL: the pooled SD of their mean, and an exact model's median |error|."""
    by: dict[str, list[float]] = {}
    for run in RUNS:
        for row in json.loads((S / run / "score.json").read_text())["rows"]:
            for pts in [row["measured_points"]] + ([row["flat_points"]] if row["schema"] == "nested" else []):
                if len(pts) == 2:
                    a, b = (p["itl_ms"] for p in pts)
                    by.setdefault(row["backend"], []).append(((a - b) / (a + b)) ** 2)
    for b, v in by.items():
        s = math.sqrt(statistics.fmean(v))
        print(f"{b} ITL: SD of a point (two repeats) {100 * s:.1f}% over {len(v)} points; an exact model's median "
              f"|error| {100 * 0.674 * s:.1f}%")


def main() -> None:
    by: dict[str, list[float]] = {}
    for run in RUNS:
        for row in json.loads((S / run / "score.json").read_text())["rows"]:
            if row["schema"] != "nested":
                continue
            a, b = row["measured_ratio_by_repeat"]
            by.setdefault(row["backend"], []).append(((a - b) / 2 / ((a + b) / 2)) ** 2)
            print(f"{run} {row['backend']:8} {row['load']:3} clients: repeats {a:.3f}, {b:.3f}; mean {(a + b) / 2:.3f}, "
                  f"half their difference {100 * abs(a - b) / (a + b):.1f}% of it")
    every = [x for v in by.values() for x in v]
    sd = math.sqrt(statistics.fmean(every))
    print(f"\npooled SD of a measured ratio (the mean of two repeats), {len(every)} ratios of {len(RUNS)} runs: "
          f"{100 * sd:.1f}%; a perfect model within {100 * BAR:.0f}% of one ratio {within(sd):.2f}, of all six "
          f"{within(sd) ** 6:.2f}")
    for b, v in by.items():
        s = math.sqrt(statistics.fmean(v))
        print(f"{b}: SD {100 * s:.1f}% over {len(v)} ratios; a perfect model within {100 * BAR:.0f}% of one "
              f"{within(s):.2f}, of its three {within(s) ** 3:.2f}; with twice the repeats (SD / sqrt 2) one "
              f"{within(s / math.sqrt(2)):.2f}, three {within(s / math.sqrt(2)) ** 3:.2f}")


if __name__ == "__main__":
    main()
    itl_noise()
