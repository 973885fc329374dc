"""The fits calibrate --base-url makes on a live server's sweeps (validate/server_calibration.py runs them): the API
server's costs, each backend's traces at the string-value share its outputs imply, the server's speed read from its
schema-on points, and another backend's in-engine fill factor on its own server's points."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..calibrate.engine import fit_frontend, with_api_server
from ..calibrate.api_cpu import api_server_processes, fit_api_cpu
from ..profile import AS_READ_HERE, MeasuredSpeed, Profile
from ..calibrate.fill import in_string_value, string_value_scales
from ..calibrate.run import recorded_outputs
from ..calibrate.tokenizer import Vocab
from ..model.config import EngineConfig
from ..records import SweepSummary, itl_ms, raw_records_path
from .client import ServerError
from .hostspeed import attach_itl_speeds, solve_factor
from .report import compare
from .engine_base import fill_scaled


@dataclass(frozen=True)
class FillPrior:
    """What the record says of a backend's in-engine fill factors as fit_backend_fill reads them: the median of
    the factors (over those the embedded profile carries) fitted by calibrate --backend-url on the record's fresh
    hosts, serial and pool, and the weight a fit's own factor gives way to them, in the log. Only where the
    profile the factors are carried from is `profile_sha256` (the embedded one they were fitted over)."""
    serial: float
    pool: float
    weight: float
    profile_sha256: str
    source: str

    def drawn(self, k_serial: float, k_pool: float) -> tuple[float, float]:
        """(serial, pool) fitted factors drawn toward the record's: each fit^(1 - weight) x median^weight."""
        w = self.weight
        return (math.exp((1 - w) * math.log(k_serial) + w * math.log(self.serial)),
                math.exp((1 - w) * math.log(k_pool) + w * math.log(self.pool)))

    def words(self, k_serial: float, k_pool: float) -> str:
        """What a fit's note says of the factors drawn, (k_serial, k_pool)."""
        return (f"; drawn toward the record's x{self.serial:.3f} serial, x{self.pool:.3f} pool, {self.source}, weight "
                f"{self.weight:g} in the log: x{k_serial:.3f} serial, x{k_pool:.3f} pool (calibrate --backend-fill-prior)")


# llguidance's factors fitted by calibrate --backend-url on vLLM 0.25.1's shape check, runs 5-18 (14 fresh H100 and
# H200 hosts, validation/h200-vllm-0.25.1/shape/run*/xg/host.json.gz): x0.40-x1.33 serial, x0.29-x0.87 pool, the fit
# of one server's four points as noisy as the hosts' spread; drawn halfway toward the other runs' median, better on
# 9 of 14 runs post hoc (docs/validation.md finding 74) and on 9 of 15 with run 19, registered with it (finding 76).
# tests/test_validate.py recomputes the medians from those profiles.
FILL_PRIORS = {"guidance": FillPrior(
    serial=0.674, pool=0.699, weight=0.5,
    profile_sha256="ef78909dcdf31ebda0655946ac51f6bdddf2dc514c2d8fe267a9a6be9d2120c2",
    source="the median of shape runs 5-18's fitted factors (docs/validation.md finding 74)")}


def with_frontend(p: Profile, fwd: list[SweepSummary], on: list[SweepSummary], ttft_fit: bool = True) -> Profile:
    """The profile with the API server's costs read from its process's CPU over the forward sweep and the
    schema-on points `on` (calibrate.api_cpu; no server time) where the server runs here, as read on this host
    (frontend_read_speed AS_READ_HERE, until its speed is read: at_speed_read), else, where
    `ttft_fit` (LivePlan.frontend), its queue fitted on the forward sweep's TTFT and running counts; without
    them (noted) where too few loads allow no fit. A server of several API processes (--api-server-count) is
    noted, and no loop's CPU read: the model has one API server queue."""
    pts = [*fwd, *on]
    n = max((api_server_processes(s) for s in pts), default=0)
    if n > 1:
        p = _noted(p, f"the server ran {n} API server processes (--api-server-count {n}); the model has one API "
                      f"server queue (model/api_server.py), so no loop's CPU is read for its costs, and where that "
                      f"queue is busy the model may hold back requests the server's {n} let through "
                      f"(docs/validation.md finding 53)")
    got = fit_api_cpu(pts) if n <= 1 else None
    if got is not None:
        p = replace(p, forward=with_api_server(p.forward, got.token_us, got.request_ms,
                                               frontend_structured_ms=got.structured_ms,
                                               frontend_structured_token_us=got.structured_token_us,
                                               frontend_read_speed=AS_READ_HERE,  # (speeds_read: the speed read)
                                               source=f"{p.forward.source} API server: {got.words()}."))
        return _noted(p, f"the API server's costs read from its CPU (calibrate.api_cpu): {got.words()}; priced as "
                         f"read, at the speed then read on this server (ForwardCurve.frontend_read_speed)")
    if not ttft_fit:
        return p
    try:
        fw = fit_frontend(p, fwd)
    except ValueError as e:
        return _noted(p, f"no API-server fit: {e}")
    return replace(p, forward=replace(fw, source=f"{fw.source} API server: {fw.frontend_token_us:.0f} us per "
                                                 f"streamed token, {fw.frontend_request_ms:.2f} ms per request, "
                                                 f"fitted on the forward sweep (calibrate.engine.fit_frontend)."))


