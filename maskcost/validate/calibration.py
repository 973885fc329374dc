"""Calibration as an API: each way `maskcost calibrate` makes a profile from measurements is a frozen request,
resolved once (from the command's flags by cli/calibrate.py, or from a campaign's step), whose `run` measures,
writes the profile to `out` and returns it. The command line and `campaign` call these, never `main(argv)`.

- `ServerCalibration`: a live server (`--base-url`): its forward curve, prefill, context, API server and speed
  against the server, this host's traces of the server's own outputs (server_calibration.calibrate_live).
- `SweepsCalibration`: this host's traces, the forward curve from finished sweeps or another profile's
  (`--forward-sweep`, `--engine-from`).
- `EngineRefit`: a profile's engine side again from finished sweeps of a server started with other flags
  (`--engine-only`: calibrate/refit.engine_side), and the engine's own work a structured row (`--fit-rows`:
  RowFit, calibrate/engine.fit_engine_rows).
- `ProfileExtension`: a profile with a term measured here added (`--variant-compile`, `--batch-fill`).
- `BlackBoxCalibration`: the grammar's cost through the engine (`--blackbox`: llama.cpp; calibrate/blackbox.py).

A request's `command` is the command line a user would type for it, which the profile's provenance keeps (empty:
this process's own, calibrate.run.argv). A request checks its own fields (a ValueError, one line) where it is
built; the command line's flags are checked before (cli/calibrate.calibration_request).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..calibrate import POOL_ROWS
from ..calibrate.refit import ServerSweeps
from ..calibrate.schemas import SchemaEntry
from ..calibrate.tokenizer import Vocab
from ..model.config import EngineConfig
from ..profile import Profile
from .plan import LivePlan

Log = Callable[[str], None]


def check_pool_rows(rows: tuple[int, ...], what: str = "pool rows") -> None:
    """A ValueError (one line, naming `what`) where a fill-pool step size is not 1 to 4096 rows."""
    if not all(1 <= r <= 4096 for r in rows):
        raise ValueError(f"{what} {' '.join(map(str, rows))}: each must be 1 to 4096 rows")


def _stderr(m: str) -> None:
    print(m, file=sys.stderr)


def _command(command: tuple[str, ...]) -> list[str]:
    """The command line a profile's provenance keeps: the request's, else this process's."""
    from ..calibrate.run import argv
    return list(command) or argv()


def profile_name(out: Path, name: str | None) -> str:
    """The profile's name: the one given, else the file's name before its first dot."""
    return name or out.name.split(".")[0]


@dataclass(frozen=True)
class ServerCalibration:
    """`calibrate --base-url`: everything a profile needs, measured against a live server and on this host."""
    base_url: str
    out: Path
    vocab: Vocab  # the server's tokenizer (calibrate.tokenizer.load_vocab)
    entries: tuple[SchemaEntry, ...]
    backends: tuple[str, ...]  # the grammar backends traced
    cfg: EngineConfig  # the server's engine, version, backend, max-num-seqs and cores
    plan: LivePlan
    backend_urls: tuple[tuple[str, str], ...] = ()  # (backend, URL): a server of the same engine for another backend
    engine_from: str | None = None  # the profile whose in-engine factors it takes (default: the embedded one)
    name: str | None = None
    notes: tuple[str, ...] = ()
    seed: int = 0
    pool_rows: tuple[int, ...] = POOL_ROWS
    command: tuple[str, ...] = ()
    fill_prior: bool = True  # another backend's fitted fill factor drawn toward the record's (server_fits.FillPrior)

    def __post_init__(self) -> None:
        check_pool_rows(self.pool_rows)
        if self.cfg.backend not in self.backends:
            raise ValueError(f"the server's backend {self.cfg.backend}: also calibrate it (backends "
                             f"{', '.join(self.backends)})")

    def run(self, log: Log = _stderr) -> Profile:
        from ..profile import default_profile_path
        from .server_calibration import calibrate_live
        self.out.parent.mkdir(parents=True, exist_ok=True)
        return calibrate_live(self.base_url, self.vocab, list(self.entries), list(self.backends),
                              self.out, self.plan, self.cfg, self.engine_from, default_profile_path(),
                              profile_name(self.out, self.name), list(self.notes), seed=self.seed, log=log,
                              pool_rows=self.pool_rows, backend_urls=dict(self.backend_urls),
                              command=_command(self.command), fill_prior=self.fill_prior)


