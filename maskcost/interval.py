"""The 80% prediction interval every predicted point carries, built from the model's own misses.

The data: every pre-registered scored point of the validation record (validation/scored_points.csv:
engine, machine, the engine's measured ITL, the ITL the model predicted with nothing read from that
server and with its speed read from it, and where that speed came from: the profile's own, measured by
`calibrate --base-url` against the server, or the server's earlier points read from a report). The error of a point is
r = ln(measured / predicted). Points of one machine share its host speed, so they are not independent:
the interval is judged leave one machine out (LOMO), never on the machines it was built from.

The rule, per engine and per mode (nothing read; the speed read at calibration; the speed read from a
report of the server's points: the two reads miss differently, the first too fast more often, so each
has its own interval):
- the central 80% of the errors, each machine weighted equally (a session of 32 points does not
  outvote one of 5): quantiles q10, q50, q90 of r;
- widened about q50 by a factor s: the smallest on the grid (1.0, 1.05, ...) for which, leaving each
  machine out in turn and building the interval from the others, at least 80% of the left-out points
  fall inside; taken over the engine's own machines, and over every engine's machines of the mode (each
  engine's interval built from its own errors; that pooled share counted by points, so the engine with the
  most points weighs most), and the larger of the two kept. With three machines an
  engine's own s is chosen from two, which says little of how far a new machine lies; how much the
  record's intervals under-cover a machine not seen is a property of the model and the record shared by
  the engines (added after SGLang's report-read coverage measured 72% with its own s alone: 18 points on
  three machines; docs/validation.md, finding 28);
- a point's interval is then predicted x [exp(q50 + s (q10 - q50)), exp(q50 + s (q90 - q50))].
The coverage reported is that of the whole rule, s chosen again inside each fold (nested LOMO): the
share of the left-out points that the rule built without their machine holds (pooled over machines,
so counted by points, where the quantiles weigh machines equally). The files:
profiles/intervals.json (what predict reads) and the README's sentence on the intervals, both regenerated
by `python -m maskcost.interval` from the record and checked against it by the tests.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from . import record
from .point import Point
from .record import RECORD

LEVEL = 0.8  # the interval's target coverage
MODES = ("nothing_read", "calibration_read", "speed_read")
# each mode's prediction: whether it read the speed from the server, and (the read modes) where from
MODE_READS = {"nothing_read": (False, None), "calibration_read": (True, "calibration"),
              "speed_read": (True, "earlier_points")}
MODE_WORDS = {"nothing_read": "nothing read", "calibration_read": "speed read at calibration",
              "speed_read": "speed read from a report"}
# what predict says its speed came from -> the mode of its points' interval
READS = {None: "nothing_read", "calibration": "calibration_read", "report": "speed_read"}
WIDEN = tuple(round(1 + 0.05 * i, 2) for i in range(61))  # 1.0 .. 4.0
SHIPPED = Path(__file__).resolve().parent / "profiles" / "intervals.json"


@dataclass(frozen=True)
class Interval:
    """measured / predicted ITL lies in [lo_ratio, hi_ratio] for LEVEL of points on machines not seen."""
    engine: str
    # nothing_read: the profile's own speed; calibration_read: the speed calibrate --base-url measured on the
    # target server; speed_read: the speed read from a report of the target server's points
    mode: str
    lo_ratio: float
    hi_ratio: float
    widen: float  # s: the factor on the machine-weighted 80% quantiles that LOMO needed
    points: int
    machines: int
    lomo_coverage: float | None  # nested: s chosen without the left-out machine; None: too few machines
    lomo_coverage_at_widen: float | None  # the same folds at the shipped s (the figure s was chosen on)
    source: str

    def words(self) -> str:
        cov = f"coverage unmeasured: {self.machines} machine{'s' if self.machines > 1 else ''}" \
            if self.lomo_coverage is None else \
            f"{plain_pct(self.lomo_coverage)} leave-one-machine-out coverage"
        where = f"{self.points} points on {self.machines} machine{'s' if self.machines > 1 else ''}"
        return (f"80% interval x{self.lo_ratio:.2f}-x{self.hi_ratio:.2f} of the ITL ({self.engine}, "
                f"{MODE_WORDS[self.mode]}: {where}, {cov})")


def read_errors(path: Path = RECORD) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(engine, mode) -> [(machine, ln(measured / predicted))] over the record's registered points."""
    out: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for p in (p for p in record.read_record(path) if p.scored):
        for mode, (read, read_from) in MODE_READS.items():
            predicted = p.predicted_read_itl_ms if read else p.predicted_bench_itl_ms
            if predicted is not None and (read_from is None or p.speed_read_from == read_from):
                out.setdefault((p.engine, mode), []).append((p.machine, math.log(p.measured_itl_ms / predicted)))
    return out


