"""The API server's costs (ForwardCurve.frontend_*) read from the CPU its event loop spent over calibration
points, where the server runs on the calibrating machine (validate/servercpu.py records each process's
threads): over a point the loop's busy share is requests/s x (a request's cost, more where it is structured)
+ streamed tokens/s x a token's cost, a linear fit (non-negative least squares) over the schema-off forward
sweep (128 tokens a request) and the schema-on speed points of every server calibrate swept (25-45).

Why not the fit on TTFT and running counts alone (calibrate.engine.fit_frontend): every schema-off point
streams the same 128 tokens a request, so it fixes a request's whole cost but not how it splits between the
request and its tokens, and a schema-on request, with a fifth of the tokens, is priced by that split. On the
shape check's runs 3-9 that fit put 3-6 ms on a request and 31-66 us on a token, and the model held
llguidance's server (short outputs, the most requests a second) at 99-140 running requests of 256 where it
ran 160-210; the loop's CPU on runs 6-9 reads 0 ms a request, 3.9-5.8 ms more a structured one and 72-95 us
a token, and llguidance's held-out ITL came within 6-16% where it was 8-26% (docs/validation.md finding 39).

The split needs schema-on points of unlike lengths: calibrate's speed points mix a server's schemas, so each
point of one server streams about as many tokens a request as the next (xgrammar's 40-41 on those runs), and
with one server the three costs are two equations. There a request's own cost is taken as 0, as each two-server
fit found it (runs 6-9: 0.00 ms), and the structured extra and the token cost are fitted over both arms.

With two servers' schema-on points (two lengths) the schema-on stream is fitted on them alone, its token and its
request, and the schema-off stream's token on the forward sweep alone (its one length holds a request's cost in
its tokens'): on the shape check's runs 6-10 the one token cost over both arms priced a schema-on point's loop
dearer the more requests it made a second (llguidance's flat schema, 25 tokens a request, 7-21 points more than
its nested one at 256 clients), and the arms apart brought the nested/flat ITL ratios within 10% at 20 of 30
where they were 16 (docs/validation.md finding 44).

The rates are the window's (window_tokens_per_s): the loop's CPU is read from a point's first request to its last
issued, so a rate over the point's whole span (the client's, into the drain) under-counts what the loop served while
it was read, most at calibrate's high loads. Fitted on the window's, the structured stream costs the loop more a
request and less a token than on the client's (shape run 9's calibration: 4.8 ms and 38 us against 3.6 ms and 91
us), and the held-out points' loop CPU on runs 6-11 came within a median 6% of what they read, where it was 14%
over (24 server-schema pairs; llguidance's flat schema still 2-22% over: finding 47). Not modelled: vLLM's
--api-server-count > 1 (several loops, each a child process VLLM::APIServer, the parent holding the socket: the model
has one queue; api_server_processes counts them, and calibrate then reads no loop's CPU and says so). On one host two
API processes let the engine take a fifth to two fifths more rows at 256 clients than one did (finding 53)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..records import SweepSummary

VLLM_CHILD_PREFIX = "VLLM::"  # vLLM's named child processes (EngineCore, workers): not the API server's loop
API_SERVER_CHILD = "VLLM::APIServer"  # each of vLLM's API server processes where it runs several (--api-server-count)
MIN_POINTS = 4  # points with the loop's CPU, at least one of each arm
TOKEN_SPAN = 1.2  # schema-on points whose tokens a request span less than this ratio: a request's cost taken as 0
MIN_ON_APART = 3  # schema-on points it takes to fit their stream's two costs apart


@dataclass(frozen=True)
class ApiCpuFit:
    """A structured request's and a streamed token's cost to the API server's loop; where the arms were fitted apart
    (structured_token_us > 0), token_us is the schema-off stream's and structured_ms a structured request's whole
    cost, else token_us every token's and structured_ms a structured request's extra."""
    structured_ms: float
    token_us: float
    points: int  # the points it was fitted on
    median_abs_error_pct: float  # of the loop's CPU at those points, by the fit
    structured_token_us: float = 0.0  # a structured stream's token, fitted apart (0: token_us for every token)

    @property
    def request_ms(self) -> float:
        """A request's own cost: 0 from both fits (ForwardCurve.frontend_request_ms keeps a TTFT fit's where the
        loop's CPU was not read)."""
        return 0.0

    @property
    def request_taken_as_zero(self) -> bool:
        """One token cost over both arms: the schema-on points could not tell a request's cost from its tokens'."""
        return not self.structured_token_us

    def words(self) -> str:
        how = f"fitted on its event loop's CPU over {self.points} calibration points (median |error| " \
              f"{self.median_abs_error_pct:.0f}%; calibrate.api_cpu)"
        if self.structured_token_us:
            return (f"{self.structured_token_us:.0f} us per structured token and {self.structured_ms:.2f} ms per "
                    f"structured request (the schema-on points alone), {self.token_us:.0f} us per token of a "
                    f"schema-off stream, {how}")
        return (f"{self.token_us:.0f} us per streamed token, 0 ms per request (taken: the schema-on points cannot "
                f"tell it from their tokens'), {self.structured_ms:.2f} ms more per structured request, {how}")


