"""`maskcost calibrate --base-url URL --schema FILE... --out PROFILE`: a self-sufficient profile of a
live server and its host in one command.

First, the server idle, the GPU's mask apply (or, with no GPU here, the engine-side profile's: without one,
calibrate stops in one line before any sweep). Against the server, schema off: the forward curve, the
prefill steps (unique prompts at concurrency 1), the context slope (a long cached prompt) and the API
server's queue (fitted on the forward sweep). Schema on, short points at four loads between those phases
(one after each, the last at the end), since a server's host speed moves within minutes. Then on the host,
the server idle: fill traces of the server's own outputs (those its speed points wrote, the schemas mixed;
a point of its own for a schema short of them), compiles and pools for each backend (calibrate.run), the
host benchmark. Last, each speed point's ITL speed (the CPU speed at which the model's ITL equals the
engine's: validate.hostspeed) and their median, the speed this server's engine really ran at, which the
profile carries (Profile.measured_speed) so that predict and report use it without a speed flag.

What a live sweep cannot see (the engine thread's own work per step, the pool's in-engine cost: the
in-server probe's EngineFill, the band between servers, the structured request's extra admission
cost) comes from a profile of the same engine version (--engine-from, by default the embedded one when
its vLLM version is the server's), scaled by the two hosts' bench; the profile's notes say so. With a
second server of another backend (--backend-url), that backend's fill factors are read on this host
instead: its own speed points, each run at once after the first server's at the same load, and the
factor at which the model meets them at the first server's speed (fit_backend_fill).

Every sweep appends its points to a file beside the profile as they finish, so a second run of the
same command resumes where the first stopped.
"""
from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from ..calibrate.engine import apply_or_copied, fit_frontend, forward_from_summaries, with_api_server
from ..calibrate.api_cpu import api_server_processes, fit_api_cpu
from ..calibrate.host import host_info
from ..profile import (BackendCosts, EngineFill, MeasuredSpeed, Profile, load_profile, save_profile)
from ..calibrate import POOL_ROWS
from ..calibrate.fill import in_string_value, spread_line, string_value_scales
from ..calibrate.run import (argv, build_profile, calibrate_backends, compilable, recorded_outputs,
                             replay_cost_ratio)
from ..calibrate.schemas import SchemaEntry
from ..calibrate.tokenizer import Vocab
from ..model.config import EngineConfig
from ..records import SweepSummary, itl_ms, raw_records_path, read_summaries
from .client import ServerError
from .hostspeed import attach_itl_speeds, solve_factor
from .plan import LivePlan
from .report import compare
from .sweep import PointSpec, run_sweep, server_provenance


def _fill_scaled(ef: EngineFill | None, serial: float, pool: float, method: str | None = None) -> EngineFill:
    """`ef`'s fill factors times `serial` (the serial fill) and `pool` (the pool's: whole and per task);
    a fresh EngineFill of those factors where `ef` is None (no in-engine factors carried)."""
    ef = ef or EngineFill(method="", serial_factor=1.0, pool_factor=1.0, points=())
    return replace(ef, serial_factor=ef.serial_factor * serial, pool_factor=ef.pool_factor * pool,
                   pool_task_factor=ef.pool_task_factor * pool, method=ef.method if method is None else method)


def _scaled_engine_side(base: Profile, bench_us: float, backends: dict[str, BackendCosts],
                        fill_ratio: dict[str, float] | None = None) -> tuple[dict[str, BackendCosts], float]:
    """`backends` with `base`'s in-engine factors (EngineFill), its times scaled from base's host to
    this one by the bench ratio, its fill factors divided by `fill_ratio` where given (the library cost of
    these traces' outputs over base's convention: replay_cost_ratio); returns them and the bench ratio."""
    r = bench_us / base.host.bench_us

    def scaled(ef: EngineFill, k: float) -> EngineFill:
        return replace(ef, cpu_points=tuple(replace(c, ms=c.ms * r) for c in ef.cpu_points),
                       pool_excess_points=tuple(replace(c, ms=c.ms * r) for c in ef.pool_excess_points),
                       serial_factor=ef.serial_factor / k, pool_factor=ef.pool_factor / k,
                       pool_task_factor=ef.pool_task_factor / k)
    out = {}
    for name, b in backends.items():
        ef = base.backends[name].engine_fill if name in base.backends else None
        out[name] = replace(b, engine_fill=scaled(ef, (fill_ratio or {}).get(name, 1.0))) if ef is not None else b
    return out, r


