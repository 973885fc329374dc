"""The validation record as data: every pre-registered scored point, typed, and the README's table of how
good the model is, rendered from them.

The record is `validation/scored_points.csv` (one row a scored point: schema on, and the replicas check's
schema-off points, which its rule scores and the table does not; its columns are written down in
`validation/scored_points.py`, which built it from the campaigns' folders). Each check below is a
set of its sessions; the table gives, for each check and backend, the median |ITL error| of its points
with the host's speed read from the target server and with nothing read, and each run's own median beside
it. `python -m maskcost.record` writes the table into README.md between its two markers, and the pooled
result of sessions P-Z, the table of the sessions (validation/sessions.csv: what each tested, its folder) and
the per-point tables of the runs RUN_TABLES names into docs/validation.md; tests/test_record.py fails where any is
not what the record renders. Points whose predictions were made after the sweep (registered 0) are left out of
all of them.
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "validation" / "scored_points.csv"
README = ROOT / "README.md"
DOCS = ROOT / "docs" / "validation.md"
BEGIN, END = "<!-- how-good: made by python -m maskcost.record -->", "<!-- how-good: end -->"
POOLED_BEGIN, POOLED_END = "<!-- pooled: made by python -m maskcost.record -->", "<!-- pooled: end -->"
POOLED_SESSIONS = r"vllm/[p-z]"  # the pre-registered sessions P-Z of docs/validation.md's pooled result
# docs/validation.md's table of the sessions: what each tested (validation/sessions.csv) and its points in the record
SESSIONS = ROOT / "validation" / "sessions.csv"
SESSIONS_BEGIN, SESSIONS_END = "<!-- sessions: made by python -m maskcost.record -->", "<!-- sessions: end -->"
SESSION_COLUMNS = ("session", "tested", "folder", "record_sessions")
# docs/validation.md's per-point tables of these runs (render_run_table), each between its own markers
RUN_TABLES = ("sglang/transfer/run1", "sglang/transfer/run2", "sglang/transfer/run3")


def run_table_markers(session: str) -> tuple[str, str]:
    """The markers around a run's per-point table in docs/validation.md (render_run_table)."""
    return f"<!-- points of {session}: made by python -m maskcost.record -->", f"<!-- points of {session}: end -->"


@dataclass(frozen=True)
class ScoredPoint:
    """One scored point of the record: the engine's measured ITL and what the model predicted (`registered`:
    the prediction was committed before the sweep ran; the table and the intervals take only those)."""
    engine: str
    engine_version: str
    backend: str
    session: str
    machine: str
    arm: str  # schema_on; schema_off (the replicas check's rule scores both arms): never in the table or intervals
    concurrency: int
    cores: int
    measured_itl_ms: float
    predicted_bench_itl_ms: float | None  # nothing read from the target server
    predicted_read_itl_ms: float | None  # the host's speed read from it
    speed_read_from: str | None  # calibration | earlier_points | reference_cell
    registered: bool
    config: str = ""  # the engine's settings beyond its defaults and the columns above ("replicas=2 ..."); "": none
    running_mean: float | None = None  # the engine's mean running batch over the point's window
    speed_read: float | None = None  # the host speed predicted_read used
    interval_ms: tuple[float, float] | None = None  # predicted_bench's 80% interval as registered, where recorded

    @property
    def scored(self) -> bool:
        """Whether the point counts in the table and the intervals: registered, schema on."""
        return self.registered and self.arm == "schema_on"

    def error_pct(self, read: bool) -> float | None:
        """100 (predicted / measured - 1) of one mode; None where the point has no such prediction."""
        p = self.predicted_read_itl_ms if read else self.predicted_bench_itl_ms
        return None if p is None else 100 * (p / self.measured_itl_ms - 1)


def _number(text: str) -> float | None:
    return float(text) if text else None


def _interval(row: dict[str, str]) -> tuple[float, float] | None:
    """A row's registered 80% interval: both its ends, or neither."""
    lo, hi = row.get("interval_lo_ms") or "", row.get("interval_hi_ms") or ""
    if bool(lo) != bool(hi):
        raise ValueError(f"interval_lo_ms {lo or '(empty)'}, interval_hi_ms {hi or '(empty)'}: give both or neither")
    return (float(lo), float(hi)) if lo else None


