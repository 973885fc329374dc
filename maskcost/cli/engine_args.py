"""The engine and host arguments predict, report and validate share, and what is built from them: the
profile, its default CPU speed, the engine configs."""
from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

from ..model.engines import shipped_profile_path
from ..profile import Profile, ProfileError, load_profile

def profile_flag(path: str) -> Profile:
    """The profile --profile names; what is wrong with the file, said of the flag."""
    try:
        return load_profile(path)
    except ProfileError as e:
        raise ProfileError(f"--profile {e}") from None


def _profile(args) -> Profile:
    if args.profile:
        p = profile_flag(args.profile)
    else:
        p = load_profile(shipped_profile_path(getattr(args, "engine", ()), getattr(args, "engine_version", None)))
    for b in args.backend:
        if b not in p.backends:
            raise ValueError(f"--backend {b}: the profile '{p.name}' has no {b} costs (it has "
                             f"{', '.join(p.backends)}; llama.cpp profiles: --engine llamacpp --backend gbnf)")
    return p


def default_speed(profile: Profile) -> float:
    """The CPU speed a run takes without --cpu-speed: the server's own, read at calibration, where the
    profile has it (profile.measured_speed); else the profile host's (1.0)."""
    return profile.measured_speed.cpu_speed if profile.measured_speed is not None else 1.0


@dataclass(frozen=True)
class Speeds:
    """The CPU speeds a command's points run at, resolved once from its flags and the profile (predict's and
    advise's load_inputs, report's _report_speed) and then only read."""
    cpu: tuple[float, ...]  # the host's: one, or a grid (predict --cpu-speed A B)
    pool: float | None = None  # the fill pool's where it was read apart (a profile's measured speed); None: cpu's
    # where the speed was read from the target server: "report" (--cpu-speed-from-report), "calibration" (the
    # profile's own measured speed), None (nothing read: the profile host's, or --cpu-speed given by hand)
    read: str | None = None


def given_or_own_speeds(args, profile: Profile) -> Speeds:
    """--cpu-speed as given; else the profile's own measured speed (the host's and the pool's, said); else the
    profile host's."""
    if args.cpu_speed:
        return Speeds(tuple(args.cpu_speed))
    if profile.measured_speed is None:
        return Speeds((1.0,))
    print(_speed_line(profile))
    return Speeds((profile.measured_speed.cpu_speed,), profile.measured_speed.pool_speed, "calibration")


def _speed_line(profile: Profile) -> str:
    m = profile.measured_speed
    return (f"cpu speed: {m.words()}, the calibrated server's own, read from its engine's ITL at "
            f"{len(m.points)} points ({m.backend}; profile measured_speed)")


def engine_version(args, profile: Profile, engine: str) -> tuple[str, str]:
    """Whose mechanisms run for `engine`, and why: --engine-version, else the profile's own (the engine
    version it was calibrated against, where modelled), else the engine's default (model/engines.py)."""
    from ..model.engines import ENGINES, VERSIONS, engine_policy
    if getattr(args, "engine_version", None):
        return engine_policy(engine, args.engine_version).version, "--engine-version"
    prov = profile.provenance if isinstance(profile.provenance, dict) else {}
    served = prov.get("server_engine") or {}  # calibrate --base-url: the engine the server reported
    own = served.get("version") if served.get("engine") == engine else prov.get("packages", {}).get(engine)
    if own in VERSIONS[engine]:
        return own, "the profile's own"
    return ENGINES[engine].version, "the default modelled" + (f", the profile's {own} is not" if own else "")


def profile_engine(profile: Profile) -> str | None:
    """The engine whose server the profile measured: the one it reported (calibrate --base-url), else the one modelled
    engine among the packages it records; None where neither says."""
    from ..model.engines import ENGINES
    prov = profile.provenance if isinstance(profile.provenance, dict) else {}
    served = (prov.get("server_engine") or {}).get("engine")
    if served in ENGINES:
        return served
    named = [e for e in ENGINES if e in (prov.get("packages") or {})]
    return named[0] if len(named) == 1 else None


