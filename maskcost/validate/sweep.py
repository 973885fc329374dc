"""A sweep: points (arm x concurrency x repeat) run one after another against one live server.

Raw per-request records are appended to `<out>.raw.jsonl` as they arrive; one summary line per
finished point goes to `<out>.jsonl`, carrying the resolved sweep config and provenance. A rerun
with the same output skips the points already summarised, so an interrupted sweep resumes, and a
server that dies mid-sweep leaves every finished point on disk.
"""
from __future__ import annotations

import asyncio
import json
import random
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import httpx
import numpy as np
from tqdm import tqdm

from ..calibrate.host import cpu_model, package_versions, usable_cpus
from ..calibrate.schemas import SchemaEntry
from .client import RequestRecord, RequestSpec, ServerError, closed_loop, get_json, scrape
from ..records import SweepSummary, client_busy, read_summaries
from .metrics import detect_engine, window_stats
from ..model.engines import ENGINES
from .gpubusy import GpuMeter
from .servercpu import cpu_seconds, cpus_over, server_tree

METRICS_POLL_S = 0.25


@dataclass(frozen=True)
class PointSpec:
    arm: str  # "on": with response_format; "off": the same server, no schema
    concurrency: int
    repeat: int
    requests: int

    def __post_init__(self) -> None:  # (the flags that make a point: --concurrency, --rounds, --min-requests)
        if self.concurrency < 1:
            raise ValueError(f"--concurrency {self.concurrency}: must be >= 1")
        if self.requests < 1:
            raise ValueError(f"point {self.key}: no requests (--rounds and --min-requests: at least one must be >= 1)")

    @property
    def key(self) -> str:
        return f"{self.arm}-c{self.concurrency}-r{self.repeat}"


def percentiles(x: list[float] | np.ndarray, qs=(50, 90, 99)) -> dict[str, float | None]:
    a = np.asarray(x, dtype=float)
    return {f"p{q}": (float(np.percentile(a, q)) if a.size else None) for q in qs}


def itl_samples_ms(records: list[RequestRecord]) -> np.ndarray:
    """Per-token inter-token latency: each chunk gap divided over the tokens it brought."""
    out: list[np.ndarray] = []
    for r in records:
        if len(r.chunk_ms) < 2:
            continue
        gaps = np.diff(np.asarray(r.chunk_ms))
        toks = np.maximum(1, np.diff(np.asarray(r.chunk_tokens)))
        out.append(np.repeat(gaps / toks, toks))
    return np.concatenate(out) if out else np.zeros(0)


def prompt_tokens_mean(records: list[RequestRecord]) -> float | None:
    """The prompt length the server counted (usage.prompt_tokens), mean over the point."""
    n = [r.prompt_tokens for r in records if r.prompt_tokens]
    return float(np.mean(n)) if n else None


def summarize(point: PointSpec, records: list[RequestRecord], engine: dict[str, Any]) -> dict[str, Any]:
    ok = [r for r in records if r.error is None]
    itl = itl_samples_ms(ok)
    ttft = [r.ttft_ms for r in ok if r.ttft_ms is not None]
    checks: dict[str, int] = {}
    for r in records:
        k = r.check.split(":")[0]
        checks[k] = checks.get(k, 0) + 1
    span_s = (max(r.t_send + (r.e2e_ms or 0) / 1e3 for r in ok) - min(r.t_send for r in ok)) if ok else 0.0
    toks = sum(r.completion_tokens for r in ok)
    p_itl, p_ttft = percentiles(itl), percentiles(ttft)
    return {
        "point": point.key, "arm": point.arm, "concurrency": point.concurrency, "repeat": point.repeat,
        "requests": len(records), "errors": len(records) - len(ok), "checks": checks,
        "output_tokens_mean": toks / len(ok) if ok else None,
        "prompt_tokens_mean": prompt_tokens_mean(ok),
        "out_tok_per_s": toks / span_s if span_s > 0 else None,
        "itl_ms_mean": float(itl.mean()) if itl.size else None,
        "itl_ms_p50": p_itl["p50"], "itl_ms_p90": p_itl["p90"], "itl_ms_p99": p_itl["p99"],
        "ttft_ms_p50": p_ttft["p50"], "ttft_ms_p90": p_ttft["p90"], "ttft_ms_p99": p_ttft["p99"],
        "engine": engine,
    }