def convention_ratios(base: Profile, costs: dict[str, BackendCosts], vocab: Vocab, entries: list[SchemaEntry],
                      outputs: dict[str, dict[str, list]], notes: list[str]) -> dict[str, float]:
    """For each backend whose traces here replay outputs written with other separators than `base`'s
    (whose in-engine factors were fitted against those: guidance in profiles written before they were
    recorded), the library's cost of the one over the other on these outputs, measured here."""
    out = {}
    for name, c in costs.items():
        b = base.backends.get(name)
        if b is None or b.engine_fill is None or b.traced_separators == c.traced_separators:
            continue
        k = replay_cost_ratio(vocab, entries, outputs.get(name) or {}, c.traced_separators, b.traced_separators)
        if k:
            out[name] = k
            notes.append(f"{name}: its in-engine fill factors were fitted against traces written with "
                         f"{b.traced_separators!r}, these with {c.traced_separators!r}, whose fills cost x{k:.2f} "
                         f"a token on this host over the same outputs: the factors divided by it")
    return out


def engine_side_base(engine_from: str | None, server_version: Any, default_path: Path) -> tuple[Profile | None, str]:
    """The profile whose in-engine factors the new one takes: --engine-from, else the embedded default
    where its vLLM version is the server's; and a note saying which (or why none)."""
    if engine_from:
        return load_profile(engine_from), f"in-engine factors from {engine_from}"
    from ..model.engines import ENGINES, reported_engine
    base = load_profile(default_path)
    packages = base.provenance.get("packages", {})
    engine = next((n for n in ENGINES if n in packages), None)  # the engine the embedded profile was made on
    ver, got, said = packages.get(engine), reported_version(server_version), reported_engine(server_version)
    if said is not None and said != engine:
        return None, (f"no in-engine factors: a {said} {got} server, the embedded profile's are {engine} {ver}'s "
                      f"(give --engine-from PROFILE of this engine version)")
    if ver and got == ver:
        return base, f"in-engine factors from the embedded profile {base.name} (the same {engine} {ver})"
    return None, (f"no in-engine factors: the server reports version {got!r}, the embedded profile is {engine} "
                  f"{ver} (give --engine-from PROFILE of this engine version)")


def reported_version(server_version: Any) -> str | None:
    """The version string in server_provenance's "version" (vLLM's /version, SGLang's /server_info), if any."""
    return server_version.get("version") if isinstance(server_version, dict) else None


def _served_version(cfg: EngineConfig, prov: dict[str, Any]) -> EngineConfig:
    """`cfg` at the version the server reports, where no version was given and that one is modelled."""
    from ..model.engines import VERSIONS
    got = reported_version(prov.get("version"))
    if cfg.engine_version is None and got in VERSIONS.get(cfg.engine, {}):
        return replace(cfg, engine_version=got)
    return cfg


