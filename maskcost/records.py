"""Reading sweep records: the summary lines of a `maskcost sweep` file (one JSON object per finished
point, read as a typed SweepSummary) and its raw per-request file. Beside the profile at the bottom of
the package: calibrate, the model's measured workloads and validate all read them; nothing here talks
to a server."""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np


# a client process busier than this (a point's client_cpu_pct, per process) queues its own work (SSE parsing,
# output checks, the next request) behind the streams it reads: the TTFT it measures grows, and near 100% it
# offers the engine fewer requests than its concurrency (validate/sweep.py warns; calibrate fits no API-server
# queue on such a point). On the H200 VM one process at 64-74% busy measured TTFT p50 50-80 ms over the
# engine's own mean at 160-256 streams, two processes about half that (validation/h200-vllm-0.25.1/m/README.md)
CLIENT_BUSY_PCT = 60.0


def client_busy(summary: "SweepSummary") -> bool:
    """Whether the point's client was busier than CLIENT_BUSY_PCT per process (unrecorded: no)."""
    return busy_client_pct(summary.client_cpu_pct)


def busy_client_pct(pct: float | None) -> bool:
    """Whether a client's CPU share per process (client_cpu_pct; None: unrecorded) is over CLIENT_BUSY_PCT."""
    return (pct or 0.0) > CLIENT_BUSY_PCT


def raw_records_path(sweep: str | Path) -> Path:
    """The raw per-request file next to a sweep summary (`X.jsonl` -> `X.raw.jsonl`, or its .gz)."""
    sweep = Path(sweep)
    raw = sweep.with_name(sweep.name.removesuffix(".jsonl") + ".raw.jsonl")
    gz = raw.with_name(raw.name + ".gz")
    return gz if not raw.exists() and gz.exists() else raw


def read_raw_records(path: str | Path, what: str = "raw records"):
    """The per-request records of a sweep's raw file (`.raw.jsonl`, or its .gz), one dict each;
    a line that is not JSON is a one-line error naming `what`, the file and the line."""
    import gzip
    path = Path(path)
    with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                raise ValueError(f"{what} {path}:{n}: not JSON lines") from None


def itl_ms(summary: "SweepSummary") -> float | None:
    """A summary's ITL: the engine's histogram mean where it has one (vLLM, SGLang); llama.cpp
    exports none, so the client's per-token ITL (loopback, same host)."""
    e = summary.engine.itl_ms
    return e if e is not None else summary.itl_ms_mean


def server_engine(summary: "SweepSummary") -> str | None:
    """The engine the sweep's server said it is (its /version or /server_info), if it said."""
    v = summary.provenance.get("server", {}).get("version")
    return v.get("engine") if isinstance(v, dict) else None


_NUMBER = {"type": "number"}
_NUMBER_OR_NULL = {"type": ["number", "null"]}  # null: the sweep had nothing to average (no request answered)
_COUNT = {"type": "integer", "minimum": 0}
# What every reader of a sweep summary line relies on (validate/sweep.py writes it; calibrate, report and the
# model's measured workloads read it): checked once here, at the boundary, so the readers can trust it. Every
# summary in validation/ passes (tests/test_records.py); fields added later (prompt_tokens_mean,
# client_cpu_pct, warmup_requests, the engine's server_cpu, gpu_busy, counters) are optional, as old records
# lack them.
SUMMARY_SCHEMA = {
    "type": "object",
    "required": ["point", "arm", "concurrency", "repeat", "requests", "errors", "output_tokens_mean",
                 "itl_ms_mean", "engine", "config"],
    "properties": {
        "point": {"type": "string", "minLength": 1},
        "arm": {"enum": ["on", "off"]},
        "concurrency": {"type": "integer", "minimum": 1},
        "repeat": _COUNT, "requests": _COUNT, "errors": _COUNT,
        "output_tokens_mean": _NUMBER_OR_NULL, "prompt_tokens_mean": _NUMBER_OR_NULL, "itl_ms_mean": _NUMBER_OR_NULL,
        "client_cpu_pct": _NUMBER_OR_NULL, "warmup_requests": _COUNT,
        "config": {"type": "object"},
        "provenance": {"type": "object"},
        "engine": {
            "type": "object",
            "required": ["running_mean", "window_s", "steps", "step_ms", "itl_ms"],
            "properties": {"running_mean": _NUMBER_OR_NULL, "window_s": _NUMBER, "steps": _NUMBER_OR_NULL,
                           "step_ms": _NUMBER_OR_NULL, "itl_ms": _NUMBER_OR_NULL,
                           "window_start_unix_s": _NUMBER, "server_cpu": {"type": "object"},
                           "gpu_busy": {"type": ["object", "null"]}, "counters": {"type": "object"}},
        },
    },
}


@functools.cache
def _validator():
    """SUMMARY_SCHEMA's validator, built once (on the first summary read)."""
    import jsonschema
    return jsonschema.Draft202012Validator(SUMMARY_SCHEMA)


