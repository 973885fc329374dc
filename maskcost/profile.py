"""The profile: the one contract between calibrate and the model.

A profile is versioned JSON (gzip allowed). Every number in it was measured by `maskcost
calibrate` (or by the sweep it ran) and every section says how. Loading validates the whole
file once and turns it into frozen dataclasses; the model trusts what it gets.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

PROFILE_VERSION = 2
# version 1 had no prefill or context measurements (`prefill_us_per_token` was always 0): it still
# loads, with the prefill and context terms off
READABLE_VERSIONS = (1, 2)
# xgrammar / guidance: measured by calling the library; gbnf: llama.cpp's own grammar sampler,
# measured only through the engine (black box)
BACKENDS = ("xgrammar", "guidance", "gbnf")
# xgrammar's JSON separators (item, key) with the engines' no-whitespace option: what every profile
# written before BackendCosts.separators was recorded replayed, on both backends (calibrate/backends.py)
XGRAMMAR_SEPARATORS = (", ", ": ")


def schema_sha256(schema: Any) -> str:
    """A schema's content digest (its canonical JSON): what profile.schema_sha256 records."""
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class HostInfo:
    cpu_model: str
    nproc: int  # CPUs this process may run on (affinity)
    os_cpu_count: int  # what multiprocessing.cpu_count() sees: the whole host
    bench_us: float  # fixed single-thread xgrammar replay (calibrate/host.py); scales traces between CPUs
    platform: str
    # how long an idle OpenMP thread spins here after a parallel region (calibrate/host.py omp_spin_ms); None:
    # not measured (older profiles, no torch), EngineConfig's default then
    omp_spin_ms: float | None = None


@dataclass(frozen=True)
class FillTrace:
    """One schema replayed through a fresh matcher: one entry per emitted token (EOS included)."""
    schema_id: str
    fill_us: tuple[float, ...]  # fill_next_token_bitmask for the row, timed from Python as the engine calls it
    accept_us: tuple[float, ...]  # accept/consume of the emitted token (update_from_output)
    straddle: tuple[bool, ...]  # the emitted token holds a quote plus other bytes
    # the fill is made inside a string value (the tokens before it leave a string open after ':' or in an
    # array: calibrate.fill.in_string_value); empty in a profile made before it was kept
    in_string: tuple[bool, ...] = ()


@dataclass(frozen=True)
class CompileCost:
    schema_id: str
    cold_ms: float  # compile with the cache off
    warm_ms: float  # a cache hit (xgrammar's compiler cache); llguidance has no cache in vLLM
    memory_bytes: int  # compiled grammar size; xgrammar's LRU cache is by bytes
    # the same schema plus one random optional property, compiled by a compiler that has compiled
    # the schema before (xgrammar reuses its rule-level cache: ms instead of s); None: not measured
    variant_ms: float | None = None


@dataclass(frozen=True)
class PoolPoint:
    """A fill of `rows` rows the way the engine does it, serial vs on `workers` threads."""
    workers: int
    rows: int
    serial_us: float
    parallel_us: float
    ideal_us: float  # the same chunks list-scheduled on `workers` perfect workers

    @property
    def inflation(self) -> float:
        return self.parallel_us / self.ideal_us


@dataclass(frozen=True)
class BlackboxPoint:
    """One concurrency of a schema-on sweep and the schema-off sweep of the same server."""
    concurrency: int
    running: float  # the engine's mean running-request count, schema on
    itl_on_ms: float
    itl_off_ms: float
    ttft_on_ms: float
    ttft_off_ms: float
    row_us: float  # (itl_on - itl_off) / running: grammar cost per constrained row per step


@dataclass(frozen=True)
class BlackboxCost:
    """The grammar's cost measured through the engine itself, for engines whose grammar code
    maskcost cannot call (llama.cpp), or to cross-check the library traces (vLLM)."""
    method: str  # how it was obtained (sweeps, engine, flags)
    row_us: float  # per constrained row per step (the slope of the fit, calibrate/blackbox.py)
    launch_ms: float  # per structured request, once (grammar build): TTFT on - off at the lowest concurrency
    output_tokens: dict[str, tuple[int, ...]]  # schema id -> the output lengths measured (tokens)
    points: tuple[BlackboxPoint, ...]
    step_us: float = 0.0  # per step with any constrained row (the intercept of the fit)


@dataclass(frozen=True)
class EngineFillPoint:
    """One schema-on sweep point: the whole-step fill as timed inside the engine (validate/probe.py,
    StructuredOutputManager.grammar_bitmask) and as the model has it, on steps that fill serially
    and on steps that use the pool (None: the point had no such steps)."""
    concurrency: int
    running: float
    serial_ms: float | None
    serial_model_ms: float | None
    pool_ms: float | None
    pool_model_ms: float | None