async def _run_point(base_url: str, model: str, point: PointSpec, specs: list[RequestSpec], unique: bool,
                     seed: int, raw, procs: int = 1) -> tuple[list[RequestRecord], dict[str, Any]]:
    async with httpx.AsyncClient(timeout=10.0) as mc:
        first = await scrape(mc, base_url)
        engine = detect_engine(first)
        if engine is None:
            raise ServerError(f"{base_url}/metrics: no vLLM, SGLang or llama.cpp running-request gauge")
        running_key = ENGINES[engine].metrics.running
        wait_key = ENGINES[engine].metrics.grammar_wait  # None: the engine has no such gauge (llama.cpp)
        samples: list[tuple[float, float, float]] = []
        state: dict[str, Any] = {"done": False, "before": first, "t_start": time.perf_counter()}

        async def poll() -> None:
            while not state["done"]:
                m = await scrape(mc, base_url)
                samples.append((time.perf_counter() - state["t_start"], m.get(running_key, 0.0),
                                m.get(wait_key, 0.0) if wait_key else 0.0))
                await asyncio.sleep(METRICS_POLL_S)

        pids, listening = server_tree(base_url)  # the server's processes where it runs on this machine
        gpu = GpuMeter(pids)  # the GPU's busy fraction where it is on this machine (NVML)

        async def started() -> None:  # the window opens with the first request
            state["before"] = await scrape(mc, base_url)
            state["cpu_before"] = cpu_seconds(pids)  # (read where the wall window starts)
            state["t_start"] = time.perf_counter()
            state["wall_start"] = time.time()
            gpu.start()
            state["poller"] = asyncio.create_task(poll())

        async def last_issued() -> None:
            state["after"] = await scrape(mc, base_url)
            state["t_end"] = time.perf_counter()
            state["cpu_after"] = cpu_seconds(pids)
            state["gpu"] = gpu.stop()
            state["done"] = True

        def on_record(rec: RequestRecord) -> None:
            raw.write(json.dumps(rec.to_json()) + "\n")
            raw.flush()

        try:
            records = await closed_loop(base_url, model, specs, point.concurrency, point.key, unique, seed,
                                        on_record, last_issued, procs=procs, on_start=started)
        except BaseException:
            gpu.stop()  # (its sampling thread ends with the point)
            raise
        state["done"] = True
        if "poller" in state:
            await state["poller"]
        after = state.get("after") or await scrape(mc, base_url)
        window_s = state.get("t_end", time.perf_counter()) - state["t_start"]
        before = state["before"]
        wall_start = state.get("wall_start", time.time() - window_s)
    cpu = cpus_over(state.get("cpu_before") or {}, state.get("cpu_after") or {}, window_s, listening)
    busy = state.get("gpu") if "gpu" in state else gpu.stop()
    return records, _engine_summary(engine, samples, window_stats(engine, before, after, window_s), wall_start,
                                    cpu, busy)