@dataclass(frozen=True)
class SweepsCalibration:
    """calibrate without a live server: this host's traces, the forward curve from finished sweeps (or
    `engine_from`'s), the mask apply measured here or copied; what no local trace can see from `engine_from`."""
    out: Path
    vocab: Vocab
    entries: tuple[SchemaEntry, ...]
    backends: tuple[str, ...]
    sweeps: ServerSweeps  # the forward sweep (None: engine_from's curve), its sync, prefill and context sweeps
    engine_from: str | None = None
    outputs: dict[str, list] | None = None  # recorded outputs by schema id the traces replay (run.recorded_outputs)
    repeats_fill: int = 3
    traces_per_schema: int = 16
    sampled: int = 0
    seed: int = 0
    pool_rows: tuple[int, ...] = POOL_ROWS
    name: str | None = None
    notes: tuple[str, ...] = ()
    command: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_pool_rows(self.pool_rows)
        if self.sweeps.forward is None and not self.engine_from:
            raise ValueError("forward times need a live engine: give a forward sweep or a profile to take them from "
                             "(engine_from)")

    def run(self, log: Log = _stderr) -> Profile:
        from ..calibrate.engine import apply_or_copied
        from ..calibrate.host import SpreadBench, host_info
        from ..calibrate.run import build_profile, calibrate_backends
        from ..profile import load_profile, save_profile
        vocab, notes = self.vocab, list(self.notes)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        base = load_profile(self.engine_from) if self.engine_from else None
        forward = self._forward(base)
        apply = apply_or_copied(vocab.size, base, notes)
        if self.sweeps.forward is None:
            notes.append(f"forward curve copied from {self.engine_from}")
        bench = SpreadBench(vocab)  # the host's bench taken as the traces replay (the two over the same stretch)
        partial = self.out.with_name(self.out.name + ".partial.jsonl")
        backends = calibrate_backends(vocab, list(self.entries), list(self.backends), partial, self.outputs,
                                      repeats=self.repeats_fill, traces_per_schema=self.traces_per_schema,
                                      sampled=self.sampled, seed=self.seed, pool_rows=self.pool_rows, log=log,
                                      before_replay=bench)
        host = host_info(vocab, bench)
        notes.append(bench.words())
        sampled = sorted({sid for c in backends.values() for sid, src in c.output_sources if "sampled" in src})
        if sampled:
            notes.append(f"outputs sampled under the mask (seed {self.seed}) for {len(sampled)} schemas without "
                         f"examples or recorded outputs: {', '.join(sampled[:10])}"
                         f"{' ...' if len(sampled) > 10 else ''}")
        if base is not None:  # what no local trace can see, as calibrate --base-url takes it: base's in-engine side
            backends, forward = self._engine_side(base, host.bench_us, backends, forward, vocab, notes)
        p = build_profile(profile_name(self.out, self.name), vocab, host, backends, forward, apply,
                          _command(self.command), notes, list(self.entries))
        if base is not None:
            p = replace(p, engine_speeds=base.engine_speeds)
        save_profile(p, self.out)
        load_profile(self.out)  # what --check reads: the file as written
        partial.unlink(missing_ok=True)
        return p

    def _forward(self, base: Profile | None):
        """The forward curve: the forward sweep's, else `engine_from`'s."""
        from ..calibrate.engine import forward_from_summaries
        sw = self.sweeps
        if sw.forward is None:
            return base.forward
        srv = sw.forward[0].provenance["server"]
        return forward_from_summaries(
            sw.forward, f"schema-off closed-loop sweep of {srv.get('base_url')} (server version {srv.get('version')}); "
                        f"step_ms = window / engine steps, itl_ms = engine ITL histogram mean, batch = engine "
                        f"running-request gauge mean. {sw.note}", sw.sync, sw.prefill, sw.context)

    def _engine_side(self, base: Profile, bench_us: float, backends: dict, forward, vocab, notes: list[str]):
        """The in-engine fill factors and the structured request's API-server cost of `engine_from`, carried to
        these traces (engine_base.engine_side), the examples standing for the server's outputs where a
        factor's convention must be converted."""
        from ..calibrate.fill import output_text
        from .engine_base import engine_side
        outputs = {b: {e.schema_id: [output_text(x, c.traced_separators) for x in e.examples] for e in self.entries
                       if e.examples} for b, c in backends.items()}
        return engine_side(base, f"in-engine factors from {self.engine_from}", bench_us, backends, forward, vocab,
                           list(self.entries), outputs, notes)