def calibrate_live(base_url: str, vocab: Vocab, entries: list[SchemaEntry], backends: list[str], out: Path,
                   plan: LivePlan, cfg: EngineConfig, engine_from: str | None, default_path: Path,
                   name: str, notes: list[str], seed: int = 0, log: Callable[[str], None] = print,
                   pool_rows: tuple[int, ...] = POOL_ROWS, backend_urls: dict[str, str] | None = None,
                   command: list[str] | None = None) -> Profile:
    """Measure everything (module doc) and write the profile to `out`; returns it. `backend_urls`: a
    server of the same engine for another backend (backend -> URL), whose own outputs that backend's
    traces replay (an engine writes outputs of another shape with each backend: docs/validation.md
    findings 17, 18); the others replay `base_url`'s. `command`: what the provenance keeps (default: sys.argv)."""
    t_start, prov = time.monotonic(), server_provenance(base_url.rstrip("/"))  # no server: one line, here
    other_prov = {b: server_provenance(u.rstrip("/")) for b, u in (backend_urls or {}).items()}
    others = {b: pv["base_url"] for b, pv in other_prov.items()}
    cfg = _served_version(cfg, prov)
    base, base_note = engine_side_base(engine_from, prov.get("version"), default_path)
    side = lambda what: out.with_name(f"{out.name.split('.')[0]}.{what}.jsonl")  # noqa: E731  (beside the profile)
    resumed = side("forward-sweep").exists()  # (the phases' seconds are then this invocation's only)
    with _Progress(plan.estimate_s(len(entries), len(backends), (cfg.backend, *others)), log) as done:
        apply = apply_or_copied(vocab.size, base, notes)  # the GPU's mask apply, the server idle (or one line now)
        speed = SpeedSweeps(base_url, cfg.backend, others, compilable(vocab, entries, backends, done.write,
                                                                      said_for={cfg.backend, *others}), side, plan, seed)
        done("setup")
        # the server, schema off, with the schema-on speed points between its phases; then the last of those
        fwd, forward = schema_off_forward(base_url, plan, cfg, prov, side, seed, speed.interleaved(done))
        speed.run(speed.specs())
        done("speed")
        # the servers' own outputs (the speed points', topped up where short): what the host's traces replay
        outputs = all_outputs(speed, vocab, entries, backends, notes)
        done("outputs")
        # the host, while the server is idle
        host = host_info(vocab)
        partial = out.with_name(out.name + ".partial.jsonl")  # the traces so far: an interrupted run resumes
        costs = calibrate_backends(vocab, entries, backends, partial, seed=seed, pool_rows=pool_rows,
                                   traces_per_schema=plan.outputs_per_schema, repeats=plan.trace_repeats,
                                   log=lambda m: tqdm.write(m), outputs_by_backend=outputs)
        costs = {b: replace(c, output_sources=tuple((sid, whose_outputs(src, b, cfg.backend, prov["base_url"], others))
                                                    for sid, src in c.output_sources)) for b, c in costs.items()}
        costs, forward = engine_side(base, base_note, host.bench_us, costs, forward, vocab, entries, outputs, notes)
        done("host")
        command = command or argv()
        notes.append(f"server: {prov['base_url']} (version {prov.get('version')}); calibrated with {' '.join(command)}")
        p = build_profile(name, vocab, host, costs, forward, apply, command, notes, entries)
        p = replace(p, engine_speeds=base.engine_speeds) if base is not None else p
        on = [s for b in (cfg.backend, *others) for s in speed.got.get(b, ())]  # (its loop: a queued API server's)
        p = with_frontend(p, fwd, on if cfg.api_server_queue else [], plan.frontend)
        done("frontend")
        # each backend's traces at the mean all its server's speed-point outputs imply, then the speed read
        p = string_value_scaled(p, vocab, {b: speed.path(b) for b in (cfg.backend, *others)})
        p = replace(p, measured_speed=read_speed(p, cfg, speed.got[cfg.backend], speed.path(cfg.backend).name))
        for b, u in others.items():
            if speed.got.get(b):
                p = fit_backend_fill(p, cfg, b, speed.got[b], u)
        done("speed", ended=False)  # (the speed read, as estimate_s counts it)
        p = replace(p, provenance={**p.provenance, "wall_s": round(time.monotonic() - t_start, 1), **done.provenance(),
                                   **({"resumed": True} if resumed else {}),
                                   "server_engine": served_engine(cfg, prov, other_prov)})
    save_profile(p, out)
    load_profile(out)  # what --check reads: the file as written
    partial.unlink(missing_ok=True)
    return p


def engine_side(base: Profile | None, base_note: str, bench_us: float, costs: dict[str, BackendCosts], forward: Any,
                vocab: Vocab, entries: list[SchemaEntry], outputs: dict[str, dict[str, list]],
                notes: list[str]) -> tuple[dict[str, BackendCosts], Any]:
    """The costs and forward curve with what a live sweep cannot see taken from `base` (engine_side_base):
    its in-engine factors (converted to these traces' separators) and the structured request's API-server
    cost, scaled by the two hosts' bench; unchanged where there is no base. The note of which in `notes`."""
    if base is None:
        notes.append(base_note)
        return costs, forward
    k = convention_ratios(base, costs, vocab, entries, outputs, notes)
    costs, ratio = _scaled_engine_side(base, bench_us, costs, k)
    notes.append(f"{base_note}, scaled x{ratio:.3f} (this host's bench_us / its); the band (engine_speeds) from it too")
    return costs, replace(forward, frontend_structured_ms=base.forward.frontend_structured_ms * ratio,
                          frontend_structured_token_us=base.forward.frontend_structured_token_us * ratio)


