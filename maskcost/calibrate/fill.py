"""Per-position fill traces: replay an output token stream through a fresh matcher and time,
for every emitted token, the row's fill and the token's accept, as the engine does each step."""
from __future__ import annotations

import json
import math
import random
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Generator

from .backends import LLGUIDANCE_SEPARATORS, XGRAMMAR_SEPARATORS, Backend
from ..profile import CompileCost, FillTrace
from .schemas import SchemaEntry, schema_problem, unique_schema


def output_text(instance: Any, separators: tuple[str, str] = XGRAMMAR_SEPARATORS) -> str:
    """An instance as the server writes it with disable_any_whitespace: by default xgrammar's separators
    (backends.XGRAMMAR_SEPARATORS); a backend's own with `separators`."""
    return json.dumps(instance, ensure_ascii=False, separators=separators)


def output_json(vocab: Any, output: str | list[int]) -> tuple[str, Any]:
    """An output (its text or the token ids an engine emitted) as (its text, the JSON value); ValueError where
    it is not JSON."""
    text = output if isinstance(output, str) else \
        b"".join(vocab.tokens[i] for i in output if i != vocab.eos_id).decode("utf-8", errors="replace")
    return text, json.loads(text)


def rewritten(backend: Backend, output: str | list[int]) -> list[int] | None:
    """An output another backend's engine wrote (a text or its token ids: JSON written exactly with that
    backend's separators), re-written with this backend's and re-tokenized; None for any other output."""
    try:
        text, value = output_json(backend.vocab, output)
    except ValueError:
        return None
    others = [s for s in (XGRAMMAR_SEPARATORS, LLGUIDANCE_SEPARATORS) if s != tuple(backend.separators)]
    if not any(output_text(value, s) == text for s in others):
        return None
    return backend.vocab.encode(output_text(value, backend.separators))


# outputs drawn under the mask for a schema that has no examples and no recorded outputs
DEFAULT_SAMPLED = 4
SAMPLED_MAX_TOKENS = 256  # a stream drawn under the mask is cut here (an unbounded value never closes)


def in_string_value(token_bytes: list[bytes]) -> tuple[bool, ...]:
    """For each fill of a JSON output's stream (one before each token, the last before EOS: len + 1 flags),
    whether the tokens before it leave a string value open: a quote opened after ':' or inside an array, not a
    key's. Read from the tokens' bytes alone (no matcher): where xgrammar's fills cost nearly all their time,
    inside strings bounded by maxLength (docs/validation.md findings 30, 33)."""
    stack: list[int] = []
    in_str = esc = False
    value = True
    flags = []
    for tok in [*token_bytes, None]:
        flags.append(in_str and value)
        for ch in tok or b"":
            if in_str:
                esc, in_str = (False, True) if esc else (ch == 0x5C, ch != 0x22)  # backslash, closing quote
            elif ch == 0x22:  # "
                in_str = True
            elif ch in (0x7B, 0x5B):  # { [
                stack.append(ch)
                value = ch == 0x5B
            elif ch in (0x7D, 0x5D) and stack:  # } ]
                stack.pop()
            elif ch == 0x3A:  # :
                value = True
            elif ch == 0x2C:  # ,
                value = bool(stack) and stack[-1] == 0x5B
    return tuple(flags)


# the fewest traces of a schema, each with its in_string flags, that string_value_scales fits
MIN_SCALED_TRACES = 8
MIN_FIT_R2 = 0.5  # and the least share of their costs' spread the fit must explain
SCALE_BOUNDS = (0.5, 2.0)  # a factor outside them says the counted outputs are not the traced ones' kind: none


