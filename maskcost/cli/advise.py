"""`maskcost advise`: the configurations a user controls that meet a goal, cheapest first (model/advise.py)."""
from __future__ import annotations

import itertools
import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..point import Point
from .common import Options, check_outputs
from .engine_args import _add_engine_args, engine_config, profile_flag, with_async_off_costs
from .predict import _workloads, add_workload_args, load_inputs

if TYPE_CHECKING:
    from ..model.advise import Goal

# the search when a flag does not narrow it
DEFAULT_MAX_NUM_SEQS = (128, 256)
DEFAULT_CORES = (4, 8, 16, 32)
DEFAULT_SPEC_TOKENS = (0, 4)  # speculative decoding off and on (n-gram drafts at --spec-acceptance)
SHOWN = 8  # configurations listed a side (all are in --json)
# requests a point runs unless --requests: a p99 goal needs more than predict's default (its ranking moved by
# about 7% between runs of near-equal configurations at 256 requests, 2% at 1,024)
MIN_REQUESTS = 1000


def _configs(args, profile, speeds) -> list:
    """Every configuration searched: engine versions, backends, max-num-seqs, cores (a host of that many:
    cpu_count the same, unless --cpu-count), speculative tokens, async scheduling on and off."""
    from ..model.config import EngineConfig
    from ..model.engines import VERSIONS
    if len(args.cpu_count or []) > 1 or len(args.cpu_speed or []) > 1:
        raise ValueError("advise: one --cpu-count and one --cpu-speed (the search is over the other flags)")
    from ..model.costs import Costs
    speed, pool = speeds.cpu[0], speeds.pool
    costs = {b: Costs(profile, b) for b in args.backend}
    out, left = [], set()
    for engine in args.engine:
        # the releases a user can run; a change priced before it ships (0.33.0+batched-fill) when named
        versions = [args.engine_version] if args.engine_version else [v for v, e in VERSIONS[engine].items() if e.released]
        for version in versions:
            for backend in args.backend:
                try:  # a version whose costs the profile lacks: left out, said so
                    VERSIONS[engine][version].adapt_costs(costs[backend], EngineConfig(engine=engine, backend=backend))
                except ValueError as e:
                    if args.engine_version:
                        raise
                    print(f"{engine} {version} {backend}: not searched: {e}")
                    continue
                asyncs = [args.async_scheduling] if args.async_scheduling is not None else [True, False]
                policy = VERSIONS[engine][version]
                for mns, cores, k, async_on in itertools.product(args.max_num_seqs, args.cores, args.spec_tokens, asyncs):
                    if k and not policy.drafts:
                        left.add(f"{engine} {version}: no speculative decoding modelled")
                        continue
                    try:
                        cfg = engine_config(args, engine=engine, engine_version=version, backend=backend,
                                            max_num_seqs=mns, usable_cores=cores,
                                            cpu_count=args.cpu_count[0] if args.cpu_count else cores,
                                            spec_tokens=k, async_scheduling=async_on, cpu_speed=speed,
                                            cpu_speed_pool=pool)
                    except ValueError as e:
                        if not k:
                            raise
                        left.add(f"max-num-seqs {mns} with {k} draft tokens: {e}")  # the step's token budget
                        continue
                    if async_on and len(asyncs) > 1 and not cfg.policy.effective_async(cfg):
                        continue  # the engine turns async scheduling off here (n-gram drafts): the sync one is it
                    out.append(cfg)
    for why in sorted(left):
        print(f"not searched: {why}")
    return list(dict.fromkeys(out))


def _figures(p: Point) -> str:
    iv = p.itl_ms_pi80

    def f(v, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)
    return (f"ITL p99 {f(p.itl_ms_p99, '.1f')} ms (mean {f(p.itl_ms_mean, '.1f')}" +
            (f", 80% interval {iv[0]:.1f}-{iv[1]:.1f}" if iv else "") + f"), TTFT p99 {f(p.ttft_ms_p99, '.0f')} ms, "
            f"overhead {f(p.overhead_pct, '+.0f')}%, {f(p.out_tok_per_s, '.0f')} tok/s")


def _load(p: Point) -> str:
    return f"{p.concurrency} clients" if p.concurrency is not None else f"{p.rate_per_s:g} req/s"


def _groups(ranked) -> list[list]:
    """The ranked configurations, those of one core count with the same figures together, in rank order."""
    groups: dict[tuple, list] = {}
    for c in ranked:
        groups.setdefault((c.cores, c.figures()), []).append(c)
    return list(groups.values())


