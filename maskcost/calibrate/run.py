"""`maskcost calibrate`: host-side measurements (fill traces, compile, pools, fingerprint), an
optional engine-side sweep (forward curve), the GPU apply cost where a GPU is present, and the
profile that carries all of it with its provenance."""
from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from . import POOL_ROWS, POOL_WORKERS
from .backends import make_backend
from .fill import (EnoughTraces, TraceResult, compile_failed, median_fills, output_json, output_text,
                   result_from_json, result_to_json, trace_interleaved)
from .host import cpu_model, package_versions
from .pool import advanced_matchers, measure_batch_fill_saving, measure_llguidance_batched, measure_vllm_pool
from ..profile import (ApplyCost, BackendCosts, ForwardCurve, HostInfo, Profile, schema_sha256,
                      profile_from_dict, profile_to_dict)
from .schemas import SchemaEntry, schema_problem
from .tokenizer import Vocab

RECORDED_PER_SCHEMA = 16


def recorded_outputs(path: Path, vocab: Vocab | None = None) -> dict[str, list]:
    """Valid outputs from a `maskcost sweep` raw file, by schema id (the real model's outputs). With `vocab`,
    each output as the token stream the engine emitted where the record has its streamed chunks
    (Vocab.streamed_tokens), else its text (replayed re-tokenized)."""
    from ..records import read_raw_records
    out: dict[str, list] = defaultdict(list)
    for d in read_raw_records(path, "--outputs"):
        if d.get("check") == "valid" and d.get("schema_id"):
            tokens = vocab.streamed_tokens(d) if vocab is not None else None
            out[d["schema_id"]].append(d["text"] if tokens is None else tokens)
    return dict(out)


def _pools(be, vocab: Vocab, ok: list, outs: dict[str, list] | None, pool_workers, pool_rows, log) -> tuple[list, float | None]:
    """The backend's fill pools on distinct matchers (one per row) in the states the traced outputs passed
    through (up to 32 schemas' first outputs); for xgrammar also what vllm#51331's batched fill saves a row
    on them, for llguidance also its batched fill (workers < 0 in the pool points)."""
    compiled_tokens = []
    for e, r in ok[:32]:
        texts = (outs or {}).get(e.schema_id) or [output_text(x, be.separators) for x in e.examples]
        tokens = r.tokens[0] if r.tokens else (
            (texts[0] if isinstance(texts[0], list) else vocab.encode(texts[0])) if texts else None)
        if tokens:  # (a partial file of an older maskcost keeps no tokens)
            compiled_tokens.append((be.compile(e.schema, cache=True)[0], list(tokens)))
    matchers = advanced_matchers(be, compiled_tokens, max(pool_rows))
    log(f"measuring the {be.name} fill pool on {len(matchers)} distinct matchers ({len(compiled_tokens)} outputs) ...")
    pool = measure_vllm_pool(be, matchers, pool_workers, pool_rows)
    saving = None
    if be.name == "xgrammar":
        saving = measure_batch_fill_saving(be, advanced_matchers(be, compiled_tokens, BATCH_FILL_CANDIDATES))["saving_us"]
        log(f"xgrammar batch fill: {saving:.2f} us a row saved against one call a row")
    if be.name == "guidance":
        pool = pool + [replace(p, workers=-p.workers) for p in measure_llguidance_batched(be, matchers, pool_workers,
                                                                                          pool_rows)]
    del matchers
    return pool, saving


def compilable(vocab: Vocab, entries: list[SchemaEntry], backends: list[str], log=print,
               said_for: set[str] = frozenset()) -> dict[str, list[SchemaEntry]]:
    """The schemas each backend compiles (a JSON schema, and its grammar built), by backend: what a live
    calibration sends the server of that backend before it traces anything; for the backends in `said_for`
    (those with a server), each one left out is said in one line (the traces say the others' later)."""
    out: dict[str, list[SchemaEntry]] = {}
    for b in backends:
        be, out[b] = make_backend(b, vocab), []
        for e in entries:
            problem = schema_problem(e.schema)
            if problem is None:
                try:
                    be.compile(e.schema, cache=True)
                except Exception as ex:  # the backend's own words, one line (as trace_schema says them)
                    problem = compile_failed(ex)
            if problem and b in said_for:
                log(f"calibrate: {e.schema_id} is not sent to the {b} server: {problem}")
            elif not problem:
                out[b].append(e)
    return out


