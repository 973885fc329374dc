"""A predicted point: what `maskcost predict` reports for one (engine config, workload), typed, with its JSON form
(`to_json`, the record predict, advise and report write) and a checked loader (`from_json`, what `--resume` and
`report --predicted` read back). A field added after a file was written takes its default when read from it
(None; 1 for replicas and tensor_parallel): a prediction committed before the field existed still loads. A field
of the wrong type is a PointError naming it; a key this version does not name is not kept.

Invariants (model/predict.py builds every Point):
- the labels are the config the point was asked for (relabel: a shared simulation's figures under another label);
- the figures are the schema-on arm's, `off` the schema-off arm's of the same workload and engine;
- `breakdown` is the mean step of the measurement window, in ms, its parts named as model/step.py names them;
- `band` and `itl_ms_pi80` are the same ITL mean's spread (the profile's servers; the record's 80% interval)."""
from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import cache
from typing import Any, Union, get_args, get_origin, get_type_hints


class PointError(ValueError):
    """A point record (a predict --json file, a --resume line) that is not one: one line naming the field."""


@dataclass(frozen=True)
class Breakdown:
    """The window's mean step in named parts (ms; prefill_tokens a count); the pool's share of its steps, and
    the fill a step took where it filled serially / waited on the pool (what a probe of the engine times)."""
    prefill_tokens: float | None = None
    forward_ms: float | None = None
    fill_ms: float | None = None
    pool_wait_ms: float | None = None
    apply_ms: float | None = None
    advance_ms: float | None = None
    compile_wait_ms: float | None = None
    cpu_overhead_ms: float | None = None
    exposed_ms: float | None = None
    step_ms: float | None = None
    pool_step_fraction: float | None = None
    serial_fill_step_ms: float | None = None
    pool_fill_step_ms: float | None = None


@dataclass(frozen=True)
class OffArm:
    """The same workload with no schema (response_format off): what the overhead is against."""
    itl_ms_mean: float | None = None
    itl_ms_p50: float | None = None
    ttft_ms_mean: float | None = None
    ttft_ms_p50: float | None = None
    out_tok_per_s: float | None = None
    running_mean: float | None = None
    host_share: dict | None = None


@dataclass(frozen=True)
class Band:
    """The schema-on figures with the engine as fast / as slow as on the fastest / slowest server of the
    profile's host type (profile.engine_speeds): each a (fast, slow) pair."""
    cpu_speed: tuple[float, float]
    servers: tuple[str, ...]
    itl_ms_mean: tuple[float | None, float | None]
    ttft_ms_p50: tuple[float | None, float | None]
    out_tok_per_s: tuple[float | None, float | None]