def _list(ranked, shown: int) -> None:
    """The first `shown` of the ranked configurations, those of one core count with the same figures on one line."""
    groups = _groups(ranked)
    for i, same in enumerate(groups[:shown], 1):
        c = same[0]
        print(f"  {i}. {c.label()}" + (f" (the same with {'; '.join(c.differences(o) for o in same[1:])})"
                                        if len(same) > 1 else ""))
        for p in c.points:
            print(f"       {_load(p)}: {_figures(p)}")
    if len(groups) > shown:
        print(f"  ... and {len(groups) - shown} more (--json has them all)")


def _one_more_core(profile, choice, wls, tied: bool) -> dict[str, Any]:
    """The choice again with one more core (and cpu_count with it where the search tied them)."""
    from ..model.config import EngineConfig
    from ..model.predict import grid
    cfg = EngineConfig(**choice.config)
    more = replace(cfg, usable_cores=cfg.usable_cores + 1, cpu_count=cfg.cpu_count + 1 if tied else cfg.cpu_count)
    pts = grid(profile, [more], wls, progress=False, band=False, jobs=1)
    return {"cores": more.usable_cores, "points": pts}


@dataclass(frozen=True)
class AdviseRequest:
    """A search resolved once from advise's flags (advise_request): each engine's inputs (its profile with the
    user's schemas traced for it, the speeds it runs at) and the configurations searched on it, the loads, the
    goal; run_advice runs it (its dicts are the request's own: nothing changes them after advise_request).
    `command` is what its --json records as the command that made it."""
    goal: "Goal"
    inputs: dict  # engine -> cli.predict.Inputs
    configs: dict  # engine -> tuple of model.config.EngineConfig, each a configuration searched
    schema_ids: tuple[str, ...]  # the schemas every engine's profile has
    loads: tuple  # model.config.Workload, one a load each configuration must meet the goal at
    tied: bool  # cpu_count follows the cores searched (no --cpu-count)
    spec: tuple[str, float, float]  # the drafts searched: --spec-method, --spec-acceptance, --spec-draft-rate
    json: str | None  # where every configuration searched and the chosen one go (--json)
    png: str | None  # the ranking's plot (--png; default beside --json)
    progress: bool  # the grids' bars (not --quiet)
    command: tuple[str, ...]


def advise_request(args, command: list[str] | None = None) -> AdviseRequest:
    """advise's flags checked and resolved once into its request (what a flag leaves out of the search is said as
    it is decided); a ValueError names a flag that cannot be searched. `command`: the command line it stands for,
    "maskcost" first, as predict_request's (default: this process's)."""
    from ..model.advise import Goal
    goal = Goal(args.itl_p99_ms, args.ttft_p99_ms, args.overhead_pct, args.min_tok_s)
    check_outputs(json=args.json, png=args.png)
    engines = list(dict.fromkeys(args.engine))
    flags, loaded = _load_engines(args, engines)
    common = [s for s in loaded[engines[0]].schema_ids if all(s in v.schema_ids for v in loaded.values())]
    if not common:
        raise ValueError(f"advise --engine {' '.join(engines)}: their profiles share no schema: give --schema FILE "
                         f"(traced for each engine's profile)")
    requests = None if args.requests is not None or args.precision else \
        (lambda c: max(MIN_REQUESTS, 4 * (c or 0)))  # a point's own load sets it (a p99 needs them)
    configs = {e: tuple(_configs(flags[e], v.profile, v.speeds)) for e, v in loaded.items()}
    loaded = {e: v._replace(profile=with_async_off_costs(v.profile, list(configs[e]))) for e, v in loaded.items()}
    return AdviseRequest(goal, loaded, configs,
                         tuple(common), tuple(_workloads(args, tuple(common), requests)), tied=not args.cpu_count,
                         spec=(args.spec_method, args.spec_acceptance, args.spec_draft_rate), json=args.json,
                         png=args.png, progress=not args.quiet,
                         command=tuple(command or ["maskcost", *sys.argv[1:]]))


def cmd_advise(args) -> int:
    return run_advice(advise_request(args))