def _summary_error(summary: Any) -> str | None:
    """What is wrong with one summary line against SUMMARY_SCHEMA, in a few words; None: nothing."""
    import jsonschema
    err = jsonschema.exceptions.best_match(_validator().iter_errors(summary))
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path)
    return f"{where + ': ' if where else ''}{err.message[:160]}"


@dataclass(frozen=True)
class EngineWindow:
    """A sweep point's engine-side record over its window (validate/sweep.py _engine_summary): the running
    and grammar-waiting gauges, the window's counters, and where the server runs beside the sweep, the CPUs
    its processes kept busy and its GPU's busy share. Fields added later are None in older records."""
    window_s: float
    running_mean: float | None = None
    running_max: float | None = None
    deferred_mean: float | None = None  # requests waiting for their grammar (vLLM: deferred; SGLang: the grammar queue)
    deferred_max: float | None = None
    window_start_unix_s: float | None = None  # joins the window to in-server probe records (validate/probe.py)
    steps: float | None = None
    step_ms: float | None = None
    itl_ms: float | None = None  # the engine's histogram mean (vLLM, SGLang); None: it exports none (llama.cpp)
    gen_tokens_per_s: float | None = None
    server_cpu: dict[str, Any] | None = None  # validate/servercpu.py
    gpu_busy: dict[str, Any] | None = None  # validate/gpubusy.py
    counters: dict[str, Any] | None = None  # the window's counter deltas by metric name
    prompt_cached_fraction: float | None = None
    spec_acceptance: float | None = None
    spec_draft_rate: float | None = None
    engine: str | None = None  # which engine's metrics were read


@dataclass(frozen=True)
class SweepSummary:
    """One finished sweep point, as `maskcost sweep` writes it (a line of its JSON-lines file), checked
    against SUMMARY_SCHEMA by read_summaries. Keys this version does not name are kept in `extra`."""
    point: str
    arm: str  # "on": schema on; "off": free text
    concurrency: int
    repeat: int
    requests: int
    errors: int
    output_tokens_mean: float | None
    itl_ms_mean: float | None  # the client's per-token ITL
    engine: EngineWindow
    config: dict[str, Any]  # the sweep's resolved settings
    prompt_tokens_mean: float | None = None
    itl_ms_p50: float | None = None
    itl_ms_p90: float | None = None
    itl_ms_p99: float | None = None
    ttft_ms_p50: float | None = None
    ttft_ms_p90: float | None = None
    ttft_ms_p99: float | None = None
    out_tok_per_s: float | None = None
    client_cpu_pct: float | None = None  # per client process
    client_procs: int | None = None
    warmup_requests: int | None = None  # sent before this point, its own (None: a record from before they were)
    checks: dict[str, Any] | None = None  # the outputs' schema checks
    provenance: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SweepSummary":
        """A summary line's object (checked against SUMMARY_SCHEMA first where it came from outside)."""
        names = {f.name for f in fields(cls)} - {"engine", "extra"}
        eng_names = {f.name for f in fields(EngineWindow)}
        e = d["engine"]
        return cls(**{k: v for k, v in d.items() if k in names},
                   engine=EngineWindow(**{k: v for k, v in e.items() if k in eng_names}),
                   extra={k: v for k, v in d.items() if k not in names and k != "engine"})


def read_summaries(path: str | Path) -> list[SweepSummary]:
    """The summary lines of a sweep file (one JSON object per finished point), each checked against
    SUMMARY_SCHEMA (a line that is not one: a one-line ValueError naming the file, the line and what is
    wrong). Sweeps written before summaries carried `prompt_tokens_mean` get it from their raw records,
    where present."""
    out = []
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"sweep {path}: cannot read ({getattr(e, 'strerror', None) or e})") from None
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines) and not text.endswith("\n"):  # a write cut short (the process killed)
                    print(f"note: sweep {path}:{n}: its last line was cut short (an interrupted write): left out "
                          f"(a sweep resumed on it measures that point again)", file=sys.stderr)
                    break
                raise ValueError(f"sweep {path}:{n}: not JSON lines (a `maskcost sweep` summary file)") from None
            wrong = _summary_error(d)
            if wrong:
                raise ValueError(f"sweep {path}:{n}: not a `maskcost sweep` summary ({wrong})")
            out.append(SweepSummary.from_json(d))
    missing = {s.point for s in out if s.prompt_tokens_mean is None}
    raw = raw_records_path(path)
    if missing and raw.exists():
        by: dict[str, list[int]] = {}
        for r in read_raw_records(raw):
            if r["point"] in missing and r.get("prompt_tokens"):
                by.setdefault(r["point"], []).append(r["prompt_tokens"])
        out = [replace(s, prompt_tokens_mean=float(np.mean(by[s.point]))) if s.point in by else s for s in out]
    return out