@dataclass(frozen=True)
class EngineCpuPoint:
    """The engine thread's own work per step besides the fill, on steps with grammar rows, as the
    probe timed it (schedule + execute_model + sample_tokens + update_from_output), at `batch`
    running requests; scaled to the profile host's single-thread speed."""
    batch: float
    ms: float


@dataclass(frozen=True)
class PoolExcessPoint:
    """vLLM's fill pool inside the engine: the mean wall of a pool fill of `chunks` tasks beyond
    the ideal list schedule of its own tasks' measured durations (thread wake-ups, GIL hand-offs,
    the engine thread's submit and wait), as the probe timed it; at the profile host's speed."""
    chunks: float
    ms: float


@dataclass(frozen=True)
class EngineFill:
    """The engine step as a live engine runs it (calibrate: fit --probe --fit-engine-fill).
    Fill: how much slower the fill runs inside the engine than the model's library-timed fill,
    in-engine / model, for serial fills and for pool fills (the median over the points that had
    them; 1.0 where none did); the model multiplies its fills by these. cpu_points: the engine
    thread's other work per step with a grammar in the batch (with async scheduling it is not
    hidden behind the forward then: docs/engines.md Q1); where present the model takes it in place of
    the advance + the schema-off sync overhead. pool_excess_points: where present, the model's
    pool fill is built from its parts, its tasks at pool_task_factor (a row filled inside a pool
    task, in-engine, over the model's row) list-scheduled plus this in-engine excess, and
    pool_factor (the first fitted profiles' whole-pool ratio) is not used. serial_rows_exponent:
    where not 0, the serial factor follows the step's rows, serial_factor x (rows / the geometric
    mean of the serial points' running)^exponent, the rows held inside the serial points' range
    (fit --fit-serial-by-rows: the least-squares slope of log in-engine / model on log running)."""
    method: str
    serial_factor: float
    pool_factor: float
    points: tuple[EngineFillPoint, ...]
    cpu_points: tuple[EngineCpuPoint, ...] = ()
    pool_excess_points: tuple[PoolExcessPoint, ...] = ()
    pool_task_factor: float = 1.0
    serial_rows_exponent: float = 0.0

    def serial_points(self) -> list[EngineFillPoint]:
        """The points that had serial fills, in-engine and in the model, at a running batch (what the
        exponent is fitted on)."""
        return [p for p in self.points if p.serial_ms is not None and p.serial_model_ms and p.running > 0]


@dataclass(frozen=True)
class BackendCosts:
    traces: tuple[FillTrace, ...]
    compiles: tuple[CompileCost, ...]
    pool: tuple[PoolPoint, ...]  # vLLM ThreadPoolExecutor, chunks of 16 (xgrammar) / llguidance batched (guidance)
    failures: tuple[tuple[str, str], ...]  # (schema_id, the backend's error)
    blackbox: BlackboxCost | None = None
    engine_fill: EngineFill | None = None  # the step timed inside a live engine (fit --probe --fit-engine-fill)
    # (schema_id, where its replayed outputs came from: recorded, examples, sampled under the mask);
    # absent in profiles written before it was recorded
    output_sources: tuple[tuple[str, str], ...] = ()
    # the engine thread's own work per structured row per step beyond the library's traces (the
    # engine's Python around the grammar), fitted through the engine on schema-on points
    # (calibrate.engine.fit_engine_rows); 0 = not measured (none)
    engine_row_us: float = 0.0
    # xgrammar: the fill's per-row call overhead that one BatchGrammarMatcher call per 16-row chunk removes
    # (vllm#51331), at this profile's CPU (calibrate.pool.measure_batch_fill_saving); None: not measured
    batch_fill_saving_us: float | None = None
    # the (item, key) separators of the outputs its traces replayed, the grammar they were replayed on: the
    # in-engine factors fitted against these traces hold for them; None in profiles written before it was
    # recorded, which replayed xgrammar's (", ", ": ") on both backends (traced_separators)
    separators: tuple[str, str] | None = None

    @property
    def traced_separators(self) -> tuple[str, str]:
        return self.separators or XGRAMMAR_SEPARATORS


@dataclass(frozen=True)
class ForwardPoint:
    batch: float  # the engine's own mean running-request count over the window
    step_ms: float  # mean time between engine steps (window / steps counted by the engine)
    itl_ms: float  # the engine's own ITL histogram mean over the window
    # the server's GPU busy over the window (NVML utilization.gpu, validate/gpubusy.py): its kernels' share of
    # the step, the rest the host's; None = not measured (profiles before it, a server on another machine)
    gpu_busy: float | None = None