def _engine_summary(engine: str, samples: list[tuple[float, float, float]], ws, wall_start: float,
                    cpu: dict | None, busy: dict | None) -> dict[str, Any]:
    """A point's engine-side record: the running and grammar-waiting gauges over the window (the first
    second of ramp-up skipped), the window's counters (steps, ITL, tokens, spec decoding), and where the
    server runs here, the CPUs its processes kept busy and its GPU's busy share (NVML)."""
    run = [x[1] for x in samples if x[0] >= min(1.0, ws.window_s / 4)] or [x[1] for x in samples]
    eng = {"engine": engine, "running_mean": float(np.mean(run)) if run else None,
           "running_max": float(np.max(run)) if run else None,
           # requests waiting for their grammar (vLLM: deferred; SGLang: the grammar queue)
           "deferred_mean": float(np.mean([x[2] for x in samples])) if samples else None,
           "deferred_max": float(np.max([x[2] for x in samples])) if samples else None,
           "window_start_unix_s": wall_start,  # joins the window to in-server probe records (validate/probe.py)
           "window_s": ws.window_s, "steps": ws.steps, "step_ms": ws.step_ms, "itl_ms": ws.itl_ms,
           "gen_tokens_per_s": ws.gen_tokens_per_s}
    if cpu is not None:
        eng["server_cpu"] = cpu
    if busy is not None:
        eng["gpu_busy"] = busy
    if ws.counters:
        eng["counters"] = ws.counters
        eng["prompt_cached_fraction"] = ws.prompt_cached_fraction
        eng["spec_acceptance"] = ws.spec_acceptance
        if ws.gen_tokens_per_s is not None:
            eng["spec_draft_rate"] = ws.spec_draft_rate(ws.gen_tokens_per_s * ws.window_s)
    return eng


def server_provenance(base_url: str) -> dict[str, Any]:
    if base_url.rstrip("/").endswith("/v1"):
        raise ValueError(f"--base-url {base_url}: the server's root, without /v1 (maskcost adds /v1/chat/completions, "
                         f"/metrics and /version to it)")
    prov: dict[str, Any] = {"base_url": base_url}
    try:
        prov["version"] = get_json(base_url, "/version")
    except ServerError as e:
        prov["version"] = f"not exposed ({e})"
        for name, eng in ENGINES.items():  # an engine whose version and resolved args are elsewhere (Engine.info_path)
            if eng.info_path is None:
                continue
            try:
                info = get_json(base_url, eng.info_path)
            except ServerError:
                continue
            prov["version"] = {"version": info.get("version"), "engine": name}
            prov["server_args"] = {k: info[k] for k in eng.server_args_kept if k in info}
            break
    models = get_json(base_url, "/v1/models")
    prov["models"] = [m.get("id") for m in models.get("data", [])]
    prov["flags"] = server_flags(base_url)
    return prov


def server_flags(base_url: str) -> dict[str, Any]:
    """The engine's configuration where it exposes it: vLLM's `*_info` gauges (their labels are
    the config: cache_config_info, ...), llama.cpp's /props (slots, context, sampling defaults)."""
    from prometheus_client.parser import text_string_to_metric_families
    out: dict[str, Any] = {}
    try:
        r = httpx.get(f"{base_url}/metrics", timeout=10.0)
        if r.status_code == 200:
            for fam in text_string_to_metric_families(r.text):
                if fam.name.endswith("_info") or fam.type == "info":
                    for smp in fam.samples:
                        out[smp.name] = dict(smp.labels)
    except httpx.HTTPError as e:
        out["metrics"] = f"not read ({type(e).__name__})"
    try:
        props = get_json(base_url, "/props")
        out["props"] = {k: props[k] for k in ("total_slots", "build_info", "model_path", "n_ctx",
                                              "default_generation_settings") if k in props}
    except ServerError:
        pass  # vLLM and SGLang have no /props
    return out


def client_host(bench: float | None = None) -> dict[str, Any]:
    out = {"cpu_model": cpu_model(), "nproc": usable_cpus(), "packages": package_versions()}
    if bench is not None:
        out["bench_us"] = bench
    return out


def host_bench_us() -> float:
    """calibrate.host.bench_us on this host (Llama-3 vocabulary): with the server on the same
    machine, the speed its engine thread had, beside the profile's (report --cpu-speed-from-sweep)."""
    try:
        from ..calibrate.host import bench_us
        from ..calibrate.tokenizer import load_vocab
        return bench_us(load_vocab("llama3"))
    except ImportError as e:
        raise ValueError(f"--host-bench needs the calibrate extra (xgrammar): {e}") from None