def _quantiles(errs: list[tuple[str, float]], qs: tuple[float, ...]) -> list[float]:
    """Quantiles of the errors with each machine weighted equally (midpoint interpolation)."""
    n = Counter(m for m, _ in errs)
    order = sorted(errs, key=lambda me: me[1])
    x = np.array([e for _, e in order])
    w = np.array([1.0 / n[m] for m, _ in order])
    c = (np.cumsum(w) - 0.5 * w) / w.sum()
    return [float(np.interp(q, c, x)) for q in qs]


def _bounds(errs: list[tuple[str, float]], s: float) -> tuple[float, float]:
    lo, mid, hi = _quantiles(errs, ((1 - LEVEL) / 2, 0.5, (1 + LEVEL) / 2))
    return mid + s * (lo - mid), mid + s * (hi - mid)


def _held(errs: list[tuple[str, float]], widen_of: Callable[[list[tuple[str, float]]], float]) -> float:
    """The share of points inside the interval built from the other machines, at the widening
    `widen_of(the other machines' errors)` gives."""
    inside = 0
    for m in sorted({m for m, _ in errs}):
        rest = [me for me in errs if me[0] != m]
        lo, hi = _bounds(rest, widen_of(rest))
        inside += sum(lo <= e <= hi for mm, e in errs if mm == m)
    return inside / len(errs)


def _lomo(errs: list[tuple[str, float]], s: float) -> float:
    """LOMO coverage at a fixed widening s."""
    return _held(errs, lambda _rest: s)


Errors = list[tuple[str, float]]


def _lomo_pooled(groups: list[Errors], s: float) -> float:
    """LOMO coverage at s over several engines' errors, each engine's left-out machine judged by the
    interval built from that engine's other machines (pooled by points)."""
    return sum(_lomo(g, s) * len(g) for g in groups) / sum(len(g) for g in groups)


def _widen(errs: Errors, others: tuple[Errors, ...] = ()) -> float:
    """The smallest s whose LOMO coverage reaches LEVEL on the engine's own errors, and (with `others`: the
    other engines' errors of the mode) the smallest that reaches it pooled with theirs, whichever is larger;
    the largest on the grid if none does (then the reported coverage, at that s, says it fell short)."""
    def smallest(cov: Callable[[float], float]) -> float:
        return next((s for s in WIDEN if cov(s) >= LEVEL), WIDEN[-1])
    own = smallest(lambda s: _lomo(errs, s))
    return max(own, smallest(lambda s: _lomo_pooled([errs, *others], s))) if others else own


def _nested(errs: Errors, others: tuple[Errors, ...] = ()) -> float:
    """LOMO coverage of the whole rule: for each machine, s chosen without it (on the engine's other
    machines, and the other engines')."""
    return _held(errs, lambda rest: _widen(rest, others))


def _machines(errs: Errors) -> int:
    return len({m for m, _ in errs})


def build(errs: Errors, engine: str, mode: str, source: str, others: tuple[Errors, ...] = ()) -> Interval:
    """The interval of one engine and mode; `others`: the mode's other engines' errors (three machines or
    more each) that the widening is also chosen on."""
    machines = _machines(errs)
    if machines < 3:  # LOMO needs two machines left to choose s on
        lo, hi = _bounds(errs, 1.0)
        return Interval(engine, mode, round(math.exp(lo), 4), round(math.exp(hi), 4), 1.0, len(errs), machines,
                        None, None, source)
    s = _widen(errs, others)
    lo, hi = _bounds(errs, s)
    return Interval(engine, mode, round(math.exp(lo), 4), round(math.exp(hi), 4), s, len(errs), machines,
                    round(_nested(errs, others), 4), round(_lomo(errs, s), 4), source)