def at_speed_read(p: Profile) -> Profile:
    """`p` with API-server costs read as on this host (with_frontend) marked as read at the speed read on it
    (Profile.measured_speed.cpu_speed), so that predict prices them as read here where the fill is serial, scales
    them on another host, and, on vLLM's fill pool, by that regime's speed read (pool_speed) against it."""
    if p.forward.frontend_read_speed != AS_READ_HERE or p.measured_speed is None:
        return p
    return replace(p, forward=replace(p.forward, frontend_read_speed=p.measured_speed.cpu_speed))


def read_speed(p: Profile, cfg: EngineConfig, on: list[SweepSummary], sweep_name: str) -> MeasuredSpeed:
    """The server's speed from its schema-on points (measured_speed); ServerError where none gives one."""
    rows = attach_itl_speeds(compare(p, cfg, on), p, cfg, on, requests_factor=4)
    pts = tuple((r["concurrency"], round(r["itl_speed"], 4)) for r in rows if r.get("itl_speed"))
    if not pts:
        short = any(not s.engine.running_mean for s in on)
        why = ("points too short for the server's /metrics to see requests running: more --min-requests or --rounds"
               if short else "the model cannot match the engine's ITL there at any speed")
        raise ServerError(f"calibrate: no schema-on point of {sweep_name} gave an ITL speed ({why}); the profile is "
                          f"not written")
    return measured_speed(pts, on, cfg, sweep_name)


def fit_backend_fill(p: Profile, cfg: EngineConfig, backend: str, on: list[SweepSummary], url: str,
                     prior: FillPrior | None = None) -> Profile:
    """The profile with `backend`'s in-engine fill factors fitted on its own server's schema-on points
    (calibrate --backend-url), the host at the --base-url server's speed: at each point the factor k on
    that backend's fills at which the model's ITL equals the engine's, the host at the speed the
    --base-url server's point of the same load ran at (the point just before it, so the host's drift
    falls on both; where that point read no speed, the profile's speed for the regime); the serial factor
    times the median k of the points whose fill is serial, the pool's times that of the pool points (both
    by the one regime that ran, where only one did). What the
    embedded profile's factors carry (fitted on another machine's engine: docs/validation.md finding 18)
    is thereby read on this one; with `prior`, both factors then drawn toward the record's (FillPrior.drawn).
    Unchanged, with a note, where no point gives a k."""
    ms = p.measured_speed
    paired = dict(ms.points)
    cfg_b = replace(cfg, backend=backend)
    ef = p.backends[backend].engine_fill

    ran: dict[tuple, float] = {}  # (the guard below and the solve both start at k = 1: one run of each)

    def itl_at(s: dict[str, Any], speed: float, k: float) -> float:  # (no band: its runs do not move the mean)
        key = (s.point, speed, k)
        if key not in ran:
            q = replace(p, engine_speeds=None, backends={**p.backends, backend: replace(
                p.backends[backend], engine_fill=fill_scaled(ef, k, k))})
            ran[key] = compare(q, replace(cfg_b, cpu_speed=speed, cpu_speed_pool=None), [s])[0]["metrics"]["ITL ms"][
                "predicted"]
        return ran[key]

    def regime(s: dict[str, Any]) -> tuple[bool, float]:  # (pool fills?, the host's speed at the point)
        pooled = cfg.policy.uses_pool(cfg_b, round(s.engine.running_mean or 0.0), 0)
        return pooled, paired.get(s.concurrency) or (ms.pool_speed if pooled and ms.pool_speed else ms.cpu_speed)
    top = max(on, key=lambda s: s.concurrency)
    if abs(itl_at(top, regime(top)[1], 2.0) / itl_at(top, regime(top)[1], 1.0) - 1) < 1e-3:
        return _noted(p, f"{backend}: no fill factor fitted: the model's {cfg.engine} fill for it does not take the "
                         f"in-engine factors (SGLang's llguidance fills batched), so its own server's points cannot "
                         f"read one")
    ks: dict[bool, list[float]] = {False: [], True: []}
    each = []
    for s in tqdm(on, desc=f"{backend}: fill factor", unit="pt"):
        pooled, speed = regime(s)
        meas = itl_ms(s)
        k = solve_factor(lambda k: itl_at(s, speed, k), meas) if meas else None
        each.append(f"c{s.concurrency}: {'none' if k is None else f'x{k:.3f}'}{' (pool)' if pooled else ''} "
                    f"at speed {speed:.3f}")
        if k is not None:
            ks[pooled].append(k)
    where = f"its own server's ({url}) schema-on points ({', '.join(each)})"
    if not ks[False] and not ks[True]:
        return _noted(p, f"{backend}: no fill factor fitted on {where}: the factors as carried")
    k_serial = statistics.median(ks[False] or ks[True])
    k_pool = statistics.median(ks[True] or ks[False])
    what = (f"x{k_serial:.3f} serial, x{k_pool:.3f} pool over the factors carried, fitted at calibration on {where}, "
            f"the host at the {ms.backend} server's speed (calibrate --backend-url)")
    if prior is not None:
        k_serial, k_pool = prior.drawn(k_serial, k_pool)
        what += prior.words(k_serial, k_pool)
    fitted = fill_scaled(ef, k_serial, k_pool, method=f"{ef.method}; then {what}" if ef else what)
    p = replace(p, backends={**p.backends, backend: replace(p.backends[backend], engine_fill=fitted)})
    return _noted(p, f"{backend}: in-engine fill {what}")