def engine_config(args, **choice):
    """An EngineConfig of the flags every point shares (speculative decoding's terms, the token budget,
    the grammar cache, async scheduling) and `choice`: the fields a grid or a search varies."""
    from ..model.config import EngineConfig
    return EngineConfig(**{"async_scheduling": args.async_scheduling, "spec_acceptance": args.spec_acceptance,
                           "spec_draft_rate": args.spec_draft_rate, "spec_method": args.spec_method,
                           "max_num_batched_tokens": args.max_num_batched_tokens,
                           "xgrammar_cache_mb": args.xgrammar_cache_mb, **choice})


def host_terms(args, profile: Profile) -> dict:
    """The EngineConfig fields of predict's host flags that were given, and the OpenMP spin the profile's host
    measured where --omp-spin-ms was not (EngineConfig's default where neither)."""
    terms = {k: getattr(args, k) for k in ("omp_spin_ms", "omp_threads", "tensor_parallel", "tp_forward_ratio")
             if getattr(args, k, None) is not None}
    if "omp_spin_ms" not in terms and profile.host.omp_spin_ms is not None:
        terms["omp_spin_ms"] = profile.host.omp_spin_ms
    return terms


# the engine and host flags that take several values (a grid point each in predict)
GRID_FLAGS = ("engine", "backend", "max_num_seqs", "cores", "cpu_count", "cpu_speed", "spec_tokens", "replicas",
              "cpu_quota")


def one_server(args) -> None:
    """report and validate compare one server: a ValueError naming the first grid flag given several values."""
    for k in GRID_FLAGS:
        v = getattr(args, k, None)
        if v and len(v) > 1:
            raise ValueError(f"--{k.replace('_', '-')} {' '.join(map(str, v))}: {args.cmd} compares one server, one "
                             f"value a flag (a grid is predict's)")


def _engine_configs(args, profile: Profile, speeds: Speeds):
    cores_list = args.cores or [profile.host.nproc]
    counts = args.cpu_count or [profile.host.os_cpu_count]
    if max(cores_list) > min(counts):
        which = "--cpu-count" if args.cpu_count else "the profile host's"
        print(f"note: --cores {max(cores_list)} is more than the cpu_count {min(counts)} the engine sizes its pools "
              f"from ({which}); for a host that large give --cpu-count too")
    out = []
    for engine in args.engine:
        version = engine_version(args, profile, engine)[0]
        for backend in args.backend:
            for mns in args.max_num_seqs:
                for cores in cores_list:
                    for cpu_count in counts:
                        for k in args.spec_tokens:
                            for speed, replicas, quota in itertools.product(
                                    speeds.cpu, getattr(args, "replicas", None) or [1],
                                    getattr(args, "cpu_quota", None) or [None]):
                                out.append(engine_config(args, engine=engine, engine_version=version,
                                                         backend=backend, max_num_seqs=mns,
                                                         cpu_count=cpu_count, usable_cores=cores, spec_tokens=k,
                                                         cpu_speed=speed, cpu_speed_pool=speeds.pool,
                                                         replicas=replicas, cpu_quota=quota,
                                                         replica_gpu=getattr(args, "replica_gpu", "own"),
                                                         **host_terms(args, profile)))
    return out