def calibrate_backends(vocab: Vocab, entries: list[SchemaEntry], backends: list[str], partial: Path,
                       outputs: dict[str, list] | None = None, repeats: int = 3,
                       outputs_by_backend: dict[str, dict[str, list]] | None = None,
                       traces_per_schema: int = RECORDED_PER_SCHEMA,
                       pool_workers=POOL_WORKERS, pool_rows=POOL_ROWS, sampled: int = 0, seed: int = 0,
                       log=print, enough: EnoughTraces | None = None,
                       before_replay: Callable[[], None] | None = None) -> dict[str, BackendCosts]:
    """Trace every schema on every backend (appending each result to `partial` so a rerun resumes),
    then measure the pools on distinct matchers in states taken from the traced outputs. A backend in
    `outputs_by_backend` replays those outputs (its engine's, or another's: trace_schema re-writes them), the others
    `outputs`; up to traces_per_schema of a schema's, or with `enough` the count its pilot asks for. `before_replay`:
    called before every replay (host.SpreadBench: the host's bench taken as the traces replay)."""
    done: dict[tuple[str, str], TraceResult] = {}
    if partial.exists():
        for line in partial.read_text().splitlines():
            try:
                d = json.loads(line)
                done[(d["backend"], d["schema_id"])] = result_from_json(d)
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut short by an interrupted run: that schema is traced again
    result: dict[str, BackendCosts] = {}
    with open(partial, "a") as pf:
        for bname in backends:
            be = make_backend(bname, vocab)
            outs = (outputs_by_backend or {}).get(bname, outputs)
            todo = [e for e in entries if (bname, e.schema_id) not in done]
            with tqdm(total=len(entries), initial=len(entries) - len(todo), desc=f"fill traces {bname}",
                      unit="schema") as bar:
                def traced(sid: str, r: TraceResult, bname=bname, bar=bar) -> None:
                    done[bname, sid] = r
                    pf.write(json.dumps(result_to_json(r, sid, backend=bname)) + "\n")
                    pf.flush()
                    bar.update()
                # recorded outputs: one trace per output (up to traces_per_schema); else `sampled` streams drawn
                # under the mask; else the first example; the schemas in turns (trace_interleaved)
                trace_interleaved(be, [(e, (outs or {}).get(e.schema_id)) for e in todo], repeats,
                                  traces_per_schema, sampled, seed, traced, enough, before_replay)
            results: dict[str, TraceResult] = {e.schema_id: done[bname, e.schema_id] for e in entries}
            fails = tuple((sid, r.error) for sid, r in results.items() if r.error)
            for sid, err in fails:
                log(f"skipped {bname} {sid}: {err}")
            ok = [(e, results[e.schema_id]) for e in entries if not results[e.schema_id].error]
            if not ok:
                raise ValueError(f"{bname}: none of the {len(entries)} schemas could be traced "
                                 f"(first: {fails[0][0]}: {fails[0][1]})")
            pool, saving = _pools(be, vocab, ok, outs, pool_workers, pool_rows, log)
            result[bname] = BackendCosts(tuple(t for _, r in ok for t in r.traces), tuple(r.compile for _, r in ok),
                                         tuple(pool), fails, output_sources=tuple((e.schema_id, r.source)
                                                                                 for e, r in ok),
                                         batch_fill_saving_us=saving, separators=tuple(be.separators))
    return result


def replay_cost_ratio(vocab: Vocab, entries: list[SchemaEntry], outputs: dict[str, list], to_sep: tuple[str, str],
                      from_sep: tuple[str, str], per_schema: int = 8, repeats: int = 2) -> float | None:
    """guidance's mean fill a token over the same outputs written with `to_sep` and replayed on that grammar,
    against written with `from_sep` on its own (each output counted only where it replays both ways): what
    an in-engine factor fitted against traces of the one convention is worth against the other's (engine /
    library, where the library's token costs `ratio` times as much); None where no output replays both ways."""
    backends = {sep: make_backend("guidance", vocab, sep) for sep in (to_sep, from_sep)}
    fills: dict[tuple[str, str], list[float]] = {to_sep: [], from_sep: []}
    for e in entries:
        if schema_problem(e.schema):
            continue
        try:  # each schema compiled once on each grammar, its outputs replayed on it
            compiled = {sep: be.compile(e.schema, cache=True)[0] for sep, be in backends.items()}
        except Exception:  # noqa: BLE001  (a schema guidance cannot compile: no ratio from it)
            continue
        for o in (outputs.get(e.schema_id) or [])[:per_schema]:
            try:
                value = output_json(vocab, o)[1]
            except ValueError:
                continue
            got = {sep: median_fills(be, compiled[sep], vocab.encode(output_text(value, sep)) + [vocab.eos_id],
                                     repeats) for sep, be in backends.items()}
            if all(f is not None for f in got.values()):
                for sep, f in got.items():
                    fills[sep] += f
    a, b = fills[to_sep], fills[from_sep]
    return (sum(a) / len(a)) / (sum(b) / len(b)) if a and b and sum(b) > 0 else None


def build_profile(name: str, vocab: Vocab, host: HostInfo, backends: dict[str, BackendCosts],
                  forward: ForwardCurve, apply: ApplyCost, command: list[str], notes: list[str],
                  entries: list[SchemaEntry] = ()) -> Profile:
    """The profile of these measurements, with the vocabulary's and each schema's content digest."""
    p = Profile(name=name, created_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                provenance={"command": " ".join(command), "packages": package_versions(), "notes": notes},
                host=host, tokenizer=vocab.name, vocab_size=vocab.size, backends=backends,
                forward=forward, apply=apply, tokenizer_sha256=vocab.sha256,
                schema_sha256={e.schema_id: schema_sha256(e.schema) for e in entries})
    profile_from_dict(profile_to_dict(p))  # the same checks a reader runs
    return p


