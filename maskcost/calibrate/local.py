"""A user's schema files added to a profile for `predict --schema`: traced on this host with the
profile's tokenizer (cached: calibrate/cache.py), and scaled to the profile's CPU by the ratio of
the fixed single-thread benchmark (bench_us), run between the trace's replays."""
from __future__ import annotations

import statistics

from dataclasses import dataclass, replace

from .backends import make_backend
from .cache import cached_reference_compiles, cached_trace
from .fill import mean_cost_spread
from .host import cache_dir
from ..profile import Profile, schema_sha256
from .schemas import SchemaEntry
from .tokenizer import profile_vocab


@dataclass(frozen=True)
class LocalSchema:
    """How one schema's costs were obtained, for the output and the result file."""
    schema_id: str
    backend: str
    source: str  # where its outputs came from (examples, sampled under the mask)
    cached: bool  # read back from the cache, not measured now
    scale: float  # this host's speed over the profile host's: times measured here x scale
    error: str | None = None  # the backend could not trace it: skipped (the other schemas go on)
    reused: bool = False  # the profile's own traces: the file is the schema the profile was calibrated with
    renamed_from: str | None = None  # its file's id, a profile schema's that it could not be matched to
    why_renamed: str = ""  # another schema, no digest recorded, a backend without its traces
    # a compile measured here x compile_scale on the profile's host: the profile's own compiles of the
    # reference tiers over this host's (cache.cached_reference_compiles); None: by `scale` (no tier in common)
    compile_scale: float | None = None
    known: str = ""  # how well its traced mean cost a token is known (_known: fill.mean_cost_spread)


def _resolve_ids(profile: Profile, entries: list[SchemaEntry], backends: list[str]
                 ) -> tuple[list[SchemaEntry], list[SchemaEntry], dict[str, tuple[str, str]]]:
    """(entries to trace, entries whose traces the profile holds, new id -> (the file's id, why)). A file whose
    id names a schema of the profile takes the profile's traces when its schema is that one (the
    profile's schema_sha256) and every backend asked for holds traces of it; it is traced under
    `id@digest` otherwise (another schema, one the profile records no digest of, or a backend without
    its traces)."""
    ids = [e.schema_id for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"--schema: two files give the schema id {sorted(dup)[0]!r} (rename one, or give it an 'id')")
    held = {b: {t.schema_id for t in profile.backends[b].traces} for b in backends}
    trace, reuse, renamed = [], [], {}
    for e in entries:
        if not any(e.schema_id in h for h in held.values()):
            trace.append(e)
            continue
        digest = schema_sha256(e.schema)
        if profile.schema_sha256.get(e.schema_id) == digest and all(e.schema_id in h for h in held.values()):
            reuse.append(e)
            continue
        new_id = f"{e.schema_id}@{digest[:8]}"
        renamed[new_id] = (e.schema_id, "the profile holds another schema of that id"
                           if profile.schema_sha256.get(e.schema_id) not in (None, digest) else
                           "the profile records no digest of its schema of that id, so it may be another"
                           if e.schema_id not in profile.schema_sha256 else
                           "the profile holds its traces for some of the backends only")
        trace.append(replace(e, schema_id=new_id))
    return trace, reuse, renamed


