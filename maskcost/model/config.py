"""What a prediction is asked about: the engine and host (EngineConfig) and the load (Workload)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .engines import ENGINES, Engine, engine_policy

SPEC_METHODS = ("ngram", "eagle")
REPLICA_GPUS = ("own", "shared")
SCHEMA_ORDERS = ("random", "cycle")


DEFAULT_ENGINE = "vllm"  # the engine a command runs where it is given none


@dataclass(frozen=True)
class EngineConfig:
    engine: str = DEFAULT_ENGINE
    # whose mechanisms run (model/engines.py VERSIONS); None: the engine's default there
    engine_version: str | None = None
    backend: str = "xgrammar"
    max_num_seqs: int = 256  # llama.cpp: --parallel (slots)
    cpu_count: int = 16  # what multiprocessing.cpu_count() says: sizes vLLM's pools
    usable_cores: int = 16  # cores the server may really run on (affinity, cgroup)
    async_scheduling: bool = True  # vLLM default; SGLang: the overlap scheduler (default on)
    spec_tokens: int = 0
    spec_acceptance: float = 0.7  # probability each draft token is accepted
    # fraction of decode rows that carry k drafts in a step: 1 for EAGLE/MTP; ngram proposes only
    # where the last n tokens recur (vllm:spec_decode_num_drafts / decode row-steps; 0 measured on
    # the H200 with random weights, validation/h200-vllm-0.25.1/d)
    spec_draft_rate: float = 1.0
    spec_method: str = "ngram"
    cpu_speed: float = 1.0  # single-thread speed relative to the profile's host
    # vLLM: the speed of a point whose steps mostly fill on the pool (batches over its threshold),
    # where the server's own speed was read apart for the two regimes (Profile.measured_speed);
    # None: cpu_speed everywhere
    cpu_speed_pool: float | None = None
    xgrammar_cache_mb: int = 512  # VLLM_XGRAMMAR_CACHE_MB
    # tokens one step may carry (decode rows + prefill chunks); vLLM's OpenAI server on a GPU of
    # >= 70 GiB (not A100) defaults to 8192 (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults;
    # the H200 server logs "Chunked prefill is enabled with max_num_batched_tokens=8192"); for
    # SGLang it stands in for --chunked-prefill-size, for llama.cpp for -b (n_batch)
    max_num_batched_tokens: int = 8192
    # engines on one host serving the same load each (model/host_share.py): they share usable_cores,
    # each sizes its pools from cpu_count; "shared": all on one GPU (its forwards time-sliced), "own": a GPU each
    replicas: int = 1
    replica_gpu: str = "own"
    # a cgroup v2 CPU quota on each replica (cpu.max: quota / period), in CPUs; None: no quota. Unlike a
    # cpuset (usable_cores), the engine's threads run on any of the usable cores until the quota is spent
    cpu_quota: float | None = None
    # how long an idle OpenMP thread of the engine spins after a parallel region before it sleeps (libgomp's
    # GOMP_SPINCOUNT times the CPU's pause): the CPU each spinner of a step's bitmask copy burns
    # (Engine.copy_spinners; model/host_share.py). Fit on a 16-core Xeon H200 host, checked on a second one
    # (validation/h200-vllm-0.25.1/shape/posthoc/omp_spin.txt); calibrate measures its host's (HostInfo.omp_spin_ms)
    omp_spin_ms: float = 9.0
    # the engine's OpenMP team: the CPUs it could run on when it started (libgomp sizes the team then; a later
    # taskset does not); None: usable_cores
    omp_threads: int | None = None
    # tensor parallel: one engine whose step spans this many GPUs (one scheduler and one fill on the host;
    # Engine.tensor_parallel_modelled), and its forward over the profile's at the same rows (1.0: the profile
    # was calibrated at this tensor parallel size)
    tensor_parallel: int = 1
    tp_forward_ratio: float = 1.0

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"--engine {self.engine}: unknown (known: {', '.join(ENGINES)})")
        engine_policy(self.engine, self.engine_version)  # a version not modelled: one line
        for flag, v in (("--max-num-seqs", self.max_num_seqs), ("--cpu-count", self.cpu_count),
                        ("--cores", self.usable_cores)):
            if v < 1:
                raise ValueError(f"{flag} {v}: must be >= 1")
        if self.max_num_batched_tokens < self.max_num_seqs * (1 + self.spec_tokens):
            raise ValueError(f"--max-num-batched-tokens {self.max_num_batched_tokens}: must hold a decode step of "
                             f"every slot (max-num-seqs x (1 + spec tokens) = {self.max_num_seqs * (1 + self.spec_tokens)})")
        if self.spec_tokens < 0:
            raise ValueError(f"--spec-tokens {self.spec_tokens}: must be >= 0")
        for flag, v in (("--spec-acceptance", self.spec_acceptance), ("--spec-draft-rate", self.spec_draft_rate)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{flag} {v}: must be in [0, 1]")
        if not 0 < self.cpu_speed < math.inf or (self.cpu_speed_pool is not None and not 0 < self.cpu_speed_pool < math.inf):
            raise ValueError(f"--cpu-speed {self.cpu_speed}: must be a finite number > 0")
        if self.xgrammar_cache_mb < 0:
            raise ValueError(f"--xgrammar-cache-mb {self.xgrammar_cache_mb}: must be >= 0 (0: only the grammar compiled last is kept)")
        if self.replicas < 1 or self.replica_gpu not in REPLICA_GPUS:
            raise ValueError(f"--replicas {self.replicas} --replica-gpu {self.replica_gpu}: replicas >= 1, "
                             f"replica-gpu one of {', '.join(REPLICA_GPUS)}")
        if self.cpu_quota is not None and not 0 < self.cpu_quota <= self.usable_cores:
            raise ValueError(f"--cpu-quota {self.cpu_quota}: CPUs in (0, --cores {self.usable_cores}] (a quota "
                             f"beyond the cores it may run on never binds)")
        if not self.omp_spin_ms >= 0:
            raise ValueError(f"--omp-spin-ms {self.omp_spin_ms}: must be >= 0")
        if self.tensor_parallel < 1 or not self.tp_forward_ratio > 0:
            raise ValueError(f"--tensor-parallel {self.tensor_parallel} --tp-forward-ratio {self.tp_forward_ratio}: "
                             f"a size >= 1 and a ratio > 0")
        if self.tensor_parallel > 1 and not self.policy.tensor_parallel_modelled:
            raise ValueError(f"--tensor-parallel {self.tensor_parallel}: modelled for vLLM only, not for "
                             f"{self.engine} {self.policy.version}")
        if self.omp_threads is not None and self.omp_threads < 1:
            raise ValueError(f"--omp-threads {self.omp_threads}: must be >= 1")
        if self.spec_method not in SPEC_METHODS:
            raise ValueError(f"--spec-method {self.spec_method}: unknown (known: {', '.join(SPEC_METHODS)})")

    @property
    def policy(self) -> Engine:
        """The engine's own mechanisms (model/engines.py)."""
        return engine_policy(self.engine, self.engine_version)

    @property
    def compiles_before_scheduling(self) -> bool:
        return self.policy.compiles_before_scheduling

    @property
    def api_server_queue(self) -> bool:
        return self.policy.api_server_queue

    @property
    def effective_async(self) -> bool:
        return self.policy.effective_async(self)

    @property
    def host_shared(self) -> bool:
        """Whether what other engines or a quota do to this one enters the run (model/host_share.py)."""
        return self.replicas > 1 or self.cpu_quota is not None