def argv() -> list[str]:
    return ["maskcost"] + sys.argv[1:]


def add_variant_compiles(profile: Profile, vocab: Vocab, entries: list[SchemaEntry], log=print) -> Profile:
    """Measure the near-identical-variant compile of the profile's schemas on THIS host (a compiler
    that has compiled the schema, then three variants with one random optional property, median)
    and store it scaled to the profile's CPU by the ratio of the fixed benchmark (bench_us)."""
    import random
    import statistics

    from .host import speed_vs
    from .schemas import unique_schema
    factor = speed_vs(profile.host.bench_us, vocab)
    by_id = {e.schema_id: e for e in entries}
    backends = {}
    for name, b in profile.backends.items():
        if not b.compiles:
            backends[name] = b
            continue
        be = make_backend(name, vocab)
        compiles = []
        for c in tqdm(b.compiles, desc=f"variant compile {name}", unit="schema"):
            e = by_id.get(c.schema_id)
            if e is None:
                compiles.append(c)
                continue
            be.compile(e.schema, cache=True)
            rng = random.Random(f"variant-{e.schema_id}")
            ms = statistics.median(be.compile(unique_schema(e.schema, rng), cache=True)[1] for _ in range(3))
            compiles.append(replace(c, variant_ms=ms * factor))
        missing = [c.schema_id for c in compiles if c.variant_ms is None]
        if missing:
            log(f"{name}: no schema given for {len(missing)} profile schemas (e.g. {missing[:3]}): no variant cost")
        backends[name] = replace(b, compiles=tuple(compiles))
    note = (f"variant_ms measured on {cpu_model()} (bench_us {profile.host.bench_us / factor:.0f}) and scaled by "
            f"{factor:.3f} to this profile's CPU ({' '.join(argv())})")
    prov = {**profile.provenance, "notes": [*profile.provenance.get("notes", []), note]}
    return replace(profile, backends=backends, provenance=prov)


# candidate matchers for measure_batch_fill_saving (it keeps the cheapest of them: pool.BATCH_FILL_ROWS)
BATCH_FILL_CANDIDATES = 1024


def add_batch_fill_saving(profile: Profile, vocab: Vocab, entries: list[SchemaEntry], log=print) -> Profile:
    """Measure on THIS host what xgrammar's batch fill saves a row (calibrate.pool.measure_batch_fill_saving),
    on matchers advanced through the given schemas' examples, and store it on the profile's xgrammar costs
    scaled to the profile's CPU by the ratio of the fixed benchmark (bench_us)."""
    from .host import speed_vs
    from .pool import BATCH_FILL_ROWS
    if "xgrammar" not in profile.backends:
        raise ValueError(f"--batch-fill: the profile '{profile.name}' has no xgrammar costs")
    be = make_backend("xgrammar", vocab)
    compiled_tokens = [(be.compile(e.schema, cache=True)[0], vocab.encode(output_text(x)))
                       for e in entries for x in e.examples[:4]]
    if not compiled_tokens:
        raise ValueError("--batch-fill: the schemas given have no examples to put matchers in realistic states "
                         "(--tier flat nested deep bounded has them)")
    factor = speed_vs(profile.host.bench_us, vocab)
    got = measure_batch_fill_saving(be, advanced_matchers(be, compiled_tokens, BATCH_FILL_CANDIDATES))
    saving = got["saving_us"] * factor
    log(f"xgrammar batch fill on {cpu_model()}: {got['per_row_us']:.2f} us a row one call a row, "
        f"{got['batch_us']:.2f} batched; {saving:.3f} us a row saved at the profile's CPU (x{factor:.3f})")
    note = (f"batch_fill_saving_us measured on {cpu_model()} ({got['per_row_us']:.2f} -> {got['batch_us']:.2f} us a "
            f"row, the cheapest {max(BATCH_FILL_ROWS)} of {BATCH_FILL_CANDIDATES} states, rows {got['rows']}) and scaled by {factor:.3f} "
            f"to this profile's CPU ({' '.join(argv())})")
    prov = {**profile.provenance, "notes": [*profile.provenance.get("notes", []), note]}
    b = replace(profile.backends["xgrammar"], batch_fill_saving_us=saving)
    return replace(profile, backends={**profile.backends, "xgrammar": b}, provenance=prov)


def straddle_split(b: BackendCosts) -> dict[str, float] | None:
    """Fill time at positions whose emitted token straddles a JSON string boundary (a quote plus
    other bytes) vs the rest, over every trace: the split issue 3 asks the calibration to show."""
    import statistics
    s = [f for t in b.traces for f, x in zip(t.fill_us, t.straddle) if x]
    o = [f for t in b.traces for f, x in zip(t.fill_us, t.straddle) if not x]
    if not s or not o:
        return None
    a, c = statistics.mean(s), statistics.mean(o)
    return {"straddle_us": a, "other_us": c, "ratio": a / c, "rate": len(s) / (len(s) + len(o)), "tokens": len(s) + len(o)}