def string_value_scales(traces: tuple[FillTrace, ...] | list[FillTrace],
                        in_string_share: dict[str, float]) -> dict[str, float]:
    """schema -> the factor that takes its traced mean cost a token to the regression estimate from many more
    outputs: over its traces, cost = a fills + b fills inside a string value (least squares), and the mean cost
    a token a + b s, with s the share of fills inside a string value over every output the server wrote
    (`in_string_share`: counted from their tokens, no timing), against the traces' own sum cost / sum fills.
    Only for a schema with MIN_SCALED_TRACES traces flagged, b > 0, the fit's R^2 >= MIN_FIT_R2 and a factor
    within SCALE_BOUNDS; a fill's xgrammar cost is nearly all inside bounded strings, so a few dozen timed
    outputs and hundreds counted know the mean far better than the few dozen alone (docs/validation.md
    finding 33)."""
    import numpy as np
    by: dict[str, list[tuple[float, int, int]]] = {}
    for t in traces:
        if t.in_string:
            by.setdefault(t.schema_id, []).append((sum(t.fill_us) + sum(t.accept_us), len(t.fill_us),
                                                   sum(t.in_string)))
    out = {}
    for sid, rows in by.items():
        if sid not in in_string_share or len(rows) < MIN_SCALED_TRACES:
            continue
        c, n, x = (np.array(col, dtype=float) for col in zip(*rows))
        (a, b), resid, rank, _ = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)
        spread = float(((c - c.mean()) ** 2).sum())
        if rank < 2 or b <= 0 or not spread or (resid.size and 1 - float(resid[0]) / spread < MIN_FIT_R2):
            continue
        f = float((a + b * in_string_share[sid]) / (c.sum() / n.sum()))
        if SCALE_BOUNDS[0] <= f <= SCALE_BOUNDS[1]:
            out[sid] = f
    return out


def mean_cost_spread(traces: tuple[FillTrace, ...] | list[FillTrace]) -> dict[str, tuple[int, float | None]]:
    """schema -> (outputs traced, the relative standard error of its mean cost a token: fill and accept, over
    its outputs; None with one output). The mean is a ratio (all outputs' cost over all their tokens), its
    error the delta method's: sqrt(sum (c_i - R n_i)^2 / (k (k - 1))) / mean n over R, for k outputs of n_i
    tokens costing c_i. A fill's cost is heavy-tailed (xgrammar: a fifth of the fills, inside bounded
    strings, hold nearly all the time: docs/validation.md finding 30), so a few dozen outputs give a mean
    known to 5-25%; it narrows as 1 / sqrt(k)."""
    by: dict[str, list[tuple[float, int]]] = {}
    for tr in traces:
        by.setdefault(tr.schema_id, []).append((sum(tr.fill_us) + sum(tr.accept_us), len(tr.fill_us)))
    out: dict[str, tuple[int, float | None]] = {}
    for sid, cn in by.items():
        k, cost, tokens = len(cn), sum(c for c, _ in cn), sum(n for _, n in cn)
        if k < 2 or cost <= 0 or tokens <= 0:
            out[sid] = (k, None)
            continue
        r = cost / tokens
        se = (sum((c - r * n) ** 2 for c, n in cn) / (k * (k - 1))) ** 0.5 / (tokens / k)
        out[sid] = (k, se / r)
    return out


def spread_line(backend: str, traces: tuple[FillTrace, ...] | list[FillTrace]) -> str:
    """calibrate's line on a backend's traces: how well each schema's mean cost a token is known."""
    return f"  {backend}: traced mean cost a token known to {spread_words(traces)}"


def spread_words(traces: tuple[FillTrace, ...] | list[FillTrace], listed: int = 6) -> str:
    """How well each schema's traced mean cost a token is known (mean_cost_spread): each schema where there are
    at most `listed`, else the median and the widest over those of two outputs or more, and how many have one."""
    got = sorted(mean_cost_spread(traces).items())
    known = [(sid, k, s) for sid, (k, s) in got if s is not None]
    single = len(got) - len(known)
    if len(got) <= listed:
        said = [f"{sid} +-{100 * s:.0f}% ({k} outputs)" for sid, k, s in known]
    else:
        widest = max(known, key=lambda x: x[2]) if known else None
        said = [f"median +-{100 * statistics.median(s for _, _, s in known):.0f}% over {len(known)} schemas, widest "
                f"{widest[0]} +-{100 * widest[2]:.0f}% ({widest[1]} outputs)"] if widest else []
    return ", ".join(said + ([f"{single} schema{'s' if single > 1 else ''} of one output: unknown"] if single else []))


