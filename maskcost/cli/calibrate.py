"""`maskcost calibrate`: a profile from this host's traces, a live server (--base-url), finished sweeps, or
through the engine (--blackbox); --check validates one."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..calibrate import POOL_ROWS
from ..calibrate.tokenizer import BUNDLED
from ..validate.plan import LivePlan
from .common import UsageError, _add_schema_args, _entries

if TYPE_CHECKING:  # (the requests' modules load when a calibration runs, not with every command)
    from ..calibrate.refit import ServerSweeps
    from ..profile import Profile
    from ..validate.calibration import (BlackBoxCalibration, Calibration, EngineRefit, ProfileExtension,
                                       ServerCalibration)


def shipped_or_path(v: str) -> str:
    """--engine-from's value: a profile file as given, or, where no such file is here, the shipped profile of that
    name (maskcost/profiles/)."""
    from ..profile import default_profile_path
    shipped = default_profile_path(Path(v).name)
    return str(shipped) if not Path(v).exists() and Path(v).name == v and shipped.is_file() else v


def check_profile(path: str) -> int:
    """calibrate --check PROFILE: load it as predict would and say what it holds."""
    from ..profile import load_profile
    p = load_profile(path)
    n = {b: len(c.traces) for b, c in p.backends.items()}
    print(f"{path}: valid maskcost profile v{p.version} '{p.name}': traces {n}, "
          f"{len(p.forward.points)} forward points, host {p.host.cpu_model} (nproc {p.host.nproc})")
    took, est = p.provenance.get("phases_s"), p.provenance.get("phases_estimate_s") or {}
    if took:  # (calibrate --base-url's own phases; the speed points between the schema-off ones count as speed)
        print(f"  calibrated in {p.provenance.get('wall_s', sum(took.values())):.0f} s (estimated {sum(est.values()):.0f})"
              + (", its last run only (it resumed one cut short)" if p.provenance.get("resumed") else "") + ": "
              + ", ".join(f"{k} {v:.0f} s ({est.get(k, 0):.0f})" for k, v in took.items() if v or est.get(k)))
    from ..calibrate.fill import spread_line
    from ..calibrate.run import straddle_split
    for b, c in p.backends.items():
        if c.output_sources:
            kinds = {}
            for _, src in c.output_sources:
                k = "sampled under the mask" if "sampled" in src else "recorded" if "recorded" in src else "examples"
                kinds[k] = kinds.get(k, 0) + 1
            print(f"  {b}: outputs replayed: {', '.join(f'{n} schemas {k}' for k, n in kinds.items())}, written "
                  f"with separators {c.traced_separators!r}{'' if c.separators else ' (not recorded: a profile written before it replayed these)'}")
        print(f"{spread_line(b, c.traces)} (the spread of its outputs' "
              f"costs: more outputs narrow it as 1 / sqrt(outputs): --outputs-per-schema N with a server, --sampled N "
              f"under the mask)")
        sp = straddle_split(c)
        if sp:
            print(f"  {b}: fill mean {sp['straddle_us']:.1f} us at straddle tokens vs {sp['other_us']:.1f} us "
                  f"elsewhere ({sp['ratio']:.2f}x); straddle rate {100 * sp['rate']:.1f}% of {sp['tokens']} tokens")
        if c.engine_fill is not None:
            from ..validate.inengine import describe
            print(f"  {b}: {describe(c.engine_fill)}; from: {c.engine_fill.method}")
        if c.blackbox is not None:
            print(f"  {b}: black box {c.blackbox.row_us:.0f} us per row, {c.blackbox.launch_ms:.1f} ms per "
                  f"request ({len(c.blackbox.points)} points)")
    return 0


def cmd_calibrate(args) -> int:
    if args.check:
        return check_profile(args.check)
    return run_calibration(calibration_request(args))


def run_calibration(req: "Calibration") -> int:
    """Run a calibration request and say what it wrote (the command's, and `campaign`'s calibrate steps'); its
    progress on stderr, a black box's fit lines (its result) on stdout: each request's own log."""
    print(said(req, req.run()))
    return 0


def said(req: "Calibration", p: "Profile") -> str:
    """What a calibration says it wrote (the command's last lines; `campaign` logs them too)."""
    from ..validate.calibration import EngineRefit, ServerCalibration, SweepsCalibration
    if isinstance(req, ServerCalibration):
        from ..validate.server_calibration import summary_line
        return summary_line(p, req.out)
    if isinstance(req, SweepsCalibration):
        sampled = {sid for c in p.backends.values() for sid, src in c.output_sources if "sampled" in src}
        each = (f"{b}: {len(c.traces)} traces of {len(c.compiles)} schemas, {len(c.failures)} skipped"
                for b, c in p.backends.items())
        return (f"wrote {req.out}: {', '.join(each)}"
                + (f"; {len(sampled)} schemas without examples: outputs sampled under the mask" if sampled else ""))
    if not isinstance(req, EngineRefit):
        return f"wrote {req.out}"
    fw, rows = p.forward, p.provenance.get("engine_rows") if req.rows is not None else None
    return ((f"{rows['backend']}: the engine's own work {rows['us_per_row']:.1f} us per structured row per step, "
             f"fitted on {rows['sweep']} ({rows['engine']} {rows['engine_version']}, {rows['cores']} cores, cpu speed "
             f"{rows['cpu_speed']:.3f})\n" if rows else "")
            + f"wrote {req.out}: {p.provenance['engine_only']['base']}'s host and grammar costs, forward "
              f"{len(fw.points)} points, sync {len(fw.sync_points)} points, prefill {len(fw.prefill_points)} points, "
              f"context {fw.context_us_per_ktoken:.1f} us per 1k tokens beyond {fw.context_ref_tokens:.0f} per row, "
              f"API server {fw.frontend_token_us:.0f} us per token + {fw.frontend_request_ms:.2f} ms per request, "
              f"eager one-token prefill {fw.eager_prefill_ms:.2f} ms more")


def calibration_request(args, command: list[str] | None = None) -> "Calibration":
    """The calibration `args` ask for (all but --check), its flags checked and resolved once into its request
    (validate/calibration.py), which the command and `campaign` run. `command`: the command line the profile
    keeps (default: this process's)."""
    from ..calibrate.run import argv
    from ..profile import load_profile
    from ..validate.calibration import SweepsCalibration, check_pool_rows
    command = tuple(command or argv())
    if not args.out:
        raise UsageError("calibrate: --out PROFILE is required (or --check PROFILE)")
    check_pool_rows(tuple(args.pool_rows), "--pool-rows")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.engine_from:
        load_profile(args.engine_from)  # (a bad profile is its one line before anything runs)
    if args.backend_url and (not args.base_url or args.blackbox or args.engine_only):
        raise UsageError("calibrate --backend-url: goes with --base-url (a live server's profile), as its second "
                         "server")
    if not args.engine_from and not args.forward_sweep and not args.base_url:
        raise UsageError("calibrate: forward times need a live engine: give --base-url URL, "
                         "--forward-sweep SWEEP.jsonl or --engine-from PROFILE")
    sweeps = _server_sweeps(args)
    if args.variant_compile or args.batch_fill:
        return _extension_request(args, out)
    if (args.fit_rows or sweeps.eager) and not args.engine_only:
        raise UsageError("calibrate: --fit-rows and --eager-sweep go with --engine-only --engine-from PROFILE")
    if args.engine_only:
        return _refit_request(args, sweeps, out, command)
    if args.blackbox:
        return _blackbox_request(args, sweeps, out, command)
    from ..calibrate.run import recorded_outputs
    from ..calibrate.tokenizer import load_vocab
    vocab = load_vocab(args.tokenizer)
    entries = _entries(args)
    if not entries:
        raise UsageError("calibrate: no schemas (give --schema, --tier or --corpus)")
    outputs = recorded_outputs(Path(args.outputs), vocab) if args.outputs else None
    if outputs is not None and not {e.schema_id for e in entries} & set(outputs):
        raise UsageError(f"--outputs {args.outputs}: no valid output of the schemas given (it has valid outputs of "
                         f"{len(outputs)} schema ids{': ' + ', '.join(sorted(outputs)[:5]) if outputs else ''})")
    if args.base_url:
        return _server_request(args, vocab, entries, out, command)
    return SweepsCalibration(out, vocab, tuple(entries), tuple(args.backend), sweeps, args.engine_from, outputs,
                             args.repeats_fill, args.traces_per_schema, args.sampled, args.seed, tuple(args.pool_rows),
                             args.name, tuple(args.note or ()), command)


def _server_sweeps(args) -> "ServerSweeps":
    """The finished sweeps the flags name, read (records.read_summaries), with the files they came from."""
    from ..calibrate.refit import ServerSweeps
    from ..records import read_summaries
    many = lambda fs: tuple(s for f in fs or [] for s in read_summaries(f))  # noqa: E731
    return ServerSweeps(read_summaries(args.forward_sweep) if args.forward_sweep else None,
                        tuple(filter(None, [args.forward_sweep])), many(filter(None, [args.sync_sweep])),
                        tuple(filter(None, [args.sync_sweep])),
                        many(args.prefill_sweep), tuple(args.prefill_sweep or ()), many(args.context_sweep),
                        tuple(args.context_sweep or ()), many(args.eager_sweep), tuple(args.eager_sweep or ()),
                        args.engine_note or "")


def _server_request(args, vocab, entries: list, out: Path, command: tuple[str, ...]) -> "ServerCalibration":
    """calibrate --base-url: the one command on the GPU host (validate/server_calibration.py), its flags resolved."""
    from ..model.config import EngineConfig
    from ..validate.calibration import ServerCalibration
    from ..validate.plan import fit_to_budget
    if args.budget_min is not None and not args.budget_min > 0:
        raise UsageError(f"--budget-min {args.budget_min}: must be > 0")
    if args.server_backend not in args.backend:
        raise UsageError(f"--server-backend {args.server_backend}: also calibrate it (--backend "
                         f"{' '.join(args.backend)})")
    host_cpus, host_count = _host_cpus()
    from ..model.engines import VERSIONS
    if args.server_engine_version and args.server_engine_version not in VERSIONS[args.server_engine]:
        raise UsageError(f"--server-engine-version {args.server_engine_version}: {args.server_engine}'s mechanisms "
                         f"are modelled for {', '.join(VERSIONS[args.server_engine])}")
    cfg = EngineConfig(engine=args.server_engine, engine_version=args.server_engine_version,
                       backend=args.server_backend, max_num_seqs=args.max_num_seqs,
                       usable_cores=args.server_cores or host_cpus, cpu_count=args.server_cpu_count or host_count)
    if args.outputs_per_schema < 1:
        raise UsageError(f"--outputs-per-schema {args.outputs_per_schema}: at least 1")
    if args.outputs_max is not None and args.outputs_max < args.outputs_per_schema:
        raise UsageError(f"--outputs-max {args.outputs_max}: at least --outputs-per-schema ({args.outputs_per_schema})")
    from ..calibrate.host import package_versions
    notes = list(args.note or [])
    for line in cfg.policy.pin_notes(package_versions(), "this host's traces"):  # kept in the profile's notes
        print(line, file=sys.stderr)
        notes.append(line.removeprefix("note: "))
    plan = LivePlan(forward_concurrency=tuple(args.concurrency), rounds=args.rounds, min_requests=args.min_requests,
                    off_tokens=args.off_tokens, speed_concurrency=tuple(args.speed_concurrency),
                    max_tokens=args.max_tokens, outputs_per_schema=args.outputs_per_schema,
                    outputs_max=LivePlan.outputs_max if args.outputs_max is None else args.outputs_max)
    others = backend_urls(args.backend_url, args.server_backend, args.backend)
    servers = (args.server_backend, *others)  # each server's backend: its speed points' time
    plan = fit_to_budget(plan, args.budget_min * 60 if args.budget_min else None, len(entries), len(args.backend),
                         servers)
    shortest = sum(plan.estimate_s(len(entries), len(args.backend), servers).values()) / 60
    if args.budget_min and shortest > args.budget_min * 1.05:
        print(f"calibrate: --budget-min {args.budget_min:g} cannot be met: the shortest plan takes about "
              f"{shortest:.1f} min (the host phase, the forward curve's ends and the speed sweep always stay)",
              file=sys.stderr)
    return ServerCalibration(args.base_url, out, vocab, tuple(entries), tuple(args.backend), cfg, plan,
                             tuple(others.items()), args.engine_from, args.name, tuple(notes), args.seed,
                             tuple(args.pool_rows), command, args.backend_fill_prior == "record")


def backend_urls(given: list[str], server_backend: str, calibrated: list[str]) -> dict[str, str]:
    """--backend-url BACKEND=URL ... as {backend: URL}, each a backend calibrated here other than the
    --base-url server's, at most once."""
    out: dict[str, str] = {}
    for g in given:
        name, sep, url = g.partition("=")
        name = name.strip()
        if not sep or not url.strip():
            raise UsageError(f"--backend-url {g}: give BACKEND=URL (e.g. guidance=http://127.0.0.1:8001)")
        if name not in calibrated:
            raise UsageError(f"--backend-url {g}: {name!r} is not a backend calibrated here (--backend "
                             f"{' '.join(calibrated)})")
        if name == server_backend or name in out:
            raise UsageError(f"--backend-url {g}: {name} already has a server "
                             f"({'--base-url' if name == server_backend else out[name]})")
        out[name] = url.strip()
    return out


def _host_cpus() -> tuple[int, int]:
    import multiprocessing

    from ..calibrate.host import usable_cpus
    return usable_cpus(), multiprocessing.cpu_count()


def _refit_request(args, sweeps: "ServerSweeps", out: Path, command: tuple[str, ...]) -> "EngineRefit":
    """calibrate --engine-only: only the engine side of --engine-from measured again (a server started with
    other flags, calibrate/refit.py), and with --fit-rows the engine's own per-row grammar work on a schema-on
    sweep of the server (--server-engine, --server-engine-version, --server-backend, --server-cores and
    --max-num-seqs say what it ran)."""
    import os

    from ..validate.calibration import EngineRefit, RowFit
    if not args.engine_from or (sweeps.forward is None and not sweeps.sync and not args.fit_rows):
        raise UsageError("calibrate --engine-only: give --engine-from PROFILE and --forward-sweep, --sync-sweep "
                         "and/or --fit-rows SWEEP.jsonl")
    if args.frontend and sweeps.forward is None:
        raise UsageError("calibrate --frontend: fitted on the --forward-sweep; give it")
    rows = None
    if args.fit_rows:
        cores = args.server_cores or len(os.sched_getaffinity(0))
        rows = RowFit(args.fit_rows, args.server_engine, args.server_engine_version, args.server_backend,
                      args.max_num_seqs, cores, args.server_cpu_count or os.cpu_count() or cores)
    return EngineRefit(args.engine_from, out, sweeps, args.frontend, rows, args.name, tuple(args.note or ()),
                       command)


def _extension_request(args, out: Path) -> "ProfileExtension":
    """calibrate --variant-compile / --batch-fill: the --engine-from profile with the measured term added."""
    from ..validate.calibration import ProfileExtension
    flag = "--variant-compile" if args.variant_compile else "--batch-fill"
    if not args.engine_from:
        raise UsageError(f"calibrate {flag}: give --engine-from PROFILE (the profile to extend)")
    entries = _entries(args)
    if args.batch_fill and not args.variant_compile and not entries:
        raise UsageError("calibrate --batch-fill: give schemas with examples (e.g. --tier flat nested deep bounded)")
    return ProfileExtension(args.engine_from, out, tuple(entries), bool(args.variant_compile))


def _blackbox_request(args, sweeps: "ServerSweeps", out: Path, command: tuple[str, ...]) -> "BlackBoxCalibration":
    """calibrate --blackbox: the grammar's cost measured through the engine, from finished sweeps (--on-sweep
    with --forward-sweep) or swept now against --base-url."""
    from ..validate.calibration import BlackBoxCalibration
    entries = _entries(args)
    if args.on_sweep and sweeps.forward is None:
        raise UsageError("calibrate --blackbox --on-sweep: give the schema-off arm with --forward-sweep")
    if not args.on_sweep and not args.base_url:
        raise UsageError("calibrate --blackbox: give --base-url URL (a live server) or --on-sweep with --forward-sweep")
    if not args.on_sweep and not entries:
        raise UsageError("calibrate --blackbox: the schema-on arm needs schemas (--schema, --tier or --corpus)")
    points = tuple((c, r, max(args.min_requests, args.rounds * c)) for c in args.concurrency
                   for r in range(args.repeats))
    return BlackBoxCalibration(out, args.backend_name, args.tokenizer, tuple(entries),
                               tuple(sweeps.forward) if sweeps.forward is not None else None, args.on_sweep,
                               args.base_url, points, args.off_tokens, args.max_tokens, args.engine_from,
                               args.engine_note, args.name, tuple(args.note or ()), command)


def add_parser(sub) -> None:
    c = sub.add_parser("calibrate", help="measure fill/compile/pool/forward costs and write a profile")
    # the help in the order a user needs it: a profile of a live server (or of this host) first
    u = c.add_argument_group("a profile: of a live server (--base-url, the three GPU-host commands) or of this host")
    h = c.add_argument_group("the host-side measurement (fill traces, pools, compiles on this CPU)")
    s = c.add_argument_group("the sweeps calibrate runs against a server")
    f = c.add_argument_group("a profile from finished sweeps (the validation campaigns)")
    b = c.add_argument_group("black-box engines (llama.cpp: the grammar's cost through the engine)")
    _add_profile_args(u)
    _add_host_args(h)
    _add_sweep_args(s)
    _add_finished_args(f)
    _add_blackbox_args(b)
    c.set_defaults(func=cmd_calibrate)


def _add_profile_args(u) -> None:
    """calibrate's flags: what to measure and where to write it; the live server (--base-url)."""
    from ..model.config import DEFAULT_ENGINE
    from ..model.engines import ENGINES
    u.add_argument("--check", metavar="PROFILE", help="validate a profile and say what is wrong")
    u.add_argument("--out", metavar="PROFILE", help="profile to write (.json or .json.gz); with --base-url, its sweeps "
                   "go beside it (a rerun resumes them), and a finished profile made from the same inputs is kept, "
                   "not measured again")
    u.add_argument("--tokenizer", "--vocab", default="llama3",
                   help=f"bundled vocabulary ({', '.join(BUNDLED)}) or a Hugging Face tokenizer folder")
    _add_schema_args(u, None)
    u.add_argument("--base-url", help="a live server: measure everything a profile needs against it (the forward "
                   "curve, prefill, context, the API server, and the server's own speed from a short schema-on "
                   "sweep of the given schemas), beside the host-side costs")
    u.add_argument("--server-backend", default="xgrammar", choices=["xgrammar", "guidance"],
                   help="--base-url: the grammar backend the server runs (SGLang's llguidance is guidance; "
                        "default: xgrammar)")
    u.add_argument("--backend-url", action="append", default=[], metavar="BACKEND=URL",
                   help="--base-url: a server of the same engine on this host running another backend (e.g. "
                        "guidance=http://127.0.0.1:8001); that backend's traces replay its own outputs, collected "
                        "as for --base-url, and its in-engine fill factor is fitted on its own speed points, each "
                        "run at once after --base-url's at the same load (default: every backend replays "
                        "--base-url's outputs, whose lengths are then a guess for the other backend, and keeps "
                        "the fill factors of --engine-from); repeat for more")
    u.add_argument("--backend-fill-prior", choices=["record", "none"], default="record",
                   help="--backend-url: the fill factor fitted on that server's points drawn halfway (in the log) "
                        "toward the median of those fitted on the validation record's hosts, where the record has "
                        "one for that backend and the factors are carried from the embedded profile (record), or "
                        "kept as fitted (none); default: record")
    live = sorted(n for n, e in ENGINES.items() if e.calibrates_live)  # (model/engines.py Engine.calibrates_live)
    u.add_argument("--server-engine", default=DEFAULT_ENGINE, choices=live,
                   help="--base-url: the engine the server runs, whose mechanisms read its speed")
    u.add_argument("--server-engine-version", metavar="V", help="--base-url: whose mechanisms (model/engines.py) "
                   "read its speed (default: the engine's default modelled version)")
    u.add_argument("--server-cores", type=int, help="--base-url: cores the server may run on (default: this "
                   "process's, nproc)")
    u.add_argument("--server-cpu-count", type=int, help="--base-url: cpu_count the server sees (default: this "
                   "host's)")
    u.add_argument("--max-num-seqs", type=int, default=256, help="--base-url: the server's --max-num-seqs (default: 256)")
    u.add_argument("--speed-concurrency", type=int, nargs="+", default=list(LivePlan.speed_concurrency),
                   metavar="N", help="--base-url: the loads of the schema-on points that read the server's speed, "
                   "run in this order, one after each phase against the server and the rest at the end; the "
                   "profile carries their median (vLLM: the serial-fill and the fill-pool points' apart)")
    u.add_argument("--outputs-per-schema", type=int, default=LivePlan.outputs_per_schema, metavar="N",
                   help="--base-url: the server's own valid outputs traced for each schema, those its speed points "
                        "wrote (spread over them; a schema with fewer than three quarters of N there gets a point of its "
                        "own), each once in place "
                        "of outputs sampled under the mask; their lengths are the requests' "
                        f"(default: {LivePlan.outputs_per_schema})")
    u.add_argument("--outputs-max", type=int, metavar="N",
                   help="--base-url: where a schema's traced mean cost a token would be known worse than "
                        f"+-{100 * LivePlan.trace_rse:.0f}%% from --outputs-per-schema outputs (its first few "
                        "replays say), more of its speed points' outputs are traced, up to N: host time only, a few "
                        "seconds a schema; give N = --outputs-per-schema to trace no more (default: "
                        f"{LivePlan.outputs_max}, or --outputs-per-schema where that is more)")
    u.add_argument("--budget-min", type=float, help="--base-url: fit the measurement into about this many minutes "
                   "(drops, in turn: the context slope, the prefill points, the API-server fit, forward points, "
                   "a round of each sweep, the outputs traced past --outputs-per-schema, two thirds of the outputs "
                   "a schema, each only where it shortens the estimate; default: the full plan)")


def _add_host_args(h) -> None:
    """calibrate's flags: the host-side measurement: fill traces, pools, compiles on this CPU."""
    h.add_argument("--name", help="the profile's name (default: --out's file name)")
    h.add_argument("--outputs", metavar="RAW.jsonl", help="replay recorded outputs (a sweep's raw file)")
    h.add_argument("--backend", nargs="+", default=["xgrammar", "guidance"], choices=["xgrammar", "guidance"],
                   help="the grammar backends to measure")
    h.add_argument("--repeats-fill", type=int, default=3, help="fresh-matcher replays of each output, each position's "
                   "median (default: 3; with --base-url each of the server's outputs is replayed once)")
    h.add_argument("--traces-per-schema", type=int, default=16, help="recorded outputs replayed per schema")
    h.add_argument("--sampled", type=int, default=0, metavar="N",
                   help="replay N outputs sampled under the mask (seeded by --seed) instead of the examples "
                        "(default 0: the examples; a schema without examples gets 4 sampled outputs)")
    h.add_argument("--pool-rows", type=int, nargs="+", default=list(POOL_ROWS), metavar="N",
                   help="the fill pool's step sizes measured, in rows (one distinct matcher each); predict takes "
                        "the nearest for a step it models (default: " + " ".join(map(str, POOL_ROWS)) + ")")
    h.add_argument("--note", action="append", help="a note kept in the profile's provenance (repeatable)")


def _add_sweep_args(s) -> None:
    """calibrate's flags: the sweeps calibrate runs against a server."""
    s.add_argument("--max-tokens", type=int, default=512, help="max_tokens of schema-on requests (--base-url, "
                   "--blackbox; default: 512)")
    s.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64, 128, 192, 256],
                   help="the schema-off sweep's loads (default: 1 8 32 64 128 192 256)")
    s.add_argument("--rounds", type=int, default=3, help="requests per point = max(--min-requests, rounds x "
                   "concurrency) (default: 3)")
    s.add_argument("--min-requests", type=int, default=16, help="the fewest requests a sweep point sends")
    s.add_argument("--off-tokens", type=int, default=128, help="schema-off output length (default: 128)")


