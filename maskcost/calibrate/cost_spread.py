"""How far a point's ITL moves with how well its schemas' cost is known.

A schema's mean fill cost a token is traced from a few outputs (calibrate: the server's own; predict --schema: the
file's examples, or outputs sampled under the mask); a fill's cost is heavy-tailed, so four outputs know the mean
to +-20-50% (calibrate.fill.mean_cost_spread: its relative standard error). The record's 80% interval
(maskcost/interval.py) holds the misses of points priced from outputs known about as well as its engine's shipped
profile knows its own (REFERENCE: the median over that profile's schemas); a workload priced from schemas known
worse than that is more uncertain than the record says. This module measures how much: the workload's mean cost a
token known to +-d (the mix: each schema's excess spread over the reference, weighted by its cost a request, as
uniform draws weigh them), its traces scaled by exp(-+z d) (z: the normal's 90% point, so each end is the 80%
interval's of a log-normal mean), the same grid run again at each end; the ITL at the ends is what
interval.widened combines with the record's interval. Same inputs, same outputs: the runs are the grid's, with
its seeds."""
from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, replace
from functools import cache

from .fill import mean_cost_spread
from ..profile import Profile

Z80 = statistics.NormalDist().inv_cdf(0.9)  # a two-sided 80% interval's end, in standard errors
MATERIAL_RSE = 0.02  # a workload's spread beyond the reference below this moves no interval: not run, not said


@dataclass(frozen=True)
class CostSpread:
    """One backend's workload: its mean cost a token known to +-rse beyond the record's reference (excess), the
    schemas with one output (spread unknown: not in it), the reference it is counted beyond."""
    backend: str
    rse: float
    reference: float
    unknown: tuple[str, ...] = ()

    @property
    def material(self) -> bool:
        return self.rse >= MATERIAL_RSE

    def factors(self) -> tuple[float, float]:
        """The traces' scale at the low and the high end."""
        return math.exp(-Z80 * self.rse), math.exp(Z80 * self.rse)


@cache
def reference_rse(engine: str, backend: str) -> float:
    """The median relative standard error of a schema's mean cost a token in the engine's shipped profile (the
    schemas of two outputs or more): what the record's points were priced from, about."""
    from ..profile import load_profile
    from ..model.engines import shipped_profile_path
    prof = load_profile(shipped_profile_path([engine]))
    b = prof.backends.get(backend)
    got = [se for _, se in mean_cost_spread(b.traces).values() if se is not None] if b is not None else []
    return statistics.median(got) if got else 0.0


def workload_spread(profile: Profile, backend: str, schema_ids: tuple[str, ...], reference: float) -> CostSpread:
    """The workload's mean cost a token spread beyond `reference`, each schema weighted by its traced cost a
    request (a uniform draw of schemas weighs them so): sqrt(sum (c_i e_i)^2) / sum c_i, e_i = sqrt(max(0,
    rse_i^2 - reference^2)); () means all the profile's schemas."""
    traces = profile.backends[backend].traces
    ids = set(schema_ids) or {t.schema_id for t in traces}
    mine = [t for t in traces if t.schema_id in ids]
    spread = mean_cost_spread(mine)
    cost: dict[str, list[float]] = {}
    for t in mine:
        cost.setdefault(t.schema_id, []).append(sum(t.fill_us) + sum(t.accept_us))
    c = {s: statistics.fmean(v) for s, v in cost.items()}
    excess = {s: math.sqrt(max(0.0, se ** 2 - reference ** 2)) for s, (_, se) in spread.items() if se is not None}
    total = sum(c.values())
    rse = math.sqrt(sum((c[s] * e) ** 2 for s, e in excess.items())) / total if total > 0 else 0.0
    unknown = tuple(sorted(s for s, (k, se) in spread.items() if se is None))
    return CostSpread(backend, rse, reference, unknown)


def scaled(profile: Profile, spreads: dict[str, CostSpread], schema_ids: tuple[str, ...], end: int) -> Profile:
    """The profile with the workload's schemas' traces (fill and accept) scaled to the low (end 0) or the high
    (end 1) end of each backend's spread."""
    ids = set(schema_ids)
    backends = dict(profile.backends)
    for b, sp in spreads.items():
        f = sp.factors()[end]
        backends[b] = replace(backends[b], traces=tuple(
            replace(t, fill_us=tuple(x * f for x in t.fill_us), accept_us=tuple(x * f for x in t.accept_us))
            if not ids or t.schema_id in ids else t for t in backends[b].traces))
    return replace(profile, backends=backends)


def swings(profile: Profile, configs: list, loads: list, schema_ids: tuple[str, ...]
           ) -> tuple[dict[tuple[str, str], CostSpread], dict[str, tuple[float, float]]]:
    """Each (engine, backend)'s workload spread, and each point's schema-on ITL mean with its schemas' traces
    at the low and the high end of it (by point_key); only where the spread is material (MATERIAL_RSE; else no run)."""
    from ..model.predict import grid, point_key
    spreads = {(c.engine, c.backend): workload_spread(profile, c.backend, schema_ids, reference_rse(c.engine, c.backend))
               for c in configs}
    out: dict[str, tuple[float, float]] = {}
    for engine in dict.fromkeys(c.engine for c in configs):
        mine = {b: sp for (e, b), sp in spreads.items() if e == engine and sp.material}
        cfgs = [c for c in configs if c.engine == engine and c.backend in mine]
        if not cfgs:
            continue
        ends = [grid(scaled(profile, mine, schema_ids, end), cfgs, loads, band=False, progress=False)
                for end in (0, 1)]
        for (cfg, wl), lo, hi in zip(itertools.product(cfgs, loads), *ends):
            out[point_key(cfg, wl)] = (lo.itl_ms_mean, hi.itl_ms_mean)
    return spreads, out
