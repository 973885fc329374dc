"""A profile's engine side measured again from finished sweeps of a server (`calibrate --engine-only`): the
host, its grammar costs and its apply cost kept, the forward curve (with what it holds: prefill, context,
the API server, the eager prefill, the sync points) replaced where a sweep measured it again.

The API the command line calls: `ServerSweeps` holds the sweeps (records.read_summaries) and the files they
came from; `engine_side` returns the new Profile. What a sweep does not measure stays the base profile's.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..records import SweepSummary

from ..profile import ForwardCurve, ForwardPoint, Profile
from .engine import fit_frontend, forward_from_summaries, forward_points_kept

Summaries = list[SweepSummary]


@dataclass(frozen=True)
class ServerSweeps:
    """Finished schema-off sweeps of one server, each with the files it came from (for the curve's source)."""
    forward: Summaries | None = None  # the forward curve (decode steps at several batches)
    forward_files: tuple[str, ...] = ()
    sync: Summaries = ()  # the same without async scheduling or the overlap scheduler
    sync_files: tuple[str, ...] = ()
    prefill: Summaries = ()  # concurrency 1, unique prompts of several lengths
    prefill_files: tuple[str, ...] = ()
    context: Summaries = ()  # long prefix-cached prompts
    context_files: tuple[str, ...] = ()
    eager: Summaries = ()  # concurrency 1, the same prompt against fresh ones
    eager_files: tuple[str, ...] = ()
    note: str = ""  # said of the server (calibrate --engine-note), appended to the curve's source

    def check(self) -> None:
        """A ValueError (one line) where the sweeps cannot make a curve together."""
        if (self.prefill or self.context or self.eager) and self.forward is None:
            raise ValueError("--prefill-sweep, --context-sweep and --eager-sweep need the --forward-sweep of the "
                             "same server (their reference)")


def _source(sweeps: ServerSweeps) -> str:
    parts = [f"schema-off sweep {' '.join(sweeps.forward_files)}"]
    if sweeps.prefill:
        parts.append(f"prefill: concurrency-1 TTFT of unique prompts, {' '.join(sweeps.prefill_files)}")
    if sweeps.context:
        parts.append(f"context: long prefix-cached prompts, {' '.join(sweeps.context_files)}")
    if sweeps.eager:
        parts.append(f"eager prefill: concurrency-1 TTFT, the same prompt against fresh ones, "
                     f"{' '.join(sweeps.eager_files)}")
    return f"{'; '.join(parts)}. {sweeps.note}"


def new_forward(base: ForwardCurve, sweeps: ServerSweeps, frontend_refit: bool) -> ForwardCurve:
    """The forward curve from the new forward sweep; what these sweeps do not re-measure (prefill points,
    context slope, the API server unless `frontend_refit`, eager prefill, sync points) stays the base's."""
    fw = forward_from_summaries(sweeps.forward, _source(sweeps), (), sweeps.prefill, sweeps.context, sweeps.eager)
    if frontend_refit:  # (the refit's costs are at the profile host's speed: the base's it keeps brought to it)
        base = base.frontend_at_profile_speed()
    keep: dict[str, Any] = {"frontend_read_speed": base.frontend_read_speed}
    if not sweeps.prefill:
        keep["prefill_points"] = base.prefill_points
    if not sweeps.context:
        keep.update(context_us_per_ktoken=base.context_us_per_ktoken, context_points=base.context_points,
                    context_ref_tokens=fw.context_ref_tokens or base.context_ref_tokens)
    if not frontend_refit:
        keep.update(frontend_token_us=base.frontend_token_us, frontend_request_ms=base.frontend_request_ms)
    if not sweeps.eager:
        keep["eager_prefill_ms"] = base.eager_prefill_ms
    fw = replace(fw, sync_points=base.sync_points, frontend_structured_ms=base.frontend_structured_ms,
                 frontend_structured_token_us=base.frontend_structured_token_us, **keep)
    if not any(s.arm == "off" and s.concurrency == 1 for s in sweeps.forward) and not sweeps.eager:
        fw = replace(fw, ttft_fixed_ms=base.ttft_fixed_ms)  # measured at concurrency 1 only
    return fw


def with_sync(fw: ForwardCurve, sweeps: ServerSweeps) -> ForwardCurve:
    """The curve with the sync sweep's points (the batches that were full)."""
    sync, left = forward_points_kept(list(sweeps.sync))
    return replace(fw, sync_points=sync, source=f"{fw.source} Sync points (--no-async-scheduling): "
                                                f"{' '.join(sweeps.sync_files)}"
                                                + (f", left out (batch not full): {', '.join(left)}." if left else "."))


def with_frontend(profile: Profile, sweeps: ServerSweeps, log: Callable[[str], None] | None = None) -> ForwardCurve:
    """The profile's curve with the API server's costs fitted on the forward sweep (calibrate.engine.fit_frontend)."""
    if sweeps.forward is None:
        raise ValueError("--frontend: fitted on the --forward-sweep; give it")
    fw = fit_frontend(profile, sweeps.forward, log=log)
    return replace(fw, source=f"{fw.source} API server: {fw.frontend_token_us:.0f} us per streamed token, "
                              f"{fw.frontend_request_ms:.2f} ms per request, fitted on the forward sweep's TTFT "
                              f"and running counts (calibrate.engine.fit_frontend).")


def engine_side(base: Profile, sweeps: ServerSweeps, frontend_refit: bool = False, name: str | None = None,
                provenance: dict[str, Any] | None = None, log: Callable[[str], None] | None = None) -> Profile:
    """`base` with its engine side measured again from `sweeps` (a ValueError, one line, where they cannot):
    the forward curve where a forward sweep is given, the sync points where a sync sweep is, the API
    server's costs where `frontend_refit`; `provenance` is kept as the profile's "engine_only" entry, with the
    name of the profile it refits (its "base")."""
    sweeps.check()
    fw = new_forward(base.forward, sweeps, frontend_refit) if sweeps.forward is not None else base.forward
    if sweeps.sync:
        fw = with_sync(fw, sweeps)
    if frontend_refit:
        fw = with_frontend(replace(base, forward=fw), sweeps, log)
    prov = {**base.provenance, **({"engine_only": {**provenance, "base": base.name}} if provenance is not None else {})}
    return replace(base, name=name or base.name, forward=fw, provenance=prov)


def borrowed_sync(fw: ForwardCurve, donor: Profile) -> ForwardCurve:
    """`fw` with async-off points made from `donor`'s: at each of the donor's sync batches, this curve's own
    async ITL plus the work async scheduling hid on the donor's host there (model.costs.hidden_work_ms, what
    Costs.cpu_overhead_ms prices on the donor), so a profile that never measured a server with async scheduling off
    prices that work as the donor measured it rather than as none. Not measured on this profile's host: its source
    says whose it is."""
    from ..model.costs import forward_curve, hidden_work_ms
    own, d_async, d_sync = (forward_curve(p) for p in (fw.points, donor.forward.points, donor.forward.sync_points))
    hidden = {float(p.batch): hidden_work_ms(d_async, d_sync, p.batch) for p in donor.forward.sync_points}
    sync = tuple(ForwardPoint(b, own(b) + ms, own(b) + ms) for b, ms in sorted(hidden.items()))
    return replace(fw, sync_points=sync,
                   source=f"{fw.source} Sync points borrowed: this curve plus the work async scheduling hid on "
                          f"profile {donor.name}'s host ({', '.join(f'{ms:.1f} ms at {b:.0f}' for b, ms in sorted(hidden.items()))} "
                          f"rows), not measured on this one.")