@dataclass(frozen=True)
class Workload:
    concurrency: int | None = 64  # closed loop: this many clients, each sends on completion
    rate_per_s: float | None = None  # open loop: Poisson arrivals (concurrency must be None)
    requests: int = 2000
    prompt_tokens: int = 200  # each request's prompt: its context from the first decode step on
    # of which found in the prefix cache (vLLM caches whole 16-token blocks of a repeated prefix):
    # not computed at prefill; the rest is, in chunks within the step's token budget
    prompt_cached_tokens: int = 0
    # "fixed" (every prompt is prompt_tokens long), or per request "uniform:LO:HI" or
    # "lognormal:MEDIAN:SIGMA" (tokens); the cached prefix is the same for all
    prompt_lengths: str = "fixed"
    output_tokens: int | None = None  # None: each structured output ends where its trace (JSON) ends
    # lengths of the requests without a schema (the unstructured share, and the schema-off arm):
    # "trace" (as the structured ones: where the replayed output ends), "fixed:N",
    # "uniform:LO:HI" or "lognormal:MEDIAN:SIGMA" (tokens); --output-tokens overrides it for all
    unstructured_lengths: str = "trace"
    structured_fraction: float = 1.0
    schemas: tuple[str, ...] = ()  # schema ids in the profile; () means all of them
    unique_schemas: bool = False  # every request compiles (cache defeated)
    # which schema each request takes: "random" (drawn), or "cycle" (request i, structured or not, the i-th of
    # the schemas, in turn)
    schema_order: str = "random"
    seed: int = 0
    # a reasoning model (--reasoning-parser): every request first emits this many unconstrained
    # reasoning tokens, then its answer; "none", N, "fixed:N", "uniform:LO:HI" or "lognormal:MEDIAN:SIGMA"
    reasoning_tokens: str = "none"
    # None: run `requests` requests. P: stop issuing once the ITL mean's 95% confidence half-width
    # (batch means over the steps since the ramp) is at most P x the mean, checked every
    # max(concurrency, 50) requests from max(2 x concurrency, 100) on; `requests` stays the cap
    precision: float | None = None

    def __post_init__(self) -> None:
        if (self.concurrency is None) == (self.rate_per_s is None):
            raise ValueError("give exactly one of --concurrency (closed loop) or --rate (Poisson)")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"--concurrency {self.concurrency}: must be >= 1")
        if self.rate_per_s is not None and not 0 < self.rate_per_s < math.inf:
            raise ValueError(f"--rate {self.rate_per_s}: must be a finite number > 0")
        if self.requests < 1:
            raise ValueError(f"--requests {self.requests}: must be >= 1")
        if not 0.0 <= self.structured_fraction <= 1.0:
            raise ValueError(f"--structured-fraction {self.structured_fraction}: must be in [0, 1]")
        if not 1 <= self.prompt_tokens or self.prompt_cached_tokens < 0 or (
                self.prompt_lengths == "fixed" and self.prompt_cached_tokens >= self.prompt_tokens):
            raise ValueError(f"--prompt-tokens {self.prompt_tokens} --prompt-cached-tokens {self.prompt_cached_tokens}: "
                             f"need prompt >= 1 and 0 <= cached < prompt (the last prompt token is always computed)")
        if self.output_tokens is not None and self.output_tokens < 1:
            raise ValueError(f"--output-tokens {self.output_tokens}: must be >= 1")
        length_distribution(self.unstructured_lengths)  # validates
        reasoning_distribution(self.reasoning_tokens)  # validates
        if self.schema_order not in SCHEMA_ORDERS:
            raise ValueError(f"--schema-order {self.schema_order}: one of {', '.join(SCHEMA_ORDERS)}")
        if self.precision is not None and not 0 < self.precision < 1:
            raise ValueError(f"--precision {self.precision}: a fraction of the ITL mean, in (0, 1) (0 on the command "
                             f"line: a fixed --requests)")
        if self.prompt_lengths != "fixed" and not self.prompt_lengths.startswith(("uniform:", "lognormal:")):
            raise ValueError(f"--prompt-lengths {self.prompt_lengths}: expected fixed (--prompt-tokens), "
                             f"uniform:LO:HI or lognormal:MEDIAN:SIGMA")
        length_distribution(self.prompt_lengths, none_kind="fixed", flag="--prompt-lengths")  # validates the numbers