def build_all(path: Path = RECORD) -> list[Interval]:
    src = f"{path.parent.name}/{path.name}"
    errors = read_errors(path)
    def others(engine: str, mode: str) -> tuple[Errors, ...]:
        return tuple(v for (e, m), v in sorted(errors.items()) if m == mode and e != engine and _machines(v) >= 3)
    return [build(errs, engine, mode, src, others(engine, mode)) for (engine, mode), errs in sorted(errors.items())]


def load(path: Path = SHIPPED) -> dict[tuple[str, str], Interval]:
    d = json.loads(path.read_text())
    return {(i["engine"], i["mode"]): Interval(**i) for i in d["intervals"]}


def for_point(engine: str, read: str | None, shipped: dict[tuple[str, str], Interval] | None = None
              ) -> Interval | None:
    """The interval of an engine's prediction whose speed came from `read` (READS: None, "calibration",
    "report"): only one whose coverage was measured (three machines or more); with a speed read but no
    measured interval for that read, the nothing-read one; None where the engine has no measured
    interval (llama.cpp: one machine)."""
    shipped = load() if shipped is None else shipped
    modes = tuple(dict.fromkeys((READS[read], "nothing_read")))
    return next((iv for m in modes if (iv := shipped.get((engine, m))) is not None and iv.lomo_coverage is not None),
                None)


def with_intervals(points: list[Point], read: str | None) -> list[Point]:
    """The points each with its ITL mean's 80% interval from its engine's rule:
    `itl_ms_pi80` (low, high) and `interval` (the rule's figures); unchanged where the record has no interval
    for the engine, and for an engine that shares its host (replicas, a quota) or spans GPUs (tensor
    parallel): none of the record's points did."""
    shipped = load()
    return [_with_interval(p, read, shipped) for p in points]


def _with_interval(p: Point, read: str | None, shipped: dict) -> Point:
    if p.replicas > 1 or p.cpu_quota is not None or p.tensor_parallel > 1:
        return p  # the record's errors are of engines alone on one GPU (model/host_share.py)
    iv = for_point(p.engine, read, shipped)
    if iv is None or p.itl_ms_mean is None:
        return p
    return replace(p, itl_ms_pi80=(p.itl_ms_mean * iv.lo_ratio, p.itl_ms_mean * iv.hi_ratio),
                   interval={**asdict(iv), "words": iv.words()})


def widened(p: Point, itl_ends_ms: tuple[float | None, float | None], cost_rse: float) -> Point:
    """The point's 80% interval widened for a workload whose schemas' mean cost a token is known to +-cost_rse
    beyond the record's (calibrate/cost_spread.py): `itl_ends_ms`, the ITL with its traces at the low and the high
    end of that spread, moves each end of the interval in log space, added in quadrature to the interval's own
    half-width about its centre (the two independent). Unchanged where the point has no interval or no ends."""
    lo_ms, hi_ms = itl_ends_ms
    if p.itl_ms_pi80 is None or p.interval is None or \
            not min(p.itl_ms_mean or 0, lo_ms or 0, hi_ms or 0, *p.itl_ms_pi80) > 0:
        return p  # (nothing to widen about: no interval, no ends, or a figure that is no time)
    lr, hr = math.log(p.itl_ms_pi80[0] / p.itl_ms_mean), math.log(p.itl_ms_pi80[1] / p.itl_ms_mean)
    c = (lr + hr) / 2
    up, down = max(0.0, math.log(hi_ms / p.itl_ms_mean)), max(0.0, math.log(p.itl_ms_mean / lo_ms))
    lo, hi = (p.itl_ms_mean * math.exp(c - math.hypot(c - lr, down)),
              p.itl_ms_mean * math.exp(c + math.hypot(hr - c, up)))
    words = (f"{p.interval['words']}, widened for its schemas' mean cost a token known to +-{100 * cost_rse:.0f}% "
             f"beyond the record's")
    return replace(p, itl_ms_pi80=(lo, hi), interval={**p.interval, "cost_rse": cost_rse,
                                                      "cost_itl_ms": (lo_ms, hi_ms), "words": words})


