"""The model's workload for points a sweep measured (sweep summaries, maskcost/records.py): their
concurrency, prompt and cache hits, and the profile's schemas among theirs. The report compares the
model with these points; the fits (calibrate.engine) run the model on them."""
from __future__ import annotations

import statistics
from ..records import SweepSummary
from .config import Workload, prefix_cached_tokens
from .engines import served_by


def measured_prompt(ss: list[SweepSummary], shared: bool) -> tuple[int, int]:
    """(prompt tokens, of which cached) per request at a measured point: the server's usage counts;
    none cached for nonce-led prompts (calibrate.engine.prefill_tokens says why); else vLLM's
    prefix-cache hits where it reports them, or its rule for a prompt repeated across requests
    (model.config.prefix_cached_tokens; SGLang's radix cache: all but the last token)."""
    pts = [s.prompt_tokens_mean for s in ss if s.prompt_tokens_mean]
    if not pts:
        return Workload.prompt_tokens, 0
    prompt = max(1, round(statistics.mean(pts)))
    if not shared:
        return prompt, 0
    fr = [s.engine.prompt_cached_fraction for s in ss if s.engine.prompt_cached_fraction is not None]
    if fr:
        cached = round(prompt * statistics.mean(fr))
    elif (engine := served_by(ss[0])) is not None and engine.caches_prompt_to_the_token:
        cached = prompt - 1  # (SGLang's radix cache, page size 1: model/engines.py)
    else:
        cached = prefix_cached_tokens(prompt)
    return prompt, min(cached, prompt - 1)


def profile_schema_ids(s: SweepSummary, known: set[str], backend: str) -> tuple[str, ...]:
    """The schemas of sweep point `s` that the profile has (`known`, for `backend`); a one-line error
    where a schema-on point has none."""
    schemas = tuple(s.config.get("schemas") or ())
    ids = tuple(x for x in schemas if x in known)
    if s.arm == "on" and not ids:
        raise ValueError(f"sweep point {s.point}: none of its schemas {list(schemas)[:3]} is in the "
                         f"profile for {backend}; calibrate them first")
    return ids


def measured_workload(ss: list[SweepSummary], ids: tuple[str, ...], requests: int) -> Workload:
    """The model's workload for measured points of one arm and config (compare's groups): their
    concurrency and prompt, and their schemas (`ids`, profile_schema_ids) or the schema-off arm's
    fixed length."""
    s0, c = ss[0], ss[0].config
    on = s0.arm == "on"
    prompt, cached = measured_prompt(ss, shared=not c.get("unique_prompts"))  # unique schemas keep the prompt
    return Workload(concurrency=s0.concurrency, requests=requests, schemas=ids if on else (),
                    unique_schemas=bool(c.get("unique_schemas")), structured_fraction=1.0 if on else 0.0,
                    output_tokens=None if on else c.get("off_tokens"), prompt_tokens=prompt,
                    prompt_cached_tokens=cached)