def _add_finished_args(f) -> None:
    """calibrate's flags: a profile from finished sweeps (the validation campaigns)."""
    f.add_argument("--forward-sweep", metavar="SWEEP.jsonl", help="the forward curve from a finished schema-off "
                   "sweep (`maskcost sweep --arms off`), instead of sweeping a live server (--base-url)")
    f.add_argument("--sync-sweep", metavar="SWEEP.jsonl", help="schema-off sweep of the same server with "
                                                              "--no-async-scheduling")
    f.add_argument("--prefill-sweep", nargs="+", metavar="SWEEP.jsonl", help="schema-off sweeps at concurrency 1 "
                   "with --unique-prompts, one per --prompt-pad length: the prefill points")
    f.add_argument("--eager-sweep", nargs="+", metavar="SWEEP.jsonl", help="schema-off sweeps at concurrency 1, "
                   "one with the same prompt every request and one with --unique-prompts: the extra time of a "
                   "one-token prefill step that runs without CUDA graphs (SGLang); default: the base profile's")
    f.add_argument("--context-sweep", nargs="+", metavar="SWEEP.jsonl", help="schema-off sweeps with a long shared "
                   "--prompt-pad (prefix-cached): the context slope")
    f.add_argument("--fit-rows", metavar="SWEEP.jsonl", help="--engine-only: fit the engine's own work per "
                   "structured row per step beyond the traces, so the model meets this schema-on sweep's ITL "
                   "(its points become fit points); the server as --server-engine, --server-engine-version, "
                   "--server-backend, --server-cores and --max-num-seqs say (default: none fitted)")
    f.add_argument("--frontend", action="store_true", help="--engine-only: fit the API server's per-token and "
                   "per-request costs on the --forward-sweep (TTFT and running count under load)")
    f.add_argument("--engine-from", metavar="PROFILE", type=shipped_or_path,
                   help="take the GPU side (forward curve, mask apply) and the "
                   "in-engine factors from this profile: a file, or a shipped one by name (default.json.gz, "
                   "sglang-0.5.17-h200.json.gz: maskcost/profiles/); with --base-url, "
                   "the in-engine factors only (default: the embedded profile's, where its vLLM version is the "
                   "server's)")
    f.add_argument("--engine-note", help="engine flags/GPU to record with the forward curve")
    f.add_argument("--variant-compile", action="store_true",
                   help="add the near-identical-variant compile time of --engine-from's schemas (measured here, "
                        "scaled by bench_us) and write the extended profile")
    f.add_argument("--batch-fill", action="store_true",
                   help="add what xgrammar's batch fill saves a row (per-row calls against one BatchGrammarMatcher "
                        "call per 16-row chunk, vllm#51331; measured here on matchers advanced through the schemas' "
                        "examples, scaled by bench_us) to --engine-from and write the extended profile")
    f.add_argument("--engine-only", action="store_true", help="keep --engine-from's host and grammar costs; "
                                                               "replace only the forward/sync curves")


def _add_blackbox_args(b) -> None:
    """calibrate's flags: black-box engines (llama.cpp)."""
    b.add_argument("--blackbox", action="store_true", help="measure the grammar's cost through the engine: "
                                                             "schema-on minus schema-off ITL (llama.cpp; any engine)")
    b.add_argument("--on-sweep", metavar="SWEEP.jsonl", help="--blackbox from a finished schema-on sweep "
                                                             "(with --forward-sweep as its schema-off arm)")
    b.add_argument("--backend-name", default="gbnf", choices=["gbnf", "xgrammar", "guidance"],
                   help="--blackbox: which backend the engine ran (gbnf: llama.cpp's own)")
    b.add_argument("--repeats", type=int, default=1, help="--blackbox: repeats of each point (default: 1)")