@dataclass(frozen=True)
class TraceResult:
    traces: tuple[FillTrace, ...]  # one per replayed output; empty on error
    compile: CompileCost | None
    error: str | None
    tokens: tuple[tuple[int, ...], ...] = ()  # the token streams replayed, one per trace
    source: str = ""  # where the outputs came from: recorded, examples, sampled under the mask (seed)


def _replay(backend: Backend, compiled: Any, tokens: list[int], bitmask) -> tuple[list[float], list[float]]:
    m = backend.matcher(compiled)
    fill_us, accept_us = [], []
    clock = time.perf_counter_ns
    for i, tok in enumerate(tokens):
        t0 = clock()
        backend.fill(m, bitmask, 0)
        t1 = clock()
        ok = backend.accept(m, tok)
        t2 = clock()
        if not ok:
            raise ValueError(f"the matcher rejected token {i} ({backend.vocab.tokens[tok]!r}) of the output")
        fill_us.append((t1 - t0) / 1e3)
        accept_us.append((t2 - t1) / 1e3)
    return fill_us, accept_us


def median_fills(backend: Backend, compiled: Any, tokens: list[int], repeats: int) -> list[float] | None:
    """Each position's fill time, the median over `repeats` fresh matchers; None where the matcher rejects
    the stream."""
    bitmask = backend.bitmask(1)
    try:
        runs = [_replay(backend, compiled, tokens, bitmask)[0] for _ in range(repeats)]
    except ValueError:
        return None
    return [statistics.median(r[j] for r in runs) for j in range(len(tokens))]


def sample_under_mask(backend: Backend, compiled: Any, seed: int, max_tokens: int = SAMPLED_MAX_TOKENS,
                      p_stop: float = 0.5) -> list[int]:
    """A token stream drawn under the grammar's own mask with a seeded RNG: a uniform pick among
    the allowed tokens (what a random-weight model does under a grammar), EOS with probability
    p_stop whenever the grammar allows it; cut at max_tokens (unbounded strings never close)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    m, bm, size, eos = backend.matcher(compiled), backend.bitmask(1), backend.vocab.size, backend.vocab.eos_id
    out: list[int] = []
    for _ in range(max_tokens):
        backend.fill(m, bm, 0)
        allowed = np.unpackbits(bm[0].numpy().view(np.uint8), bitorder="little")[:size]
        ids = np.flatnonzero(allowed)
        if ids.size == 0:
            break
        tok = eos if allowed[eos] and rng.random() < p_stop else int(rng.choice(ids))
        if not backend.accept(m, tok):
            break
        out.append(tok)
        if tok == eos:
            break
    return out


def trace_schema(backend: Backend, entry: SchemaEntry, texts: list[str | list[int]] | None = None,
                 repeats: int = 3, max_traces: int = 1, sampled: int = 0, seed: int = 0,
                 before_replay: Callable[[], None] | None = None) -> TraceResult:
    """Compile once (cold, then warm) and replay up to `max_traces` outputs: `texts` (recorded
    outputs) if given, else `sampled` token streams drawn under the mask (seeded), else the schema's
    examples, else (a schema without examples) DEFAULT_SAMPLED streams drawn under the mask. Each
    position's time is the median over `repeats` fresh matchers (a fresh matcher per request, as
    the engine makes). Outputs the matcher rejects are skipped (one another backend's engine wrote is
    re-written with this backend's separators first). `before_replay` runs before every replay (a host
    benchmark interleaved with the replays sees the same host speed)."""
    return _finished(_tracing(backend, entry, texts, repeats, max_traces, sampled, seed, before_replay))


@dataclass(frozen=True)
class EnoughTraces:
    """Where a schema's recorded outputs are many, how many to replay: after a pilot of `pilot`, the number at which
    its mean cost a token (fill and accept, mean_cost_spread) would be known to +-`rse` (the pilot's spread, narrowing
    as 1 / sqrt(outputs)), at least `least`, at most its outputs (or max_traces). A fill's cost is heavy-tailed, and
    a schema whose cost sits in a few positions of some outputs (deep: the items of an array empty in half of them)
    needs several times the outputs of one whose every output pays it (docs/validation.md finding 67)."""
    least: int
    rse: float
    pilot: int = 32

    def target(self, traces: list[FillTrace], most: int) -> int:
        """The outputs to trace, from the pilot's `traces`, within [min(least, most), most]."""
        floor = min(self.least, most)
        spread = mean_cost_spread(traces).get(traces[0].schema_id, (0, None))[1] if traces else None
        if spread is None:
            return floor
        return max(floor, min(most, math.ceil(len(traces) * (spread / self.rse) ** 2)))


