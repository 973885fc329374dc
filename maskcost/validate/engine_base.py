"""What a live calibration cannot see of the engine, taken from a base profile of the same engine version
(--engine-from, by default the embedded one when the server is its engine and version): the engine thread's own work
per step and the pool's in-engine cost (the in-server probe's EngineFill), the band between servers and the
structured request's extra admission cost, scaled by the two hosts' bench (validate/server_calibration.py runs it)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..profile import BackendCosts, EngineFill, Profile, load_profile
from ..calibrate.run import replay_cost_ratio
from ..calibrate.schemas import SchemaEntry
from ..calibrate.tokenizer import Vocab


def fill_scaled(ef: EngineFill | None, serial: float, pool: float, method: str | None = None) -> EngineFill:
    """`ef`'s fill factors times `serial` (the serial fill) and `pool` (the pool's: whole and per task);
    a fresh EngineFill of those factors where `ef` is None (no in-engine factors carried)."""
    ef = ef or EngineFill(method="", serial_factor=1.0, pool_factor=1.0, points=())
    return replace(ef, serial_factor=ef.serial_factor * serial, pool_factor=ef.pool_factor * pool,
                   pool_task_factor=ef.pool_task_factor * pool, method=ef.method if method is None else method)


def scaled_engine_side(base: Profile, bench_us: float, backends: dict[str, BackendCosts],
                        fill_ratio: dict[str, float] | None = None) -> tuple[dict[str, BackendCosts], float]:
    """`backends` with `base`'s in-engine factors (EngineFill), its times scaled from base's host to
    this one by the bench ratio, its fill factors divided by `fill_ratio` where given (the library cost of
    these traces' outputs over base's convention: replay_cost_ratio); returns them and the bench ratio."""
    r = bench_us / base.host.bench_us

    def scaled(ef: EngineFill, k: float) -> EngineFill:
        return replace(ef, cpu_points=tuple(replace(c, ms=c.ms * r) for c in ef.cpu_points),
                       pool_excess_points=tuple(replace(c, ms=c.ms * r) for c in ef.pool_excess_points),
                       serial_factor=ef.serial_factor / k, pool_factor=ef.pool_factor / k,
                       pool_task_factor=ef.pool_task_factor / k)
    out = {}
    for name, b in backends.items():
        ef = base.backends[name].engine_fill if name in base.backends else None
        out[name] = replace(b, engine_fill=scaled(ef, (fill_ratio or {}).get(name, 1.0))) if ef is not None else b
    return out, r


def convention_ratios(base: Profile, costs: dict[str, BackendCosts], vocab: Vocab, entries: list[SchemaEntry],
                      outputs: dict[str, dict[str, list]], notes: list[str]) -> dict[str, float]:
    """For each backend whose traces here replay outputs written with other separators than `base`'s
    (whose in-engine factors were fitted against those: guidance in profiles written before they were
    recorded), the library's cost of the one over the other on these outputs, measured here."""
    out = {}
    for name, c in costs.items():
        b = base.backends.get(name)
        if b is None or b.engine_fill is None or b.traced_separators == c.traced_separators:
            continue
        k = replay_cost_ratio(vocab, entries, outputs.get(name) or {}, c.traced_separators, b.traced_separators)
        if k:
            out[name] = k
            notes.append(f"{name}: its in-engine fill factors were fitted against traces written with "
                         f"{b.traced_separators!r}, these with {c.traced_separators!r}, whose fills cost x{k:.2f} "
                         f"a token on this host over the same outputs: the factors divided by it")
    return out


def engine_side_base(engine_from: str | None, server_version: Any, default_path: Path) -> tuple[Profile | None, str]:
    """The profile whose in-engine factors the new one takes: --engine-from, else the embedded default
    where its vLLM version is the server's; and a note saying which (or why none)."""
    if engine_from:
        return load_profile(engine_from), f"in-engine factors from {engine_from}"
    from ..model.engines import ENGINES, reported_engine
    base = load_profile(default_path)
    packages = base.provenance.get("packages", {})
    engine = next((n for n in ENGINES if n in packages), None)  # the engine the embedded profile was made on
    ver, got, said = packages.get(engine), reported_version(server_version), reported_engine(server_version)
    label = lambda name: ENGINES[name].label if name in ENGINES else name  # noqa: E731
    if said is not None and said != engine:
        return None, (f"no in-engine factors: the server is {label(said)} {got}, the embedded profile's are "
                      f"{label(engine)} {ver}'s (give --engine-from PROFILE of this engine version)")
    if ver and got == ver:
        return base, f"in-engine factors from the embedded profile {base.name} (the same {label(engine)} {ver})"
    return None, (f"no in-engine factors: the server reports version {got!r}, the embedded profile is "
                  f"{label(engine)} {ver} (give --engine-from PROFILE of this engine version)")


def reported_version(server_version: Any) -> str | None:
    """The version string in server_provenance's "version" (vLLM's /version, SGLang's /server_info), if any."""
    return server_version.get("version") if isinstance(server_version, dict) else None


def engine_side(base: Profile | None, base_note: str, bench_us: float, costs: dict[str, BackendCosts], forward: Any,
                vocab: Vocab, entries: list[SchemaEntry], outputs: dict[str, dict[str, list]],
                notes: list[str]) -> tuple[dict[str, BackendCosts], Any]:
    """The costs and forward curve with what a live sweep cannot see taken from `base` (engine_side_base):
    its in-engine factors (converted to these traces' separators) and the structured request's API-server
    cost, scaled by the two hosts' bench; unchanged where there is no base. The note of which in `notes`."""
    if base is None:
        notes.append(base_note)
        return costs, forward
    k = convention_ratios(base, costs, vocab, entries, outputs, notes)
    costs, ratio = scaled_engine_side(base, bench_us, costs, k)
    notes.append(f"{base_note}, scaled x{ratio:.3f} (this host's bench_us / its); the band (engine_speeds) from it too")
    fw_base = base.forward.frontend_at_profile_speed()  # (at its profile host's speed, as the bench ratio takes them)
    forward = forward.frontend_at_profile_speed()  # (the base's own curve, where no forward sweep replaced it)
    return costs, replace(forward, frontend_structured_ms=fw_base.frontend_structured_ms * ratio,
                          frontend_structured_token_us=fw_base.frontend_structured_token_us * ratio)
