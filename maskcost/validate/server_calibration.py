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

Here: the run and its sweeps. Its parts, one module each: server_outputs (the outputs it traces),
engine_base (what it takes from a base profile), server_fits (the fits on its sweeps).
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from ..calibrate.engine import apply_or_copied, forward_from_summaries
from ..calibrate.host import SpreadBench, host_info
from ..profile import Profile, load_profile, save_profile
from ..calibrate import POOL_ROWS
from ..calibrate.fill import EnoughTraces, spread_line
from ..calibrate.run import argv, build_profile, calibrate_backends, compilable
from ..calibrate.schemas import SchemaEntry
from ..calibrate.tokenizer import Vocab
from ..model.config import EngineConfig
from ..records import read_summaries
from .plan import LivePlan
from .sweep import PointSpec, run_sweep, server_provenance
from .engine_base import engine_side, engine_side_base, reported_version
from .server_outputs import all_outputs, whose_outputs
from .server_fits import (FILL_PRIORS, FillPrior, at_speed_read, fit_backend_fill, read_speed, string_value_scaled,
                          with_frontend)


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
                   command: list[str] | None = None, fill_prior: bool = True) -> Profile:
    """Measure everything (module doc) and write the profile to `out`; returns it. `backend_urls`: a
    server of the same engine for another backend (backend -> URL), whose own outputs that backend's
    traces replay (an engine writes outputs of another shape with each backend: docs/validation.md findings 17,
    18) and whose fill factor is fitted on its own points, drawn toward the record's where `fill_prior`
    (fill_priors); the others replay `base_url`'s. `command`: what the provenance keeps (default: sys.argv)."""
    t_start, prov = time.monotonic(), server_provenance(base_url.rstrip("/"))  # no server: one line, here
    given = (base_url, sorted((backend_urls or {}).items()), entries, backends, name, list(notes), vocab.sha256,
             engine_from and Path(engine_from), default_path, fill_prior)  # (what it is made from, but sweeps, flags)
    other_prov = {b: server_provenance(u.rstrip("/")) for b, u in (backend_urls or {}).items()}
    others = {b: pv["base_url"] for b, pv in other_prov.items()}
    cfg = _served_version(cfg, prov)
    base, base_note = engine_side_base(engine_from, prov.get("version"), default_path)
    priors = fill_priors(Path(engine_from or default_path) if base else None, others, notes, fill_prior, log)
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
        key = inputs_key(given, outputs, cfg, plan, seed, pool_rows, files_digest(out))
        if (was := finished(out, key)) is not None:  # the same inputs, all on disk: the same profile, not re-drawn
            return was
        # the host, while the server is idle
        partial = out.with_name(out.name + ".partial.jsonl")  # the traces so far: an interrupted run resumes
        host, costs = host_side(vocab, entries, backends, partial, plan, outputs, seed, pool_rows, notes)
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
        p = speeds_read(p, cfg, vocab, speed, priors)
        done("speed", ended=False)  # (the speed read, as estimate_s counts it)
        p = replace(p, provenance={**p.provenance, "wall_s": round(time.monotonic() - t_start, 1), **done.provenance(),
                                   "inputs_sha256": key,
                                   **({"resumed": True} if resumed else {}),
                                   "server_engine": served_engine(cfg, prov, other_prov)})
    save_profile(p, out)
    load_profile(out)  # what --check reads: the file as written
    partial.unlink(missing_ok=True)
    return p


def speeds_read(p: Profile, cfg: EngineConfig, vocab: Vocab, speed: "SpeedSweeps",
                priors: dict[str, FillPrior] | None = None) -> Profile:
    """`p` with each backend's traces at the mean all its server's speed-point outputs imply, then the server's
    speed read on them (Profile.measured_speed) and each other backend's fill factor fitted on its own server
    (drawn toward `priors`' where it has one); the API server's costs read from its process then marked read at the
    speed read (at_speed_read)."""
    p = string_value_scaled(p, vocab, {b: speed.path(b) for b in (cfg.backend, *speed.others)})
    p = replace(p, measured_speed=read_speed(p, cfg, speed.got[cfg.backend], speed.path(cfg.backend).name))
    for b, u in speed.others.items():
        if speed.got.get(b):
            p = fit_backend_fill(p, cfg, b, speed.got[b], u, (priors or {}).get(b))
    return at_speed_read(p)  # (the speed read and the fill fits price the API server as read at every speed)


