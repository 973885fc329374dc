"""The live client: OpenAI chat completions over httpx, streamed, closed-loop concurrency.

Each request records its send time, the arrival time of every streamed chunk with the engine's
running completion-token count (vLLM's continuous usage stats, where the server gives them),
TTFT, finish reason, text, and the output check. The schema-off arm is the same server and the
same prompt with no response_format.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Awaitable, Callable

import httpx

from ..calibrate.schemas import unique_schema
from .checks import check_output
from .metrics import parse_metrics


class ServerError(RuntimeError):
    """The server is unreachable or answered with an error; the message says which URL and what."""


@dataclass(frozen=True)
class RequestSpec:
    schema_id: str | None  # None: the schema-off arm
    schema: dict[str, Any] | None
    max_tokens: int
    ignore_eos: bool = False
    pad_tokens: int = 0  # about this many extra prompt tokens (PAD_WORD repeated), before the instruction
    nonce: str | None = None  # first in the prompt: no prefix-cache hit for this request
    tool_request: dict[str, Any] | None = None  # {"tools", "tool_choice"}, sent instead of response_format


@dataclass
class RequestRecord:
    point: str
    index: int
    schema_id: str | None
    t_send: float
    ttft_ms: float | None = None
    chunk_ms: list[float] = field(default_factory=list)  # chunk arrival, ms after send
    chunk_tokens: list[int] = field(default_factory=list)  # cumulative completion tokens at each chunk
    # each chunk's text as the server streamed it: one token's text a chunk (a character cut between
    # tokens comes whole in a later one), so the engine's own token stream can be read back
    # (calibrate.run.recorded_outputs); empty for tool calls
    chunks: list[str] = field(default_factory=list)
    completion_tokens: int = 0
    prompt_tokens: int = 0
    finish_reason: str | None = None
    text: str = ""
    check: str = ""
    error: str | None = None
    e2e_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["chunk_ms"] = [round(x, 3) for x in self.chunk_ms]
        return d


# one token per repetition in the Llama-3, Qwen-3, cl100k and o200k vocabularies (the BPE
# pre-tokenizer splits at each space, and " the" is one entry in all four); the server's own
# usage.prompt_tokens is what the sweep records
PAD_WORD = " the"


def prompt_for(spec: RequestSpec) -> str:
    head = f"[request {spec.nonce}]\n" if spec.nonce else ""
    if spec.pad_tokens:
        head += "Context:" + PAD_WORD * spec.pad_tokens + "\n\n"
    if spec.schema is None:
        return head + "Write a short JSON object describing a person."
    if spec.tool_request is not None:
        return head + "Call the tools that fit, with arguments that follow their parameters."
    return head + "Write a JSON object that follows this schema:\n" + json.dumps(spec.schema)


def request_body(model: str, spec: RequestSpec, schema: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model, "messages": [{"role": "user", "content": prompt_for(spec)}],
        "max_tokens": spec.max_tokens, "temperature": 1.0, "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    if spec.ignore_eos:
        body["ignore_eos"] = True
    if spec.tool_request is not None:
        body.update(spec.tool_request)
    elif schema is not None:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "out", "schema": schema, "strict": True}}
    return body


def tool_call_text(spec: RequestSpec, calls: dict[int, list[str]]) -> str:
    """The streamed tool calls as the text the engine's grammar produced: the array of {name, parameters}
    for tool_choice required, the one call's arguments for a named function (calibrate/tools.py)."""
    ordered = [calls[i] for i in sorted(calls)]
    if spec.tool_request is not None and isinstance(spec.tool_request.get("tool_choice"), dict):
        return ordered[0][1]
    return "[" + ", ".join(f'{{"name": {json.dumps(n)}, "parameters": {a or "{}"}}}' for n, a in ordered) + "]"


async def sse_lines(r: httpx.Response):
    """Lines of an event stream as the SSE spec ends them (LF, CR LF). httpx's aiter_lines also
    splits on U+0085, U+2028 and other str.splitlines breaks, which a model may emit raw inside
    a JSON string (seen with llama.cpp): that cut a data line in two."""
    buf = ""
    async for chunk in r.aiter_text():
        buf += chunk
        *lines, buf = buf.split("\n")
        for line in lines:
            yield line.removesuffix("\r")
    if buf:
        yield buf.removesuffix("\r")