@dataclass(frozen=True)
class RowFit:
    """`--fit-rows`: the engine's own work a structured row a step, fitted through the model on a schema-on sweep
    of the server this engine config describes (its cores and cpu_count; its speed the profile's)."""
    sweep: str
    engine: str
    engine_version: str | None
    backend: str
    max_num_seqs: int
    cores: int
    cpu_count: int

    def fit(self, p: Profile, log: Log = _stderr) -> Profile:
        from ..calibrate.engine import fit_engine_rows
        from ..records import read_summaries
        if self.backend not in p.backends:
            raise ValueError(f"calibrate --fit-rows: the profile has no {self.backend} traces (--server-backend; it "
                             f"has {', '.join(p.backends)})")
        ms = p.measured_speed  # fitted at the speed predict runs the profile at (the row cost scales with it)
        try:
            cfg = EngineConfig(engine=self.engine, engine_version=self.engine_version, backend=self.backend,
                               max_num_seqs=self.max_num_seqs, cpu_count=self.cpu_count, usable_cores=self.cores,
                               cpu_speed=ms.cpu_speed if ms is not None else 1.0,
                               cpu_speed_pool=ms.pool_speed if ms is not None else None)
            p = fit_engine_rows(p, cfg, read_summaries(self.sweep), log=log)
        except ValueError as e:
            raise ValueError(f"calibrate --fit-rows {self.sweep}: {e}") from None
        us = p.backends[self.backend].engine_row_us
        return replace(p, provenance={**p.provenance, "engine_rows": {
            "sweep": self.sweep, "backend": self.backend, "engine": cfg.engine, "engine_version": cfg.policy.version,
            "cores": self.cores, "cpu_speed": cfg.cpu_speed, "us_per_row": us}})


@dataclass(frozen=True)
class EngineRefit:
    """`calibrate --engine-only`: `engine_from`'s host, grammar costs and apply cost kept, its forward curve (with
    its prefill and context terms), sync points and API-server costs measured again where `sweeps` hold them."""
    engine_from: str
    out: Path
    sweeps: ServerSweeps
    frontend: bool = False  # the API server's costs fitted again on the forward sweep
    rows: RowFit | None = None
    name: str | None = None
    notes: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    utc: str | None = None  # when it ran (default: when `run` starts)

    def run(self, log: Log = _stderr) -> Profile:
        from ..calibrate.refit import engine_side
        from ..profile import load_profile, profile_from_dict, profile_to_dict, save_profile
        prov = {"command": " ".join(_command(self.command)),
                "utc": self.utc or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "notes": list(self.notes)}
        try:
            p = engine_side(load_profile(self.engine_from), self.sweeps, self.frontend, self.name, prov, log=log)
        except ValueError as e:
            raise ValueError(f"calibrate --engine-only: {e}") from None
        if self.rows is not None:
            p = self.rows.fit(p, log)
        profile_from_dict(profile_to_dict(p))
        self.out.parent.mkdir(parents=True, exist_ok=True)
        save_profile(p, self.out)
        return p


@dataclass(frozen=True)
class ProfileExtension:
    """`--variant-compile` / `--batch-fill`: `engine_from` with one term measured here added (the near-identical
    variant's compile time of its schemas, or what xgrammar's batch fill saves a row), scaled by bench_us."""
    engine_from: str
    out: Path
    entries: tuple[SchemaEntry, ...]  # --batch-fill: the schemas whose examples advance the matchers
    variant_compile: bool  # else the batch fill

    def run(self, log: Log = _stderr) -> Profile:
        from ..calibrate.run import add_batch_fill_saving, add_variant_compiles
        from ..calibrate.tokenizer import profile_vocab
        from ..profile import load_profile, save_profile
        base = load_profile(self.engine_from)
        add = add_variant_compiles if self.variant_compile else add_batch_fill_saving
        p = add(base, profile_vocab(base.tokenizer, base.vocab_size, base.tokenizer_sha256), list(self.entries),
                log=log)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        save_profile(p, self.out)
        return p