def read_record(path: Path = RECORD) -> list[ScoredPoint]:
    """Every row of the record (registered or not), typed; a row that is not one: a one-line ValueError."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for n, r in enumerate(rows, 2):
        try:
            out.append(ScoredPoint(r["engine"], r["engine_version"], r["backend"], r["session"], r["machine"],
                                   r["arm"], int(r["concurrency"]), int(r["cores"]), float(r["measured_itl_ms"]),
                                   _number(r["predicted_bench_itl_ms"]), _number(r["predicted_read_itl_ms"]),
                                   r["speed_read_from"] or None, r["registered"] == "1", r.get("config") or "",
                                   _number(r.get("running_mean", "")), _number(r.get("speed_read", "")),
                                   _interval(r)))
        except (KeyError, ValueError, TypeError) as e:
            raise ValueError(f"{path}:{n}: not a scored point ({e})") from None
    return out


@dataclass(frozen=True)
class Check:
    """A set of the record's sessions scored together (its runs: the sessions matching `sessions`)."""
    label: str  # the engine and what was checked
    where: str  # the machines and how the prediction was made
    sessions: str  # a regular expression on ScoredPoint.session
    read_words: str = ""  # where the read speed came from, where not the README's first way


CHECKS = (
    Check("vLLM 0.25.1", "H200, 16-core Xeon, nine sessions (P-Z): the embedded profile's host type",
          POOLED_SESSIONS, "the server's earlier points"),
    Check("vLLM 0.25.1, a user-made profile", "fresh H200 machines, the three GPU-host commands, 3 schemas "
          "without examples (newcomer runs 1-3)", r"vllm/newcomer/run\d+", "calibrate --base-url"),
    Check("vLLM 0.25.1, tool calling (`--tools`)", "a fresh H200 machine, the three commands with `--tools`",
          r"vllm/tools/run\d+", "calibrate --base-url"),
    Check("vLLM 0.25.1, a user-made profile on the server's own outputs", "three fresh machines (an H200, two "
          "H100), 3 new schemas each, held out on 16 cores and 6 (`taskset`; runs 1-3)", r"vllm/transfer/run\d+",
          "calibrate --base-url"),
    Check("vLLM 0.25.1, each backend on its own server (`--backend-url`)", "a fresh machine a run (H200 and H100 "
          "hosts), 2 schemas alone at 32, 128, 256, 3 on runs 16-21 (the shape check)", r"vllm/shape/run\d+",
          "calibrate --base-url"),
    Check("vLLM 0.25.1, the fill probe", "a fresh H100 machine, the shape check's 3 schemas alone at 32 and 128 on "
          "one xgrammar server, calibrate's trace counts planned from a pilot", r"vllm/fillprobe/run\d+",
          "calibrate --base-url"),
    Check("vLLM 0.25.1, async scheduling off (`--no-async-scheduling`)", "a fresh H100 machine, two xgrammar servers "
          "side by side (async on, off), the shape check's flat and nested alone at 32, 128, 256 (run 1)",
          r"vllm/asyncoff/run\d+", "not read: the shipped profile"),
    Check("vLLM 0.25.1, replicas and CPU quotas", "two replicas on one GPU and 8 cores, a cgroup quota against a "
          "cpuset, the OpenMP team (six machines, runs 1-7)", r"vllm/replicas/run\d+",
          "schema-on changes, each on its reference cell's measured ITL: no speed read"),
    Check("SGLang 0.5.17", "H200, calibrated on the device (runs 1, 2, 4)", r"sglang/run\d+",
          "calibrate --base-url"),
    Check("SGLang 0.5.17, the shipped profile", "three fresh H200 machines, nothing calibrated there",
          r"sglang/transfer/run\d+", "one short sweep of the server"),
    Check("llama.cpp, GBNF", "2-core CPU (CI), a black-box profile of the same server", r"llamacpp/cpu",
          "calibrated on it"),
)
BACKEND_WORDS = {"xgrammar": "xgrammar", "guidance": "llguidance", "gbnf": "GBNF"}


def _run_name(session: str) -> str:
    """A session's short name: its last part (a P-Z session's letter in capitals)."""
    last = session.rsplit("/", 1)[-1]
    return last.upper() if len(last) == 1 else last