async def send_one(client: httpx.AsyncClient, base_url: str, model: str, spec: RequestSpec,
                   schema: dict[str, Any] | None, point: str, index: int) -> RequestRecord:
    rec = RequestRecord(point, index, spec.schema_id, time.time())
    t0 = time.perf_counter()
    parts: list[str] = []
    calls: dict[int, list[str]] = {}  # tool-call index -> [name, argument text]
    try:
        async with client.stream("POST", f"{base_url}/v1/chat/completions",
                                 json=request_body(model, spec, schema)) as r:
            if r.status_code != 200:
                body = (await r.aread()).decode(errors="replace")[:300]
                rec.error = f"HTTP {r.status_code}: {body}"
                rec.check = "error"
                return rec
            async for line in sse_lines(r):
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data.strip() == "[DONE]":
                    break
                ev = json.loads(data)
                if isinstance(ev.get("error"), dict):  # SGLang streams a request it aborts (a grammar it cannot
                    code = ev["error"].get("code")     # build: 400) as an error event after an HTTP 200
                    rec.error = f"HTTP {code if isinstance(code, int) else 200} (in the stream): {data[:300]}"
                    rec.check = "error"
                    return rec
                now_ms = (time.perf_counter() - t0) * 1e3
                usage = ev.get("usage") or {}
                for ch in ev.get("choices") or []:
                    d = ch.get("delta") or {}
                    delta = d.get("content") or ""
                    for tc in d.get("tool_calls") or []:
                        call = calls.setdefault(int(tc.get("index") or 0), ["", ""])
                        fn = tc.get("function") or {}
                        call[0] += fn.get("name") or ""
                        call[1] += fn.get("arguments") or ""
                        delta = delta or fn.get("arguments") or fn.get("name") or ""
                    if delta:
                        if rec.ttft_ms is None:
                            rec.ttft_ms = now_ms
                        parts.append(delta)
                        rec.chunk_ms.append(now_ms)
                        rec.chunk_tokens.append(int(usage.get("completion_tokens") or len(rec.chunk_ms)))
                    if ch.get("finish_reason"):
                        rec.finish_reason = ch["finish_reason"]
                if usage.get("completion_tokens") is not None:
                    rec.completion_tokens = int(usage["completion_tokens"])
                    rec.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    except (httpx.HTTPError, json.JSONDecodeError) as e:
        rec.error = f"{type(e).__name__}: {str(e)[:200]}"
        rec.check = "error"
        return rec
    rec.e2e_ms = (time.perf_counter() - t0) * 1e3
    rec.text = tool_call_text(spec, calls) if calls else "".join(parts)
    rec.chunks = [] if calls else parts
    if not rec.completion_tokens:
        rec.completion_tokens = len(rec.chunk_ms)
    rec.check = check_output(rec.text, schema, rec.finish_reason)
    return rec


async def closed_loop(base_url: str, model: str, specs: list[RequestSpec], concurrency: int, point: str,
                      unique: bool, seed: int, on_record: Callable[[RequestRecord], None],
                      on_last_issued: Callable[[], Awaitable[None]] | None = None,
                      timeout_s: float = 600.0, procs: int = 1,
                      on_start: Callable[[], Awaitable[None]] | None = None) -> list[RequestRecord]:
    """`concurrency` workers, each sending its next request as soon as the previous one ends, until
    every spec was sent. `on_last_issued` runs when the last request goes out (the end of the window
    in which the offered concurrency is really held). With `procs` > 1 the workers are spread over
    that many client processes (one asyncio loop parsing SSE tops out near 15k tokens/s).
    `on_start` runs just before the first request (after the client processes are up)."""
    rng = random.Random(seed)
    schemas = [None if s.schema is None else (unique_schema(s.schema, rng) if unique and s.tool_request is None
                                              else s.schema) for s in specs]
    if procs > 1 and concurrency > 1:
        return await _closed_loop_procs(base_url, model, specs, schemas, concurrency, point, on_record,
                                        on_last_issued, on_start, timeout_s, min(procs, concurrency))
    if on_start is not None:
        await on_start()
    queue = list(range(len(specs)))[::-1]
    out: list[RequestRecord] = []
    limits = httpx.Limits(max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=10.0), limits=limits) as client:
        async def worker() -> None:
            while queue:
                i = queue.pop()
                if not queue and on_last_issued is not None:
                    await on_last_issued()
                rec = await send_one(client, base_url, model, specs[i], schemas[i], point, i)
                out.append(rec)
                on_record(rec)
        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(specs)))))
    return out


