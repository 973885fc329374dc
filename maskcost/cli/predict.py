"""`maskcost predict`: the what-if grid from a profile (no GPU needed)."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..point import Point, PointError
from .common import UsageError, add_tool_args, check_outputs, maskcost_provenance, tool_entries
from .engine_args import (SOURCE_WORDS, Speeds, _add_engine_args, _add_speed_source, _engine_configs, _profile,
                          add_host_args, engine_version, given_or_own_speeds, profile_engine,
                          with_async_off_costs)

DEFAULT_CONCURRENCY = (1, 8, 32, 64, 128, 160, 192, 256)  # the loads of a run given neither --concurrency nor --rate
UNSETTLED_CI = 0.10  # a point whose ITL's 95% half-width is over this share of its mean is said to be unsettled


def _workloads(args, schema_ids: tuple[str, ...], requests=None):
    """The loads asked for; `requests`: a point's request count from its clients (None: --requests, else
    predict's default)."""
    from ..model.config import Workload
    from ..model.predict import run_requests
    loads = [("c", c) for c in (args.concurrency or [])] + [("r", r) for r in (args.rate or [])]
    if not loads:
        loads = [("c", c) for c in DEFAULT_CONCURRENCY]

    def count(clients: int | None) -> int:
        if args.requests is not None:
            return args.requests  # (0 or less: Workload says so)
        if requests:
            return requests(clients)
        return run_requests(clients, bool(args.precision))
    return [Workload(concurrency=v if kind == "c" else None, rate_per_s=v if kind == "r" else None,
                     requests=count(v if kind == "c" else None),
                     prompt_tokens=args.prompt_tokens, prompt_cached_tokens=args.prompt_cached_tokens,
                     prompt_lengths=args.prompt_lengths, output_tokens=args.output_tokens,
                     unstructured_lengths=args.unstructured_lengths,
                     structured_fraction=args.structured_fraction, schemas=schema_ids,
                     unique_schemas=args.unique_schemas, schema_order=args.schema_order, seed=args.seed,
                     reasoning_tokens=args.reasoning_tokens, precision=args.precision or None) for kind, v in loads]


def _ci(p) -> str:
    ci, m = p.itl_ms_ci95, p.itl_ms_mean
    return "-" if ci is None or not m else f"{100 * ci / m:.1f}"


def _gpu_words(points: list) -> str:
    """The GPU column's legend, by what the profile measured (model/metrics.py what_the_engine_shows)."""
    split = ("the share of the wall time the GPU runs kernels (the forward less its host part, split by the GPU's "
             "busy fraction read on the calibration's schema-off sweep)")
    bound = ("the forward's share of the wall time (the forward as the server ran it, host work included: an upper "
             "bound on a GPU monitor's busy; a profile calibrated where NVML reads the server's GPU splits it)")
    bases = {p.gpu_busy_basis for p in points}
    if bases == {"nvml split"}:
        return f"GPU = {split}"
    return f"GPU = {bound}" if "nvml split" not in bases else \
        f"GPU = {split} where --json's gpu_busy_basis says nvml split, else {bound}"