def _run_order(session: str) -> tuple:
    """Sessions in their runs' order: run2 before run10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", session))


def _median_cell(points: list[ScoredPoint], read: bool) -> str:
    """The median |error| over the points and their count, each run's own median beside it where there are
    several runs."""
    runs: dict[str, list[float]] = {}
    for p in points:
        if (e := p.error_pct(read)) is not None:
            runs.setdefault(p.session, []).append(abs(e))
    errs = [e for v in runs.values() for e in v]
    if not errs:
        return "-"
    each = f"; {', '.join(f'{_run_name(r)} {statistics.median(v):.1f}' for r, v in sorted(runs.items(), key=lambda kv: _run_order(kv[0])))}" \
        if len(runs) > 1 else ""
    return f"{statistics.median(errs):.1f}% of {len(errs)}{each}"


def table_rows(points: list[ScoredPoint]) -> list[str]:
    """The table's markdown lines: a header, then a row per check and backend, in CHECKS order."""
    rows = ["| check | backend | machines | median \\|ITL error\\|, the host's speed read from the server | "
            "nothing read |", "|---|---|---|---|---|"]
    kept = [p for p in points if p.scored]
    for c in CHECKS:
        mine = [p for p in kept if re.fullmatch(c.sessions, p.session)]
        for i, backend in enumerate(sorted({p.backend for p in mine}, key=list(BACKEND_WORDS).index)):
            pts = [p for p in mine if p.backend == backend]
            read = _median_cell(pts, True)
            check = f"{c.label}: {c.where}" if i == 0 else ""
            rows.append(f"| {check} | {BACKEND_WORDS[backend]} | {len({p.machine for p in pts})} | "
                        f"{read}{f' ({c.read_words})' if read != '-' else ''} | {_median_cell(pts, False)} |")
    return rows


def render(points: list[ScoredPoint]) -> str:
    return "\n".join([BEGIN, *table_rows(points), END])


def _abs_errors(points: list[ScoredPoint], read: bool) -> list[float]:
    """|error| of each point that has this prediction (read: the host's speed read from the server)."""
    return [abs(e) for p in points if (e := p.error_pct(read)) is not None]


def _pooled_cell(points: list[ScoredPoint], read: bool) -> str:
    """The median |error| of the points that have this prediction, and how many of them fell within 10%."""
    errs = _abs_errors(points, read)
    return f"{statistics.median(errs):.1f}% ({sum(e <= 10 for e in errs)} of {len(errs)} within 10%)" if errs else "-"


def render_pooled(points: list[ScoredPoint]) -> str:
    """docs/validation.md's pooled result of sessions P-Z (POOLED_SESSIONS), between its markers: each backend's
    and all points' median |ITL error| with the speed read from the server's earlier points and at the bench's."""
    mine = [p for p in points if p.scored and re.fullmatch(POOLED_SESSIONS, p.session)]
    rows = ["| backend | points | host speed read from the server's earlier points | at the idle bench's speed |",
            "|---|---|---|---|"]
    for name, pts in [*((b, [p for p in mine if p.backend == b]) for b in BACKEND_WORDS if b != "gbnf"),
                      ("all", mine)]:
        rows.append(f"| {BACKEND_WORDS.get(name, name)} | {len(pts)} | {_pooled_cell(pts, True)} | "
                    f"{_pooled_cell(pts, False)} |")
    return "\n".join([POOLED_BEGIN, *rows, POOLED_END])


def read_sessions(path: Path = SESSIONS) -> list[dict[str, str]]:
    """The sessions' rows (SESSION_COLUMNS; record_sessions: a regular expression on ScoredPoint.session, empty
    where the record holds none of its points); a file that is not one: a one-line ValueError."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or tuple(rows[0]) != SESSION_COLUMNS:
        raise ValueError(f"{path}: not the sessions' table (columns {', '.join(SESSION_COLUMNS)})")
    for n, r in enumerate(rows, 2):
        try:
            re.compile(r["record_sessions"] or "")
        except (re.error, TypeError) as e:
            raise ValueError(f"{path}:{n}: record_sessions is not a regular expression ({e})") from None
    return rows


def _sessions_cell(points: list[ScoredPoint], pattern: str) -> str:
    """A session's registered schema-on points in the record: how many, on how many machines, and the median
    |ITL error| with a read from the server and with nothing read."""
    mine = [p for p in points if p.scored and pattern and re.fullmatch(pattern, p.session)]
    if not mine:
        return "-"
    said = [f"{words} {statistics.median(v):.1f}%" for words, read in (("read", True), ("nothing read", False))
            if (v := _abs_errors(mine, read))]
    return f"{len(mine)} on {len({p.machine for p in mine})}: {', '.join(said)}"


def render_sessions(points: list[ScoredPoint], sessions: list[dict[str, str]]) -> str:
    """docs/validation.md's table of the sessions, between its markers."""
    rows = ["| session | what it tested | in the record: points on machines, median \\|ITL error\\| | folder |",
            "|---|---|---|---|"]
    rows += [f"| {r['session']} | {r['tested']} | {_sessions_cell(points, r['record_sessions'])} | {r['folder']} |"
             for r in sessions]
    return "\n".join([SESSIONS_BEGIN, *rows, SESSIONS_END])