def _client_proc(base_url: str, model: str, specs: list[RequestSpec], schemas: list, workers: int, point: str,
                 next_idx, last_issued, go, out_q, timeout_s: float) -> None:
    """One client process: `workers` closed-loop workers taking the next request index from the
    index shared by all processes; each record goes back on `out_q`, then None."""
    async def run() -> None:
        limits = httpx.Limits(max_connections=workers + 8, max_keepalive_connections=workers + 8)
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=10.0), limits=limits) as client:
            async def worker() -> None:
                while True:
                    with next_idx.get_lock():
                        i = next_idx.value
                        next_idx.value = i + 1
                    if i >= len(specs):
                        return
                    if i == len(specs) - 1:
                        last_issued.set()
                    rec = await send_one(client, base_url, model, specs[i], schemas[i], point, i)
                    out_q.put(rec.to_json())
            await asyncio.gather(*(worker() for _ in range(workers)))
    try:
        out_q.put("ready")
        go.wait()
        asyncio.run(run())
    finally:
        out_q.put(None)


async def _closed_loop_procs(base_url, model, specs, schemas, concurrency, point, on_record, on_last_issued,
                             on_start, timeout_s, procs) -> list[RequestRecord]:
    import multiprocessing as mp
    import queue as queue_mod
    ctx = mp.get_context("spawn")
    next_idx, last_issued, go, out_q = ctx.Value("i", 0), ctx.Event(), ctx.Event(), ctx.Queue()
    shares = [concurrency // procs + (1 if k < concurrency % procs else 0) for k in range(procs)]
    ps = [ctx.Process(target=_client_proc, daemon=True, args=(base_url, model, specs, schemas, w, point, next_idx,
                                                              last_issued, go, out_q, timeout_s)) for w in shares]
    for p in ps:
        p.start()
    loop = asyncio.get_running_loop()

    def take():
        try:
            return out_q.get(timeout=0.1)
        except queue_mod.Empty:
            return ""
    out: list[RequestRecord] = []
    ready = ended = 0
    fired = False
    try:
        while ended < len(ps):
            item = await loop.run_in_executor(None, take)
            if item == "ready":
                ready += 1
                if ready == len(ps):  # every process is up: the load starts at once
                    if on_start is not None:
                        await on_start()
                    go.set()
            elif item is None:
                ended += 1
            elif item:
                rec = RequestRecord(**item)
                out.append(rec)
                on_record(rec)
            elif not any(p.is_alive() for p in ps) and out_q.empty():
                break
            if not fired and last_issued.is_set() and on_last_issued is not None:
                fired = True
                await on_last_issued()
    finally:
        go.set()
        for p in ps:
            p.join(timeout=10)
    if not fired and on_last_issued is not None:
        await on_last_issued()
    if len(out) < len(specs):
        raise ServerError(f"{base_url}: client processes ended with {len(out)} of {len(specs)} requests of "
                          f"point {point} answered")
    return out


def get_json(base_url: str, path: str, timeout_s: float = 10.0) -> Any:
    try:
        r = httpx.get(f"{base_url}{path}", timeout=timeout_s)
    except httpx.HTTPError as e:
        raise ServerError(f"{base_url}{path}: unreachable ({type(e).__name__}: {e})") from None
    if r.status_code != 200:
        raise ServerError(f"{base_url}{path}: HTTP {r.status_code}")
    return r.json()


async def scrape(client: httpx.AsyncClient, base_url: str) -> dict[str, float]:
    r = await client.get(f"{base_url}/metrics")
    if r.status_code != 200:
        raise ServerError(f"{base_url}/metrics: HTTP {r.status_code} (start the server with metrics on)")
    return parse_metrics(r.text)