def with_async_off_costs(profile: Profile, configs: list) -> Profile:
    """`profile`, or where a config runs with async scheduling off (asked, or the engine's own rule) and the profile
    never measured a server so (no forward.sync_points: what calibrate --base-url makes), the profile with the work
    async scheduling hides borrowed from the shipped profile of the engine it was measured on (else of that config's
    engine; calibrate.refit.borrowed_sync), said in one note and kept in its provenance. They price the async-off
    points only (Costs.for_async): without them that work would be priced as none, and where no grammar is in the
    batch an async-off point would cost what an async one does (docs/validation.md finding 83)."""
    from ..model.costs import SYNC_BORROWED_KEY
    from ..model.engines import engine_policy
    off = [c for c in configs if not c.policy.effective_async(c)]
    prov = profile.provenance if isinstance(profile.provenance, dict) else {}
    if off and prov.get(SYNC_BORROWED_KEY):
        print(f"note: this profile's async-off points (forward.sync_points) are borrowed from the shipped profile "
              f"{prov[SYNC_BORROWED_KEY]}, not measured on its host")
    if not off or profile.forward.sync_points:
        return profile
    engine = profile_engine(profile) or off[0].engine
    policy = engine_policy(engine, off[0].policy.version if engine == off[0].engine else None)
    if policy.shipped_profile is None:
        return profile  # (predict says so: cli.predict._say_no_async_off_points)
    from dataclasses import replace
    from ..calibrate.refit import borrowed_sync
    from ..model.costs import forward_curve
    donor = load_profile(shipped_profile_path([engine], policy.version))
    if not donor.forward.sync_points:
        return profile
    fw = borrowed_sync(profile.forward, donor)
    own, sync = forward_curve(fw.points), forward_curve(fw.sync_points)
    at = ", ".join(f"{sync(b) - own(b):.1f} ms at {b}" for b in (8, 32, 128))
    print(f"note: this profile has no async-off points (forward.sync_points): for the points run with async scheduling "
          f"off, the engine's work a step that async scheduling hides ({at} rows) is borrowed from the shipped "
          f"profile {donor.name} ({engine}), measured on its host, not this one; `calibrate --engine-only --engine-from "
          f"PROFILE --sync-sweep SWEEP.jsonl` measures it from a schema-off sweep of the server with async scheduling off")
    return replace(profile, forward=fw, provenance={**prov, SYNC_BORROWED_KEY: donor.name})


def add_host_args(p: argparse.ArgumentParser) -> None:
    """The host predict models around one engine (replicas, a CPU quota, the OpenMP team, tensor parallel):
    predict, validate and report take the same flags, so a campaign's engine_args reach all three."""
    from ..model.config import REPLICA_GPUS, EngineConfig
    e = EngineConfig()
    h = p.add_argument_group("one host, many engines (model/host_share.py)")
    h.add_argument("--replicas", type=int, nargs="+", metavar="N",
                   help=f"engines on this host, each serving the load given (--concurrency is per engine), all on "
                        f"the same --cores, each sizing its pools from --cpu-count; figures are one engine's "
                        f"(default: {e.replicas})")
    h.add_argument("--replica-gpu", choices=REPLICA_GPUS, default=e.replica_gpu,
                   help="--replicas: own = a GPU each; shared = all on one GPU, their forwards time-sliced "
                        f"(default: {e.replica_gpu})")
    h.add_argument("--cpu-quota", type=float, nargs="+", metavar="CPUS",
                   help="a cgroup CPU quota on each engine (cpu.max quota / period, in CPUs; a container's --cpus), "
                        "unlike --cores its threads run on any of the cores until the quota is spent "
                        "(default: none)")
    h.add_argument("--omp-spin-ms", type=float, metavar="MS",
                   help="how long an idle OpenMP thread spins on the engine's host before it sleeps: with xgrammar on "
                        "vLLM, the CPU each other thread of the engine's team burns after a step's bitmask copy, which "
                        "contends with other engines and spends a quota (docs/model.md; default: what calibrate "
                        f"measured on the profile's host, else {e.omp_spin_ms:g}, a 16-core Xeon's)")
    h.add_argument("--tensor-parallel", type=int, default=e.tensor_parallel, metavar="N",
                   help="one engine over N GPUs (vLLM): one scheduler and fill on the host, a worker process a GPU "
                        f"busy while it steps (default: {e.tensor_parallel})")
    h.add_argument("--tp-forward-ratio", type=float, default=e.tp_forward_ratio, metavar="R",
                   help="the forward at --tensor-parallel over the profile's at the same rows, e.g. the ratio of "
                        "two schema-off sweeps' ITL (default: 1, the profile was calibrated at that size)")
    h.add_argument("--omp-threads", type=int, metavar="N",
                   help="the engine's OpenMP team: the CPUs it could run on when it started (a later taskset does "
                        "not resize it; default: --cores)")


def _add_speed_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speed-source", choices=("itl", "fill"), default="itl",
                   help="a point's host speed: 'itl', the CPU speed at which the model's ITL equals the engine's "
                        "(every report has it); 'fill', the speed at which the model's fill equals the fill the "
                        "probe timed in the engine (reports made with --probe) (default: itl)")