def trace_interleaved(backend: Backend, jobs: list[tuple[SchemaEntry, list | None]], repeats: int, max_traces: int,
                      sampled: int, seed: int, on_done: Callable[[str, TraceResult], None],
                      enough: EnoughTraces | None = None,
                      before_replay: Callable[[], None] | None = None) -> dict[str, TraceResult]:
    """trace_schema of each (entry, its recorded outputs or None) in turns, so that a host whose speed moves while the
    replays run (seconds a schema) slows every schema alike (one schema after another, a move prices one against
    another: docs/validation.md finding 38). `max_traces` outputs of a schema with recorded ones, else max(1,
    `sampled`) sampled under the mask; with `enough`, a schema with recorded ones gets, after its pilot, its own
    count (EnoughTraces.target). Each turn goes to the schema least far through its count, so each schema's replays
    spread over the whole run however many it takes; `on_done(schema_id, result)` as each ends; `before_replay`
    before every replay (host.SpreadBench)."""
    def count(e: SchemaEntry, texts: list | None) -> int:  # what _tracing will replay, as _what_to_replay picks
        t, n, most, _ = _what_to_replay(backend, e, texts, 0 if texts else sampled, seed,
                                        max_traces if texts else max(1, sampled))
        return max(1, min(most, len(t) or n))
    caps = {e.schema_id: [count(e, texts)] for e, texts in jobs}
    kept: dict[str, list[FillTrace]] = {e.schema_id: [] for e, _ in jobs}
    planned = {e.schema_id for e, texts in jobs if not texts or enough is None}  # (their count stays as asked)
    turns = {e.schema_id: _tracing(backend, e, texts, repeats, max_traces if texts else max(1, sampled),
                                   0 if texts else sampled, seed, before_replay,
                                   None if e.schema_id in planned else caps[e.schema_id], kept[e.schema_id])
             for e, texts in jobs}
    results: dict[str, TraceResult] = {}
    while turns:
        sid = min(turns, key=lambda s: len(kept[s]) / caps[s][0])
        try:
            next(turns[sid])
        except StopIteration as done:
            results[sid] = done.value
            del turns[sid]
            on_done(sid, done.value)
            continue
        if sid not in planned and enough is not None and len(kept[sid]) >= min(enough.pilot, caps[sid][0]):
            caps[sid][0] = enough.target(kept[sid], caps[sid][0])
            planned.add(sid)
    return results


