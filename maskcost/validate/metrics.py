"""Engine metrics from /metrics, parsed with prometheus_client's own parser.

vLLM (docs/engines.md Q5): vllm:num_requests_running (gauge), vllm:inter_token_latency_seconds and
vllm:iteration_tokens_total (histograms: _sum/_count give exact means over a window; the
iteration histogram's _count grows once per engine step), vllm:generation_tokens_total,
vllm:num_requests_waiting_by_reason{reason=deferred} (includes requests waiting for a grammar).
SGLang (Q10): sglang:num_running_reqs, sglang:num_grammar_queue_reqs, sglang:inter_token_latency_seconds
(0.5.17, observability/metrics_collector.py:1790-1803: _sum grows by each streamed chunk's interval and
the buckets by its tokens, so _sum/_count is the mean per-token ITL, as vLLM's), and
sglang:cuda_graph_passes_total{mode=...}: one count per decode batch (batch_result_processor.py:837-840)
and per prefill batch (metrics_reporter.py:611-614), with or without a CUDA graph: the engine's steps,
summed over its modes.
llama.cpp: llamacpp:requests_processing, llamacpp:n_decode_total, llamacpp:tokens_predicted_total.
"""
from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from ..model.engines import ENGINES, ServerMetrics

# summed over: the model, the engine index, histogram bounds; SGLang's per-rank and per-stream labels
# (0.5.17 observability/metrics_collector.py:1082-1092, tokenizer_manager.py:681-684, :1720-1723)
IGNORED_LABELS = {"model_name", "engine", "le", "quantile", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank",
                  "dp_rank", "priority", "is_streaming"}

# each engine's series: ENGINES[name].metrics (model/engines.py, ServerMetrics on its class, beside its citations)


def parse_metrics(text: str) -> dict[str, float]:
    """Flatten an exposition into {name or name{label=v,...}: value}, summed over ignored labels;
    histogram buckets are dropped (sums and counts are kept)."""
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name.endswith("_bucket"):
                continue
            labels = {k: v for k, v in s.labels.items() if k not in IGNORED_LABELS}
            key = s.name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}" if labels else "")
            out[key] = out.get(key, 0.0) + float(s.value)
    return out


def detect_engine(m: dict[str, float]) -> str | None:
    for name, e in ENGINES.items():
        if e.metrics.running in m:
            return name
    return None


@dataclass(frozen=True)
class WindowStats:
    """What the engine itself says happened between two snapshots."""
    window_s: float
    steps: float | None
    step_ms: float | None
    itl_ms: float | None
    gen_tokens_per_s: float | None
    counters: dict[str, float]
    series: ServerMetrics  # the engine's names of them

    @property
    def prompt_cached_fraction(self) -> float | None:
        """Prompt tokens found in the prefix cache / looked up, over the window; None where the engine exports none."""
        if self.series.prefix_cache is None:
            return None
        queries, hits = self.series.prefix_cache
        q = self.counters.get(queries)
        return self.counters.get(hits, 0.0) / q if q else None

    @property
    def spec_acceptance(self) -> float | None:
        """Accepted / proposed draft tokens over the window, None without drafts."""
        if self.series.drafts is None:
            return None
        proposed, accepted, _ = self.series.drafts
        drafted = self.counters.get(proposed)
        return self.counters.get(accepted, 0.0) / drafted if drafted else None

    def spec_draft_rate(self, gen_tokens: float) -> float | None:
        """Requests that got drafts / decode row-steps (each row-step makes 1 + accepted tokens)."""
        if self.series.drafts is None or self.series.drafts[2] not in self.counters:
            return None
        _, accepted, given = self.series.drafts
        row_steps = gen_tokens - self.counters.get(accepted, 0.0)
        return self.counters[given] / row_steps if row_steps > 0 else None


def window_stats(engine: str, before: dict[str, float], after: dict[str, float], window_s: float) -> WindowStats:
    series = ENGINES[engine].metrics
    steps_key, itl_base, gen_key = series.steps, series.itl_histogram, series.generated

    def delta(key: str | None) -> float | None:
        if key is None or key not in before or key not in after:
            return None
        return after[key] - before[key]

    def labelled_delta(key: str | None) -> float | None:
        """A counter's window delta summed over its label series (a series first seen in the window
        started at 0); None where the engine never exposed it."""
        if key is None:
            return None
        keys = [k for k in after if k == key or k.startswith(key + "{")]
        return sum(after[k] - before.get(k, 0.0) for k in keys) if keys else None

    steps = labelled_delta(steps_key)
    itl_sum, itl_n = delta(itl_base and itl_base + "_sum"), delta(itl_base and itl_base + "_count")
    gen = delta(gen_key)
    counters = {k: after[k] - before.get(k, 0.0) for k in after
                if k.startswith(series.extra_counter_prefixes) and not k.endswith("_created")}
    return WindowStats(window_s, steps,
                       window_s * 1e3 / steps if steps else None,
                       itl_sum * 1e3 / itl_n if itl_sum is not None and itl_n else None,
                       gen / window_s if gen is not None and window_s > 0 else None, counters, series)