def make_specs(point: PointSpec, entries: list[SchemaEntry], max_tokens: int, off_tokens: int,
               seed: int, prompt_pad: int = 0, unique_prompts: bool = False) -> list[RequestSpec]:
    """The point's requests. `prompt_pad` lengthens every prompt by about that many tokens, shared
    by all requests (the prefix cache holds it) unless `unique_prompts` puts a per-request nonce
    first (the prefix cache then misses: every prompt token is computed)."""
    rng = random.Random(f"{seed}-{point.key}")

    def nonce() -> str | None:
        return f"{rng.getrandbits(64):016x}" if unique_prompts else None
    if point.arm == "off":
        return [RequestSpec(None, None, off_tokens, ignore_eos=True, pad_tokens=prompt_pad, nonce=nonce())
                for _ in range(point.requests)]
    return [RequestSpec(e.schema_id, e.schema, max_tokens, pad_tokens=prompt_pad, nonce=nonce(),
                        tool_request=e.tool_request) for e in
            (entries[rng.randrange(len(entries))] for _ in range(point.requests))]


def set_aside_unfinished(raw_path: Path, todo: set[str]) -> None:
    """A resumed sweep's raw records of points it has no summary of (a point cut short: the server went away,
    the run was stopped) moved to a file beside it (`*.aborted.raw.jsonl`, kept), so that the raw file holds
    the finished points' requests only when the point runs again."""
    if not todo or not raw_path.exists():
        return
    keep, aside = [], []
    for line in raw_path.read_text().splitlines(keepends=True):
        try:
            (aside if json.loads(line).get("point") in todo else keep).append(line)
        except json.JSONDecodeError:
            aside.append(line)  # a line cut short by the stop
    if aside:
        with open(raw_path.with_name(raw_path.name.removesuffix(".raw.jsonl") + ".aborted.raw.jsonl"), "a") as f:
            f.writelines(aside)
        raw_path.write_text("".join(keep))


def warm_specs(p: PointSpec, entries: list[SchemaEntry], warmup: int, max_tokens: int, off_tokens: int, seed: int,
               prompt_pad: int = 0, unique_prompts: bool = False) -> list[RequestSpec]:
    """A point's warm-up: `warmup` requests of their own, and a schema-on one of every schema (each grammar
    compiled before the point measures)."""
    spec = PointSpec(p.arm, p.concurrency, -1 - p.repeat, warmup)
    got = make_specs(spec, entries, max_tokens, off_tokens, seed, prompt_pad, unique_prompts)
    if p.arm == "on":
        drawn = {r.schema_id for r in got}
        got += [make_specs(spec, [e], max_tokens, off_tokens, seed, prompt_pad, unique_prompts)[0]
                for e in entries if e.schema_id not in drawn]
    return got


REFUSED = ("HTTP 400", "HTTP 422")  # the answers of a server that cannot build the grammar (401, 404, 429: not it)
CHECK_STREAMS = 32  # the schema check's requests in flight at once


def refused_schemas(base_url: str, model: str, entries: list[SchemaEntry], seed: int) -> dict[str, str]:
    """The schemas the server refuses (HTTP 400 or 422 to one short request of each, CHECK_STREAMS at a time, or
    an error event of code 400 or 422 in its stream: SGLang's abort): id -> its words. Another status or a broken
    connection is not a refusal (the sweep's own points meet it)."""
    spec = PointSpec("on", len(entries), -1000, len(entries))
    specs = [make_specs(spec, [e], 4, 4, seed)[0] for e in entries]
    got: list[RequestRecord] = []
    asyncio.run(closed_loop(base_url, model, specs, min(len(specs), CHECK_STREAMS), "schema-check", False, seed,
                            got.append))
    return {r.schema_id: _said(r.error) for r in got if r.error and r.error.startswith(REFUSED) and r.schema_id}