def _finished(steps: Generator[None, None, TraceResult]) -> TraceResult:
    """A tracing run to its end: its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _tracing(backend: Backend, entry: SchemaEntry, texts: list | None, repeats: int, max_traces: int, sampled: int,
             seed: int, before_replay: Callable[[], None] | None, cap: list[int] | None = None,
             traces: list[FillTrace] | None = None) -> Generator[None, None, TraceResult]:
    """trace_schema's work, a turn an output replayed (it yields after each; trace_interleaved takes turns, and may
    lower `cap`, one count it reads before each replay, in place of max_traces; `traces`: the list it fills)."""
    texts, sampled, max_traces, source = _what_to_replay(backend, entry, texts, sampled, seed, max_traces)
    problem = schema_problem(entry.schema)
    if problem:
        return TraceResult((), None, problem)
    try:
        compiled, compile_cost = _compile_costs(backend, entry)
    except Exception as e:  # the backend's own words, one line
        return TraceResult((), None, compile_failed(e))
    vocab = backend.vocab
    bitmask = backend.bitmask(1)
    last_error = "no output replayed"
    traces = [] if traces is None else traces
    replayed: list[tuple[int, ...]] = []
    # a recorded output is its text (re-tokenized) or the token ids the engine emitted (Vocab.engine_tokens)
    streams = [(list(t) if isinstance(t, (list, tuple)) else vocab.encode(t)) + [vocab.eos_id] for t in texts] or \
        [sample_under_mask(backend, compiled, seed * 7919 + i) for i in range(sampled)]
    rewrites = 0
    for i, tokens in enumerate(streams):
        if len(traces) >= (max_traces if cap is None else min(max_traces, cap[0])):
            break
        if not tokens:
            last_error = "the grammar allows no token at the start (an empty or unsatisfiable schema)"
            continue
        try:
            tokens, runs, again = _timed_replays(backend, compiled, tokens, texts[i] if i < len(texts) else None,
                                                 bitmask, repeats, before_replay)
        except ValueError as e:
            last_error = f"replay failed: {e}" + (_off_schema(entry.schema, texts[i], i) if i < len(texts) else "")
            continue
        rewrites += again
        fill = [statistics.median(r[0][j] for r in runs) for j in range(len(tokens))]
        acc = [statistics.median(r[1][j] for r in runs) for j in range(len(tokens))]
        strad = [t in vocab.straddle_ids for t in tokens]
        body = tokens[:-1] if tokens and tokens[-1] == vocab.eos_id else tokens
        traces.append(FillTrace(entry.schema_id, tuple(fill), tuple(acc), tuple(strad),
                                in_string_value([vocab.tokens[t] for t in body])[:len(tokens)]))
        replayed.append(tuple(tokens))
        yield
    if not traces:
        return TraceResult((), None, last_error)
    if texts and len(traces) < len(texts):
        source = source.replace(f"{len(texts)} recorded", f"{len(traces)} of {len(texts)} recorded", 1)
    if rewrites:
        source += (f" ({rewrites} written by another backend's engine, re-written with this one's separators "
                   f"{backend.separators!r} and re-tokenized)")
    cut = sum(1 for t in replayed if not texts and (not t or t[-1] != vocab.eos_id))
    if cut:
        source = (f"{source.removesuffix(')')}; {cut} of {len(replayed)} cut unfinished at {SAMPLED_MAX_TOKENS} "
                  f"tokens: a value the schema leaves unbounded, a number or a string or array with no maxLength or "
                  f"maxItems, never closes under a random pick; examples in the file price what a model writes)")
    return TraceResult(tuple(traces), compile_cost, None, tuple(replayed), source)


def compile_failed(e: Exception) -> str:
    """A backend's compile error in one line, its own words."""
    return f"compile failed: {str(e).splitlines()[0][:300] if str(e) else type(e).__name__}"


def _what_to_replay(backend: Backend, entry: SchemaEntry, texts: list | None, sampled: int, seed: int,
                    max_traces: int) -> tuple[list, int, int, str]:
    """(the outputs to replay, how many to sample under the mask instead, the traces wanted, where they came
    from): trace_schema's order of preference."""
    if texts:
        return texts, sampled, max_traces, f"{len(texts)} recorded outputs" + (
            ", the engine's own tokens" if all(isinstance(t, (list, tuple)) for t in texts) else "")
    if not sampled and entry.examples:
        return ([output_text(x, backend.separators) for x in entry.examples], 0, max_traces,
                f"{len(entry.examples)} example instances")
    sampled = sampled or DEFAULT_SAMPLED
    return [], sampled, max(max_traces, sampled), (f"{sampled} outputs sampled under the mask (seed {seed}"
                                                  f"{'' if entry.examples else '; the schema has no examples'})")