class _Progress:
    """calibrate's bar in estimated seconds (LivePlan.estimate_s), a phase's share added as it ends, and the
    seconds each phase took (`took`: the time since the last call goes to `phase`)."""

    def __init__(self, est: dict[str, float], log: Callable[[str], None]) -> None:
        self.est, self.took, self.t = est, {k: 0.0 for k in est}, time.monotonic()
        log(f"calibrate: about {sum(est.values()) / 60:.1f} min ({', '.join(f'{k} {v:.0f} s' for k, v in est.items() if v)})")
        self.bar = tqdm(total=round(sum(est.values())), unit="s", desc="calibrate (estimated s)", position=0)

    def __call__(self, phase: str, ended: bool = True) -> None:
        """`phase` took the time since the last call; `ended`: its estimate goes onto the bar."""
        now = time.monotonic()
        self.took[phase], self.t = self.took.get(phase, 0.0) + now - self.t, now
        if ended:
            self.bar.update(round(self.est.get(phase, 0.0)))

    def write(self, line: str) -> None:
        tqdm.write(line, file=sys.stderr)

    def provenance(self) -> dict[str, dict[str, float]]:
        """What the profile keeps of it: each phase's seconds, measured and estimated."""
        return {"phases_s": {k: round(v, 1) for k, v in self.took.items()},
                "phases_estimate_s": {k: round(v, 1) for k, v in self.est.items()}}

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc) -> None:  # closed before an error's one line is printed
        self.bar.close()


def all_outputs(speed: "SpeedSweeps", vocab: Vocab, entries: list[SchemaEntry], backends: list[str],
                notes: list[str]) -> dict[str, dict[str, list]]:
    """Each backend's outputs to trace (server_outputs): its own server's where it has one (--base-url's
    for the server's backend, --backend-url's for the others), else --base-url's; a note of each in `notes`."""
    plan, got = speed.plan, {}
    for b, url in ((speed.backend, speed.base_url), *speed.others.items()):
        mine = [e for e in entries if e in speed.on_entries.get(b, ())]
        got[b] = server_outputs(url, vocab, mine, speed.path(b), speed.side("outputs" if b == speed.backend
                                                                            else f"outputs-{b}"), plan, speed.seed)
        said = outputs_note(mine, got[b], plan.outputs_per_schema)
        notes.append(said if b == speed.backend else f"{b}: " + said.replace("the server's", f"its server's ({url})"))
    return {b: got.get(b, got[speed.backend]) for b in backends}


@dataclass
class SpeedSweeps:
    """calibrate's schema-on speed points (plan.speed_concurrency, the schemas each backend compiles:
    `compilable`; their outputs are what the host's traces replay: server_outputs): each point on the
    --base-url server, then at once on each --backend-url one (fit_backend_fill's points, so the host's drift
    falls on both); `got` holds every server's points by backend as last read."""
    base_url: str
    backend: str
    others: dict[str, str]
    on_entries: dict[str, list[SchemaEntry]]
    side: Callable[[str], Path]
    plan: LivePlan
    seed: int
    got: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warmed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.on_entries.get(self.backend):
            raise ValueError(f"calibrate: none of the schemas compiles on {self.backend} (the server's backend, "
                             f"--server-backend): no speed can be read")

    def specs(self) -> list[PointSpec]:
        return [PointSpec("on", c, 0, max(self.plan.min_requests, self.plan.rounds * c))
                for c in self.plan.speed_concurrency]

    def path(self, backend: str) -> Path:
        return self.side("speed-sweep" if backend == self.backend else f"speed-sweep-{backend}")

    def interleaved(self, done: "_Progress") -> Callable[[str], None]:
        """What runs after each phase against the server (the forward sweep, the prefill, the context slope,
        SGLang's eager prefill): done(phase), then the next of the first points (the last runs after them all),
        its time the speed phase's."""
        first = iter(self.specs()[:-1])

        def between(phase: str) -> None:
            done(phase)
            spec = next(first, None)
            if spec is not None:
                self.run([spec])
                done("speed", ended=False)  # (its estimate goes on when the last point ends)
        return between

    def run(self, specs: list[PointSpec]) -> None:
        """The points of `specs` not yet on file (a sweep resumes), on every server in turn; each server warmed
        (each of its schemas' grammars compiled) before the first point this calibration runs on it only."""
        for b, url in ((self.backend, self.base_url), *self.others.items()):
            if self.on_entries.get(b):
                on_file = {d.point for d in read_summaries(self.path(b))} if self.path(b).exists() else set()
                self.got[b] = run_sweep(url, specs, self.on_entries[b], self.path(b), max_tokens=self.plan.max_tokens,
                                        seed=self.seed, client_procs=self.plan.client_procs_at,
                                        warmup=0 if b in self.warmed else 4, warm_first_only=True)
                if any(p.key not in on_file for p in specs):
                    self.warmed.add(b)  # (a point ran on it: warm now; one found on file warms nothing)