def reasoning_distribution(spec: str):
    """--reasoning-tokens: None for "none", else a function (rng, n) -> n reasoning lengths >= 1."""
    if spec == "none":
        return None
    if spec.isdigit():
        spec = f"fixed:{spec}"
    if spec == "trace":
        raise ValueError("--reasoning-tokens trace: expected none, N, fixed:N, uniform:LO:HI or lognormal:MEDIAN:SIGMA")
    try:
        return length_distribution(spec)
    except ValueError:
        raise ValueError(f"--reasoning-tokens {spec}: expected none, N, fixed:N, uniform:LO:HI or "
                         f"lognormal:MEDIAN:SIGMA with positive numbers") from None


def length_distribution(spec: str, none_kind: str = "trace", flag: str = "--unstructured-lengths"):
    """`none_kind` ('trace' for outputs, 'fixed' for prompts) -> None, else a function (rng, n) ->
    n lengths >= 1; `flag`: the option an error names."""
    import numpy as np
    if spec == none_kind:
        return None
    kind, *args = spec.split(":")
    try:
        vals = [float(a) for a in args]
    except ValueError:
        vals = []
    ok = {"trace": 0, "fixed": 1, "uniform": 2, "lognormal": 2}
    if kind not in ok or len(args) != ok[kind] or len(vals) != len(args) or any(v <= 0 for v in vals) \
            or (kind == "uniform" and vals[0] > vals[1]):
        raise ValueError(f"{flag} {spec}: expected {none_kind}, fixed:N, uniform:LO:HI or "
                         f"lognormal:MEDIAN:SIGMA with positive numbers")
    if kind == "trace":
        return None
    if kind == "fixed":
        return lambda rng, n: np.full(n, max(1, round(vals[0])))
    if kind == "uniform":
        return lambda rng, n: rng.integers(max(1, round(vals[0])), round(vals[1]) + 1, n)
    return lambda rng, n: np.maximum(1, np.round(rng.lognormal(np.log(vals[0]), vals[1], n))).astype(int)


# vLLM's prefix cache (on by default in v1) holds whole KV blocks of 16 tokens (the default block
# size, vllm:cache_config_info block_size) and always computes a prompt's last token
# (vllm/v1/core/kv_cache_manager.py, get_computed_blocks): a prompt repeated across requests
# computes only its tail.
PREFIX_CACHE_BLOCK_TOKENS = 16


def prefix_cached_tokens(prompt_tokens: int, block_tokens: int = PREFIX_CACHE_BLOCK_TOKENS) -> int:
    """Tokens of a repeated prompt found in the prefix cache."""
    return block_tokens * ((prompt_tokens - 1) // block_tokens)