def run_advice(req: AdviseRequest) -> int:
    """The search, its ranking, the chosen configuration explained, and the --json and --png: 0 where a
    configuration meets the goal, else 1. The time it prints is the search's (profiles and schemas were loaded
    and traced by advise_request)."""
    from ..model.advise import choices
    t0 = time.perf_counter()
    points = _search(req)
    names = ", ".join(v.profile.name for v in req.inputs.values())
    ranked = choices(points, req.goal)
    meets = [c for c in ranked if c.meets]
    loads = ", ".join(_load(p) for p in ranked[0].points)
    n = len(req.schema_ids)
    print(f"goal: {req.goal.words()} at {loads} ({n} schema{'s' if n != 1 else ''}); {len(ranked)} configurations "
          f"searched in {time.perf_counter() - t0:.1f} s (profile {names})")
    if any(c.config["spec_tokens"] for c in ranked):
        print(f"speculative decoding searched at {req.spec[0]} drafts, acceptance {req.spec[1]:g} and draft rate "
              f"{req.spec[2]:g} (--spec-acceptance, --spec-draft-rate): a guess for your workload until your "
              f"engine's spec_decode metrics give them")
    chosen = meets[0] if meets else ranked[0]
    result: dict[str, Any] = {"goal": asdict(req.goal), "profile": names,
                              "command": " ".join(req.command),
                              "configurations": [{"config": c.config, "meets": c.meets, "shortfall": c.shortfall,
                                                  "points": [p.to_json() for p in c.points]} for c in ranked]}
    if meets:
        print(f"\n{len(meets)} meet it, cheapest (fewest cores) first; configurations with the same figures on one line:")
        _list(meets, SHOWN)
    else:
        print("\nNo configuration searched meets the goal. The nearest:")
        _list(ranked, 3)
    result["chosen"] = _explain(chosen, req.goal, bool(meets), req.inputs[chosen.config["engine"]].profile,
                                list(req.loads), tied=req.tied)
    if req.json:
        Path(req.json).write_text(json.dumps(result, indent=1))
        print(f"wrote {req.json}")
    png = req.png or (str(Path(req.json).with_suffix(".png")) if req.json else None)
    if png:
        _plot(ranked, req.goal, Path(png))
        print(f"wrote {png}")
    return 0 if meets else 1


def _load_engines(args, engines: list[str]) -> tuple[dict, dict]:
    """Each engine's profile with the user's schemas traced for it (load_inputs: with the speeds it runs
    at), and its own options: the user's, the search's defaults where a flag does not narrow it."""
    from ..model.engines import shipped_profile_path
    from ..profile import load_profile
    if len(engines) > 1 and args.profile:
        raise ValueError("advise --engine with several engines takes each one's shipped profile: give --profile with "
                         "one engine at a time")
    profiles = {e: profile_flag(args.profile) if args.profile else
                load_profile(shipped_profile_path((e,), args.engine_version if len(engines) == 1 else None))
                for e in engines}
    for b in args.backend or ():
        lacking = [p.name for p in profiles.values() if b not in p.backends]
        if lacking:
            raise ValueError(f"--backend {b}: the profile '{lacking[0]}' has no {b} costs (llama.cpp profiles: "
                             f"--engine llamacpp --backend gbnf)")
    searched = Options(**vars(args)).replace(
        backend=args.backend or [b for b in ("xgrammar", "guidance", "gbnf") if all(b in p.backends for p in profiles.values())],
        max_num_seqs=args.max_num_seqs or list(DEFAULT_MAX_NUM_SEQS), cores=args.cores or list(DEFAULT_CORES),
        spec_tokens=args.spec_tokens or list(DEFAULT_SPEC_TOKENS))
    flags, loaded = {}, {}
    for e, prof in profiles.items():
        flags[e] = searched.replace(engine=[e])
        loaded[e] = load_inputs(flags[e], prof)
    return flags, loaded


def _search(req: AdviseRequest) -> list[Point]:
    """Every configuration of every engine on the workloads, each point with its interval."""
    from ..interval import with_intervals
    from ..model.predict import grid
    from .predict import with_cost_spread
    points = []
    for e, got_in in req.inputs.items():
        prof, cfgs, wls = got_in.profile, list(req.configs[e]), list(req.loads)
        print(f"searching {e} {', '.join(sorted({c.policy.version for c in cfgs}))} "
              f"({len(cfgs)} configurations; model/engines.py)")
        offs: dict = {}  # the schema-off arms, run once for the grid and the interval's (with_cost_spread)
        got = grid(prof, cfgs, wls, band=False, progress=req.progress, offs=offs)
        points += with_cost_spread(prof, cfgs, wls, got_in.schema_ids, with_intervals(got, read=got_in.speeds.read),
                                   {h.schema_id for h in got_in.local}, progress=req.progress, offs=offs)
    return points


