"""How far a point's ITL moves with how well its schemas' cost is known.

A schema's mean fill cost a token is traced from a few outputs (calibrate: the server's own; predict --schema: the
file's examples, or outputs sampled under the mask); a fill's cost is heavy-tailed, so four outputs know the mean
to +-20-50% (calibrate.fill.mean_cost_spread: its relative standard error). The record's 80% interval
(maskcost/interval.py) holds the misses of points priced from outputs known about as well as its engine's shipped
profile knows a workload of its schemas of two outputs or more (reference_rse); a workload priced from schemas known
worse than that is more uncertain than the record says. This module measures how much: the workload's mean cost a
token known to +-d (the mix: each schema's excess spread over the reference, weighted by its cost a request, as
uniform draws weigh them; a schema of one output taken as one output's spread), its traces scaled by exp(-+z d)
(z: the normal's 90% point, so each end is the 80% interval's of a log-normal mean), the same grid run again at
each end and as it is, on a sixth of the points' requests (SWING_SHARE: the move is a ratio of runs of one
length, their seeds in common); each end's ITL over the middle's, times the point's, is what interval.widened
combines with the record's interval. Same inputs, same outputs: the runs are the grid's, with its seeds."""
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
SWING_SHARE = 6  # the spread's runs take a point's requests over this (at least 2 a client and 200)


@dataclass(frozen=True)
class CostSpread:
    """One backend's workload: its mean cost a token known to +-rse beyond the record's reference (excess); the
    schemas traced from one output, each taken as known to +-one_output_rse (a single output's spread among the
    profile's schemas of more: per_output_spread; None where it has none, and those schemas are not counted)."""
    backend: str
    rse: float
    reference: float
    one_output: tuple[str, ...] = ()
    one_output_rse: float | None = None

    @property
    def material(self) -> bool:
        return self.rse >= MATERIAL_RSE

    def factors(self) -> tuple[float, float]:
        """The traces' scale at the low and the high end."""
        return math.exp(-Z80 * self.rse), math.exp(Z80 * self.rse)


def per_output_spread(traces) -> float | None:
    """How far one output's cost a token lies from its schema's mean, relatively: the median over the schemas of
    two outputs or more of their mean's relative standard error x sqrt(outputs); None where there are none."""
    got = [se * math.sqrt(k) for k, se in mean_cost_spread(traces).values() if se is not None]
    return statistics.median(got) if got else None


@cache
def reference_rse(engine: str, backend: str) -> float:
    """The record's: the mean cost a token of a workload of the engine's shipped profile's schemas traced from two
    outputs or more (the record's schemas, calibrated as its runs were), as workload_spread counts it."""
    from ..model.engines import shipped_profile_path
    from ..profile import load_profile
    prof = load_profile(shipped_profile_path([engine]))
    if backend not in prof.backends:
        return 0.0
    ids = tuple(s for s, (k, _) in mean_cost_spread(prof.backends[backend].traces).items() if k >= 2)
    return workload_spread(prof, backend, ids, 0.0).rse if ids else 0.0


def workload_spread(profile: Profile, backend: str, schema_ids: tuple[str, ...], reference: float) -> CostSpread:
    """The workload's mean cost a token spread beyond `reference`, each schema weighted by its traced cost a
    request (a uniform draw of schemas weighs them so): sqrt(sum (c_i e_i)^2) / sum c_i, e_i = sqrt(max(0,
    rse_i^2 - reference^2)); () means all the profile's schemas. A schema of one output takes the profile's
    per_output_spread as its rse."""
    traces = profile.backends[backend].traces
    ids = set(schema_ids) or {t.schema_id for t in traces}
    mine = [t for t in traces if t.schema_id in ids]
    spread, one = mean_cost_spread(mine), per_output_spread(traces)
    cost: dict[str, list[float]] = {}
    for t in mine:
        cost.setdefault(t.schema_id, []).append(sum(t.fill_us) + sum(t.accept_us))
    c = {s: statistics.fmean(v) for s, v in cost.items()}
    rse = {s: se if se is not None else one for s, (_, se) in spread.items()}
    excess = {s: math.sqrt(max(0.0, r ** 2 - reference ** 2)) for s, r in rse.items() if r is not None}
    total = sum(c.values())
    got = math.sqrt(sum((c[s] * e) ** 2 for s, e in excess.items())) / total if total > 0 else 0.0
    return CostSpread(backend, got, reference, tuple(sorted(s for s, (k, _) in spread.items() if k < 2)), one)


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


def swings(profile: Profile, configs: list, loads: list, schema_ids: tuple[str, ...], progress: bool = False,
           **grid_args) -> tuple[dict[tuple[str, str], CostSpread], dict[str, tuple[float, float]]]:
    """Each (engine, backend)'s workload spread, and how far each point's schema-on ITL mean moves with its
    schemas' traces at the low and the high end of it (by point_key: each end's ITL over the traces' own, on runs
    of 1/SWING_SHARE the point's requests); only where the spread is material (MATERIAL_RSE; else no run).
    `grid_args`: the grid's executor, scheduler and schema-off arms, as the points' own ran; `progress`: a bar
    for each grid."""
    from ..model.predict import grid, point_key
    spreads = {(e, b): workload_spread(profile, b, schema_ids, reference_rse(e, b))
               for e, b in dict.fromkeys((c.engine, c.backend) for c in configs)}  # once a pair (advise: ~100 configs)
    out: dict[str, tuple[float, float]] = {}
    for engine in dict.fromkeys(c.engine for c in configs):
        mine = {b: sp for (e, b), sp in spreads.items() if e == engine and sp.material}
        cfgs = [c for c in configs if c.engine == engine and c.backend in mine]
        if not cfgs:
            continue
        short = [replace(w, requests=max(w.requests // SWING_SHARE, 2 * (w.concurrency or 0), 200)) for w in loads]
        runs = [grid(scaled(profile, mine, schema_ids, end) if end is not None else profile, cfgs, short, band=False,
                     progress=progress, desc=f"{engine} interval, schemas' cost {words}", **grid_args)
                for end, words in ((0, "at its low end"), (1, "at its high end"), (None, "as traced"))]
        for (cfg, wl), lo, hi, mid in zip(itertools.product(cfgs, loads), *runs):
            if mid.itl_ms_mean:
                out[point_key(cfg, wl)] = (lo.itl_ms_mean / mid.itl_ms_mean, hi.itl_ms_mean / mid.itl_ms_mean)
    return spreads, out