@dataclass(frozen=True)
class PrefillPoint:
    """A step that computes `tokens` prompt tokens of one request (prefix cache defeated), alone:
    TTFT at concurrency 1 minus the fixed part (ttft_fixed_ms)."""
    tokens: float  # prompt tokens computed (prompt minus the prefix-cache hits the engine counted)
    ms: float


@dataclass(frozen=True)
class ContextPoint:
    """A schema-off sweep point with a long prompt that the prefix cache holds: decode steps whose
    rows attend over `context_tokens` each, against the forward curve's own context."""
    batch: float  # engine running-request mean
    context_tokens: float  # per decode row: prompt + half the output (the mean over a request's life)
    itl_ms: float  # engine ITL mean


@dataclass(frozen=True)
class ForwardCurve:
    source: str  # how it was measured (engine, version, flags, GPU, client)
    points: tuple[ForwardPoint, ...]  # async scheduling (the default), no schema
    sync_points: tuple[ForwardPoint, ...]  # --no-async-scheduling, no schema; may be empty
    ttft_fixed_ms: float  # API + scheduling overhead seen in TTFT at concurrency 1
    # prefill: forward time of a step carrying N computed prompt tokens; () = not measured (no term)
    prefill_points: tuple[PrefillPoint, ...] = ()
    # context: per decode row, the mean context (prompt + half the output) of the sweep behind
    # `points`, and the extra forward time per 1,000 context tokens in a step beyond it (the KV
    # reads of attention), fitted on `context_points`; 0 = not measured (no term)
    context_ref_tokens: float = 0.0
    context_us_per_ktoken: float = 0.0
    context_points: tuple[ContextPoint, ...] = ()
    # the API server (one process, one asyncio loop: vllm/v1/engine/async_llm.py output_handler):
    # each streamed token and each admitted request take its time, first come first served; read from its
    # process's CPU over calibrate's sweeps where the server ran on the calibrating machine (calibrate.api_cpu),
    # else fitted on the schema-off sweep (calibrate.engine.fit_frontend); 0 = not measured (no front-end queue).
    # With it, ttft_fixed_ms is the uncontended rest of TTFT.
    frontend_token_us: float = 0.0
    frontend_request_ms: float = 0.0
    # and a structured request's more (its schema's parse and the backend's validation in
    # InputProcessor._validate_params, docs/engines.md Q4): 0 from the process's CPU (calibrate.api_cpu), or refitted on
    # a schema-on sweep (calibrate.engine.fit_frontend_structured, fit --fit-frontend); 0 = not measured
    frontend_structured_ms: float = 0.0
    # and a structured stream's token where it was read apart from the schema-off stream's (calibrate.api_cpu: on
    # the schema-on points); then a structured request's own cost is frontend_structured_ms (0 from calibrate.api_cpu)
    # and frontend_request_ms a schema-off one's; 0 = one frontend_token_us for every token
    frontend_structured_token_us: float = 0.0
    # the CPU speed (on the profile's scale) of the host whose API server these four costs are the time of: the
    # model prices them x frontend_read_speed / the speed it runs at. 1.0: the profile host's (a fit on the TTFT);
    # calibrate --base-url, where it read them from the server's process (calibrate.api_cpu), the speed it then
    # read on that server (Profile.measured_speed.cpu_speed), so that they are priced as read there
    # (docs/validation.md finding 77). 0.0 only inside calibrate, while that speed is read: as read on whatever
    # host is modelled (AS_READ_HERE); a profile file's is > 0.
    frontend_read_speed: float = 1.0
    # a prefill step the engine runs without its CUDA graph (SGLang: one new token, model/engines.py
    # Sglang0517.eager_prefill), over one that replays it: TTFT at concurrency 1 of a prompt the prefix
    # cache holds but for its last token, minus TTFT of a fresh prompt of the same length
    # (calibrate.engine.eager_prefill_ms); 0 = not measured (no term)
    eager_prefill_ms: float = 0.0

    def frontend_scale(self, cpu_scale: float) -> float:
        """What the API server's costs are multiplied by on a host whose CPU work takes cpu_scale times the
        profile host's (Costs.cpu_scale)."""
        return cpu_scale * self.frontend_read_speed if self.frontend_read_speed != AS_READ_HERE else 1.0

    def frontend_at_profile_speed(self) -> "ForwardCurve":
        """The curve with its API server's costs at the profile host's speed (frontend_read_speed 1.0), for a fit
        that carries some of them beside costs of its own; ValueError while they are marked AS_READ_HERE (their
        speed not read yet)."""
        k = self.frontend_read_speed
        if k == AS_READ_HERE:
            raise ValueError("the API server's costs are marked as read here, their speed not read yet")
        if k == 1.0:
            return self
        return replace(self, frontend_read_speed=1.0, **{f: getattr(self, f) * k for f in FRONTEND_COSTS})