def _said(error: str) -> str:
    """'HTTP 400: {"error": {"message": M}}' (the OpenAI API's error body) as 'HTTP 400: M'; else as it is."""
    head, _, body = error.partition(": ")
    try:
        return f"{head}: {json.loads(body)['error']['message']}"
    except (ValueError, KeyError, TypeError):
        return error


def _not_refused(base_url: str, model: str, entries: list[SchemaEntry], seed: int, todo: list[PointSpec],
                 done: Iterable[SweepSummary]) -> tuple[list[SchemaEntry], dict[str, str]]:
    """The entries less those the server refuses (refused_schemas; checked only where a schema-on point is left to
    run), each refusal said; every one refused is an error. Where a refusal leaves the schemas other than the
    finished points were measured on, that is said."""
    refused = refused_schemas(base_url, model, entries, seed) if entries and any(p.arm == "on" for p in todo) else {}
    for sid, why in refused.items():
        tqdm.write(f"schema {sid}: skipped: the server refused it ({why[:200]})")
    kept = [e for e in entries if e.schema_id not in refused]
    if refused and not kept:
        sid, why = next(iter(refused.items()))
        raise ServerError(f"{base_url}: the server refused every schema (first: {sid}: {why[:200]}); nothing was "
                          f"measured")
    ids = [e.schema_id for e in kept]
    was = {tuple(d.config.get("schemas") or ()) for d in done if d.arm == "on"} - {tuple(ids)}
    if refused and was:
        tqdm.write(f"note: the finished schema-on points were measured on the schemas {', '.join(map(str, was))}; "
                   f"the points now on {', '.join(ids)}")
    return kept, refused


