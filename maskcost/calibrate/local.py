"""A user's schema files added to a profile for `predict --schema`: traced on this host with the
profile's tokenizer (cached: calibrate/cache.py), and scaled to the profile's CPU by the ratio of
the fixed single-thread benchmark (bench_us), run between the trace's replays."""
from __future__ import annotations

from dataclasses import dataclass, replace

from .backends import make_backend
from .cache import cache_dir, cached_trace
from ..profile import Profile
from .schemas import SchemaEntry
from .tokenizer import load_vocab


@dataclass(frozen=True)
class LocalSchema:
    """How one schema's costs were obtained, for the output and the result file."""
    schema_id: str
    backend: str
    source: str  # where its outputs came from (examples, sampled under the mask)
    cached: bool  # read back from the cache, not measured now
    scale: float  # this host's speed over the profile host's: times measured here x scale
    error: str | None = None  # the backend could not trace it: skipped (the other schemas go on)


def add_local_schemas(profile: Profile, entries: list[SchemaEntry], backends: list[str]
                      ) -> tuple[Profile, list[str], list[LocalSchema]]:
    """The profile with each entry's schema traced (or read from the cache) for every backend, and the
    ids of those every backend traced. A schema a backend cannot compile or trace is reported (a
    LocalSchema with its error) and left out of every backend, so that each point runs the same
    schemas; none left is an error naming the first failure."""
    ids = [e.schema_id for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"--schema: two files give the schema id {sorted(dup)[0]!r} (rename one, or give it an 'id')")
    clash = [i for i in ids if i in {t.schema_id for b in backends for t in profile.backends[b].traces}]
    if clash:
        raise ValueError(f"--schema {clash[0]}: the profile already holds traces of a schema {clash[0]!r} (the one it was "
                         f"calibrated with?): use them with --schema-id {clash[0]}, or give the file another 'id' to trace it")
    vocab = load_vocab(profile.tokenizer)
    how: list[LocalSchema] = []
    results = {}
    for b in backends:
        made: list = []  # the backend, built on the first schema the cache does not hold

        def get_backend(b=b, made=made):
            if not made:
                made.append(make_backend(b, vocab))
            return made[0]
        for e in entries:
            r, here_us, cached = results[b, e.schema_id] = cached_trace(b, vocab, e, get_backend)
            how.append(LocalSchema(e.schema_id, b, r.source, cached, profile.host.bench_us / here_us if here_us else 0.0,
                                   r.error))
    failed = [h for h in how if h.error]
    bad = {h.schema_id for h in failed}
    keep = [i for i in ids if i not in bad]
    if not keep:
        raise ValueError(f"--schema {failed[0].schema_id}: {failed[0].backend}: {failed[0].error}")
    new_backends = dict(profile.backends)
    for b in backends:
        costs = new_backends[b]
        for i in keep:
            r, here_us, _ = results[b, i]
            factor = profile.host.bench_us / here_us  # the bench measured between this trace's replays
            traces = tuple(replace(t, fill_us=tuple(x * factor for x in t.fill_us),
                                   accept_us=tuple(x * factor for x in t.accept_us)) for t in r.traces)
            comp = replace(r.compile, cold_ms=r.compile.cold_ms * factor, warm_ms=r.compile.warm_ms * factor,
                           variant_ms=None if r.compile.variant_ms is None else r.compile.variant_ms * factor)
            costs = replace(costs, traces=costs.traces + traces, compiles=costs.compiles + (comp,))
        new_backends[b] = costs
    return replace(profile, backends=new_backends), keep, how


def describe(how: list[LocalSchema]) -> list[str]:
    failed = {h.schema_id for h in how if h.error}
    return [f"schema {h.schema_id} ({h.backend}): skipped: {h.error}" if h.error else
            f"schema {h.schema_id} ({h.backend}): traced on this CPU from {h.source}, scaled x{h.scale:.3f} to the "
            f"profile's CPU; {'read from the cache' if h.cached else 'measured now and cached'} in {cache_dir()}"
            + ("; left out: another backend could not trace it" if h.schema_id in failed else "")
            for h in how]