def string_value_scaled(p: Profile, vocab: Vocab, sweeps: dict[str, Path]) -> Profile:
    """Each backend's traces (of its own server's outputs) scaled, schema by schema, to the mean cost a token
    that the server's outputs in `sweeps` (backend -> a sweep file; their raw records) imply: the share of
    their fills made inside a string value, counted from their tokens, through the traces' own fit
    (calibrate.fill.string_value_scales; a schema whose fit does not hold keeps its traces); noted."""
    for b, path in sweeps.items():
        raw = raw_records_path(path)
        if b not in p.backends or not raw.exists():
            continue
        share, counted = {}, 0
        for sid, outs in recorded_outputs(raw, vocab).items():
            flags = [f for o in outs for f in in_string_value(
                [vocab.tokens[t] for t in (vocab.encode(o) if isinstance(o, str) else o) if t != vocab.eos_id])]
            share[sid], counted = sum(flags) / len(flags), counted + len(outs)
        scales = string_value_scales(p.backends[b].traces, share)
        if not scales:
            continue
        traces = tuple(replace(t, fill_us=tuple(x * scales[t.schema_id] for x in t.fill_us),
                               accept_us=tuple(x * scales[t.schema_id] for x in t.accept_us))
                       if t.schema_id in scales else t for t in p.backends[b].traces)
        p = replace(p, backends={**p.backends, b: replace(p.backends[b], traces=traces)})
        p = _noted(p, f"{b}: traces scaled to the mean cost a token of the server's {counted} outputs in {raw.name} "
                      f"(their fills inside a string value counted, the traces' fit: docs/validation.md finding 33): "
                      + ", ".join(f"{sid} x{f:.3f}" for sid, f in sorted(scales.items())))
    return p


def _noted(p: Profile, note: str) -> Profile:
    tqdm.write(f"calibrate: {note}")
    return replace(p, provenance={**p.provenance, "notes": [*p.provenance.get("notes", []), note]})


def measured_speed(pts: tuple[tuple[int, float], ...], on: list[SweepSummary], cfg: EngineConfig,
                   sweep_name: str) -> MeasuredSpeed:
    """The server's speed from its points' ITL speeds: their median; for vLLM, where points ran on
    both sides of the fill pool's threshold (by the engine's measured running batch), the serial-fill
    points' median and the pool points' apart (a server's two regimes can run at speeds 20-25% apart:
    validation/h200-vllm-0.25.1/newcomer, run 2)."""
    running = {s.concurrency: s.engine.running_mean or 0.0 for s in on}
    pooled = {c: cfg.policy.uses_pool(cfg, round(running.get(c, 0.0)), 0) for c, _ in pts}  # (vLLM's fill pool)
    serial = [x for c, x in pts if not pooled[c]]
    pool = [x for c, x in pts if pooled[c]]
    split = bool(serial and pool)
    where = (f"the model at {cfg.usable_cores} cores, cpu_count {cfg.cpu_count}, max-num-seqs {cfg.max_num_seqs}")
    each = ", ".join(f"c{c}: {x:.3f}{' (pool)' if pooled[c] else ''}" for c, x in pts)
    if not split:
        return MeasuredSpeed(statistics.median(x for _, x in pts), cfg.backend,
                             f"median ITL speed of {sweep_name} ({each}), {where}", pts)
    return MeasuredSpeed(statistics.median(serial), cfg.backend,
                         f"median ITL speed of {sweep_name}'s serial-fill points, and apart of its fill-pool "
                         f"points ({each}), {where}", pts, statistics.median(pool))