def served_engine(cfg: EngineConfig, prov: dict[str, Any], other_prov: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The profile's provenance of the servers it was read from (server_engine)."""
    return {"engine": cfg.engine, "version": reported_version(prov.get("version")),
            **({"server_args": prov["server_args"]} if "server_args" in prov else {}),
            **({"backend_servers": {b: {"base_url": pv["base_url"], "version": reported_version(pv.get("version")),
                                        "models": pv.get("models")} for b, pv in other_prov.items()}}
               if other_prov else {})}


def schema_off_forward(base_url: str, plan: LivePlan, cfg: EngineConfig, prov: dict[str, Any],
                       side: Callable[[str], Path], seed: int, between: Callable[[str], None]
                       ) -> tuple[list[dict[str, Any]], Any]:
    """The server schema off: the forward sweep, the prefill steps (unique prompts at concurrency 1), the
    context slope (a long cached prompt) and, for an engine whose one-token prefill runs eager
    (engines.Sglang0517), concurrency-1 TTFT of the same short prompt against fresh ones; `between(phase)`
    after each. Returns the forward sweep's summaries and the forward curve."""
    off = lambda concs: [PointSpec("off", c, 0, max(plan.min_requests, plan.rounds * c)) for c in concs]  # noqa: E731
    fwd = run_sweep(base_url, off(plan.forward_concurrency), [], side("forward-sweep"), off_tokens=plan.off_tokens,
                    seed=seed, client_procs=plan.client_procs_at, warm_first_only=True)
    between("forward")
    prefill = [s for pad in plan.prefill_pads for s in
               run_sweep(base_url, [PointSpec("off", 1, 0, plan.min_requests)], [], side(f"prefill{pad}"),
                         off_tokens=8, prompt_pad=pad, unique_prompts=True, seed=seed)]
    between("prefill")
    context = run_sweep(base_url, off(plan.context_concurrency), [], side("context"), off_tokens=plan.off_tokens,
                        prompt_pad=plan.context_pad, seed=seed, client_procs=plan.client_procs_at,
                        warm_first_only=True) \
        if plan.context_concurrency else []
    between("context")
    eager = [s for unique in (False, True) for s in
             run_sweep(base_url, [PointSpec("off", 1, 0, plan.min_requests)], [],
                       side("eager-fresh" if unique else "eager-same"), off_tokens=16, unique_prompts=unique,
                       seed=seed)] if cfg.policy.reads_eager_prefill else []
    if eager:
        between("eager")
    srv = f"{prov['base_url']} (version {prov.get('version')})"
    forward = forward_from_summaries(fwd, f"schema-off sweep of {srv}: {side('forward-sweep').name}"
                                          f"{'; prefill at concurrency 1, unique prompts ' + str(list(plan.prefill_pads)) if prefill else ''}"
                                          f"{'; context: a cached ' + str(plan.context_pad) + '-token prompt' if context else ''}"
                                          f"{'; eager prefill: concurrency-1 TTFT, the same prompt against fresh ones' if eager else ''}",
                                     (), prefill, context, eager)
    return fwd, forward


def with_frontend(p: Profile, fwd: list[SweepSummary], on: list[SweepSummary], ttft_fit: bool = True) -> Profile:
    """The profile with the API server's costs read from its process's CPU over the forward sweep and the
    schema-on points `on` (calibrate.api_cpu; no server time) where the server runs here, else, where
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
                                               source=f"{p.forward.source} API server: {got.words()}."))
        return _noted(p, f"the API server's costs read from its CPU (calibrate.api_cpu): {got.words()}")
    if not ttft_fit:
        return p
    try:
        fw = fit_frontend(p, fwd)
    except ValueError as e:
        return _noted(p, f"no API-server fit: {e}")
    return replace(p, forward=replace(fw, source=f"{fw.source} API server: {fw.frontend_token_us:.0f} us per "
                                                 f"streamed token, {fw.frontend_request_ms:.2f} ms per request, "
                                                 f"fitted on the forward sweep (calibrate.engine.fit_frontend)."))


def read_speed(p: Profile, cfg: EngineConfig, on: list[SweepSummary], sweep_name: str) -> MeasuredSpeed:
    """The server's speed from its schema-on points (measured_speed); ServerError where none gives one."""
    rows = attach_itl_speeds(compare(p, cfg, on), p, cfg, on, requests_factor=4)
    pts = tuple((r["concurrency"], round(r["itl_speed"], 4)) for r in rows if r.get("itl_speed"))
    if not pts:
        short = any(not s.engine.running_mean for s in on)
        raise ServerError(f"calibrate: no schema-on point of {sweep_name} gave an ITL speed (" + (
            "points too short for the server's /metrics to see requests running: more --min-requests or --rounds"
            if short else "the model cannot match the engine's ITL there at any speed") + "); the profile is not written")
    return measured_speed(pts, on, cfg, sweep_name)


def fit_backend_fill(p: Profile, cfg: EngineConfig, backend: str, on: list[SweepSummary], url: str) -> Profile:
    """The profile with `backend`'s in-engine fill factors fitted on its own server's schema-on points
    (calibrate --backend-url), the host at the --base-url server's speed: at each point the factor k on
    that backend's fills at which the model's ITL equals the engine's, the host at the speed the
    --base-url server's point of the same load ran at (the point just before it, so the host's drift
    falls on both; where that point read no speed, the profile's speed for the regime); the serial factor
    times the median k of the points whose fill is serial, the pool's times that of the pool points (both
    by the one regime that ran, where only one did). What the
    embedded profile's factors carry (fitted on another machine's engine: docs/validation.md finding 18)
    is thereby read on this one. Unchanged, with a note, where no point gives a k."""
    ms = p.measured_speed
    paired = dict(ms.points)
    cfg_b = replace(cfg, backend=backend)
    ef = p.backends[backend].engine_fill

    ran: dict[tuple, float] = {}  # (the guard below and the solve both start at k = 1: one run of each)

    def itl_at(s: dict[str, Any], speed: float, k: float) -> float:  # (no band: its runs do not move the mean)
        key = (s.point, speed, k)
        if key not in ran:
            q = replace(p, engine_speeds=None, backends={**p.backends, backend: replace(
                p.backends[backend], engine_fill=_fill_scaled(ef, k, k))})
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
        each.append(f"c{s.concurrency}: {'none' if k is None else f'x{k:.3f}'}{' (pool)' if pooled else ''} at speed {speed:.3f}")
        if k is not None:
            ks[pooled].append(k)
    where = f"its own server's ({url}) schema-on points ({', '.join(each)})"
    if not ks[False] and not ks[True]:
        return _noted(p, f"{backend}: no fill factor fitted on {where}: the factors as carried")
    k_serial = statistics.median(ks[False] or ks[True])
    k_pool = statistics.median(ks[True] or ks[False])
    what = (f"x{k_serial:.3f} serial, x{k_pool:.3f} pool over the factors carried, fitted at calibration on {where}, "
            f"the host at the {ms.backend} server's speed (calibrate --backend-url)")
    fitted = _fill_scaled(ef, k_serial, k_pool, method=f"{ef.method}; then {what}" if ef else what)
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


def spread(items: list, n: int) -> list:
    """`n` of `items` evenly spaced over them (all of them where there are no more): a sweep's outputs
    sampled across its points (each point's outputs lie in its file in turn), the same on every run."""
    if len(items) <= n:
        return list(items)
    return [items[(2 * i + 1) * len(items) // (2 * n)] for i in range(n)]


def server_outputs(base_url: str, vocab: Vocab, entries: list[SchemaEntry], speed_sweep: Path, path: Path,
                   plan: LivePlan, seed: int, rounds: int = 3) -> dict[str, list]:
    """The server's valid schema-on outputs by schema id, plan.outputs_per_schema of each where it gives them,
    each the token stream the engine emitted (read from the streamed chunks): those of its speed points
    (`speed_sweep`: the schemas mixed, at the loads its speed is read at), evenly spread over them; for a
    schema with fewer than plan.outputs_enough of them, a point of its own at plan.outputs_concurrency for the
    rest (into `path`), then up to `rounds - 1` more while still short. A schema with none keeps outputs
    sampled under the mask (one the server refused at the speed points is not asked again)."""
    want = plan.outputs_per_schema
    have = recorded_outputs(raw_records_path(speed_sweep), vocab) if raw_records_path(speed_sweep).exists() else {}
    refused = set().union(*(d.config.get("refused_schemas") or {} for d in read_summaries(speed_sweep))) \
        if speed_sweep.exists() else set()  # (the server refused them: no outputs to ask for; sampled under the mask)
    todo, more = [e for e in entries if len(have.get(e.schema_id, ())) < plan.outputs_enough
                  and e.schema_id not in refused], {}
    for r in range(rounds if todo else 0):
        for e in todo:
            n = max(plan.min_requests, round(1.25 * (want - len(have.get(e.schema_id, ()))
                                                     - len(more.get(e.schema_id, ())))))
            run_sweep(base_url, [PointSpec("on", min(plan.outputs_concurrency, n), entries.index(e) * rounds + r, n)],
                      [e], path, max_tokens=plan.max_tokens, seed=seed, client_procs=plan.client_procs_at)
        more = recorded_outputs(raw_records_path(path))
        todo = [e for e in todo if len(have.get(e.schema_id, ())) + len(more.get(e.schema_id, ())) < want]
        if not todo:
            break
    more = recorded_outputs(raw_records_path(path), vocab) if more else {}  # (counted above, read as tokens now)
    both = {e.schema_id: spread(have.get(e.schema_id, []), want) + more.get(e.schema_id, []) for e in entries}
    return {sid: outs[:want] for sid, outs in both.items() if outs}


def whose_outputs(source: str, backend: str, server_backend: str, base_url: str, others: dict[str, str]) -> str:
    """A trace source (calibrate.fill) with the server whose outputs it replayed: the backend's own, or
    the --base-url server's of another backend, whose output lengths are then a guess for this one."""
    if "recorded" not in source:
        return source
    if backend in others:
        return f"{source} of its own {backend} server ({others[backend]})"
    if backend == server_backend:
        return f"{source} of the {backend} server ({base_url})"
    return (f"{source} of the {server_backend} server ({base_url}): an engine with {backend} writes outputs of "
            f"another shape, so their lengths are a guess here (calibrate --backend-url {backend}=URL traces its own)")


def outputs_note(entries: list[SchemaEntry], outputs: dict[str, list[str]], want: int) -> str:
    """The profile's note of where each schema's traced outputs came from."""
    short = [f"{e.schema_id} ({len(outputs.get(e.schema_id, ()))})" for e in entries
             if len(outputs.get(e.schema_id, ())) < want]
    return (f"traces: the server's own valid outputs, up to {want} a schema (its speed points', spread over them; a "
            f"point of its own for a schema short of them), as the engine emitted their tokens (their lengths are "
            f"the requests' output lengths)" + (f"; short of {want}: {', '.join(short)} (none: sampled under the mask, "
                                  f"lengths a guess)" if short else ""))


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


def summary_line(p: Profile, out: Path) -> str:
    m = p.measured_speed
    return (f"wrote {out}: {', '.join(f'{b}: {len(c.compiles)} schemas traced, {len(c.failures)} skipped' for b, c in p.backends.items())}; "
            f"forward {len(p.forward.points)} points, prefill {len(p.forward.prefill_points)}, context "
            f"{p.forward.context_us_per_ktoken:.1f} us per 1k tokens; the server's speed {m.words()} "
            f"({m.backend}, {len(m.points)} points); {p.provenance.get('wall_s', 0) / 60:.1f} min\n"
            + "\n".join(spread_line(b, c.traces) for b, c in p.backends.items()))