def _fmt(v: Any, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def print_table(points: list) -> None:
    """predict's table: a line a point (maskcost.point.Point), then what each column means."""
    band = any(p.band is not None for p in points)
    pi = any(p.itl_ms_pi80 is not None for p in points)
    shared = any(p.replicas > 1 or p.cpu_quota is not None or p.tensor_parallel > 1 for p in points)
    grid = _varying(points)
    hdr = (f"{'engine':9}{'backend':9}{'mns':>5}{'cores':>6}" + "".join(f"{k:>7}" for k in grid) +
           (f"{'host':>12}" if shared else "") + f"{'conc':>7}{'running':>8}{'ITL on':>9}{'±95%':>6}"
           + (f"{'80% interval':>15}" if pi else "") + (f"{'band':>14}" if band else "") + f"{'p50':>8}"
           f"{'p99':>8}{'ITL off':>9}{'overhd%':>9}{'tok/s on':>10}{'tok/s off':>10}{'TTFT p50':>9}"
           f"{'fill/step':>10}{'pool':>6}{'GPU':>6}")
    print(hdr)
    for p in points:
        b = p.breakdown
        print(f"{p.engine:9}{p.backend:9}{p.max_num_seqs:>5}{p.cores:>6}" + "".join(f"{f(p):>7}" for f in grid.values()) +
              (f"{_host(p):>12}" if shared else "") +
              f"{p.concurrency if p.concurrency is not None else f'r{p.rate_per_s:g}':>7}"
              f"{_fmt(p.running_mean):>8}{_fmt(p.itl_ms_mean, 2):>9}{_ci(p):>6}" +
              (f"{_span(p.itl_ms_pi80):>15}" if pi else "") +
              (f"{_span(p.band.itl_ms_mean if p.band else None):>14}" if band else "") +
              f"{_fmt(p.itl_ms_p50, 2):>8}"
              f"{_fmt(p.itl_ms_p99, 2):>8}{_fmt(p.off.itl_ms_mean, 2):>9}{_fmt(p.overhead_pct):>9}"
              f"{_fmt(p.out_tok_per_s, 0):>10}{_fmt(p.off.out_tok_per_s, 0):>10}"
              f"{_fmt(p.ttft_ms_p50):>9}{_fmt(b.fill_ms, 2):>10}{_fmt(100 * b.pool_step_fraction, 0):>5}%"
              f"{_fmt(100 * p.gpu_busy_fraction if p.gpu_busy_fraction is not None else None, 0):>5}%")
    print("ITL in ms (mean/p50/p99, per output token); ±95% = the half-width of ITL on's 95% confidence interval "
          "(batch means over the run), in % of it; overhd% = ITL on / ITL off - 1; fill/step = host fill work "
          "per step in ms; pool = share of steps that used vLLM's fill pool (SGLang has none); " + _gpu_words(points) +
          ("; 80% interval = where the engine's ITL fell for 80% of points on machines the rule was not built "
           "from (maskcost/interval.py): " + "; ".join(sorted({p.interval["words"] for p in points
                                                               if p.interval is not None})) if pi else "") +
          ("; band = ITL on with the engine as fast / as slow as on the fastest / slowest server of the profile's "
           "host type measured, against their bench (profile.engine_speeds)" if band else "") +
          ("; " + ", ".join(_GRID_WORDS[k] for k in grid) if grid else "") +
          ("; host = engines on the host x, 1gpu where they share one GPU, tp = GPUs an engine spans, q = each one's CPU quota; the figures are "
           "one engine's (no 80% interval: the record's errors are of engines alone)" if shared else ""))


# the grid's other flags, a column each where the points differ in it: header -> (what it shows, its words)
_GRID_COLUMNS = {
    "cpus": (lambda p: str(p.cpu_count), "cpus = the cpu_count the engine sizes its pools from (--cpu-count)"),
    "speed": (lambda p: f"{(p.config.get('engine') or {}).get('cpu_speed', 1.0):.3g}",
              "speed = the CPU speed given (--cpu-speed)"),
    "async": (lambda p: "on" if p.async_scheduling else "off", "async = async scheduling (--async-scheduling)"),
    "spec": (lambda p: str(p.spec_tokens), "spec = draft tokens a step (--spec-tokens)"),
}
_GRID_WORDS = {k: w for k, (_, w) in _GRID_COLUMNS.items()}


def _varying(points: list) -> dict:
    """The grid columns whose value differs between the points (header -> the cell's text of a point)."""
    return {k: f for k, (f, _) in _GRID_COLUMNS.items() if len({f(p) for p in points}) > 1}


def _host(p) -> str:
    """The predict table's host column: replicas (and their GPU), tensor parallel, quota."""
    q, tp = p.cpu_quota, p.tensor_parallel
    return f"{p.replicas}x" + ("/1gpu" if p.replica_gpu == "shared" and p.replicas > 1 else "") + \
        (f" tp{tp}" if tp > 1 else "") + (f" q{q:g}" if q is not None else "")


def _span(lo_hi: tuple[float | None, float | None] | None) -> str:
    lo, hi = lo_hi or (None, None)
    return f"{lo:.1f}-{hi:.1f}" if lo is not None and hi is not None else "-"


def _partial_path(json_path: str) -> Path:
    return Path(json_path + ".partial.jsonl")


def _partial(json_path: str | None, resume: bool, profile):
    """With --json: the points stream to OUT.json.partial.jsonl as they finish (an interrupted grid keeps
    them); --resume reads them back and runs only the rest. Returns (the open stream or None, done points)."""
    if not json_path:
        if resume:
            raise UsageError("--resume: give --json OUT.json (the finished points are in OUT.json.partial.jsonl)")
        return None, {}
    path, made_from = _partial_path(json_path), [profile.name, profile.created_utc]
    done: dict = {}
    if resume and path.exists():
        lines = path.read_text().splitlines()
        try:
            head = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            head = None
        if not isinstance(head, dict) or "profile" not in head:
            raise UsageError(f"--resume: {path} is not a predict stream (its first line names no profile): remove it, "
                             f"or run without --resume")
        if head.get("profile") != made_from:
            raise UsageError(f"--resume: {path} is not from profile {profile.name!r} of {profile.created_utc} "
                             f"(remove it, or run without --resume)")
        refused: list[str] = []
        for line in lines[1:]:
            try:
                d = json.loads(line)
                done[d["key"]] = Point.from_json(d["point"], f"{path}: a point")
            except (json.JSONDecodeError, KeyError, TypeError, PointError) as e:
                refused.append(str(e))  # (the line an interruption cut short): that point runs again
        print(f"--resume: {len(done)} points read back from {path}" + (
            f"; {len(refused)} line(s) not, run again (first: {refused[0][:160]})" if refused else ""))
    Path(json_path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "a" if done else "w")
    if not done:
        stream.write(json.dumps({"profile": made_from}) + "\n")
    return stream, done


def _streamer(stream):
    """grid's on_point: one line per finished point, flushed (what --resume reads back)."""
    def write(key: str, point: Point) -> None:
        stream.write(json.dumps({"key": key, "point": point.to_json()}) + "\n")
        stream.flush()
    return write


class Inputs(NamedTuple):
    """What a command runs on: the profile with the user's schemas added, the schema ids to run, how each
    user schema was obtained, and where the CPU speed comes from."""
    profile: Any
    schema_ids: tuple[str, ...]
    local: list
    speed_from: dict[str, Any] | None  # --cpu-speed-from-report: the reports and the speed read from them
    speeds: Speeds  # the CPU speeds the points run at, and where they were read


BACKEND_LIBRARY = {"guidance": "llguidance"}  # a --backend's grammar library, where its name differs


def _say_pins(engine: str, version: str, profile, local: list, backends: list[str]) -> None:
    """Where the profile's traces, or the user's schemas' traced here, are of a grammar library this engine
    version does not run: said (Engine.pin_notes)."""
    from ..model.engines import engine_policy
    policy = engine_policy(engine, version)
    used = {BACKEND_LIBRARY.get(b, b) for b in backends}  # (only the libraries of the backends run)

    def of_used(packages: dict) -> dict:
        return {k: v for k, v in packages.items() if k in used}
    notes = policy.pin_notes(of_used(profile.provenance.get("packages") or {}), "the profile's traces")
    if local:
        from ..calibrate.host import package_versions
        notes += policy.pin_notes(of_used(package_versions()), "your schemas' traces (made on this host)")
    for line in notes:
        print(line)


def load_inputs(args, profile=None) -> Inputs:
    """The profile (`profile`, else --profile's or the embedded one) with the user's --schema and --tools
    files added, the schema ids to run, what was added, and where the CPU speed comes from (printed as
    it is decided). predict and advise share it."""
    profile = profile or _profile(args)
    speed_from = None
    if getattr(args, "cpu_speed_from_report", None):
        if args.cpu_speed:
            raise ValueError("--cpu-speed-from-report: give it or --cpu-speed, not both")
        from ..validate.hostspeed import speed_from_reports
        speed, read = speed_from_reports(args.cpu_speed_from_report, profile, args.speed_source)
        speeds = Speeds((speed,), None, "report")
        speed_from = {"reports": args.cpu_speed_from_report, "source": args.speed_source, "speeds": read,
                      "median": speed}
        print(f"cpu speed: {speed:.3f}, the median {SOURCE_WORDS[args.speed_source]} speed of {len(read)} points "
              f"({min(read):.3f}-{max(read):.3f}) of {', '.join(args.cpu_speed_from_report)}")
    else:
        speeds = given_or_own_speeds(args, profile)
    schema_ids = tuple(args.schema_id or ())
    local: list = []
    if args.schema or args.tools:
        from ..calibrate.local import add_local_schemas, describe
        from ..calibrate.schemas import load_schema_file
        entries = [load_schema_file(f) for f in args.schema or []] + tool_entries(args)
        profile, ids, local = add_local_schemas(profile, entries, args.backend, args.tokenizer)
        schema_ids += tuple(ids)
        for line in describe(local):
            print(line)
    if not schema_ids:
        schema_ids = tuple(sorted(set(profile.schema_ids(args.backend[0]))))
        # only schemas every requested backend could compile
        for b in args.backend[1:]:
            schema_ids = tuple(s for s in schema_ids if s in set(profile.schema_ids(b)))
        left = sorted({s for b in args.backend for s in profile.schema_ids(b)} - set(schema_ids))
        if left:
            print(f"note: {len(left)} of the profile's schemas left out ({', '.join(left[:4])}"
                  f"{' ...' if len(left) > 4 else ''}): not every --backend compiled them, and every backend runs the "
                  f"same schemas ({len(schema_ids)}); one --backend at a time runs all of its own")
    return Inputs(profile, schema_ids, local, speed_from, speeds)


def say_engines(args, profile, local: list) -> None:
    """Whose mechanisms each --engine runs, and where its pinned libraries differ from the traces'."""
    made_on = profile_engine(profile)
    for engine in args.engine:
        version, why = engine_version(args, profile, engine)
        print(f"mechanisms: {engine} {version} ({why}; model/engines.py)")
        if made_on not in (None, engine):
            print(f"note: --engine {engine}: the profile {profile.name} was measured on a {made_on} server, so {engine}'s "
                  f"points run on {made_on}'s forward, API server and engine costs with {engine}'s mechanisms; "
                  f"{engine}'s own shipped profile is taken where it is the only --engine and no --profile is given")
        _say_pins(engine, version, profile, local, args.backend)


def with_cost_spread(profile, configs: list, loads: list, schema_ids: tuple[str, ...], points: list[Point],
                     mine: set[str], progress: bool = True, **grid_args) -> list[Point]:
    """The points' 80% intervals widened where their schemas' cost is known worse than the record's
    (calibrate/cost_spread.py: shorter runs of the grid with the traces at each end of that spread and as traced,
    their ratios applied to the points; with its bars);
    said once a backend, and each of the user's schemas (`mine`) traced from one output."""
    import itertools
    from ..calibrate.cost_spread import swings
    from ..interval import widened
    from ..model.predict import point_key
    if not any(p.itl_ms_pi80 is not None for p in points):
        return points
    spreads, ends = swings(profile, configs, loads, schema_ids, progress=progress, **grid_args)
    for (e, b), sp in spreads.items():
        if sp.material:
            print(f"{e} {b}: the schemas' mean cost a token known to +-{100 * sp.rse:.0f}% beyond the record's "
                  f"+-{100 * sp.reference:.0f}%: the 80% interval widened for it (calibrate/cost_spread.py)")
        one = [s for s in sp.one_output if s in mine]  # the user's schemas traced from one output
        if one and sp.one_output_rse is not None:
            print(f"{e} {b}: {', '.join(one)}: one output traced, its cost taken as known to "
                  f"+-{100 * sp.one_output_rse:.0f}% (one output's spread among the profile's schemas); more "
                  f"examples in the file narrow it")
        elif one:
            print(f"{e} {b}: {', '.join(one)}: one output traced, and the profile has no schema of more to tell how "
                  f"far one output lies: its spread is not in the 80% interval")
    return [widened(p, tuple(r * p.itl_ms_mean for r in ends[k]), spreads[c.engine, c.backend].rse)
            if (k := point_key(c, w)) in ends and p.itl_ms_mean else p
            for p, (c, w) in zip(points, itertools.product(configs, loads))]


@dataclass(frozen=True)
class PredictRequest:
    """A prediction resolved once from predict's flags (predict_request): the grid it runs (the profile with the
    user's schemas, its engine configs and workloads) and where its results go; run_prediction runs it. `command` is
    what its --json records as the command that made it."""
    inputs: Inputs
    configs: tuple  # model.config.EngineConfig, one a grid point's server
    loads: tuple  # model.config.Workload, one a grid point's load
    json: str | None  # where the points go (and stream to, as they finish: --resume reads them back)
    png: str | None
    trace: str | None
    band: bool
    executor: str
    scheduler: str | None
    resume: bool
    precision: float | None  # (what the note on unsettled points advises)
    command: tuple[str, ...]
    progress: bool = True  # the grids' bars on stderr (not --quiet)


def predict_request(args, command: list[str] | None = None) -> PredictRequest:
    """predict's flags checked and resolved once into its request (what they decide is said as it is decided: the
    speed, the user's schemas, whose mechanisms each engine runs); `command`: the command line it stands for
    (default: this process's)."""
    if args.scheduler and args.executor != "dask":
        raise ValueError(f"--scheduler {args.scheduler}: only with --executor dask")
    check_outputs(json=args.json, png=args.png, trace=args.trace)
    inputs = load_inputs(args)
    configs = _engine_configs(args, inputs.profile, inputs.speeds)
    loads = _workloads(args, inputs.schema_ids)  # (bad flags: one line)
    say_engines(args, inputs.profile, inputs.local)
    inputs = inputs._replace(profile=with_async_off_costs(inputs.profile, configs))
    return PredictRequest(inputs, tuple(configs), tuple(loads), args.json, args.png, args.trace, args.band,
                          args.executor, args.scheduler, args.resume, args.precision,
                          tuple(command or ["maskcost", *sys.argv[1:]]), progress=not args.quiet)


def cmd_predict(args) -> int:
    return run_prediction(predict_request(args))


def run_prediction(req: PredictRequest) -> int:
    """The grid of `req`, each point with its 80% interval; its table printed, its --json, --png and --trace written."""
    from ..interval import with_intervals
    from ..model.predict import grid, plot_overhead
    profile, schema_ids, local, speed_from, speeds = req.inputs
    configs, loads = list(req.configs), list(req.loads)
    stream, done = _partial(req.json, req.resume, profile)
    offs: dict = {}  # the schema-off arms, run once for the grid and the interval's (with_cost_spread)
    try:
        points = grid(profile, configs, loads, trace_out=Path(req.trace) if req.trace else None, band=req.band,
                      done=done, on_point=_streamer(stream) if stream else None, executor=req.executor,
                      scheduler=req.scheduler, offs=offs, progress=req.progress)
    finally:
        if stream:
            stream.close()
    # the interval of a prediction whose speed was read from the target server (a report's points, or the
    # speed the calibration read) is the narrower one; a --cpu-speed given by hand counts as nothing read
    points = with_intervals(points, read=speeds.read)
    points = with_cost_spread(profile, configs, loads, schema_ids, points, {h.schema_id for h in local},
                              progress=req.progress, executor=req.executor, scheduler=req.scheduler, offs=offs)
    _say_points(points, profile, req)
    result = {"profile": {"name": profile.name, "created_utc": profile.created_utc, "host": profile.host.__dict__,
                          "provenance": profile.provenance},
              "maskcost": maskcost_provenance(), "command": " ".join(req.command), "cpu_speed_from_report": speed_from,
              "local_schemas": [asdict(h) for h in local],
              "points": [p.to_json() for p in points]}
    if req.json:
        Path(req.json).write_text(json.dumps(result, indent=1))
        _partial_path(req.json).unlink(missing_ok=True)
        print(f"wrote {req.json}")
    png = req.png or (str(Path(req.json).with_suffix(".png")) if req.json else None)
    if png:
        plot_overhead(points, Path(png), f"maskcost predict, profile {profile.name}")
        print(f"wrote {png}")
    return 0


def _say_points(points: list, profile, req: PredictRequest) -> None:
    """The table of the points and the notes on them."""
    print(f"profile: {profile.name} ({profile.host.cpu_model}, nproc {profile.host.nproc}; forward: "
          f"{profile.forward.source[:90]}...)")
    print_table(points)
    unsettled = [p for p in points if not (p.host_share or {"settled": True})["settled"]]
    if unsettled:
        print(f"note: {len(unsettled)} point(s) sharing a host did not settle in {unsettled[0].host_share['rounds']} "
              f"rounds (model/host_share.py): their figures are the last round's")
    _say_unsettled(points, req.precision)
    _say_loop_near_full(points)
    _say_no_async_off_points(points, profile)
    _say_overloaded(points)
    _say_cores_short(points)
    if req.trace:
        print(f"wrote {req.trace}: the first point's steps, a lane per thread (chrome://tracing or ui.perfetto.dev)")


def _at(p) -> str:
    """A point's load as predict's notes name it: its clients, or its arrival rate."""
    return str(p.concurrency) if p.concurrency is not None else f"rate {p.rate_per_s}"


def _say_unsettled(points: list, precision: float | None) -> None:
    """A note naming the points whose run was too short for their ITL to settle (its 95% interval wider than
    UNSETTLED_CI of the mean): their p50, p99 and TTFT move more than the mean."""
    loose = [p for p in points if p.itl_ms_ci95 is not None and p.itl_ms_mean and
             p.itl_ms_ci95 > UNSETTLED_CI * p.itl_ms_mean]
    if loose:
        worst = max(loose, key=lambda p: p.itl_ms_ci95 / p.itl_ms_mean)
        from ..model.predict import DEFAULT_PRECISION
        more = "a larger --requests (the most --precision runs a point to) lets it settle" if precision else \
            f"--precision {DEFAULT_PRECISION} (or more --requests) runs a point until it settles"
        print(f"note: {len(loose)} point(s) ran too short for their ITL to settle (±95% over "
              f"{100 * UNSETTLED_CI:.0f}% of the mean; {worst.engine} {worst.backend} at {_at(worst)}: "
              f"±{100 * worst.itl_ms_ci95 / worst.itl_ms_mean:.0f}%): their p50, p99 and TTFT move more still; {more}")


def _say_loop_near_full(points: list) -> None:
    """A note naming the points whose API-server loop the model runs near capacity with a host-bound step: there the
    split of the requests between the loop and the engine sets the ITL, and it is the least sure figure the model
    gives (model/api_server.py LOOP_NEAR_FULL; docs/validation.md finding 50)."""
    from ..model.api_server import LOOP_NEAR_FULL
    near = [p for p in points if (p.api_server_busy_fraction or 0.0) >= LOOP_NEAR_FULL and p.bound == "host"]
    if near:
        where = ", ".join(f"{p.backend} at {_at(p)} ({100 * p.api_server_busy_fraction:.0f}%)" for p in near[:4])
        where += " ..." if len(near) > 4 else ""
        print(f"note: {len(near)} point(s) with the API server's loop near capacity and a host-bound step ({where}: "
              f"the loop's busy share in the model): where both are full, the engine runs only the requests the loop "
              f"lets through, and on the profiles of the record's servers a tenth more or less in the loop's costs "
              f"moved the model's ITL at such a point by up to 23% (docs/validation.md finding 50)")


OVERLOADED = 0.9  # an open-loop point served under this share of the requests offered: its queue grows


def _say_overloaded(points: list) -> None:
    """A note naming the open-loop points (--rate) that served fewer requests a second than arrived: their queue
    grows as long as the run lasts, so their TTFT (and the running count) is the run's length, not a steady value."""
    over = [(p, p.out_tok_per_s / p.output_tokens_mean) for p in points
            if p.rate_per_s and p.out_tok_per_s and p.output_tokens_mean
            and p.out_tok_per_s / p.output_tokens_mean < OVERLOADED * p.rate_per_s]
    if over:
        p, served = over[0]
        print(f"note: {len(over)} point(s) offered more requests than the model served ({p.engine} {p.backend} at rate "
              f"{p.rate_per_s:g}/s: {served:.1f}/s served): the queue grows as long as the run lasts, so their TTFT and "
              f"running count depend on --requests, not a steady value; a lower --rate finds what the server holds")


def _say_cores_short(points: list) -> None:
    """A note naming the points of one engine alone whose threads kept more CPUs busy than --cores gives them: --cores
    sizes the engine's pools, and only a quota or other engines make its threads wait for a core
    (model/host_share.py), so there the model runs them as if each had its own."""
    short = [p for p in points if p.replicas == 1 and p.cpu_quota is None and p.cpu_demand and p.cores
             and p.cpu_demand > p.cores]
    if short:
        p = short[0]
        print(f"note: {len(short)} point(s) whose engine kept more CPUs busy than --cores gives it ({p.engine} "
              f"{p.backend} at {_at(p)}: {p.cpu_demand:.2f} CPUs on {p.cores}): --cores alone sizes its pools, so its "
              f"threads ran as if each had a core; --cpu-quota {p.cores} as well makes them share the cores")


def _say_no_async_off_points(points: list, profile) -> None:
    """A note where points run with async scheduling off (asked, or the engine's own rule) on a profile that never
    measured a server so (ForwardCurve.sync_points: what calibrate --base-url makes) and no shipped profile lent it
    any (engine_args.with_async_off_costs: an engine with none, llama.cpp): the engine's work a step that async
    scheduling hides is then taken as none (Costs.cpu_overhead_ms), so without a grammar in the batch such a point
    costs what an async one does."""
    sync = [p for p in points if not p.async_scheduling]
    if sync and not profile.forward.sync_points:
        print(f"note: {len(sync)} point(s) run with async scheduling off, and this profile has no async-off points "
              f"(forward.sync_points): the engine's work a step that async scheduling hides is taken as none, so "
              f"where no grammar is in the batch (the schema-off arm, unstructured requests) they cost what async "
              f"points do; `calibrate --engine-only --engine-from PROFILE --sync-sweep SWEEP.jsonl` adds them from a "
              f"schema-off sweep of the server with async scheduling off (vLLM --no-async-scheduling, SGLang "
              f"--disable-overlap-schedule)")


def add_workload_args(p: argparse.ArgumentParser, concurrency_help: str, requests_help: str | None = None,
                      precision: float | None = None) -> None:
    """The load and schema flags predict and advise share; their defaults are Workload's, but for `precision`
    (predict's: model.predict.DEFAULT_PRECISION; advise's: none, a fixed request count)."""
    from ..model.config import Workload
    from ..model.predict import PRECISION_CAP
    w = Workload()  # the load flags' defaults are its own
    p.add_argument("--concurrency", type=int, nargs="+", help=concurrency_help)
    p.add_argument("--rate", type=float, nargs="+", help="open-loop Poisson arrivals per second (default: none; "
                   f"with neither --rate nor --concurrency, the concurrencies {' '.join(map(str, DEFAULT_CONCURRENCY))})")
    p.add_argument("--requests", type=int, help=requests_help or "requests per point (default max(200, 4 x "
                   f"concurrency)); with --precision (predict's default), the most a point runs (default "
                   f"{PRECISION_CAP} x that): a fixed count takes --precision 0")
    p.add_argument("--precision", type=float, default=precision, metavar="P",
                   help="stop each simulation once its ITL mean is known to +- P x itself (95%%, batch means); "
                        "0: run --requests requests " + (f"(default: {precision})" if precision else
                                                         "(default: --requests requests)"))
    p.add_argument("--prompt-tokens", type=int, default=w.prompt_tokens, help="prompt length of every request (tokens)")
    p.add_argument("--prompt-lengths", default=w.prompt_lengths, metavar="DIST",
                   help="prompt lengths per request: fixed (--prompt-tokens), uniform:LO:HI, lognormal:MEDIAN:SIGMA")
    p.add_argument("--prompt-cached-tokens", type=int, default=w.prompt_cached_tokens,
                   help="of which found in the prefix cache (a shared system prompt): not computed at prefill")
    p.add_argument("--output-tokens", type=int, help="fixed output length (default: where each JSON output ends)")
    p.add_argument("--unstructured-lengths", default=w.unstructured_lengths, metavar="DIST",
                   help="output lengths of requests without a schema (and of the schema-off arm): trace, "
                        "fixed:N, uniform:LO:HI, lognormal:MEDIAN:SIGMA")
    p.add_argument("--structured-fraction", type=float, default=w.structured_fraction,
                   help="the share of requests that carry a schema (the rest are unconstrained)")
    p.add_argument("--reasoning-tokens", default=w.reasoning_tokens, metavar="N|DIST",
                   help="a reasoning model: each request first reasons this many tokens, unconstrained (none, N, "
                        "fixed:N, uniform:LO:HI, lognormal:MEDIAN:SIGMA); the grammar waits, its row stays in the "
                        "batch")
    p.add_argument("--schema", nargs="+", metavar="FILE", help="your schema files, traced on this host now (a file "
                   "whose schema is one the profile was calibrated with takes the profile's traces; another schema "
                   "under a profile schema's id is traced as ID@DIGEST)")
    p.add_argument("--tokenizer", metavar="DIR|NAME", help="--schema: the tokenizer to trace with, a folder holding "
                   "tokenizer.json or a bundled vocabulary; its tokens must be the profile's (default: the profile's "
                   "own, else the bundled vocabulary with the same content)")
    add_tool_args(p)
    p.add_argument("--schema-id", nargs="+", metavar="ID", help="schemas of the profile (default: all)")
    p.add_argument("--unique-schemas", action="store_true", help="every request compiles its grammar")
    p.add_argument("--schema-order", choices=("random", "cycle"), default=w.schema_order,
                   help="which schema each structured request takes: random, or cycle (request i, structured or not, "
                        "takes the i-th schema in the order given, in turn)")
    p.add_argument("--seed", type=int, default=w.seed, help="the seed of the workload's random draws (one seed, "
                   "the same numbers)")


def add_parser(sub) -> None:
    from ..model.predict import DEFAULT_PRECISION
    p = sub.add_parser("predict", help="what-if grid from a profile (no GPU needed)")
    _add_engine_args(p.add_argument_group("the server and its host (several values: a grid point each)"))
    add_host_args(p)
    add_workload_args(p.add_argument_group("the workload (one engine's)"),
                      "closed-loop clients (default 1 8 32 64 128 160 192 256)", precision=DEFAULT_PRECISION)
    o = p.add_argument_group("output")
    o.add_argument("--json", metavar="OUT.json", help="write the points here; while the grid runs they stream to "
                   "OUT.json.partial.jsonl")
    o.add_argument("--executor", choices=["local", "dask"], default="local", help="where the grid runs: local "
                   "(a process pool on this host's cores) or dask (a dask.distributed cluster; pip install "
                   "'maskcost[dask]') (default: local)")
    o.add_argument("--scheduler", metavar="ADDRESS", help="--executor dask: the scheduler's address, e.g. "
                   "tcp://10.0.0.5:8786 (default: a LocalCluster of this host's cores on loopback)")
    o.add_argument("--resume", action="store_true", help="with --json: read the points OUT.json.partial.jsonl holds "
                   "(an interrupted grid) and run only the rest")
    o.add_argument("--png", metavar="OUT.png", help="default: next to --json")
    o.add_argument("--trace", metavar="OUT.json", help="Chrome/Perfetto trace of the first point")
    o.add_argument("--quiet", action="store_true", help="no progress bars (default: a bar a grid on stderr)")
    r = p.add_argument_group("the server's own speed, read from a report of it, and the band")
    r.add_argument("--cpu-speed-from-report", nargs="+", metavar="REPORT.json",
                   help="--cpu-speed = the median host speed (--speed-source) over the points of `maskcost report` "
                        "files of the target server, read against the same profile: predict its other loads at "
                        "the speed its engine really ran at (docs/validation.md says how well this does)")
    _add_speed_source(r)
    r.add_argument("--band", action=argparse.BooleanOptionalAction, default=False,
                   help="each point also with the engine as fast / as slow as on the fastest / slowest server of the "
                        "profile's host type measured (profile engine_speeds; two more schema-on runs a point); "
                        "every point carries the 80%% interval of the model's measured errors regardless "
                        "(default: off)")
    p.set_defaults(func=cmd_predict)