def _compile_costs(backend: Backend, entry: SchemaEntry) -> tuple[Any, CompileCost]:
    """The compiled grammar and its cost: cold, warm (cached), and a near-identical variant's on the
    compiler that has seen this one (unique-schema traffic)."""
    compiled, cold_ms = backend.compile(entry.schema, cache=False)
    backend.compile(entry.schema, cache=True)
    _, warm_ms = backend.compile(entry.schema, cache=True)
    rng = random.Random(f"variant-{entry.schema_id}")
    variant_ms = statistics.median(backend.compile(unique_schema(entry.schema, rng), cache=True)[1]
                                   for _ in range(3))
    return compiled, CompileCost(entry.schema_id, cold_ms, warm_ms, backend.memory_bytes(compiled), variant_ms)


def _timed_replays(backend: Backend, compiled: Any, tokens: list[int], output: str | list[int] | None, bitmask: Any,
                   repeats: int, before_replay: Callable[[], None] | None) -> tuple[list[int], list, bool]:
    """`repeats` timed replays of one output on fresh matchers: (its tokens, the runs, whether it was
    re-written first: an output the matcher rejects that another backend's engine wrote). ValueError where
    it is rejected either way."""
    def timed() -> tuple:
        if before_replay is not None:
            before_replay()
        return _replay(backend, compiled, tokens, bitmask)
    rewrote = False
    try:
        runs = [timed()]
    except ValueError:
        again = rewritten(backend, output) if output is not None else None
        if again is None:
            raise
        tokens, rewrote, runs = again + [backend.vocab.eos_id], True, []
    while len(runs) < repeats:
        runs.append(timed())
    return tokens, runs, rewrote


def result_to_json(r: TraceResult, schema_id: str, **extra: Any) -> dict[str, Any]:
    """A TraceResult as one JSON object (calibrate's partial file, the trace cache)."""
    d: dict[str, Any] = {**extra, "schema_id": schema_id, "error": r.error}
    if not r.error:
        d["traces"] = [{"fill_us": t.fill_us, "accept_us": t.accept_us, "straddle": [int(s) for s in t.straddle],
                        "in_string": [int(s) for s in t.in_string]} for t in r.traces]
        d["compile"] = asdict(r.compile)
        d["tokens"] = [list(t) for t in r.tokens]
        d["source"] = r.source
    return d


def result_from_json(d: dict[str, Any]) -> TraceResult:
    if d["error"]:
        return TraceResult((), None, d["error"])
    sid, c = d["schema_id"], d["compile"]
    return TraceResult(tuple(FillTrace(sid, tuple(t["fill_us"]), tuple(t["accept_us"]),
                                       tuple(bool(s) for s in t["straddle"]),
                                       tuple(bool(s) for s in t.get("in_string", ()))) for t in d["traces"]),
                       CompileCost(sid, c["cold_ms"], c["warm_ms"], c["memory_bytes"], c.get("variant_ms")), None,
                       tuple(tuple(t) for t in d.get("tokens", ())), d.get("source", ""))


def _off_schema(schema: dict, text, i: int) -> str:
    """Why a recorded output the matcher rejected may be: it is not an instance of its schema (jsonschema's words),
    or not JSON; '' where it is one (the grammar then differs from the schema: the backend's own limits)."""
    if not isinstance(text, str):
        return ""
    import json

    import jsonschema
    try:
        jsonschema.validate(json.loads(text), schema)
    except json.JSONDecodeError as e:
        return f" (example {i + 1} is not JSON: {e.msg})"
    except jsonschema.ValidationError as e:
        return f" (example {i + 1} does not match the schema: {e.message[:120]})"
    except jsonschema.SchemaError:
        return ""
    return ""