# ForwardCurve's API-server costs, priced together at frontend_read_speed
FRONTEND_COSTS = ("frontend_token_us", "frontend_request_ms", "frontend_structured_ms", "frontend_structured_token_us")
AS_READ_HERE = 0.0  # ForwardCurve.frontend_read_speed inside calibrate: the costs as read, on whatever host is modelled


@dataclass(frozen=True)
class ApplyPoint:
    rows: int
    apply_us: float  # H2D copy of the bitmask + the masking kernel


@dataclass(frozen=True)
class ApplyCost:
    source: str
    points: tuple[ApplyPoint, ...]


@dataclass(frozen=True)
class ServerSpeed:
    """One measured server of the profile's host type: the CPU speed at which the model's median
    signed ITL error over its schema-on points is zero, over the speed its own bench gave (1.0: the
    engine ran as fast as the bench said)."""
    name: str
    ratio: float


@dataclass(frozen=True)
class EngineSpeeds:
    """How the engine's speed varied between servers of the profile's host type, against their
    bench (validation sweeps; validation/h200-vllm-0.25.1/l/engine_speeds.py at bbd463b): predict gives the
    ITL between the slowest and the fastest, cpu_speed times each ratio."""
    source: str
    servers: tuple[ServerSpeed, ...]

    @property
    def low(self) -> float:
        return min(s.ratio for s in self.servers)

    @property
    def high(self) -> float:
        return max(s.ratio for s in self.servers)


@dataclass(frozen=True)
class MeasuredSpeed:
    """The calibrated server's own host speed, read from its engine: the median over a short
    schema-on sweep of each point's ITL speed (the CPU speed at which the model's ITL equals the
    engine's there), against this profile. predict and report run at it unless given --cpu-speed."""
    cpu_speed: float
    backend: str  # the grammar backend the server ran during the sweep
    source: str  # the sweep, the server, the engine config the model was run with
    points: tuple[tuple[int, float], ...]  # (concurrency, ITL speed) of each point that gave one
    # vLLM, read apart where points ran on both sides of the fill pool's threshold: the median of the
    # points whose steps used the pool; cpu_speed is then the median of the serial-fill points
    pool_speed: float | None = None

    def words(self) -> str:
        """The speed as predict and calibrate print it."""
        if self.pool_speed is None:
            return f"{self.cpu_speed:.3f}"
        return f"{self.cpu_speed:.3f} where the fill is serial, {self.pool_speed:.3f} on vLLM's fill pool"


@dataclass(frozen=True)
class Profile:
    name: str
    created_utc: str
    provenance: dict[str, Any]  # command line, package versions, notes
    host: HostInfo
    tokenizer: str
    vocab_size: int
    backends: dict[str, BackendCosts]
    forward: ForwardCurve
    apply: ApplyCost
    version: int = PROFILE_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    engine_speeds: EngineSpeeds | None = None  # the spread between servers of this host type (optional)
    measured_speed: MeasuredSpeed | None = None  # the server's own speed, read at calibration (optional)
    # the vocabulary's content (calibrate/tokenizer.py vocab_sha256): a host without the `tokenizer`
    # folder finds a bundled vocabulary with the same tokens (optional: older profiles have none)
    tokenizer_sha256: str | None = None
    # schema id -> the digest of the schema it was calibrated with (schema_sha256): a user's file of
    # the same id and content takes the profile's traces, another content is traced under a new id
    schema_sha256: dict[str, str] = field(default_factory=dict)

    @property
    def bitmask_row_bytes(self) -> int:
        return 4 * ((self.vocab_size + 31) // 32)

    def schema_ids(self, backend: str) -> list[str]:
        b = self.backends[backend]
        if b.blackbox is not None and not b.traces:
            return list(b.blackbox.output_tokens)
        return [t.schema_id for t in b.traces]


# ---------------------------------------------------------------- JSON I/O

def _rounded(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 3)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_rounded(v) for v in x]
    return x


def profile_to_dict(p: Profile) -> dict[str, Any]:
    d = asdict(p)
    d["maskcost_profile_version"] = d.pop("version")
    for b in d["backends"].values():
        for t in b["traces"]:
            t["straddle"] = [int(s) for s in t["straddle"]]
            if t["in_string"]:
                t["in_string"] = [int(s) for s in t["in_string"]]
            else:
                del t["in_string"]
        b["failures"] = [{"schema_id": s, "error": e} for s, e in b["failures"]]
        b["output_sources"] = [{"schema_id": s, "source": x} for s, x in b["output_sources"]]
    return _rounded(d)