def render_run_table(points: list[ScoredPoint], session: str) -> str:
    """One run's points, a row each (its backends in the record's order, then its loads): the running batch, the
    measured ITL, the prediction with nothing read and its 80% interval as registered (", outside" where the
    measured fell outside it), and the prediction with the host's speed read; between the run's markers."""
    pts = [p for p in points if p.session == session and p.scored]
    if not pts:
        raise ValueError(f"{RECORD}: no scored point of {session}")
    speeds = {round(p.speed_read, 3) for p in pts if p.speed_read is not None}
    one_speed = len(speeds) == 1  # in the header; else each read prediction says its own
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    pct = lambda v: "-" if v is None else f"{v:+.0f}%"  # noqa: E731
    rows = [f"| arm, load | running | measured | nothing read (80% interval) | error | speed read"
            f"{f' ({next(iter(speeds)):.3f})' if one_speed else ''} | error |", "|---|---|---|---|---|---|---|"]
    order = list(dict.fromkeys(p.backend for p in pts))
    for p in sorted(pts, key=lambda p: (order.index(p.backend), p.concurrency)):
        iv, eb, er = p.interval_ms, p.error_pct(False), p.error_pct(True)
        bench = f(p.predicted_bench_itl_ms, ".2f") + (f" ({iv[0]:.1f}-{iv[1]:.1f})" if iv else "")
        outside = ", outside" if iv and not iv[0] <= p.measured_itl_ms <= iv[1] else ""
        rows.append(f"| {BACKEND_WORDS.get(p.backend, p.backend)} {p.concurrency} | {f(p.running_mean, '.1f')} | "
                    f"{p.measured_itl_ms:.2f} | {bench} | {pct(eb)}{outside} | {f(p.predicted_read_itl_ms, '.2f')}"
                    f"{'' if one_speed or p.speed_read is None else f' (at {p.speed_read:.3f})'} | {pct(er)} |")
    return "\n".join([*run_table_markers(session)[:1], *rows, run_table_markers(session)[1]])


def readme_block(text: str, begin: str = BEGIN, end: str = END, where: Path = README) -> str:
    """The block of `where`'s text between two markers (default: the README's how-good table's), markers
    included; a ValueError where they are missing."""
    m = re.search(re.escape(begin) + r".*?" + re.escape(end), text, re.S)
    if m is None:
        raise ValueError(f"{where}: no markers {begin} ... {end}")
    return m.group(0)


def write_block(path: Path, begin: str, end: str, block: str, what: str) -> None:
    """Put `block` between the markers of `path` (a ValueError where they are missing), and say whether it moved."""
    text = path.read_text()
    new = text.replace(readme_block(text, begin, end, path), block)
    if new != text:
        path.write_text(new)
    print(f"{path}: {what} {'rewritten' if new != text else 'already the record'}")


def main() -> int:
    try:
        points, sessions = read_record(RECORD), read_sessions(SESSIONS)
        write_block(README, BEGIN, END, render(points), "the how-good table")
        write_block(DOCS, POOLED_BEGIN, POOLED_END, render_pooled(points), "the pooled result")
        write_block(DOCS, SESSIONS_BEGIN, SESSIONS_END, render_sessions(points, sessions), "the sessions' table")
        for run in RUN_TABLES:
            write_block(DOCS, *run_table_markers(run), render_run_table(points, run), f"the points of {run}")
    except (OSError, ValueError) as e:
        print(f"python -m maskcost.record: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