@dataclass(frozen=True, kw_only=True)
class Point:  # (not hashable: its config and host_share are dicts)
    # the config asked for (model/predict.py _labels)
    engine: str
    engine_version: str | None = None
    backend: str
    concurrency: int | None
    rate_per_s: float | None = None
    max_num_seqs: int | None = None
    cores: int | None = None
    cpu_count: int | None = None
    async_scheduling: bool | None = None
    spec_tokens: int | None = None
    replicas: int = 1
    replica_gpu: str | None = None
    cpu_quota: float | None = None
    tensor_parallel: int = 1
    schema: str | None = None
    # the schema-on arm over the window (model/metrics.py summarize)
    itl_ms_mean: float | None
    itl_ms_ci95: float | None = None
    itl_ms_p50: float | None = None
    itl_ms_p90: float | None = None
    itl_ms_p99: float | None = None
    tpot_ms_mean: float | None = None
    ttft_ms_mean: float | None = None
    ttft_ms_p50: float | None = None
    ttft_ms_p90: float | None = None
    ttft_ms_p99: float | None = None
    out_tok_per_s: float | None = None
    running_mean: float | None = None
    structured_rows_mean: float | None = None
    output_tokens_mean: float | None = None
    requests_run: int | None = None
    straddle_rate: float | None = None
    aborted: int | None = None
    steps: int | None = None
    api_server_busy_fraction: float | None = None  # the API server's loop busy over the window (None: none)
    breakdown: Breakdown
    # what the GPU monitor and the engine's metrics would show (metrics.what_the_engine_shows)
    gpu_busy_fraction: float | None = None
    gpu_busy_basis: str | None = None
    host_exposed_fraction: float | None = None
    bound: str | None = None
    bitmask_h2d_bytes_per_step: float | None = None
    bitmask_h2d_link_fraction: float | None = None
    host_share: dict | None = None  # engines sharing the host (model/host_share.py): factors, demand, rounds
    cpu_demand: float | None = None  # CPUs the engine kept busy (host_share.demand)
    cpu_demand_parts: dict | None = None
    off: OffArm
    overhead_pct: float | None = None  # ITL on / off - 1, in %
    throughput_loss_pct: float | None = None
    config: dict  # {"engine": EngineConfig as a dict, "workload": Workload as a dict}: what produced it
    cpu_speed_ran: float | None = None  # the speed it ran at (vLLM's pool regime: the pool's)
    speed_regime: str | None = None
    band: Band | None = None
    itl_ms_pi80: tuple[float, float] | None = None  # the 80% interval of ITL mean (maskcost/interval.py)
    interval: dict | None = None  # that interval's rule and figures

    def __post_init__(self) -> None:
        # the config as its JSON holds it (lists for the dataclasses' tuples): a point read back equals it
        object.__setattr__(self, "config", _to_json(self.config))

    def to_json(self) -> dict[str, Any]:
        """The record predict --json writes: every field in order, the optional ones (host_share, band, the
        interval) only where present."""
        return _to_json(self)

    @classmethod
    def from_json(cls, d: Any, where: str = "point") -> Point:
        """A point record checked and built; PointError naming `where` and the field where it is not one."""
        p = _from_json(cls, d, where)
        if not isinstance(p.config.get("engine"), dict):
            raise PointError(f"{where}.config.engine: expected the engine config (an object)")
        return p


# fields written only where present, in any record of this module (a point's and its off arm's host_share)
OMITTED_WHEN_NONE = frozenset({"host_share", "band", "itl_ms_pi80", "interval"})


def _to_json(x: Any) -> Any:
    if is_dataclass(x):
        return {f.name: _to_json(getattr(x, f.name)) for f in fields(x)
                if not (f.name in OMITTED_WHEN_NONE and getattr(x, f.name) is None)}
    if isinstance(x, (tuple, list)):
        return [_to_json(v) for v in x]
    if isinstance(x, dict):
        return {k: _to_json(v) for k, v in x.items()}
    return x


def _from_json(cls: type, d: Any, where: str) -> Any:
    if not isinstance(d, dict):
        raise PointError(f"{where}: expected an object, got {type(d).__name__}")
    hints, got = _hints(cls), {}
    for f in fields(cls):
        if f.name not in d:
            if f.default is MISSING and f.default_factory is MISSING:
                raise PointError(f"{where}: missing field '{f.name}'")
            continue
        got[f.name] = _value(hints[f.name], d[f.name], f"{where}.{f.name}")
    return cls(**got)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _value(kind: Any, v: Any, where: str) -> Any:
    """`v` as `kind` (a dataclass, a tuple, an optional, a number, a str, a bool or a dict)."""
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        if v is None and type(None) in args:
            return None
        return _value(next(a for a in args if a is not type(None)), v, where)
    if is_dataclass(kind):
        return _from_json(kind, v, where)
    if origin is tuple:
        if not isinstance(v, (list, tuple)):
            raise PointError(f"{where}: expected a list, got {type(v).__name__}")
        each = [args[0]] * len(v) if len(args) == 2 and args[1] is Ellipsis else list(args)
        if len(each) != len(v):
            raise PointError(f"{where}: expected {len(each)} values, got {len(v)}")
        return tuple(_value(k, x, f"{where}[{i}]") for i, (k, x) in enumerate(zip(each, v)))
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise PointError(f"{where}: expected a number, got {v!r}"[:200])
        return v
    if kind in (int, str, bool, dict) and not (isinstance(v, kind) and not (kind is int and isinstance(v, bool))):
        raise PointError(f"{where}: expected {kind.__name__}, got {type(v).__name__}")
    return v