def fill_priors(carried_from: Path | None, others: dict[str, str], notes: list[str], wanted: bool = True,
                log: Callable[[str], None] = print) -> dict[str, FillPrior]:
    """The record's fill factors (server_fits.FILL_PRIORS) for each --backend-url backend that has them, where
    `wanted` and the in-engine factors are carried from the profile they were fitted over (`carried_from`, by
    content; None: no factors carried); where they are not, said (`log`) and noted (`notes`, the profile's)."""
    got = {b: FILL_PRIORS[b] for b in others if b in FILL_PRIORS and wanted}
    sha = _sha256(carried_from) if got and carried_from is not None and carried_from.is_file() else None
    if refused := [b for b, pr in got.items() if pr.profile_sha256 != sha]:
        whence = f"these are carried from {carried_from}" if carried_from else "no in-engine factors are carried"
        note = (f"{', '.join(refused)}: the fill factor fitted on its own server kept as fitted: the record's "
                f"factors (calibrate --backend-fill-prior) are over the embedded profile's, and {whence}")
        notes.append(note)
        log(f"calibrate: {note}")
    return {b: pr for b, pr in got.items() if b not in refused}


def inputs_key(*parts: Any) -> str:
    """A digest of what a live calibration's profile is made from (its flags, schemas, tokenizer, the servers'
    outputs it traces; files_digest: its sweeps, the base profiles and maskcost's own code): the profile keeps it,
    and a second run of the same command whose sweeps all lie on disk finds it (finished)."""
    def plain(x: Any) -> Any:
        if is_dataclass(x) and not isinstance(x, type):
            return asdict(x)
        if isinstance(x, Path):  # (a file's content counts: files_digest)
            return [str(x), _sha256(x) if x.is_file() else None]
        if isinstance(x, (set, frozenset)):
            return sorted(x)
        raise TypeError(f"inputs_key: {type(x).__name__} has no stable digest")
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=plain).encode()).hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_digest(out: Path) -> list[tuple[str, str]]:
    """The sweeps beside the profile `out` (every OUT-stem.*.jsonl but the traces' partial file) and maskcost's own
    code, each file's name and sha256: a sweep measured again, or another maskcost, makes the profile again."""
    sweeps = [f for f in sorted(out.parent.glob(f"{out.name.split('.')[0]}.*.jsonl"))
              if not f.name.endswith(".partial.jsonl")]
    pkg = Path(__file__).resolve().parent.parent  # (the maskcost package)
    code = sorted(pkg.rglob("*.py"))
    return [(f.name, _sha256(f)) for f in sweeps] + [(str(f.relative_to(pkg)), _sha256(f)) for f in code]


def finished(out: Path, key: str) -> Profile | None:
    """The profile at `out` where a finished run made it from the inputs `key` digests (else None: made again):
    its host side (traces, pools, bench) was measured once, and a rerun gives it unchanged rather than re-drawn.
    The one returned says so in its provenance ("kept": summary_line), not on disk."""
    try:
        p = load_profile(out)
    except Exception:  # (none yet, or unreadable: it is written again)
        return None
    return replace(p, provenance={**p.provenance, "kept": True}) if p.provenance.get("inputs_sha256") == key else None


def host_side(vocab: Vocab, entries: list[SchemaEntry], backends: list[str], partial: Path, plan: LivePlan,
              outputs: dict[str, dict[str, list]], seed: int, pool_rows: tuple[int, ...], notes: list[str]):
    """(this host, each backend's costs): the servers' `outputs` traced (calibrate_backends; `partial` keeps them
    as they end), this host's bench taken as they replay (host.SpreadBench: the two over the same stretch; said in
    `notes`, with one bench taken the old way beside it)."""
    bench = SpreadBench(vocab, moment=True)  # (the old one-moment bench beside it: finding 68's question)
    costs = calibrate_backends(vocab, entries, backends, partial, seed=seed, pool_rows=pool_rows, log=tqdm.write,
                               traces_per_schema=plan.traced_max, repeats=plan.trace_repeats,
                               outputs_by_backend=outputs, before_replay=bench,
                               enough=EnoughTraces(plan.outputs_per_schema, plan.trace_rse))
    host = host_info(vocab, bench)
    notes.append(bench.words())
    return host, costs


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


def summary_line(p: Profile, out: Path) -> str:
    m = p.measured_speed
    if p.provenance.get("kept"):  # (finished: a rerun of a finished calibration)
        return (f"kept {out}: a finished calibration made from these sweeps, flags and maskcost; remove it to "
                f"measure the host again (the server's speed {m.words()})")
    return (f"wrote {out}: {', '.join(f'{b}: {len(c.compiles)} schemas traced, {len(c.failures)} skipped' for b, c in p.backends.items())}; "
            f"forward {len(p.forward.points)} points, prefill {len(p.forward.prefill_points)}, context "
            f"{p.forward.context_us_per_ktoken:.1f} us per 1k tokens; the server's speed {m.words()} "
            f"({m.backend}, {len(m.points)} points); {p.provenance.get('wall_s', 0) / 60:.1f} min\n"
            + "\n".join(spread_line(b, c.traces) for b, c in p.backends.items()))