def _processes(s: SweepSummary) -> list[dict]:
    """A point's server processes as validate/servercpu.py recorded them (by_process); [] where it has none."""
    return (s.engine.server_cpu or {}).get("by_process") or []


def api_process(s: SweepSummary) -> dict | None:
    """The API server's process in a point's server CPU (validate/servercpu.py's by_process entry): the one that
    listens on the server's port (servercpu marks it; in records from before it did, the busiest process outside
    vLLM's named children); None where the point has no server CPU."""
    procs = _processes(s)
    listening = [p for p in procs if p.get("listens")]
    api = listening or [p for p in procs if not str(p.get("name", "")).startswith(VLLM_CHILD_PREFIX)]
    return max(api, key=lambda p: p.get("cpus", 0.0)) if api else None


def api_server_processes(s: SweepSummary) -> int:
    """How many API server processes a point's server ran: its API_SERVER_CHILD processes where it runs several
    (--api-server-count N > 1: the parent that listens then only holds the socket), else 1; 0 where the point has no
    server CPU."""
    procs = _processes(s)
    return max(1, sum(p.get("name") == API_SERVER_CHILD for p in procs)) if procs else 0


def loop_cpus(s: SweepSummary) -> float | None:
    """The busy share of the API server's event loop over a point: the busiest thread of its process
    (api_process); None where the point has no server CPU."""
    api = api_process(s)
    return None if api is None else (api.get("threads") or [None])[0]


def window_tokens_per_s(s: SweepSummary) -> float | None:
    """The tokens a second the loop streamed over the window its CPU was read on: the engine's generated tokens over
    that window (EngineSummary.gen_tokens_per_s), else (records without it) the client's over the point's whole span,
    which runs on past the window into the point's drain. On the shape check's runs 6-11 the client's rate at
    calibrate's speed points (144-224 clients) was 8-12% under the window's, and a fit on it put the held-out points'
    loop a median 14% over what they read; on the window's, 6% (docs/validation.md finding 47)."""
    return s.engine.gen_tokens_per_s or s.out_tok_per_s


def fit_api_cpu(points: list[SweepSummary]) -> ApiCpuFit | None:
    """The fit over `points` (schema-off and schema-on, concurrency >= 8, each with its rate, its tokens a
    request and its loop's CPU); None where fewer than MIN_POINTS have them or an arm has none. Where the
    schema-on points' tokens a request span TOKEN_SPAN or more, each arm apart (the module's docstring), else
    one token cost over both and a request's own cost taken as 0."""
    from scipy.optimize import nnls
    rows, busy, on_tokens = [], [], []
    for s in points:
        cpus, tok_s = loop_cpus(s), window_tokens_per_s(s)
        if s.concurrency < 8 or not tok_s or not s.output_tokens_mean or not cpus:
            continue
        per_s = tok_s / s.output_tokens_mean
        on = s.arm == "on"
        # (structured requests/s, schema-off tokens/s, structured tokens/s)
        rows.append((per_s if on else 0.0, 0.0 if on else tok_s, tok_s if on else 0.0))
        busy.append(cpus)
        if on:
            on_tokens.append(s.output_tokens_mean)
    if len(rows) < MIN_POINTS or len(on_tokens) in (0, len(rows)):
        return None
    a, b = np.array(rows), np.array(busy)
    alike = max(on_tokens) / min(on_tokens) < TOKEN_SPAN
    x = nnls(a, b)[0] if not alike and len(on_tokens) >= MIN_ON_APART else None  # (the arms share no column)
    apart = x is not None and x[2] > 0
    if not apart:  # one token cost: the two token columns as one (also where apart gives a token 0)
        x2, _ = nnls(np.stack([a[:, 0], a[:, 1] + a[:, 2]], 1), b)
        x = np.array([x2[0], x2[1], x2[1]])
    err = float(np.median(np.abs(a @ x / b - 1))) * 100
    return ApiCpuFit(structured_ms=1e3 * x[0], token_us=1e6 * x[1], points=len(rows), median_abs_error_pct=err,
                     structured_token_us=1e6 * x[2] if apart else 0.0)
