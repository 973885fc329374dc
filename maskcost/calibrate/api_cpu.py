"""The API server's costs (ForwardCurve.frontend_*) read from the CPU its process spent over calibration points,
where the server runs on the calibrating machine (validate/servercpu.py records each process's threads): over a point
the process's busy share is tokens/s x a token's cost, a schema-off stream's token fitted on the schema-off forward
sweep (128 tokens a request: its request's cost held in its tokens') and a structured stream's on the schema-on speed
points of every server calibrate swept (25-45 tokens a request), each a least squares through 0, and no cost of its
own a request.

Why the whole process: the loop thread shares one GIL with the renderer's worker and the rest of the process, and
where the API server binds it is the process that is full (0.97-1.08 CPU, the loop thread 0.83-0.91: docs/validation.md
findings 50 and 53); the model's queue (model/api_server.py) runs its jobs one at a time up to a full CPU, so its costs
are the process's. In records from before servercpu marked the listening process, the loop thread's (loop_cpus).

Why a token and no request: a fit that prices a structured request apart from its tokens (calibrate's before, on two
servers' points of unlike lengths) confounds the backends' request costs with their lengths and made the shorter
schema's token a fifth dearer, and the model then let one schema bind the process and not the other: llguidance's
nested/flat ITL at 256 clients +20% to +31% as registered on shape runs 10-12. Priced by its tokens alone the ratio
held within 10% at every point of those runs (docs/validation.md finding 54). The reason finding 54 gave, that the
engines served flat and nested at the same tokens a second there, does not hold: by the engine's own token counter
nested served 1.05-1.24 times flat's tokens a second (median 1.14) on every one of shape runs 5-20, the process at
0.94-1.05 CPU on both where it was read, so a structured request does cost the process something of its own (finding
57: about 4 ms across schemas of unlike lengths). Priced so (a request worth 8 or 16 of its tokens, the token fitted
again on calibrate's points) the record's ratios gained a ratio or two of 48 and broke llguidance's deep points, where
a structured token a tenth dearer or cheaper alone moved the model's nested/flat at 256 clients by 4 and 13 points
(finding 79): the token alone stays the fit, the one the runs were registered with.

Not modelled: vLLM's --api-server-count > 1 (several loops, each a child process VLLM::APIServer, the parent holding
the socket: the model has one queue; api_server_processes counts them, and calibrate then reads no loop's CPU and says
so). On one host two API processes let the engine take a fifth to two fifths more rows at 256 clients than one did
(finding 53)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.engines import ENGINES
from ..records import SweepSummary

MIN_POINTS = 4  # points with the API server's CPU, at least one of each arm


@dataclass(frozen=True)
class ApiCpuFit:
    """A streamed token's cost to the API server's process, a schema-off stream's and a structured one's (a request
    costs nothing of its own: the module's docstring)."""
    token_us: float
    structured_token_us: float
    points: int  # the points it was fitted on
    median_abs_error_pct: float  # of the process's CPU at those points, by the fit
    read_on: str = "process"  # "process": the listening process's CPU; "loop thread": a record without the mark

    request_ms = 0.0  # a request's own cost: none (ForwardCurve.frontend_request_ms keeps a TTFT fit's elsewhere)
    structured_ms = 0.0  # a structured request's own: none

    def words(self) -> str:
        return (f"{self.structured_token_us:.0f} us per structured token, {self.token_us:.0f} us per token of a "
                f"schema-off stream, none a request, fitted on the API server's {self.read_on} CPU over {self.points} "
                f"calibration points (median |error| {self.median_abs_error_pct:.0f}%; calibrate.api_cpu)")


def _processes(s: SweepSummary) -> list[dict]:
    """A point's server processes as validate/servercpu.py recorded them (by_process); [] where it has none."""
    return (s.engine.server_cpu or {}).get("by_process") or []


def api_process(s: SweepSummary) -> dict | None:
    """The API server's process in a point's server CPU (validate/servercpu.py's by_process entry): the one that
    listens on the server's port (servercpu marks it; in records from before it did, the busiest process outside
    vLLM's named children); None where the point has no server CPU."""
    procs = _processes(s)
    listening = [p for p in procs if p.get("listens")]
    children = tuple(e.child_process_prefix for e in ENGINES.values() if e.child_process_prefix)
    api = listening or [p for p in procs if not str(p.get("name", "")).startswith(children)]
    return max(api, key=lambda p: p.get("cpus", 0.0)) if api else None


def api_server_processes(s: SweepSummary) -> int:
    """How many API server processes a point's server ran: its engine's api_server_child processes where it runs
    several (--api-server-count N > 1: the parent that listens then only holds the socket), else 1; 0 where the
    point has no server CPU."""
    procs = _processes(s)
    named = {e.api_server_child for e in ENGINES.values() if e.api_server_child}
    return max(1, sum(p.get("name") in named for p in procs)) if procs else 0


def loop_cpus(s: SweepSummary) -> float | None:
    """The busy share of the API server's event loop over a point: the busiest thread of its process
    (api_process); None where the point has no server CPU."""
    return _loop(api_process(s))


def _loop(api: dict | None) -> float | None:
    """A process's busiest thread's CPUs (servercpu lists its threads busiest first); None with no process."""
    return None if api is None else (api.get("threads") or [None])[0]


def api_cpus(s: SweepSummary) -> tuple[float | None, str]:
    """The API server's CPU over a point, and what it is: the listening process's, every thread ("process"), where
    servercpu marked it, else its loop thread's (loop_cpus, "loop thread"); None where the point has no server CPU."""
    api = api_process(s)
    if api is not None and api.get("listens"):
        return api.get("cpus"), "process"
    return _loop(api), "loop thread"


def window_tokens_per_s(s: SweepSummary) -> float | None:
    """The tokens a second the loop streamed over the window its CPU was read on: the engine's generated tokens over
    that window (EngineSummary.gen_tokens_per_s), else (records without it) the client's over the point's whole span,
    which runs on past the window into the point's drain. On the shape check's runs 6-11 the client's rate at
    calibrate's speed points (144-224 clients) was 8-12% under the window's, and a fit on it put the held-out points'
    loop a median 14% over what they read; on the window's, 6% (docs/validation.md finding 47)."""
    return s.engine.gen_tokens_per_s or s.out_tok_per_s


def fit_api_cpu(points: list[SweepSummary]) -> ApiCpuFit | None:
    """The fit over `points` (schema-off and schema-on, concurrency >= 8, each with its tokens a second and the API
    server's CPU): each arm's token cost, a least squares through 0 on its own points; None where fewer than
    MIN_POINTS have them or an arm has none. Where any point marks the listening process, only such points are read
    (the process's CPU and a loop thread's are not one quantity); else every point's loop thread."""
    reads = [(s, *api_cpus(s)) for s in points]
    read_on = "process" if any(what == "process" for _, _, what in reads) else "loop thread"
    rows: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    for s, cpus, what in reads:
        tok_s = window_tokens_per_s(s)
        if what == read_on and s.concurrency >= 8 and tok_s and cpus and s.arm in rows:
            rows[s.arm].append((tok_s, cpus))
    if sum(map(len, rows.values())) < MIN_POINTS or not all(rows.values()):
        return None
    cost, errs = {}, []
    for arm, pts in rows.items():
        tok, busy = np.array(pts).T
        cost[arm] = float(tok @ busy / (tok @ tok))
        errs += list(np.abs(tok * cost[arm] / busy - 1))
    return ApiCpuFit(token_us=1e6 * cost["off"], structured_token_us=1e6 * cost["on"], points=len(errs),
                     median_abs_error_pct=float(np.median(errs)) * 100, read_on=read_on)