def add_local_schemas(profile: Profile, entries: list[SchemaEntry], backends: list[str], tokenizer: str | None = None
                      ) -> tuple[Profile, list[str], list[LocalSchema]]:
    """The profile with each entry's schema traced (or read from the cache) for every backend, and the
    ids of those every backend traced (or the profile held). A schema a backend cannot compile or trace
    is reported (a LocalSchema with its error) and left out of every backend, so that each point runs the
    same schemas; none left is an error naming the first failure. `tokenizer`: a tokenizer folder or
    bundled name in place of the profile's own (the vocabulary must be the profile's)."""
    to_trace, reuse, renamed = _resolve_ids(profile, entries, backends)
    how = [LocalSchema(e.schema_id, b, "the profile's own traces", True, 1.0, reused=True)
           for b in backends for e in reuse]
    results, compile_scale = {}, {}
    if to_trace:
        vocab = profile_vocab(profile.tokenizer, profile.vocab_size, profile.tokenizer_sha256, tokenizer)
    for b in backends if to_trace else ():
        made: list = []  # the backend, built on the first schema the cache does not hold

        # the profile's own convention: its in-engine factors were fitted against traces replayed so
        seps = profile.backends[b].traced_separators if b == "guidance" else None

        def get_backend(b=b, made=made, seps=seps):
            if not made:
                made.append(make_backend(b, vocab, seps))
            return made[0]
        compile_scale[b] = _compile_scale(profile, b, cached_reference_compiles(b, vocab, get_backend))
        for e in to_trace:
            r, here_us, cached = results[b, e.schema_id] = cached_trace(b, vocab, e, get_backend, seps)
            was, why = renamed.get(e.schema_id, (None, ""))
            how.append(LocalSchema(e.schema_id, b, r.source, cached, profile.host.bench_us / here_us if here_us else 0.0,
                                   r.error, renamed_from=was, why_renamed=why, compile_scale=compile_scale[b],
                                   known=_known(r.traces)))
    failed = [h for h in how if h.error]
    bad = {h.schema_id for h in failed}
    keep = [e.schema_id for e in reuse] + [e.schema_id for e in to_trace if e.schema_id not in bad]
    if not keep:
        raise ValueError(f"--schema {failed[0].schema_id}: {failed[0].backend}: {failed[0].error}")
    new_backends = dict(profile.backends)
    for b in backends:
        costs = new_backends[b]
        for i in keep:
            if (b, i) not in results:
                continue  # the profile's own
            r, here_us, _ = results[b, i]
            factor = profile.host.bench_us / here_us  # the bench measured between this trace's replays
            traces = tuple(replace(t, fill_us=tuple(x * factor for x in t.fill_us),
                                   accept_us=tuple(x * factor for x in t.accept_us)) for t in r.traces)
            cf = compile_scale[b] if compile_scale[b] is not None else factor
            comp = replace(r.compile, cold_ms=r.compile.cold_ms * cf, warm_ms=r.compile.warm_ms * cf,
                           variant_ms=None if r.compile.variant_ms is None else r.compile.variant_ms * cf)
            costs = replace(costs, traces=costs.traces + traces, compiles=costs.compiles + (comp,))
        new_backends[b] = costs
    return replace(profile, backends=new_backends), keep, how


def _known(traces) -> str:
    """How well one schema's traced mean cost a token is known: '+-18% (4 outputs)' ('' from one output)."""
    got = [(k, sp) for k, sp in mean_cost_spread(traces).values() if sp is not None]
    return f"+-{100 * got[0][1]:.0f}% ({got[0][0]} outputs)" if got else ""


def _compile_scale(profile: Profile, backend: str, here_ms: dict[str, float]) -> float | None:
    """The median over the reference tiers of the profile's cold compile over this host's; None where the
    profile compiled none of them (a profile of the user's own schemas: the bench carries compiles too)."""
    own = {c.schema_id: c.cold_ms for c in profile.backends[backend].compiles}
    ratios = [own[s] / ms for s, ms in here_ms.items() if s in own and ms > 0 and own[s] > 0]
    return statistics.median(ratios) if ratios else None


def describe(how: list[LocalSchema]) -> list[str]:
    failed = {h.schema_id for h in how if h.error}

    def line(h: LocalSchema) -> str:
        head = f"schema {h.schema_id} ({h.backend})"
        if h.renamed_from:
            head = (f"schema {h.renamed_from} as {h.schema_id} ({h.backend}; {h.why_renamed}: --schema-id "
                    f"{h.renamed_from} takes the profile's own)")
        if h.reused:
            return f"{head}: the profile's own traces (the file is the schema the profile was calibrated with)"
        if h.error:
            return f"{head}: skipped: {h.error}"
        comp = (f"compiles x{h.compile_scale:.3f} (the profile's own compiles of the tiers over this CPU's)"
                if h.compile_scale is not None else "compiles too")
        return (f"{head}: traced on this CPU from {h.source}, scaled x{h.scale:.3f} to the profile's CPU, {comp}; "
                + (f"its mean cost a token known to {h.known}, more examples in the file narrow it; " if h.known
                   else "") +
                f"{'read from the cache' if h.cached else 'measured now and cached'} in {cache_dir()}"
                + ("; left out: another backend could not trace it" if h.schema_id in failed else ""))
    return [line(h) for h in how]
