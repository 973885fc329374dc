"""What the device sessions' report scripts score with (p/report.sh and r/report.sh ran with these
inline, 24549db and 1d008c8; s/report.sh): the prediction grids read at a speed, a server's measured engine ITL per
concurrency, and the summary of tracking_report.py's JSON lines. Run from the repository root."""
import json
import os
import statistics

from maskcost.validate.report import at_speed
from maskcost.validate.sweep import itl_ms, read_summaries


def grid(path: str) -> tuple[dict[int, dict[float, dict]], dict]:
    """A `maskcost predict --json` grid's points by concurrency and CPU speed, and the whole document."""
    doc = json.load(open(path))
    g: dict[int, dict[float, dict]] = {}
    for p in doc["points"]:
        g.setdefault(p["concurrency"], {})[p["config"]["engine"]["cpu_speed"]] = p
    return g, doc


def grid_at(path: str, speed: float) -> dict[int, float]:
    """The grid's predicted ITL mean per concurrency at `speed` (interpolated in 1/speed)."""
    return {c: at_speed(by, speed)["itl_ms_mean"] for c, by in grid(path)[0].items()}


def measured(*paths: str) -> dict[int, float]:
    """The server's mean engine ITL per concurrency over the schema-on points of its sweeps (those that
    exist); {} where none ran."""
    by: dict[int, list[float]] = {}
    for path in paths:
        if os.path.exists(path):
            for s in read_summaries(path):
                if s["arm"] == "on":
                    by.setdefault(s["concurrency"], []).append(itl_ms(s))
    return {c: statistics.mean(v) for c, v in by.items()}


def mean_over(servers: list[dict[int, float]], c: int) -> float | None:
    v = [m[c] for m in servers if c in m]
    return statistics.mean(v) if v else None


def summary(lines_path: str, label: str, bench_label: str = "the idle bench's speed") -> None:
    """One line: the median |ITL error| over tracking_report.py's JSON lines, by the rule and at the bench."""
    d = [json.loads(x) for x in open(lines_path)]
    t = [abs(e) for x in d for e in x["tracked"]]
    b = [abs(e) for x in d for e in x["bench_same_points"]]
    if t:
        print(f"{label}: {len(t)} points, median |ITL error| {statistics.median(t):.1f}% ({sum(e < 10 for e in t)} "
              f"within 10%); at {bench_label} {statistics.median(b):.1f}% ({sum(e < 10 for e in b)} within 10%)")
