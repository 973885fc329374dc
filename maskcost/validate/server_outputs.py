"""The server's own schema-on outputs, what calibrate --base-url traces on this host: those its speed points wrote,
spread over them, topped up with a point of its own for a schema short of them, and which server's they are."""
from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

from ..calibrate.run import recorded_outputs
from ..calibrate.schemas import SchemaEntry
from ..calibrate.tokenizer import Vocab
from ..records import raw_records_path, read_summaries
from .plan import LivePlan
from .sweep import PointSpec, run_sweep

if TYPE_CHECKING:
    from .server_calibration import SpeedSweeps


def all_outputs(speed: "SpeedSweeps", vocab: Vocab, entries: list[SchemaEntry], backends: list[str],
                notes: list[str]) -> dict[str, dict[str, list]]:
    """Each backend's outputs to trace (server_outputs): its own server's where it has one (--base-url's
    for the server's backend, --backend-url's for the others), else --base-url's; a note of each in `notes`."""
    plan, got = speed.plan, {}
    for b, url in ((speed.backend, speed.base_url), *speed.others.items()):
        mine = [e for e in entries if e in speed.on_entries.get(b, ())]
        got[b] = server_outputs(url, vocab, mine, speed.path(b), speed.side("outputs" if b == speed.backend
                                                                            else f"outputs-{b}"), plan, speed.seed)
        said = outputs_note(mine, got[b], plan)
        notes.append(said if b == speed.backend else f"{b}: " + said.replace("the server's", f"its server's ({url})"))
    return {b: got.get(b, got[speed.backend]) for b in backends}


def _spread_at(k: int, n: int) -> list[int]:
    return list(range(k)) if k <= n else [(2 * i + 1) * k // (2 * n) for i in range(n)]


def spread(items: list, n: int) -> list:
    """`n` of `items` evenly spaced over them (all of them where there are no more): a sweep's outputs
    sampled across its points (each point's outputs lie in its file in turn), the same on every run."""
    return [items[i] for i in _spread_at(len(items), n)]


def spread_rest(items: list, n: int, seed: int) -> list:
    """The `items` that spread(items, n) leaves out, in an order drawn with `seed` (the same on every run), so that
    wherever the tracer stops among them (fill.EnoughTraces) the outputs it replayed lie across the points."""
    first = set(_spread_at(len(items), n))
    rest = [x for i, x in enumerate(items) if i not in first]
    random.Random(seed).shuffle(rest)
    return rest


def server_outputs(base_url: str, vocab: Vocab, entries: list[SchemaEntry], speed_sweep: Path, path: Path,
                   plan: LivePlan, seed: int, rounds: int = 3) -> dict[str, list]:
    """The server's valid schema-on outputs by schema id, up to plan.traced_max of each where it gives them,
    each the token stream the engine emitted (read from the streamed chunks): those of its speed points
    (`speed_sweep`: the schemas mixed, at the loads its speed is read at), plan.outputs_per_schema of them evenly
    spread over them first, the rest after (spread_rest: the tracer replays the first outputs_per_schema and
    more only where the mean is still poorly known, LivePlan.trace_rse); for a
    schema with fewer than plan.outputs_enough of them, a point of its own at plan.outputs_concurrency for the
    rest (into `path`), then up to `rounds - 1` more while still short. A schema with none keeps outputs
    sampled under the mask (one the server refused at the speed points is not asked again)."""
    want = plan.outputs_per_schema
    have = recorded_outputs(raw_records_path(speed_sweep), vocab) if raw_records_path(speed_sweep).exists() else {}
    refused = set().union(*(d.config.get("refused_schemas") or {} for d in read_summaries(speed_sweep))) \
        if speed_sweep.exists() else set()  # (the server refused them: no outputs to ask for; sampled under the mask)
    todo, more = [e for e in entries if len(have.get(e.schema_id, ())) < plan.outputs_enough
                  and e.schema_id not in refused], {}
    for r in range(rounds if todo else 0):
        for e in todo:
            n = max(plan.min_requests, round(1.25 * (want - len(have.get(e.schema_id, ()))
                                                     - len(more.get(e.schema_id, ())))))
            run_sweep(base_url, [PointSpec("on", min(plan.outputs_concurrency, n), entries.index(e) * rounds + r, n)],
                      [e], path, max_tokens=plan.max_tokens, seed=seed, client_procs=plan.client_procs_at)
        more = recorded_outputs(raw_records_path(path))
        todo = [e for e in todo if len(have.get(e.schema_id, ())) + len(more.get(e.schema_id, ())) < want]
        if not todo:
            break
    more = recorded_outputs(raw_records_path(path), vocab) if more else {}  # (counted above, read as tokens now)
    both = {e.schema_id: spread(have.get(e.schema_id, []), want) + more.get(e.schema_id, [])
            + spread_rest(have.get(e.schema_id, []), want, seed) for e in entries}
    return {sid: outs[:plan.traced_max] for sid, outs in both.items() if outs}


def whose_outputs(source: str, backend: str, server_backend: str, base_url: str, others: dict[str, str]) -> str:
    """A trace source (calibrate.fill) with the server whose outputs it replayed: the backend's own, or
    the --base-url server's of another backend, whose output lengths are then a guess for this one."""
    if "recorded" not in source:
        return source
    if backend in others:
        return f"{source} of its own {backend} server ({others[backend]})"
    if backend == server_backend:
        return f"{source} of the {backend} server ({base_url})"
    return (f"{source} of the {server_backend} server ({base_url}): an engine with {backend} writes outputs of "
            f"another shape, so their lengths are a guess here (calibrate --backend-url {backend}=URL traces its own)")


def outputs_note(entries: list[SchemaEntry], outputs: dict[str, list[str]], plan: LivePlan) -> str:
    """The profile's note of where each schema's traced outputs came from."""
    want = plan.outputs_per_schema
    short = [f"{e.schema_id} ({len(outputs.get(e.schema_id, ()))})" for e in entries
             if len(outputs.get(e.schema_id, ())) < want]
    more = (f", more (up to {plan.traced_max}) where its mean cost a token is known worse than "
            f"+-{100 * plan.trace_rse:.0f}%" if plan.traced_max > want else "")
    return (f"traces: the server's own valid outputs, up to {want} a schema{more} (its speed points', spread over them; a "
            f"point of its own for a schema short of them), as the engine emitted their tokens (their lengths are "
            f"the requests' output lengths)" + (f"; short of {want}: {', '.join(short)} (none: sampled under the mask, "
                                  f"lengths a guess)" if short else ""))