def _add_engine_args(p: argparse.ArgumentParser, search: dict[str, str] | None = None) -> None:
    """The engine and host flags; their defaults are EngineConfig's (model/config.py), defined there once.
    `search`: help texts in place of these (a command that searches over the flags: advise)."""
    from ..model.config import SPEC_METHODS, EngineConfig
    from ..model.engines import ENGINES, VERSIONS
    d = EngineConfig()
    search = search or {}

    def h(flag: str, text: str | None) -> str | None:
        return search.get(flag, text)
    p.add_argument("--profile", help="profile file (default: the embedded H200 / vLLM 0.25.1 profile; with --engine sglang alone, the "
                   "shipped SGLang 0.5.17 H200 calibration)")
    p.add_argument("--engine", nargs="+", default=[d.engine], choices=list(ENGINES),
                   help=h("--engine", "the serving engine whose step is modelled (several: a point each)"))
    versions = "; ".join(f"{n} {' | '.join(v)}" for n, v in VERSIONS.items())
    p.add_argument("--engine-version", metavar="V", help=h("--engine-version", "whose mechanisms run: " + versions
                   + " (default: the version the profile was calibrated against where modelled, else the first)"))
    p.add_argument("--backend", nargs="+", default=[d.backend], choices=["xgrammar", "guidance", "gbnf"],
                   help=h("--backend", "the grammar backend whose costs run (several: a point each): xgrammar, guidance "
                          "(llguidance), or gbnf, llama.cpp's own grammar sampler (a black-box profile)"))
    p.add_argument("--max-num-seqs", type=int, nargs="+", default=[d.max_num_seqs], help=h("--max-num-seqs", "the engine's cap on running requests (vLLM --max-num-seqs, SGLang "
                                                        "--max-running-requests)"))
    p.add_argument("--cores", type=int, nargs="+", help=h("--cores", "cores the server may use (default: the profile host's)"))
    p.add_argument("--cpu-count", type=int, nargs="+",
                   help=h("--cpu-count", "cpu_count the engine sees (default: the profile host's)"))
    p.add_argument("--cpu-speed", type=float, nargs="+",
                   help=h("--cpu-speed", "single-thread speed relative to the profile host (default: the server's own "
                          "speed where the profile measured it at calibration, else 1; predict: a grid of speeds is "
                          "allowed)"))
    p.add_argument("--spec-tokens", type=int, nargs="+", default=[d.spec_tokens],
                   help=h("--spec-tokens", "speculative decoding: draft tokens a step (0: off)"))
    p.add_argument("--spec-acceptance", type=float, default=d.spec_acceptance,
                   help="speculative decoding: the chance each draft token is accepted")
    p.add_argument("--spec-draft-rate", type=float, default=d.spec_draft_rate,
                   help="fraction of decode rows with drafts per step (EAGLE drafts every row: 1; for ngram give the share "
                        "your server's metrics show)")
    p.add_argument("--spec-method", default=d.spec_method, choices=list(SPEC_METHODS),
                   help="speculative decoding's drafter (vLLM turns async scheduling off with ngram)")
    p.add_argument("--async-scheduling", action=argparse.BooleanOptionalAction, default=d.async_scheduling,
                   help=h("--async-scheduling", "vLLM's async scheduling (SGLang: the overlap scheduler); "
                          "--no-async-scheduling: the sync step"))
    p.add_argument("--max-num-batched-tokens", type=int, default=d.max_num_batched_tokens,
                   help="token budget of one step: decode rows + prefill chunks (the default is vLLM's on an H200)")
    p.add_argument("--xgrammar-cache-mb", type=int, default=d.xgrammar_cache_mb, metavar="MB",
                   help="vLLM's compiled-grammar cache (VLLM_XGRAMMAR_CACHE_MB, LRU by bytes; 0: only the grammar "
                        "compiled last is kept, so schemas in turn compile every time)")


SOURCE_WORDS = {"itl": "ITL", "fill": "in-engine fill"}  # --speed-source, in what predict prints