def client_cpu_s() -> float:
    """CPU seconds this process and its finished children (the client processes of --client-procs,
    joined at the end of each point) have used."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _warm_and_run(base_url: str, model: str, p: PointSpec, warm: list[RequestSpec], specs: list[RequestSpec],
                  unique: bool, seed: int, raw, procs: int) -> tuple[list[RequestRecord], dict[str, Any], float]:
    """A point: its warm-up requests (requests of their own, not in the window; none for unique schemas, whose
    prompt is not cached for the point), then the point on `procs` client processes; its records, the engine's
    summary, and the client's CPU over the point's wall per client process (100: each one a core busy)."""
    if warm:
        asyncio.run(closed_loop(base_url, model, warm, min(len(warm), p.concurrency), p.key + "-warmup", False, seed,
                                lambda r: None))
    cpu0, t0 = client_cpu_s(), time.perf_counter()
    records, eng = asyncio.run(_run_point(base_url, model, p, specs, unique, seed + p.repeat, raw, procs))
    return records, eng, 100.0 * (client_cpu_s() - cpu0) / ((time.perf_counter() - t0) * procs)


def _summary_record(p: PointSpec, records: list[RequestRecord], eng: dict[str, Any], cpu_pct: float, procs: int,
                    resolved: dict[str, Any], prov: dict[str, Any], bench) -> dict[str, Any]:
    """A point's summary line: its figures, the client's load, the resolved config and provenance."""
    s = summarize(p, records, eng)
    s["client_cpu_pct"], s["client_procs"] = cpu_pct, procs
    s["config"] = resolved
    s["provenance"] = {"server": prov, "client_host": client_host(bench),
                       "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return s


def _procs_at(client_procs: int | Callable[[int], int], prompt_pad: int) -> Callable[[int], int]:
    """run_sweep's client processes by a point's concurrency; its arguments checked (one line each)."""
    if prompt_pad < 0:
        raise ValueError(f"--prompt-pad {prompt_pad}: must be >= 0")
    if not callable(client_procs) and client_procs < 1:
        raise ValueError(f"--client-procs {client_procs}: must be >= 1")
    return client_procs if callable(client_procs) else (lambda _c: client_procs)


@dataclass(frozen=True)
class SweepRequest:
    """A live sweep resolved once (`maskcost sweep`, the sweep under `validate`, campaign's sweep steps): its
    points, the schemas of its schema-on arm and its client's settings; `run` runs what `out` does not hold yet
    (run_sweep: it appends and resumes) and returns every point's summary."""
    base_url: str
    points: tuple[PointSpec, ...]
    entries: tuple[SchemaEntry, ...]
    out: Path
    max_tokens: int = 512
    off_tokens: int = 128
    unique: bool = False
    seed: int = 0
    prompt_pad: int = 0
    unique_prompts: bool = False
    client_procs: int | None = None  # every point's client processes; None: by the load (LivePlan.client_procs_at)
    host_bench: bool = False
    label: str | None = None  # recorded in each point's config

    def run(self) -> list[SweepSummary]:
        from .plan import LivePlan
        return run_sweep(self.base_url, list(self.points), list(self.entries), self.out, max_tokens=self.max_tokens,
                         off_tokens=self.off_tokens, unique=self.unique, seed=self.seed, prompt_pad=self.prompt_pad,
                         unique_prompts=self.unique_prompts, host_bench=self.host_bench,
                         client_procs=LivePlan().client_procs_at if self.client_procs is None else self.client_procs,
                         config={"label": self.label} if self.label else None)


def run_sweep(base_url: str, points: list[PointSpec], entries: list[SchemaEntry], out: Path, *,
              model: str | None = None, max_tokens: int = 512, off_tokens: int = 128, unique: bool = False,
              warmup: int = 4, seed: int = 0, prompt_pad: int = 0, unique_prompts: bool = False,
              client_procs: int | Callable[[int], int] = 1, host_bench: bool = False,
              config: dict[str, Any] | None = None, warm_first_only: bool = False) -> list[SweepSummary]:
    """Run every point not yet in `out` (JSON lines), appending as it goes; returns all summaries.
    `client_procs`: the client processes of every point, or of each point by its concurrency (a function:
    calibrate's, LivePlan.client_procs_at); a point never runs more processes than streams. A warm-up
    before each point (`warm_specs`: `warmup` requests and one of every schema; the grammars compiled, the
    prompts' prefix cached), or before the first point this call runs only (`warm_first_only`: a server
    already warm for the rest); a point cut short before is measured again (set_aside_unfinished)."""
    _tokens_checked(max_tokens, off_tokens)
    procs_at = _procs_at(client_procs, prompt_pad)
    base_url = base_url.rstrip("/")
    prov = server_provenance(base_url)
    model = model or prov["models"][0]
    done = {d.point: d for d in read_summaries(out)} if out.exists() else {}
    todo = [p for p in points if p.key not in done]
    resolved = {"base_url": base_url, "model": model, "max_tokens": max_tokens, "off_tokens": off_tokens,
                "unique_schemas": unique, "warmup": warmup, "warm_first_only": warm_first_only, "seed": seed,
                "prompt_pad": prompt_pad, "unique_prompts": unique_prompts, "client_procs": client_procs if not
                callable(client_procs) else "by load (each point's client_procs)", **(config or {})}
    same_sweep(out, done.values(), resolved)
    entries, refused = _not_refused(base_url, model, entries, seed, todo, done.values())
    resolved = {**resolved, "schemas": [e.schema_id for e in entries], "refused_schemas": refused}
    raw_path = out.with_name(out.name.removesuffix(".jsonl") + ".raw.jsonl")
    set_aside_unfinished(raw_path, {p.key for p in todo})
    bench = host_bench_us() if host_bench and todo else None  # before the load, on an idle engine
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    _drop_cut_line(out)
    with open(raw_path, "a") as raw, open(out, "a") as summ:
        bar = tqdm(todo, desc="sweep points", unit="pt")
        for p in bar:
            bar.set_postfix_str(p.key)
            specs = make_specs(p, entries, max_tokens, off_tokens, seed, prompt_pad, unique_prompts)
            procs = max(1, min(procs_at(p.concurrency), p.concurrency))
            warm = warm_specs(p, entries, warmup, max_tokens, off_tokens, seed, prompt_pad, unique_prompts) \
                if warmup and not unique else []
            warmup = 0 if warm_first_only else warmup
            try:
                records, eng, cpu_pct = _warm_and_run(base_url, model, p, warm, specs, unique, seed, raw, procs)
            except (httpx.HTTPError, OSError) as e:  # the server went away mid-point: keep what finished
                bar.close()
                finished = sum(1 for q in points if q.key in done)
                raise ServerError(f"{base_url}: the server stopped answering at point {p.key} ({type(e).__name__}: "
                                  f"{str(e)[:120] or 'no detail'}); {finished} finished points are in {out}: the same "
                                  f"command again resumes there") from None
            s = _summary_record(p, records, eng, cpu_pct, procs, resolved, prov, bench)
            s["warmup_requests"] = len(warm)  # (this point's own: warm_first_only warms the first only)
            refuse_failed(base_url, p.key, records, out)  # (not kept: the same command measures it again)
            summ.write(json.dumps(s) + "\n")
            summ.flush()
            done[p.key] = SweepSummary.from_json(s)
            if client_busy(done[p.key]):
                tqdm.write(f"sweep point {p.key}: the client was {cpu_pct:.0f}% busy per process on {procs}; "
                           f"its own queueing adds to the TTFT it measures and may hold back the load it offers "
                           f"(more client processes spread it: sweep and validate --client-procs)")
    return [done[p.key] for p in points if p.key in done]


def _tokens_checked(max_tokens: int, off_tokens: int) -> None:
    for flag, v in (("--max-tokens", max_tokens), ("--off-tokens", off_tokens)):
        if v < 1:
            raise ValueError(f"{flag} {v}: must be >= 1")


def _drop_cut_line(out: Path) -> None:
    """A summary file whose last line was cut short by a killed process (read_summaries left it out): the
    line removed, so the next point's line starts on a line of its own."""
    if out.exists() and (data := out.read_bytes()) and not data.endswith(b"\n"):
        with open(out, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


# what a sweep's requests were made with: a resume that asks otherwise is refused (the file would mix both).
# (Not the schemas: calibrate tops a file up one schema at a time; nor the URL: a restarted server may move.)
MEASURED_WITH = ("max_tokens", "off_tokens", "unique_schemas", "seed", "prompt_pad", "unique_prompts")


def same_sweep(out: Path, done: Iterable[SweepSummary], resolved: dict[str, Any]) -> None:
    """Refuse to resume `out` with request settings other than its points were measured with, naming them;
    say so where its points were measured on another URL."""
    urls = set()
    for d in done:
        was = d.config
        differ = [k for k in MEASURED_WITH if k in was and was[k] != resolved.get(k)]
        if differ:
            said = "; ".join(f"{k} {was[k]!r} there, {resolved.get(k)!r} now" for k in differ)
            raise ValueError(f"--out {out}: its points were measured otherwise ({said}): the same settings resume "
                             f"it, another --out starts a new sweep")
        urls.add(was.get("base_url"))
    if urls - {None, resolved["base_url"]}:
        tqdm.write(f"note: {out} holds points measured on {', '.join(sorted(u for u in urls if u))}; the points "
                   f"not yet on file are measured on {resolved['base_url']}")


def refuse_failed(base_url: str, key: str, records: list, out: Path) -> None:
    """A point whose requests mostly failed is an error naming the schemas they were of; it is not kept (its
    raw records are set aside when the sweep resumes), so the same command measures it again."""
    bad = [r for r in records if r.error]
    if len(bad) > len(records) // 2:
        schemas = sorted({r.schema_id for r in bad if r.schema_id})
        raise ServerError(f"{base_url}: {len(bad)} of {len(records)} requests failed at point {key} (first: "
                          f"{bad[0].error[:200]}{'; of schemas ' + ', '.join(schemas) if schemas else ''}); the point "
                          f"is not kept, finished points are in {out}: the same command again measures it again")