@dataclass(frozen=True)
class BlackBoxCalibration:
    """`--blackbox`: the grammar's cost measured through the engine (schema-on minus schema-off ITL a running
    row): the only way to calibrate llama.cpp, and a cross-check of the library traces on vLLM. From finished
    sweeps (`on_sweep` with `off`), or swept now against `base_url` (`off` too where not given); attached to
    `engine_from`'s library traces where given, else a profile of its own."""
    out: Path
    backend: str  # the backend the engine ran (gbnf: llama.cpp's own)
    tokenizer: str
    entries: tuple[SchemaEntry, ...] = ()
    off: tuple | None = None  # the schema-off arm's summaries, finished
    on_sweep: str | None = None  # a finished schema-on sweep
    base_url: str | None = None
    points: tuple[tuple[int, int, int], ...] = ()  # (concurrency, repeat, requests) of each point swept
    off_tokens: int = 128
    max_tokens: int = 512
    engine_from: str | None = None
    engine_note: str | None = None
    name: str | None = None
    notes: tuple[str, ...] = ()
    command: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.on_sweep and self.off is None:
            raise ValueError("black box from a finished schema-on sweep: give its schema-off arm (off)")
        if not self.on_sweep and not self.base_url:
            raise ValueError("black box: give a live server (base_url) or a finished schema-on sweep (on_sweep)")
        if not self.on_sweep and not self.entries:
            raise ValueError("black box: the schema-on arm swept needs schemas (entries)")

    def run(self, log: Log = print) -> Profile:
        from ..calibrate.blackbox import (blackbox_from_sweeps, blackbox_method, blackbox_profile,
                                          output_tokens_by_schema)
        from ..profile import BackendCosts, load_profile, save_profile
        from ..records import raw_records_path
        self.out.parent.mkdir(parents=True, exist_ok=True)
        on, off, on_path = self._sweeps()
        base = load_profile(self.engine_from) if self.engine_from else None
        if base is None:
            p = blackbox_profile(profile_name(self.out, self.name), on, off, on_path, self.tokenizer, self.backend,
                                 _command(self.command), list(self.notes), self.engine_note)
            bb = p.backends[self.backend].blackbox
        else:  # attach to a measured profile: library traces and black box side by side
            bb = blackbox_from_sweeps(on, off, output_tokens_by_schema(raw_records_path(on_path)),
                                      blackbox_method(on, on_path, self.engine_note))
            b = base.backends.get(self.backend) or BackendCosts((), (), (), ())
            p = replace(base, backends={**base.backends, self.backend: replace(b, blackbox=bb)})
        for pt in bb.points:
            log(f"c{pt.concurrency}: running {pt.running:.2f}  ITL on {pt.itl_on_ms:.2f} ms  off {pt.itl_off_ms:.2f} "
                f"ms  -> {pt.row_us:.0f} us per constrained row")
        log(f"fit: {bb.step_us:.0f} us per step + {bb.row_us:.0f} us per constrained row; grammar build "
            f"{bb.launch_ms:.2f} ms per request")
        if base is not None and base.backends.get(self.backend) and base.backends[self.backend].traces:
            import statistics
            lib = statistics.mean(f + a for t in base.backends[self.backend].traces
                                  for f, a in zip(t.fill_us, t.accept_us))
            log(f"library traces of {self.backend} in {self.engine_from}: {lib:.0f} us per row (fill + accept, mean); "
                f"black box per point / library: {', '.join(f'{q.row_us / lib:.2f}' for q in bb.points)}")
        save_profile(p, self.out)
        return p

    def _sweeps(self) -> tuple[list, list, Path]:
        """(schema on, schema off, the schema-on sweep's file): the finished ones, or swept now (each appends
        as it goes beside the profile, and resumes)."""
        from .sweep import PointSpec, read_summaries, run_sweep
        if self.on_sweep:
            return read_summaries(self.on_sweep), list(self.off), Path(self.on_sweep)
        stem, procs = profile_name(self.out, None), LivePlan().client_procs_at  # (as --base-url's sweeps)
        off = list(self.off) if self.off is not None else run_sweep(
            self.base_url, [PointSpec("off", *p) for p in self.points], [], self.out.with_name(stem + ".off.jsonl"),
            off_tokens=self.off_tokens, client_procs=procs)
        on_path = self.out.with_name(stem + ".on.jsonl")
        return run_sweep(self.base_url, [PointSpec("on", *p) for p in self.points], list(self.entries), on_path,
                         max_tokens=self.max_tokens, client_procs=procs), off, on_path


# every request's `run(log) -> Profile`
Calibration = ServerCalibration | SweepsCalibration | EngineRefit | ProfileExtension | BlackBoxCalibration