def save_profile(p: Profile, path: str | Path) -> None:
    """Write atomically: a half-written profile never exists under the final name."""
    path = Path(path)
    text = json.dumps(profile_to_dict(p), separators=(",", ":"))
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".gz":
        with gzip.open(tmp, "wt") as f:
            f.write(text)
    else:
        tmp.write_text(text)
    tmp.replace(path)


def _req(d: dict, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(d, dict):
        raise ProfileError(f"{where}: expected an object, got {type(d).__name__}")
    if key not in d:
        raise ProfileError(f"{where}: missing field '{key}'")
    v = d[key]
    if kind is float and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise ProfileError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {type(v).__name__}")
    if kind is float and not math.isfinite(v):
        raise ProfileError(f"{where}.{key}: must be a finite number, got {v}")
    return v


def _number(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ProfileError(f"{where}: expected numbers, got {type(x).__name__}")
    return float(x)


def _nonneg(v: float, where: str) -> float:
    if not (v >= 0 and math.isfinite(v)):
        raise ProfileError(f"{where}: must be >= 0, got {v}")
    return v


def _positive(v: int, where: str) -> int:
    if v < 1:
        raise ProfileError(f"{where}: must be >= 1, got {v}")
    return v


def _opt_spin(h: dict, where: str) -> float | None:
    v = h.get("omp_spin_ms")
    return None if v is None else _nonneg(_number(v, where), where)


def _trace(d: dict, where: str) -> FillTrace:
    fill = tuple(_nonneg(_number(x, f"{where}.fill_us"), f"{where}.fill_us") for x in _req(d, "fill_us", where, list))
    acc = tuple(_nonneg(_number(x, f"{where}.accept_us"), f"{where}.accept_us")
                for x in _req(d, "accept_us", where, list))
    strad = tuple(bool(x) for x in _req(d, "straddle", where, list))
    if not fill or not (len(fill) == len(acc) == len(strad)):
        raise ProfileError(f"{where}: fill_us, accept_us and straddle must be non-empty and of equal length")
    instr = tuple(bool(x) for x in d.get("in_string") or ())
    if instr and len(instr) != len(fill):
        raise ProfileError(f"{where}.in_string: one flag a fill ({len(fill)}), got {len(instr)}")
    return FillTrace(_req(d, "schema_id", where, str), fill, acc, strad, instr)


def _blackbox(d: dict, where: str) -> BlackboxCost:
    fields = [f for f in BlackboxPoint.__dataclass_fields__]
    pts = []
    for i, p in enumerate(_req(d, "points", where, list)):
        vals = [_req(p, f, f"{where}.points[{i}]", int if f == "concurrency" else float) for f in fields]
        pts.append(BlackboxPoint(*vals))
    out = {}
    for k, v in _req(d, "output_tokens", where, dict).items():
        if not isinstance(v, list) or not v or not all(isinstance(x, int) and x >= 1 for x in v):
            raise ProfileError(f"{where}.output_tokens.{k}: expected a non-empty list of lengths >= 1")
        out[k] = tuple(v)
    if not out:
        raise ProfileError(f"{where}.output_tokens: empty (no schema was measured)")
    return BlackboxCost(_req(d, "method", where, str), _nonneg(_req(d, "row_us", where, float), f"{where}.row_us"),
                        _nonneg(_req(d, "launch_ms", where, float), f"{where}.launch_ms"), out, tuple(pts),
                        _nonneg(_req(d, "step_us", where, float), f"{where}.step_us"))


def _engine_fill(d: dict, where: str) -> EngineFill:
    pts = []
    for i, p in enumerate(_req(d, "points", where, list)):
        w = f"{where}.points[{i}]"
        opt = [None if p.get(f) is None else _nonneg(_req(p, f, w, float), f"{w}.{f}")
               for f in ("serial_ms", "serial_model_ms", "pool_ms", "pool_model_ms")]
        pts.append(EngineFillPoint(_req(p, "concurrency", w, int), _nonneg(_req(p, "running", w, float), w), *opt))
    factors = []
    for f in ("serial_factor", "pool_factor"):
        v = _req(d, f, where, float)
        if not v > 0:
            raise ProfileError(f"{where}.{f}: must be > 0, got {v}")
        factors.append(v)
    cpu = tuple(EngineCpuPoint(_nonneg(_req(c, "batch", f"{where}.cpu_points[{i}]", float), where),
                               _nonneg(_req(c, "ms", f"{where}.cpu_points[{i}]", float), where))
                for i, c in enumerate(d.get("cpu_points") or ()))  # absent in the first fitted profiles
    exc = tuple(PoolExcessPoint(_nonneg(_req(c, "chunks", f"{where}.pool_excess_points[{i}]", float), where),
                                _nonneg(_req(c, "ms", f"{where}.pool_excess_points[{i}]", float), where))
                for i, c in enumerate(d.get("pool_excess_points") or ()))
    task = _req(d, "pool_task_factor", where, float) if "pool_task_factor" in d else 1.0
    if not task > 0:
        raise ProfileError(f"{where}.pool_task_factor: must be > 0, got {task}")
    # absent before session W's profile (0: one serial factor at every batch)
    expo = _req(d, "serial_rows_exponent", where, float) if "serial_rows_exponent" in d else 0.0
    ef = EngineFill(_req(d, "method", where, str), *factors, tuple(pts), cpu, exc, task, expo)
    if expo and len(ef.serial_points()) < 2:
        raise ProfileError(f"{where}.serial_rows_exponent: {expo} needs two or more points with serial fills")
    return ef


def profile_from_dict(d: dict[str, Any], where: str = "profile") -> Profile:
    """Check a parsed profile and build it; anything wrong is a ProfileError naming `where` and the field."""
    try:
        return _profile_from_dict(d, where)
    except ProfileError:
        raise
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as e:  # a field of the wrong shape
        raise ProfileError(f"{where}: malformed profile ({type(e).__name__}: {e})") from None


def _profile_from_dict(d: dict[str, Any], where: str) -> Profile:
    if not isinstance(d, dict):
        raise ProfileError(f"{where}: not a JSON object")
    v = d.get("maskcost_profile_version")
    if v is None:
        raise ProfileError(f"{where}: not a maskcost profile (no maskcost_profile_version; `maskcost calibrate` "
                           f"writes one)")
    if v not in READABLE_VERSIONS:
        raise ProfileError(f"{where}: maskcost_profile_version is {v!r}, this maskcost reads "
                           f"{', '.join(map(str, READABLE_VERSIONS))}")
    h = _req(d, "host", where, dict)
    host = HostInfo(_req(h, "cpu_model", f"{where}.host", str),
                    _positive(_req(h, "nproc", f"{where}.host", int), f"{where}.host.nproc"),
                    _positive(_req(h, "os_cpu_count", f"{where}.host", int), f"{where}.host.os_cpu_count"),
                    _nonneg(_req(h, "bench_us", f"{where}.host", float), f"{where}.host.bench_us"),
                    _req(h, "platform", f"{where}.host", str), _opt_spin(h, f"{where}.host.omp_spin_ms"))
    backends = {name: _backend(name, b, f"{where}.backends.{name}") for name, b in _req(d, "backends", where, dict).items()}
    if not backends:
        raise ProfileError(f"{where}.backends: empty")
    forward = _forward(_req(d, "forward", where, dict), v, where)
    ap = _req(d, "apply", where, dict)
    apply = ApplyCost(_req(ap, "source", f"{where}.apply", str),
                      tuple(sorted((ApplyPoint(_req(p, "rows", f"{where}.apply.points", int),
                                               _req(p, "apply_us", f"{where}.apply.points", float))
                                    for p in _req(ap, "points", f"{where}.apply", list)), key=lambda p: p.rows)))
    if not apply.points:
        raise ProfileError(f"{where}.apply.points: no mask-apply points")
    speeds = _engine_speeds(d["engine_speeds"], f"{where}.engine_speeds") if d.get("engine_speeds") is not None else None
    measured = _measured_speed(d["measured_speed"], f"{where}.measured_speed", backends) \
        if d.get("measured_speed") is not None else None
    digests = d.get("schema_sha256") or {}
    if not isinstance(digests, dict):
        raise ProfileError(f"{where}.schema_sha256: expected an object (schema id -> sha256)")
    digests = {str(k): _sha256(v, f"{where}.schema_sha256.{k}") for k, v in digests.items()}
    return Profile(name=_req(d, "name", where, str), created_utc=_req(d, "created_utc", where, str),
                   provenance=_req(d, "provenance", where, dict), host=host,
                   tokenizer=_req(d, "tokenizer", where, str),
                   vocab_size=_positive(_req(d, "vocab_size", where, int), f"{where}.vocab_size"),
                   backends=backends, forward=forward, apply=apply, extra=d.get("extra", {}), engine_speeds=speeds,
                   measured_speed=measured, tokenizer_sha256=_sha256(d.get("tokenizer_sha256"), f"{where}.tokenizer_sha256"),
                   schema_sha256=digests)


def _backend(name: str, b: dict, w: str) -> BackendCosts:
    """One backend's costs (w: where it is in the file, for the error)."""
    if name not in BACKENDS:
        raise ProfileError(f"{w}: unknown backend (known: {', '.join(BACKENDS)})")
    traces = tuple(_trace(t, f"{w}.traces[{i}]") for i, t in enumerate(_req(b, "traces", w, list)))
    compiles = tuple(CompileCost(_req(c, "schema_id", f"{w}.compiles[{i}]", str),
                                 _nonneg(_req(c, "cold_ms", f"{w}.compiles[{i}]", float), w),
                                 _nonneg(_req(c, "warm_ms", f"{w}.compiles[{i}]", float), w),
                                 _req(c, "memory_bytes", f"{w}.compiles[{i}]", int),
                                 None if c.get("variant_ms") is None else
                                 _nonneg(_req(c, "variant_ms", f"{w}.compiles[{i}]", float), w))
                     for i, c in enumerate(_req(b, "compiles", w, list)))
    pool = tuple(PoolPoint(_req(p, "workers", f"{w}.pool[{i}]", int), _req(p, "rows", f"{w}.pool[{i}]", int),
                           _req(p, "serial_us", f"{w}.pool[{i}]", float),
                           _req(p, "parallel_us", f"{w}.pool[{i}]", float),
                           _req(p, "ideal_us", f"{w}.pool[{i}]", float))
                 for i, p in enumerate(_req(b, "pool", w, list)))
    failures = tuple((_req(f_, "schema_id", f"{w}.failures", str), _req(f_, "error", f"{w}.failures", str))
                     for f_ in _req(b, "failures", w, list))
    bb = _blackbox(b["blackbox"], f"{w}.blackbox") if b.get("blackbox") is not None else None
    if not traces and bb is None:
        raise ProfileError(f"{w}.traces: no fill traces (and no black-box cost)")
    missing = {t.schema_id for t in traces} - {c.schema_id for c in compiles}
    if missing:
        raise ProfileError(f"{w}.compiles: no compile cost for {sorted(missing)[:3]}")
    ef = _engine_fill(b["engine_fill"], f"{w}.engine_fill") if b.get("engine_fill") is not None else None
    sources = tuple((_req(x, "schema_id", f"{w}.output_sources", str), _req(x, "source", f"{w}.output_sources", str))
                    for x in b.get("output_sources") or ())
    row_us = _nonneg(_number(b["engine_row_us"], f"{w}.engine_row_us"), f"{w}.engine_row_us") \
        if "engine_row_us" in b else 0.0  # absent = 0
    saving = None if b.get("batch_fill_saving_us") is None else \
        _number(b["batch_fill_saving_us"], f"{w}.batch_fill_saving_us")
    if saving is not None and not math.isfinite(saving):
        raise ProfileError(f"{w}.batch_fill_saving_us: must be a finite number, got {saving}")
    seps = b.get("separators")
    if seps is not None and not (isinstance(seps, list) and len(seps) == 2 and all(isinstance(x, str) for x in seps)):
        raise ProfileError(f"{w}.separators: expected two strings (item, key), got {seps!r}")
    return BackendCosts(traces, compiles, pool, failures, bb, ef, sources, row_us, saving,
                        None if seps is None else (seps[0], seps[1]))


def _gpu_busy(p: dict, where: str) -> float | None:
    """A forward point's NVML busy fraction: absent or null (not measured), else a number in [0, 1]."""
    if p.get("gpu_busy") is None:
        return None
    b = _req(p, "gpu_busy", where, float)
    if not 0.0 <= b <= 1.0:
        raise ProfileError(f"{where}.gpu_busy: a fraction in [0, 1], got {b}")
    return b


def _forward(fw: dict, v: int, where: str) -> ForwardCurve:
    """The forward curve (version 1 profiles: no prefill or context measurements)."""
    fwhere = f"{where}.forward"

    def points(key: str) -> tuple[ForwardPoint, ...]:
        pts = tuple(ForwardPoint(_req(p, "batch", f"{fwhere}.{key}[{i}]", float),
                                 _req(p, "step_ms", f"{fwhere}.{key}[{i}]", float),
                                 _req(p, "itl_ms", f"{fwhere}.{key}[{i}]", float),
                                 _gpu_busy(p, f"{fwhere}.{key}[{i}]"))
                    for i, p in enumerate(_req(fw, key, fwhere, list)))
        if any(p.batch <= 0 or p.step_ms <= 0 for p in pts):
            raise ProfileError(f"{fwhere}.{key}: batch and step_ms must be > 0")
        return tuple(sorted(pts, key=lambda p: p.batch))

    if v == 1:
        forward = ForwardCurve(_req(fw, "source", fwhere, str), points("points"), points("sync_points"),
                               _nonneg(_req(fw, "ttft_fixed_ms", fwhere, float), where))
    else:
        pre = tuple(PrefillPoint(_nonneg(_req(p, "tokens", f"{fwhere}.prefill_points[{i}]", float), fwhere),
                                 _nonneg(_req(p, "ms", f"{fwhere}.prefill_points[{i}]", float), fwhere))
                    for i, p in enumerate(_req(fw, "prefill_points", fwhere, list)))
        ctx = tuple(ContextPoint(*(_nonneg(_req(p, f, f"{fwhere}.context_points[{i}]", float), fwhere)
                                   for f in ("batch", "context_tokens", "itl_ms")))
                    for i, p in enumerate(_req(fw, "context_points", fwhere, list)))
        forward = ForwardCurve(_req(fw, "source", fwhere, str), points("points"), points("sync_points"),
                               _nonneg(_req(fw, "ttft_fixed_ms", fwhere, float), where),
                               tuple(sorted(pre, key=lambda p: p.tokens)),
                               _nonneg(_req(fw, "context_ref_tokens", fwhere, float), fwhere),
                               _nonneg(_req(fw, "context_us_per_ktoken", fwhere, float), fwhere), ctx,
                               **{k: _nonneg(_req(fw, k, fwhere, float), f"{fwhere}.{k}")  # optional: absent = 0
                                  for k in (*FRONTEND_COSTS, "eager_prefill_ms") if k in fw})
        if "frontend_read_speed" in fw:  # optional: absent = 1.0
            read = _req(fw, "frontend_read_speed", fwhere, float)
            if not read > 0:
                raise ProfileError(f"{fwhere}.frontend_read_speed: must be > 0, got {read}")
            forward = replace(forward, frontend_read_speed=read)
        if forward.context_us_per_ktoken and not forward.context_ref_tokens:
            raise ProfileError(f"{fwhere}.context_ref_tokens: needed (> 0) with a context slope")
    if not forward.points:
        raise ProfileError(f"{fwhere}.points: no forward-time points")
    return forward



def _sha256(v: Any, where: str) -> str | None:
    if v is not None and not (isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v)):
        raise ProfileError(f"{where}: expected a sha256 hex digest, got {str(v)[:40]!r}")
    return v


def _measured_speed(d: dict, where: str, backends: dict[str, BackendCosts]) -> MeasuredSpeed:
    speed = _req(d, "cpu_speed", where, float)
    if not speed > 0:
        raise ProfileError(f"{where}.cpu_speed: must be > 0, got {speed}")
    backend = _req(d, "backend", where, str)
    if backend not in backends:
        raise ProfileError(f"{where}.backend: {backend!r} is not one of the profile's backends")
    pts = []
    for i, p in enumerate(_req(d, "points", where, list)):
        if not (isinstance(p, list) and len(p) == 2):
            raise ProfileError(f"{where}.points[{i}]: expected [concurrency, speed]")
        pts.append((int(_number(p[0], f"{where}.points[{i}]")), _nonneg(_number(p[1], f"{where}.points[{i}]"),
                                                                         f"{where}.points[{i}]")))
    pool = d.get("pool_speed")
    if pool is not None and not _number(pool, f"{where}.pool_speed") > 0:
        raise ProfileError(f"{where}.pool_speed: must be > 0, got {pool}")
    return MeasuredSpeed(speed, backend, _req(d, "source", where, str), tuple(pts),
                         None if pool is None else float(pool))


def _engine_speeds(d: dict, where: str) -> EngineSpeeds:
    servers = []
    for i, sv in enumerate(_req(d, "servers", where, list)):
        w = f"{where}.servers[{i}]"
        r = _req(sv, "ratio", w, float)
        if not r > 0:
            raise ProfileError(f"{w}.ratio: must be > 0, got {r}")
        servers.append(ServerSpeed(_req(sv, "name", w, str), r))
    if not servers:
        raise ProfileError(f"{where}.servers: empty")
    return EngineSpeeds(_req(d, "source", where, str), tuple(servers))


def load_profile(path: str | Path) -> Profile:
    """Read and check a profile file; anything wrong with it is a ProfileError naming the file."""
    path = Path(path)
    try:
        raw = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    except (OSError, EOFError) as e:  # EOFError: a .gz cut short
        raise ProfileError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e or 'truncated'})") from None
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a profile (not UTF-8 text)") from None
    try:
        d = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: not JSON ({e.msg}: line {e.lineno}, column {e.colno})") from None
    return profile_from_dict(d, where=str(path))


# the profiles shipped in the package; which one a command takes without --profile is the engine's (its class's
# shipped_profile: model/engines.py shipped_profile_path), the embedded H200 / vLLM 0.25.1 one by default
DEFAULT_PROFILE = "default.json.gz"


def default_profile_path(name: str = DEFAULT_PROFILE) -> Path:
    """The shipped profile file `name` (default: the embedded one)."""
    return Path(__file__).resolve().parent / "profiles" / name


def load_default_profile() -> Profile:
    return load_profile(default_profile_path())