def plain_pct(coverage: float) -> str:
    """A coverage in words: whole percent, one decimal where under LEVEL (79.7%, not a rounded 80%)."""
    return f"{100 * coverage:.0f}%" if coverage >= LEVEL else f"{100 * coverage:.1f}%"


def pct(coverage: float) -> str:
    """plain_pct, in bold where under LEVEL (the README's and docs' tables)."""
    return plain_pct(coverage) if coverage >= LEVEL else f"**{plain_pct(coverage)}**"


def table_rows(intervals: list[Interval]) -> list[str]:
    """docs/validation.md's interval table's rows, one an interval (docs_table)."""
    rows = []
    for i in intervals:
        cov = f"unmeasured ({i.machines} machine{'s' if i.machines > 1 else ''}: too few to leave one out)" \
            if i.lomo_coverage is None else \
            f"{pct(i.lomo_coverage)} (at the shipped widening {i.widen}: {pct(i.lomo_coverage_at_widen)})"
        rows.append(f"| {i.engine}, {MODE_WORDS[i.mode]} | {i.points} | {i.machines} | "
                    f"{i.lo_ratio:.2f}-{i.hi_ratio:.2f} | {cov} |")
    return rows


ENGINE_WORDS = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp"}
README_BEGIN, README_END = "<!-- interval: made by python -m maskcost.interval -->", "<!-- interval: end -->"
DOCS_BEGIN, DOCS_END = "<!-- intervals: made by python -m maskcost.interval -->", "<!-- intervals: end -->"


def docs_table(intervals: list[Interval]) -> str:
    """docs/validation.md's interval table between its markers."""
    head = ["| engine, what the prediction read | points | machines | interval (x the predicted ITL) | "
            "leave-one-machine-out coverage |", "|---|---|---|---|---|"]
    return "\n".join([DOCS_BEGIN, *head, *table_rows(intervals), DOCS_END])


def readme_words(intervals: list[Interval]) -> str:
    """The README's sentence on the intervals, between its markers: each measured one (coverage under LEVEL
    in bold), then those too few machines measure."""
    said = [f"{ENGINE_WORDS[i.engine]}, {MODE_WORDS[i.mode]}: x{i.lo_ratio:.2f}-x{i.hi_ratio:.2f} of the "
            f"predicted ITL, {pct(i.lomo_coverage)} coverage over {i.points} points on {i.machines} machines"
            for i in intervals if i.lomo_coverage is not None]
    few = [f"{ENGINE_WORDS[i.engine]}, {MODE_WORDS[i.mode]}" for i in intervals if i.lomo_coverage is None]
    text = "; ".join(said) + "." + (f" Too few machines to leave one out ({'; '.join(few)}: one machine each): "
                                    f"such a point takes its engine's nothing-read interval, or none." if few else "")
    return f"{README_BEGIN}\n{text}\n{README_END}"


def readme_block(text: str) -> str:
    """The README's interval sentence, markers included."""
    return record.readme_block(text, README_BEGIN, README_END)


def main() -> None:
    """Regenerate profiles/intervals.json from the record, the README's sentence on it and docs/validation.md's
    table of it."""
    got = build_all()
    SHIPPED.write_text(json.dumps({"level": LEVEL, "rule": "maskcost/interval.py (module docstring)",
                                   "intervals": [asdict(i) for i in got]}, indent=1) + "\n")
    print(f"wrote {SHIPPED}")
    record.write_block(record.README, README_BEGIN, README_END, readme_words(got), "the interval sentence")
    record.write_block(record.DOCS, DOCS_BEGIN, DOCS_END, docs_table(got), "the interval table")


if __name__ == "__main__":
    main()