def _explain(chosen, goal, meets: bool, profile, wls, tied: bool) -> dict[str, Any]:
    """For the chosen configuration (or the nearest), at its worst load: what dominates its step, what moves
    it, and what one more core buys; printed, and returned for the JSON."""
    from ..model.advise import dominant, what_moves
    worst = max(chosen.points, key=goal.shortfall)
    name, ms, share = dominant(worst)
    what, moves = what_moves(name, worst)
    more = _one_more_core(profile, chosen, wls, tied)
    more_worst = next(p for p in more["points"] if _load(p) == _load(worst))
    before, after = worst.itl_ms_p99, more_worst.itl_ms_p99
    change = f" ({100 * (after / before - 1):+.0f}%)" if before and after is not None else ""
    b = worst.breakdown
    print(f"\n{'the cheapest' if meets else 'the nearest'}, {chosen.label()}, at {_load(worst)}: a step of "
          f"{b.step_ms:.1f} ms, its forward {b.forward_ms:.1f} ms; dominant: {name}, {ms:.1f} ms a step "
          f"({100 * share:.0f}%): {what}. What moves it: {moves}.")
    print(f"one more core ({more['cores']}): ITL p99 {before or 0:.1f} -> {after or 0:.1f} ms{change}" +
          ("" if meets or max(goal.shortfall(p) for p in more["points"]) > 1 else ": that meets the goal"))
    return {"config": chosen.config, "meets": chosen.meets, "dominant": {"part": name, "ms": ms, "share": share,
                                                                         "what": what, "moves": moves},
            "one_more_core": {**more, "points": [p.to_json() for p in more["points"]]}}


def _plot(ranked, goal, path: Path) -> None:
    """One bar a group of configurations with the same figures (the first 40 in rank order)."""
    from ..plotting import save, subplots
    shown = _groups(ranked)[:40]
    fig, ax = subplots(1, 1, figsize=(11, 0.28 * len(shown) + 1.5))
    ys = range(len(shown))[::-1]
    ax.barh(list(ys), [min(g[0].shortfall, 5.0) for g in shown], color=["C2" if g[0].meets else "C3" for g in shown])
    ax.set_yticks(list(ys), [g[0].label() + (f" (+{len(g) - 1} the same)" if len(g) > 1 else "") for g in shown],
                  fontsize=7)
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("worst of the goal's figures over its bound (<= 1 meets it; capped at 5)")
    ax.set_title(f"maskcost advise: {goal.words()}", fontsize=9)
    save(fig, path)


def add_parser(sub) -> None:
    p = sub.add_parser("advise", help="the configurations that meet a goal, cheapest first (no GPU needed)")
    g = p.add_argument_group("the goal (at least one; a configuration must meet it at every load given)")
    g.add_argument("--itl-p99-ms", type=float, metavar="MS", help="ITL p99 at most this")
    g.add_argument("--ttft-p99-ms", type=float, metavar="MS", help="TTFT p99 at most this")
    g.add_argument("--overhead-pct", type=float, metavar="PCT", help="ITL with schemas over ITL without, at most this %% more")
    g.add_argument("--min-tok-s", type=float, metavar="TOK_S", help="output tokens per second at least this (schema on)")
    _add_engine_args(p, search={
        "--engine-version": "search this version only (default: every released version modelled)",
        "--backend": "backends searched (default: every one the profiles have)",
        "--max-num-seqs": f"searched (default: {' '.join(map(str, DEFAULT_MAX_NUM_SEQS))})",
        "--cores": f"core counts searched, each a host of that many (default: {' '.join(map(str, DEFAULT_CORES))})",
        "--cpu-count": "one cpu_count for every core count searched (default: the cores of each)",
        "--cpu-speed": "one single-thread speed relative to the profile host (default: the server's own speed where "
                       "the profile measured it, else 1)",
        "--async-scheduling": "search this one only (default: both)",
        "--spec-tokens": f"draft tokens a step searched, 0 = off (default: {' '.join(map(str, DEFAULT_SPEC_TOKENS))}; "
                         f"the drafts' acceptance and draft rate are --spec-acceptance's and --spec-draft-rate's, "
                         f"a guess for your workload until your engine's spec_decode metrics give them)"})
    # the search: each list flag of the engine's is a choice; these are searched where it is not given
    p.set_defaults(backend=None, max_num_seqs=None, cores=None, async_scheduling=None, spec_tokens=None)
    add_workload_args(p, "closed-loop clients (default 1 8 32 64 128 160 192 256; give the load you serve)",
                      requests_help=f"requests per point (default max({MIN_REQUESTS}, 4 x its clients))")
    p.add_argument("--json", metavar="OUT.json", help="every configuration searched, its points, the chosen one")
    p.add_argument("--png", metavar="OUT.png", help="default: next to --json")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.epilog = (f"Searched where not given: every engine version modelled, the profile's backends, max-num-seqs "
                f"{' '.join(map(str, DEFAULT_MAX_NUM_SEQS))}, cores {' '.join(map(str, DEFAULT_CORES))} (cpu_count the "
                f"same), async scheduling on and off, speculative decoding off and {DEFAULT_SPEC_TOKENS[-1]} draft tokens (at "
                f"--spec-acceptance and --spec-draft-rate). Each point runs "
                f"max({MIN_REQUESTS}, 4 x clients) requests unless --requests (a p99 needs them). Exit status 1 "
                f"where no configuration meets the goal.")
    p.set_defaults(func=cmd_advise)
