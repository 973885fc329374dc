"""What the device sessions' report scripts score with (p/report.sh and r/report.sh ran with these
inline, 24549db and 1d008c8; s/, t/ and u/report.sh, tracking_report.py): the prediction grids read at a
speed, a server's measured engine ITL per concurrency, the summary of tracking_report.py's JSON lines, the
spread between same-config servers, and the held-out directions judged against it. Run from the repository root."""
import itertools
import json
import os
import statistics

from maskcost.validate.hostspeed import attach_itl_speeds
from maskcost.validate.report import at_speed, compare
from maskcost.validate.sweep import itl_ms, read_summaries

UV_SERVERS = ((1, "xgrammar"), (2, "guidance"), (3, "xgrammar"))  # sessions U and V: server i's backend


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


def itl_speeds(profile, cfg, runs: list[dict]) -> list[float | None]:
    """Each sweep summary's ITL speed (maskcost.validate.hostspeed), each point alone, at `cfg`."""
    rows = [compare(profile, cfg, [s])[0] for s in runs]
    return [r["itl_speed"] for r in attach_itl_speeds(rows, profile, cfg, runs, 4, progress=False)]


def median_itl_speed(profile, cfg, runs: list[dict]) -> float:
    """The median of the sweep summaries' ITL speeds (itl_speeds), those that have one."""
    return statistics.median(x for x in itl_speeds(profile, cfg, runs) if x)


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


POOL_SPREAD_PCT = 7.0  # r/server-spread.md: two servers of one config on one machine, pool fills, median apart


def apart_pct(a: float, b: float) -> float:
    """How far apart two ITLs are, in % of the smaller."""
    return 100.0 * abs(a - b) / min(a, b)


def pair_spread(groups: list[list[dict[int, float]]], c: int) -> float | None:
    """The median gap of the same-config pairs of servers at concurrency c (each group: one config's
    servers, each as `measured` gives it); None where no pair ran c."""
    gaps = [apart_pct(a[c], b[c]) for group in groups for a, b in itertools.combinations(group, 2) if c in a and c in b]
    return statistics.median(gaps) if gaps else None


class Directions:
    """The held-out directions of a session's report, judged and counted (s/report.sh's rule): a predicted
    change under `no_change_below_pct` in size is "no change", right where the measured change is smaller
    in size than the spread; a larger one is right where the measured change has its sign and is larger
    in size than the spread (no_change_below_pct=0: the sign rule alone, as t/ and u/ registered)."""

    def __init__(self, no_change_below_pct: float = 5.0) -> None:
        self.no_change_below_pct = no_change_below_pct
        self.right = self.total = 0

    def judge(self, label: str, c: int, pred: float, pred_ref: float, meas: float | None, meas_ref: float | None,
              spread: float | None, note: str = "") -> None:
        """Prints one line: the predicted and measured change of `label` at concurrency c and the verdict."""
        if meas is None or meas_ref is None or spread is None:
            print(f"- {label} at {c}: not measured")
            return
        pd, md = 100 * (pred - pred_ref) / pred_ref, 100 * (meas - meas_ref) / meas_ref
        if abs(pd) < self.no_change_below_pct:
            ok, want = abs(md) < spread, "no change: |measured| under the spread"
        else:
            ok, want = (md > 0) == (pd > 0) and abs(md) > spread, "the sign, beyond the spread"
        self.right += ok
        self.total += 1
        print(f"- {label} at {c}: predicted {pred:.1f} vs {pred_ref:.1f} ({pd:+.1f}%), measured {meas:.1f} vs "
              f"{meas_ref:.1f} ({md:+.1f}%), spread {spread:.1f}%{note} ({want}): {'right' if ok else 'WRONG'}")

    def summary(self) -> None:
        print(f"\nDirections right: {self.right} of {self.total}")
