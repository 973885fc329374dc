"""Mechanism tests: each against an expectation computed by hand from the engine's rules."""
import numpy as np
import pytest

from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs, Curve
from maskcost.model.engine import Simulation
from maskcost.model.requests import Requests, deal
from maskcost.model.step import STEP_FIELDS
from maskcost.model.metrics import summarize
from synth import constant_profile


def run(profile, backend="xgrammar", requests=None, **kw):
    ekw = {k: kw.pop(k) for k in list(kw) if k in EngineConfig.__dataclass_fields__}
    kw.setdefault("prompt_tokens", 1)  # one-token prompts: the token budget never binds (prefill tests set it)
    wl = Workload(requests=requests or max(200, 4 * kw.get("concurrency", 1)), **kw)
    sim = Simulation(Costs(profile, backend), EngineConfig(backend=backend, **ekw), wl).run()
    return summarize(sim)


def test_closed_form_step_time():
    # async scheduling, constant costs: period = max(forward, rows x fill) + apply
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    assert run(p, concurrency=4)["itl_ms_mean"] == pytest.approx(6.0 + 0.1, rel=1e-6)  # fill 2 ms hidden
    assert run(p, concurrency=32)["itl_ms_mean"] == pytest.approx(32 * 0.5 + 0.1, rel=1e-6)  # fill exposed
    off = run(p, concurrency=32, structured_fraction=0.0)
    assert off["itl_ms_mean"] == pytest.approx(6.0, rel=1e-6)


def test_parallel_fill_knee_at_128_with_max_num_seqs_256_only():
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    serial = run(p, concurrency=128, max_num_seqs=256)
    pooled = run(p, concurrency=129, max_num_seqs=256)
    assert serial["breakdown"]["pool_step_fraction"] == 0.0
    assert serial["itl_ms_mean"] == pytest.approx(12.8, rel=1e-6)  # 128 x 0.1 ms on the engine thread
    assert pooled["breakdown"]["pool_step_fraction"] == 1.0
    # 129 rows = 9 chunks on min(16 // 2, 8) = 8 workers: 1.6 + 0.1 ms < forward 5 ms
    assert pooled["breakdown"]["pool_wait_ms"] == pytest.approx(1.7, rel=1e-6)
    assert pooled["itl_ms_mean"] == pytest.approx(5.0, rel=1e-6)
    # max_num_seqs 128: no pool is ever built; 160 offered -> 128 running, serial
    capped = run(p, concurrency=160, max_num_seqs=128)
    assert capped["breakdown"]["pool_step_fraction"] == 0.0
    assert 126 <= capped["running_mean"] <= 128
    assert capped["itl_ms_mean"] == pytest.approx(12.8, rel=1e-2)


def test_pool_size_follows_cpu_count_and_contends_for_usable_cores():
    p = constant_profile(fill_us=100.0, forward_ms=1.0)
    # cpu_count 4 -> 2 workers: 16 chunks of 1.6 ms over 2 workers = 12.8 ms
    two = run(p, concurrency=256, cpu_count=4, usable_cores=16)
    assert two["breakdown"]["pool_wait_ms"] == pytest.approx(12.8, rel=1e-6)
    # 8 workers on 2 usable cores: the same as 2 workers
    squeezed = run(p, concurrency=256, cpu_count=16, usable_cores=2)
    assert squeezed["breakdown"]["pool_wait_ms"] == pytest.approx(12.8, rel=1e-6)
    free = run(p, concurrency=256, cpu_count=16, usable_cores=16)
    assert free["breakdown"]["pool_wait_ms"] == pytest.approx(3.2, rel=1e-6)


def test_speculative_decoding_keeps_the_fill_serial_at_256_rows():
    p = constant_profile(fill_us=10.0, forward_ms=5.0)
    r = run(p, concurrency=256, max_num_seqs=256, spec_tokens=3, spec_method="eagle", spec_acceptance=0.5)
    assert r["breakdown"]["pool_step_fraction"] == 0.0
    # serial: 256 requests x (3 drafts + 1) rows x 10 us, less the drafts of requests in their first step
    assert 256 * 3.5 * 0.010 < r["breakdown"]["fill_ms"] <= 256 * 4 * 0.010
    # ngram turns async scheduling off in vLLM 0.25.1
    assert EngineConfig(spec_tokens=3, spec_method="ngram").effective_async is False
    assert EngineConfig(spec_tokens=3, spec_method="eagle").effective_async is True


def test_ngram_without_drafts_is_a_sync_step_without_the_pool():
    # ngram proposes nothing (draft rate 0): one row per request, no extra forward tokens, but
    # spec decoding is configured, so no pool at 256 rows and async scheduling is off
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    r = run(p, concurrency=256, spec_tokens=3, spec_method="ngram", spec_draft_rate=0.0)
    assert r["breakdown"]["pool_step_fraction"] == 0.0
    assert r["breakdown"]["fill_ms"] == pytest.approx(256 * 0.1, rel=0.02)
    half = run(p, concurrency=256, spec_tokens=3, spec_method="ngram", spec_draft_rate=0.5, spec_acceptance=0.0)
    # half the rows carry 3 drafts: 1 + 0.5 x 3 = 2.5 rows per request
    assert half["breakdown"]["fill_ms"] == pytest.approx(256 * 2.5 * 0.1, rel=0.05)


def test_spec_decoding_itl_is_measured_over_the_same_window_as_the_steps():
    # no drafts: one token per row per step, so the ITL is the mean step of the measured window, as
    # without spec decoding; the ramp-up's and the drain's short steps (fewer rows) are left out
    # (requests of other lengths without a schema: the batch's structured rows, and so the step, shrink
    # as the run drains)
    p = constant_profile(fill_us=1000.0, forward_ms=2.0)
    kw = dict(concurrency=32, requests=320, structured_fraction=0.5, unstructured_lengths="uniform:5:95")
    r = run(p, spec_tokens=3, spec_method="ngram", spec_draft_rate=0.0, **kw)
    sync = run(p, async_scheduling=False, **kw)
    assert r["itl_ms_mean"] == pytest.approx(sync["itl_ms_mean"], rel=1e-3)  # 3.6% under when the drain counted


def test_unique_schemas_raise_ttft_but_not_itl():
    p = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=400.0)
    same = run(p, concurrency=8, requests=200)
    uniq = run(p, concurrency=8, requests=200, unique_schemas=True)
    assert same["ttft_ms_p50"] < 50
    assert uniq["ttft_ms_p50"] >= 400
    assert uniq["itl_ms_mean"] == pytest.approx(same["itl_ms_mean"], rel=0.01)
    # xgrammar reuses its rule cache across near-identical schemas: after the first cold compile,
    # each unique variant costs the measured variant time (the H200 sweep saw ~20 ms, not ~1 s)
    p2 = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=400.0, variant_ms=10.0)
    fast = run(p2, concurrency=1, requests=50, unique_schemas=True)
    assert 10 <= fast["ttft_ms_p50"] < 30
    assert run(p2, concurrency=1, requests=50, unique_schemas=True, backend="guidance")["ttft_ms_p50"] >= 400


def test_async_scheduling_moves_the_fill_on_and_off_the_critical_path():
    # forward 10 ms (async), 14 ms sync: 4 ms of engine CPU that async hides without grammars.
    # 8 rows x 1 ms fill. Async: max(10, 4 + 8) = 12 ms. Sync: fill hidden under the forward
    # (max(10, 8) = 10) but the 4 ms CPU work is serial: 14 ms.
    p = constant_profile(fill_us=1000.0, forward_ms=10.0, sync_forward_ms=14.0)
    a = run(p, concurrency=8, async_scheduling=True)
    s = run(p, concurrency=8, async_scheduling=False)
    assert a["itl_ms_mean"] == pytest.approx(12.0, rel=1e-6)
    assert s["itl_ms_mean"] == pytest.approx(14.0, rel=1e-6)
    assert a["breakdown"]["exposed_ms"] == pytest.approx(2.0, rel=1e-6)


def test_sglang_grammar_queue_stalls_while_compiling_and_llguidance_fills_in_parallel():
    p = constant_profile(fill_us=100.0, forward_ms=2.0, compile_ms=30.0)
    r = run(p, engine="sglang", concurrency=None, rate_per_s=200.0, requests=200, unique_schemas=True)
    assert r["breakdown"]["compile_wait_ms"] > 0
    x = run(p, engine="sglang", backend="xgrammar", concurrency=64)
    g = run(p, engine="sglang", backend="guidance", concurrency=64, usable_cores=10)
    assert x["breakdown"]["step_ms"] == pytest.approx(6.4 + 0.0, rel=1e-6)  # 64 x 0.1 ms serial
    # llguidance: clamp(0.8 x 10, 1, 32) = 8 threads -> 64 rows in 0.8 ms, under the 2 ms forward
    assert g["itl_ms_mean"] == pytest.approx(2.0, rel=1e-6)


def test_same_seed_same_result_other_seed_differs():
    p = constant_profile(fill_us=100.0, forward_ms=3.0, heavy_tail=True)
    a = run(p, concurrency=16, seed=1, structured_fraction=0.5)
    b = run(p, concurrency=16, seed=1, structured_fraction=0.5)
    c = run(p, concurrency=16, seed=2, structured_fraction=0.5)
    assert a == b
    assert a["itl_ms_mean"] != c["itl_ms_mean"]


def test_traces_are_dealt_from_each_schemas_deck_without_replacement():
    """Each request's trace is dealt from its schema's shuffled deck: a schema's requests take its traces within one
    of each other (drawn with replacement 301 requests of two traces would rarely split 151/150), the same seed deals
    the same, and a deck of one card draws nothing from the generator."""
    from maskcost.model.config import EngineConfig as E
    p = constant_profile(fill_us=100.0, forward_ms=3.0, heavy_tail=True)
    wl = Workload(concurrency=8, requests=301, seed=3)
    reqs = [Requests(np.random.default_rng(wl.seed), Costs(p, "xgrammar"), E(), wl) for _ in range(2)]
    counts = np.bincount(reqs[0].trace, minlength=2)
    assert sorted(counts.tolist()) == [150, 151] and (reqs[0].trace == reqs[1].trace).all()
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    assert deal(rng, [0, 0, 0], [["only"]]) == ["only"] * 3 and rng.bit_generator.state == before
    got = deal(rng, [0, 1, 0, 1, 0, 1], [["a", "b", "c"], ["x"]])
    assert sorted(got[::2]) == ["a", "b", "c"] and got[1::2] == ["x"] * 3


def test_open_loop_poisson_and_bad_workloads():
    p = constant_profile(fill_us=10.0, forward_ms=5.0)
    r = run(p, concurrency=None, rate_per_s=100.0, requests=300)
    # Little: 100 req/s x 50 steps x ~5 ms = ~25 running
    assert 15 < r["running_mean"] < 40 and r["out_tok_per_s"] > 0
    with pytest.raises(ValueError, match="exactly one"):
        Workload(concurrency=4, rate_per_s=3.0)
    with pytest.raises(ValueError, match="--engine"):
        EngineConfig(engine="trt")


def test_curve_is_monotone_and_extrapolates_linearly():
    c = Curve([1, 8, 64, 64], [5.0, 4.9, 6.0, 6.2])
    assert c(1) == 5.0 and c(8) == 5.0  # a measured dip is flattened (running max)
    assert c(64) == pytest.approx(6.1)
    assert c(128) > c(64)
    # two reads of one batch (within 2%: a server at its cap) are one knot, not a slope to carry beyond them; a
    # chain of such reads too; points 3% apart stay two knots; all points one knot: proportional beyond it
    top = Curve([1, 98.1, 127.4, 128.6], [6.3, 10.9, 9.8, 12.2])
    assert top(128) == pytest.approx(11.0) and top(247) < 13.0
    chain = Curve([1, 100, 101.9, 102.1], [5.0, 9.0, 9.0, 12.0])
    assert list(chain.x) == [1.0, pytest.approx(101.333, abs=1e-3)] and chain(float(chain.x[-1])) == pytest.approx(10.0)
    assert len(Curve([1, 100, 103], [5.0, 9.0, 10.0]).x) == 3
    one = Curve([100, 101], [8.0, 10.0])
    assert one(100.5) == pytest.approx(9.0) and one(201) == pytest.approx(18.0)


def test_unstructured_output_length_distributions():
    p = constant_profile(fill_us=10.0, forward_ms=5.0, trace_len=50)
    sims = {}
    for spec in ("trace", "fixed:20", "uniform:10:30", "lognormal:40:0.5"):
        wl = Workload(concurrency=8, requests=2000, structured_fraction=0.5, unstructured_lengths=spec)
        sims[spec] = Simulation(Costs(p, "xgrammar"), EngineConfig(), wl)
    free = ~sims["trace"].req.structured
    assert (sims["trace"].req.out_len == 50).all()
    assert (sims["fixed:20"].req.out_len[free] == 20).all() and (sims["fixed:20"].req.out_len[~free] == 50).all()
    u = sims["uniform:10:30"].req.out_len[free]
    assert u.min() == 10 and u.max() == 30 and abs(u.mean() - 20) < 1
    assert abs(np.median(sims["lognormal:40:0.5"].req.out_len[free]) - 40) <= 3
    for bad in ("uniform:30:10", "poisson:3", "fixed:x", "fixed:0"):
        with pytest.raises(ValueError, match="--unstructured-lengths"):
            Workload(unstructured_lengths=bad)


# ---------------------------------------------------------------- prompts: prefill, budget, context

def test_chunked_prefill_ttft_closed_form():
    # a 3000-token prompt under a 1024-token budget: chunks 1024, 1024, 952 in three steps, each
    # step 5 ms + (chunk - 1) x 0.01 ms; the first token comes at the end of the third
    p = constant_profile(forward_ms=5.0, prefill_ms_per_token=0.01)
    r = run(p, concurrency=1, requests=3, prompt_tokens=3000, output_tokens=4, max_num_batched_tokens=1024,
            max_num_seqs=8, structured_fraction=0.0)
    want = (5 + 1023 * 0.01) * 2 + (5 + 951 * 0.01)
    assert r["ttft_ms_p50"] == pytest.approx(want, rel=1e-9)
    # decode steps carry no prefill: ITL stays at the forward
    assert r["itl_ms_mean"] == pytest.approx(5.0, rel=1e-9)
    # the prefix cache holds 2000 of them: one chunk of 1000
    r = run(p, concurrency=1, requests=3, prompt_tokens=3000, prompt_cached_tokens=2000, output_tokens=4,
            max_num_batched_tokens=1024, max_num_seqs=8, structured_fraction=0.0)
    assert r["ttft_ms_p50"] == pytest.approx(5 + 999 * 0.01, rel=1e-9)


def test_token_budget_queues_admission_beyond_one_step():
    # 64 clients at once, 1000-token prompts, budget 8192: step k has 8192 - (decode rows) tokens
    # for prompts, chunks split across steps, so the prompts finished by the end of step k are
    # floor(cumulative prompt tokens / 1000): 8, 16, 24, 32, 40, 49, 57, 64 (TTFT 5 ms per step).
    # With a budget of 65536 all 64 finish in step one.
    p = constant_profile(forward_ms=5.0)
    wl = Workload(concurrency=64, requests=64, prompt_tokens=1000, output_tokens=200, structured_fraction=0.0)
    sim = Simulation(Costs(p, "xgrammar"), EngineConfig(max_num_batched_tokens=8192), wl).run()
    ttft = np.sort(sim.req.first_t - sim.req.arrival)
    done_by_step = [8, 16, 24, 32, 40, 49, 57, 64]
    want = np.concatenate([np.full(n - m, 5.0 * (k + 1)) for k, (m, n) in enumerate(zip([0] + done_by_step, done_by_step))])
    assert np.allclose(ttft, want)
    sim = Simulation(Costs(p, "xgrammar"), EngineConfig(max_num_batched_tokens=65536), wl).run()
    assert np.allclose(sim.req.first_t - sim.req.arrival, 5.0)


def test_context_beyond_the_curves_own_adds_attention_time():
    # one request, prompt 1100 (all but its last token cached: no prefill term), 101 tokens: 100
    # decode steps at positions 1..100, context 1100 + pos against the curve's 100 per row, at
    # 1 us per token: ITL = 5 + 0.001 x (1000 + 50.5) ms
    p = constant_profile(forward_ms=5.0, prefill_ms_per_token=0.01, context_ref_tokens=100.0,
                         context_us_per_ktoken=1000.0)
    wl = Workload(concurrency=1, requests=1, prompt_tokens=1100, prompt_cached_tokens=1099, output_tokens=101,
                  structured_fraction=0.0)

    def decode_periods(profile):
        sim = Simulation(Costs(profile, "xgrammar"), EngineConfig(), wl).run()
        st = np.array(sim.steps)
        return st[st[:, STEP_FIELDS.index("decode_rows")] > 0, STEP_FIELDS.index("period_ms")]
    per = decode_periods(p)
    assert per.size == 100 and per.mean() == pytest.approx(5 + 0.001 * 1050.5, rel=1e-9)
    assert np.allclose(decode_periods(constant_profile(forward_ms=5.0)), 5.0)  # no context measurement: no term


def test_prompt_inputs_are_validated():
    with pytest.raises(ValueError, match="--prompt-cached-tokens"):
        Workload(prompt_tokens=100, prompt_cached_tokens=100)
    with pytest.raises(ValueError, match="--max-num-batched-tokens"):
        EngineConfig(max_num_seqs=256, max_num_batched_tokens=128)


def test_api_server_queue_delays_first_tokens_and_caps_streaming():
    from dataclasses import replace
    p = constant_profile(forward_ms=5.0)
    fe = replace(p, forward=replace(p.forward, frontend_request_ms=1.0, frontend_token_us=1000.0))
    # one client: admit 1 ms, the prefill step 5 ms, streaming its token 1 ms
    r = run(fe, concurrency=1, requests=4, output_tokens=3, structured_fraction=0.0)
    assert r["ttft_ms_p50"] == pytest.approx(7.0, rel=1e-9)
    # 64 clients against an API server that streams 1,000 tokens/s while the engine could make
    # 12,800: the clients hear of their ends late, so the engine runs far fewer than 64 and
    # makes about what the API server streams
    r = run(fe, concurrency=64, requests=640, output_tokens=20, structured_fraction=0.0)
    assert r["running_mean"] < 16 and r["out_tok_per_s"] < 1100
    alone = run(p, concurrency=64, requests=640, output_tokens=20, structured_fraction=0.0)
    assert alone["running_mean"] > 60
    # its loop's busy share: full where it is the limit, a few ms of each request's cycle for one client (4 ms of
    # jobs a request: admit 1, three tokens 1 each), none where the profile has no API server's costs
    assert r["api_server_busy_fraction"] > 0.95 and alone["api_server_busy_fraction"] is None
    one = run(fe, concurrency=1, requests=4, output_tokens=3, structured_fraction=0.0)
    assert 0.1 < one["api_server_busy_fraction"] < 0.5
    # the API server's work is the host's: at half the CPU speed it takes twice as long (admit 2 ms,
    # stream 2 ms; the prefill step is the GPU's 5 ms)
    wl = Workload(concurrency=1, requests=4, output_tokens=3, structured_fraction=0.0, prompt_tokens=1)
    slow = summarize(Simulation(Costs(fe, "xgrammar", 0.5), EngineConfig(cpu_speed=0.5), wl).run())
    assert slow["ttft_ms_p50"] == pytest.approx(9.0, rel=1e-9)
    # costs read on a host at speed 0.5 (frontend_read_speed, finding 77): priced as read there (admit 1 ms, stream
    # 1 ms: TTFT 7 ms), at twice that speed half as dear (6 ms), and while calibrate reads the speed (AS_READ_HERE)
    # as read whatever the speed (7 ms)
    from maskcost.profile import AS_READ_HERE
    at_half = replace(fe, forward=replace(fe.forward, frontend_read_speed=0.5))
    here = replace(fe, forward=replace(fe.forward, frontend_read_speed=AS_READ_HERE))
    for q, speed, ttft in ((at_half, 0.5, 7.0), (at_half, 1.0, 6.0), (here, 0.5, 7.0), (here, 2.0, 7.0)):
        got = summarize(Simulation(Costs(q, "xgrammar", speed), EngineConfig(cpu_speed=speed), wl).run())
        assert got["ttft_ms_p50"] == pytest.approx(ttft, rel=1e-9), (speed, ttft)
    # a structured stream's token read apart (3 ms), its request's whole cost 1 ms (frontend_structured_ms, no
    # frontend_request_ms beside it): a schema-off request streams at the other's 1 ms, a structured one its first
    # token 2 ms later than with one cost for both; a structured request's whole cost 4 ms: 3 ms later again
    apart = replace(fe, forward=replace(fe.forward, frontend_structured_token_us=3000.0, frontend_structured_ms=1.0))
    assert run(apart, concurrency=1, requests=4, output_tokens=3, structured_fraction=0.0)["ttft_ms_p50"] == \
        pytest.approx(7.0, rel=1e-9)
    on, on_apart = (run(q, concurrency=1, requests=4, output_tokens=3)["ttft_ms_p50"] for q in (fe, apart))
    assert on_apart - on == pytest.approx(2.0, rel=1e-6)
    dearer = replace(apart, forward=replace(apart.forward, frontend_structured_ms=4.0))
    assert run(dearer, concurrency=1, requests=4, output_tokens=3)["ttft_ms_p50"] - on_apart == pytest.approx(3.0, rel=1e-6)


def test_prompt_length_distribution_sets_each_prefill():
    # prompts uniform in 100..300 tokens, alone at concurrency 1: each TTFT is its own prefill step,
    # 5 ms + (prompt - 1) x 0.01 ms, so the TTFTs span what the prompts span
    p = constant_profile(forward_ms=5.0, prefill_ms_per_token=0.01)
    wl = Workload(concurrency=1, requests=60, prompt_lengths="uniform:100:300", output_tokens=2, structured_fraction=0.0)
    sim = Simulation(Costs(p, "xgrammar"), EngineConfig(), wl).run()
    assert sim.req.prompt.min() >= 100 and sim.req.prompt.max() <= 300 and len(set(sim.req.prompt)) > 20
    assert np.allclose(sim.req.first_t - sim.req.arrival, 5.0 + (sim.req.prompt - 1) * 0.01)
    with pytest.raises(ValueError, match="--prompt-lengths"):
        Workload(prompt_lengths="trace")
    with pytest.raises(ValueError, match="--unstructured-lengths"):
        Workload(unstructured_lengths="fixed")


def test_vllm_async_grammar_steps_hold_their_outputs_for_the_next_fill():
    """vLLM, async scheduling, a grammar in the batch: step N's tokens leave the engine when step
    N+1's deferred fill is done (step_with_batch_queue returns then), so a first token reaches the
    client one step later than without async scheduling; the engine's ITL is the same."""
    p = constant_profile(fill_us=20000.0, forward_ms=5.0)  # one row: a 20 ms fill, the forward hidden
    a = run(p, concurrency=1, requests=50, output_tokens=20, async_scheduling=True)
    s = run(p, concurrency=1, requests=50, output_tokens=20, async_scheduling=False)
    assert a["itl_ms_mean"] == pytest.approx(20.0, rel=1e-6) and s["itl_ms_mean"] == pytest.approx(20.0, rel=1e-6)
    # sync: the prefill step is the first token (20 ms); async: it leaves with the next step's fill
    assert s["ttft_ms_p50"] == pytest.approx(20.0, rel=1e-6)
    assert a["ttft_ms_p50"] == pytest.approx(40.0, rel=1e-6)
    # without a grammar nothing is held: schema-off TTFT is one 5 ms step either way
    off = run(p, concurrency=1, requests=50, output_tokens=20, structured_fraction=0.0)
    assert off["ttft_ms_p50"] == pytest.approx(5.0, rel=1e-6)


def test_band_spans_the_servers_engine_speeds_and_survives_the_profile_file():
    """profile.engine_speeds: predict reports the point with the engine as fast and as slow as on
    the fastest and slowest server measured (cpu_speed times each ratio), the point between them."""
    from dataclasses import replace

    from maskcost.profile import (EngineSpeeds, ProfileError, ServerSpeed, profile_from_dict,
                                            profile_to_dict)
    from maskcost.model.predict import run_point_band
    base = constant_profile(fill_us=400.0, forward_ms=5.0)
    cfg, wl = EngineConfig(max_num_seqs=256, cpu_speed=0.9), Workload(concurrency=64, requests=256, output_tokens=40)
    assert run_point_band(base, cfg, wl).band is None  # no recorded speeds: no band
    p = replace(base, engine_speeds=EngineSpeeds("test", (ServerSpeed("a", 0.8), ServerSpeed("b", 1.25),
                                                          ServerSpeed("c", 1.0))))
    pt = run_point_band(p, cfg, wl)
    fast, slow = pt.band.itl_ms_mean
    assert pt.band.cpu_speed == (pytest.approx(0.9 * 1.25), pytest.approx(0.9 * 0.8))
    assert fast < pt.itl_ms_mean < slow
    assert slow / fast == pytest.approx(1.25 / 0.8, rel=0.15)  # a fill-bound step scales with 1 / speed
    d = profile_to_dict(p)
    assert profile_from_dict(d).engine_speeds == p.engine_speeds
    d["engine_speeds"]["servers"][0]["ratio"] = 0
    with pytest.raises(ProfileError, match=r"engine_speeds.servers\[0\].ratio: must be > 0"):
        profile_from_dict(d)


def test_mean_ttft_counts_the_arrivals_inside_the_window():
    # the run's first requests wait for the cold compile (400 ms); a sweep warms the cache up first and
    # the engine's TTFT histogram over its window never sees them (report.server_ttft_ms): the model's
    # mean TTFT counts the requests that arrive inside the window, its percentiles every request
    p = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=400.0)
    sim = Simulation(Costs(p, "xgrammar"), EngineConfig(), Workload(concurrency=8, requests=200, prompt_tokens=1)).run()
    ttft = sim.req.first_t - sim.req.arrival
    assert (ttft[:8] >= 400).all() and (ttft[8:] < 50).all()
    assert summarize(sim)["ttft_ms_mean"] == pytest.approx(float(np.mean(ttft[8:])), rel=0.05)
    assert float(np.mean(ttft)) > summarize(sim)["ttft_ms_mean"] + 10  # 8 x 400 ms / 200 requests


def test_vllm_0_33_checks_a_waiting_grammar_without_blocking_and_applies_k_plus_1_rows():
    """vLLM 0.33.0 (model/engines.py Vllm033): done() instead of a 100 us result(timeout) per waiting
    request per step; with drafts, every structured request's block of k + 1 rows is applied."""
    from maskcost.model.engines import engine_policy
    old, new = engine_policy("vllm", "0.25.1"), engine_policy("vllm", "0.33.0")
    # 8 structured rows, 4 of them with 3 drafts: 8 + 12 rows filled; 0.33 applies 8 x 4
    assert old.apply_rows(10, 8, 20, 3) == 20 and new.apply_rows(10, 8, 20, 3) == 32
    assert new.apply_rows(10, 8, 8, 0) == 8
    # a JSON schema compiles on 0.33's JSON compiler, cached up to VLLM_XGRAMMAR_CACHE_MB as 0.25.1's
    # one compiler (backend_xgrammar.py:146-156, 216-224); guidance caches nothing in either
    for mb in (1, 512):
        cfg = EngineConfig(xgrammar_cache_mb=mb)
        assert new.cache_limit_bytes(cfg) == old.cache_limit_bytes(cfg) == mb * 2 ** 20
    assert [new.caches_grammar(b) for b in ("xgrammar", "guidance")] == [True, False] == \
        [old.caches_grammar(b) for b in ("xgrammar", "guidance")]
    p = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=400.0)
    a = run(p, concurrency=32, requests=200, unique_schemas=True)
    b = run(p, concurrency=32, requests=200, unique_schemas=True, engine_version="0.33.0")
    assert a["breakdown"]["compile_wait_ms"] > 0.1 and b["breakdown"]["compile_wait_ms"] == 0.0
    assert b["ttft_ms_p50"] <= a["ttft_ms_p50"]
    # nothing waiting, no drafts: the two versions are the same engine
    assert run(p, concurrency=32, engine_version="0.33.0")["itl_ms_mean"] == run(p, concurrency=32)["itl_ms_mean"]
    with pytest.raises(ValueError, match="--engine-version 0.9"):
        EngineConfig(engine_version="0.9")


def test_the_schema_off_arm_is_shared_across_cores_exactly():
    """predict.grid runs each schema-off arm once per off_key: it must be the same simulation whatever
    the cores and cpu_count (no grammar work there), and the grid the same as each point run alone."""
    from dataclasses import replace

    from maskcost.model.predict import grid, off_key, run_off, run_point_band
    from maskcost.profile import default_profile_path, load_profile
    p = replace(load_profile(default_profile_path()), engine_speeds=None)
    wl = Workload(concurrency=160, requests=320)
    for base in (EngineConfig(), EngineConfig(backend="guidance"), EngineConfig(engine="sglang"),
                 EngineConfig(max_num_seqs=128), EngineConfig(spec_tokens=2, spec_method="eagle")):
        offs = [summarize(Simulation(Costs(p, base.backend), c, replace(wl, structured_fraction=0.0)).run())
                for c in (replace(base, usable_cores=u, cpu_count=n) for u, n in ((4, 8), (16, 16), (64, 128)))]
        assert offs[0] == offs[1] == offs[2] == run_off(p, off_key(base, wl))
    cfgs = [EngineConfig(usable_cores=u) for u in (4, 16)]
    loads = [Workload(concurrency=c, requests=200) for c in (8, 160)]
    got = grid(p, cfgs, loads, progress=False, jobs=1)
    alone = [run_point_band(p, c, w) for c in cfgs for w in loads]
    assert [g.itl_ms_mean for g in got] == [a.itl_ms_mean for a in alone]
    assert [g.off for g in got] == [a.off for a in alone]


def test_points_that_share_a_sim_key_are_the_same_simulation():
    """predict.grid runs one simulation per sim_key and gives it to every point with that key: points
    with one key must give the same schema-on run to the last digit (cores that only the compile pool,
    the fill pool or llguidance's threads read, max_num_seqs beyond the clients), and the key must
    tell apart what does differ (the compile pool's size at 8 clients, the fill pool's lanes at 160)."""
    import json
    from dataclasses import replace

    from maskcost.model.predict import grid, run_point_band, sim_key
    from maskcost.profile import default_profile_path, load_profile
    p = replace(load_profile(default_profile_path()), engine_speeds=None)
    two = ("tier/flat", "tier/bounded")
    loads = [Workload(concurrency=1, requests=30), Workload(concurrency=8, requests=64),
             Workload(concurrency=160, requests=320, schemas=two)]
    cfgs = [replace(base, cpu_count=n, usable_cores=u, max_num_seqs=m)
            for base in (EngineConfig(), EngineConfig(backend="guidance"), EngineConfig(engine="sglang", backend="guidance"))
            for n, u in ((4, 4), (8, 4), (8, 16), (16, 4), (16, 16), (64, 64)) for m in (128, 256)]
    groups: dict = {}
    for c in cfgs:
        for w in loads:
            run = summarize(Simulation(Costs(p, c.backend, c.cpu_speed), c, w).run())
            groups.setdefault(sim_key(p, c, w), []).append(json.dumps(run, sort_keys=True, default=str))
    assert all(len(set(runs)) == 1 for runs in groups.values())
    assert len(groups) < len(cfgs) * len(loads) / 3  # the sharing is real
    # what the key tells apart can differ: the fill pool's lanes, llguidance's threads, the slots
    # below the clients, the compile pool where every request compiles
    uniq = Workload(concurrency=32, requests=96, unique_schemas=True)
    for c1, c2, w in ((EngineConfig(cpu_count=16, usable_cores=4), EngineConfig(cpu_count=16), loads[2]),
                      (EngineConfig(engine="sglang", backend="guidance", usable_cores=4),
                       EngineConfig(engine="sglang", backend="guidance"), loads[2]),
                      (EngineConfig(max_num_seqs=128), EngineConfig(), loads[2]),
                      (EngineConfig(cpu_count=4, usable_cores=4), EngineConfig(), uniq)):
        assert sim_key(p, c1, w) != sim_key(p, c2, w)
        a, b = (summarize(Simulation(Costs(p, c.backend), c, w).run()) for c in (c1, c2))
        assert a["itl_ms_mean"] != b["itl_ms_mean"] or a["ttft_ms_p50"] != b["ttft_ms_p50"]
    # the grid shares them and gives each point its own labels
    some = [cfgs[0], replace(cfgs[0], usable_cores=8, cpu_count=8), replace(cfgs[0], max_num_seqs=200)]
    got = grid(p, some, loads[1:2], progress=False, jobs=1)
    alone = [run_point_band(p, c, loads[1]) for c in some]
    assert got == alone


def test_the_grid_on_a_dask_local_cluster_gives_the_local_grid():
    """predict --executor dask: the same grid on a LocalCluster of two worker processes on loopback
    (the profile scattered to them, the schema-off arms and the points mapped, streamed in grid
    order) as in this process, point for point, with the band."""
    pytest.importorskip("dask.distributed")
    from maskcost.model.predict import grid
    from maskcost.profile import default_profile_path, load_profile
    p = load_profile(default_profile_path())
    cfgs = [EngineConfig(usable_cores=4), EngineConfig(backend="guidance")]
    loads = [Workload(concurrency=c, requests=100) for c in (8, 64)]
    seen = []
    got = grid(p, cfgs, loads, progress=False, jobs=2, executor="dask", on_point=lambda k, pt: seen.append(pt))
    here = grid(p, cfgs, loads, progress=False, jobs=1)
    assert len(got) == 4 and [g.itl_ms_mean for g in got] == [h.itl_ms_mean for h in here]
    assert [g.band for g in got] == [h.band for h in here] and [g.off for g in got] == [h.off for h in here]
    assert [pt.itl_ms_mean for pt in seen] == [g.itl_ms_mean for g in got]  # streamed in grid order
    with pytest.raises(ValueError, match="--executor"):
        grid(p, cfgs, loads, progress=False, executor="ray")



def test_a_long_lived_dask_cluster_keeps_each_grids_profile_apart():
    """--scheduler ADDRESS: the same workers run a grid of one profile, then of another; the second
    gets its own profile's numbers, not costs the workers built for the first."""
    pytest.importorskip("dask.distributed")
    from dataclasses import replace

    from dask.distributed import LocalCluster

    from maskcost.model.predict import grid
    from maskcost.profile import default_profile_path, load_profile
    p = replace(load_profile(default_profile_path()), engine_speeds=None)
    b = p.backends["xgrammar"]
    slow = replace(p, backends={**p.backends, "xgrammar": replace(b, engine_row_us=2000.0)})
    cfgs, loads = [EngineConfig(usable_cores=4), EngineConfig()], [Workload(concurrency=32, requests=100)]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        first = grid(p, cfgs, loads, progress=False, band=False, executor="dask", scheduler=cluster.scheduler_address)
        second = grid(slow, cfgs, loads, progress=False, band=False, executor="dask",
                      scheduler=cluster.scheduler_address)
    want = grid(slow, cfgs, loads, progress=False, band=False, jobs=1)
    assert [x.itl_ms_mean for x in second] == [w.itl_ms_mean for w in want]
    assert second[1].itl_ms_mean > first[1].itl_ms_mean


def _steps(profile, backend="xgrammar", **kw):
    ekw = {k: kw.pop(k) for k in list(kw) if k in EngineConfig.__dataclass_fields__}
    wl = Workload(prompt_tokens=1, **kw)
    return Simulation(Costs(profile, backend), EngineConfig(backend=backend, **ekw), wl).run()


def test_reasoning_tokens_wait_unconstrained_and_lower_the_overhead_per_token():
    """--reasoning-tokens 50 before 50-token answers, 32 rows in lockstep: a step whose rows all still
    reason costs the forward and the apply (6 + 0.1 ms: no fill), a step whose rows answer 32 x 0.5 + 0.1 ms,
    as many of each; ITL on falls, ITL off stays, so the overhead per output token falls."""
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    sim = _steps(p, concurrency=32, requests=192, reasoning_tokens="fixed:50")
    full = [round(s.period_ms, 6) for s in sim.steps if s.structured_rows == 32]
    assert set(full) == {6.1, 16.1} and full.count(6.1) == full.count(16.1) == 300
    assert all(s.fill_ms == 0.0 for s in sim.steps if round(s.period_ms, 6) == 6.1)
    plain, reason = run(p, concurrency=32), run(p, concurrency=32, reasoning_tokens="50")
    off, off_r = run(p, concurrency=32, structured_fraction=0.0), run(p, concurrency=32, structured_fraction=0.0,
                                                                      reasoning_tokens="50")
    assert off["itl_ms_mean"] == off_r["itl_ms_mean"] == pytest.approx(6.0)
    assert plain["itl_ms_mean"] == pytest.approx(16.1)
    assert 6.1 < reason["itl_ms_mean"] < 16.1
    assert reason["itl_ms_mean"] - off_r["itl_ms_mean"] < plain["itl_ms_mean"] - off["itl_ms_mean"]
    with pytest.raises(ValueError, match="--reasoning-tokens trace: expected none, N"):
        Workload(reasoning_tokens="trace")
    with pytest.raises(ValueError, match="modelled for vLLM and SGLang, not llama.cpp"):
        _steps(p, concurrency=2, reasoning_tokens="5", engine="llamacpp")


def test_reasoning_rows_count_towards_vllms_pool_threshold():
    """vLLM counts a reasoning request's row among the structured rows (scheduler.py:1483-1497): 129 of them
    take the pool on every step, the all-reasoning steps with nothing to fill."""
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    sim = _steps(p, concurrency=129, requests=129 * 3, max_num_seqs=256, reasoning_tokens="fixed:50")
    full = [s for s in sim.steps if s.structured_rows == 129]
    assert full and all(s.pool_used for s in full)
    assert {round(s.fill_ms, 6) for s in full} == {0.0, 12.9}


def test_sglang_keeps_llguidance_serial_under_a_reasoning_parser():
    """ReasonerGrammarObject wraps every grammar, and llguidance's batched fill runs only when all rows are
    plain GuidanceGrammar (llguidance_backend.py:168-175): with reasoning, guidance fills as xgrammar does."""
    p = constant_profile(fill_us=1000.0, forward_ms=2.0)
    kw = dict(engine="sglang", concurrency=64, usable_cores=10)
    assert run(p, backend="guidance", **kw)["itl_ms_mean"] == pytest.approx(8.0)  # 64 rows on 8 threads
    assert run(p, backend="xgrammar", **kw)["itl_ms_mean"] == pytest.approx(64.0)
    g = run(p, backend="guidance", reasoning_tokens="50", **kw)
    x = run(p, backend="xgrammar", reasoning_tokens="50", **kw)
    assert g["itl_ms_mean"] == pytest.approx(x["itl_ms_mean"], rel=1e-9) and g["itl_ms_mean"] > 8.0


def test_the_itl_mean_carries_its_batch_means_confidence_interval():
    from maskcost.model.metrics import itl_ci95_ms
    rng = np.random.default_rng(0)
    x = rng.normal(10.0, 1.0, 20000)
    ci = itl_ci95_ms(x, np.ones_like(x))
    assert ci == pytest.approx(1.96 / np.sqrt(20000), rel=0.35)  # iid: the classical interval
    slow = np.repeat(rng.normal(10.0, 1.0, 200), 100)  # correlated in runs of 100 steps: a wider interval
    assert itl_ci95_ms(slow, np.ones_like(slow)) > 5 * itl_ci95_ms(x, np.ones_like(x))
    assert itl_ci95_ms(np.ones(10), np.ones(10)) is None
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    assert run(p, concurrency=32)["itl_ms_ci95"] == pytest.approx(0.0, abs=1e-9)  # every step the same


def test_precision_stops_a_run_once_its_itl_mean_is_known_well_enough():
    """Workload.precision: constant steps are known exactly from the first check on (max(2c, 100) requests),
    and a bad precision is a one-line error; without it the run issues every request."""
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    r = run(p, concurrency=32, requests=5000, precision=0.01)
    assert r["requests_run"] == 100 and r["itl_ms_mean"] == pytest.approx(16.1)
    assert run(p, concurrency=32, requests=300)["requests_run"] == 300
    with pytest.raises(ValueError, match="--precision 1.5"):
        Workload(precision=1.5)


def test_sglang_0517_runs_a_one_token_prefill_eager():
    """SGLang 0.5.17 replays a prefill CUDA graph only if padding the step's tokens to the next captured
    size at most doubles them (prefill_cuda_graph_runner.py:1088-1097; sizes 4, 8, ... server_args.py
    :4990-5006): one new token pads to 4 and runs eager, 2 and 3 pad to 4 and replay. At concurrency 1
    every first token is a prefill step alone, so TTFT is forward + eager_prefill_ms exactly where the
    prefix cache leaves one token, and the forward alone where it leaves two; vLLM never adds it."""
    from dataclasses import replace

    from maskcost.model.engines import sglang_prefill_runs_eager
    assert sglang_prefill_runs_eager(1) and sglang_prefill_runs_eager(8193)
    assert not any(sglang_prefill_runs_eager(n) for n in (2, 3, 4, 5, 33, 257, 8192))
    base = constant_profile(forward_ms=5.0)
    p = replace(base, forward=replace(base.forward, eager_prefill_ms=20.0))
    kw = dict(concurrency=1, requests=20, output_tokens=4, structured_fraction=0.0, prompt_tokens=100)
    one = run(p, engine="sglang", engine_version="0.5.17", prompt_cached_tokens=99, **kw)
    assert one["ttft_ms_p50"] == pytest.approx(5.0 + 20.0, rel=1e-9)
    assert one["itl_ms_mean"] == pytest.approx(5.0, rel=1e-9)  # decode steps replay their graphs
    two = run(p, engine="sglang", engine_version="0.5.17", prompt_cached_tokens=98, **kw)
    assert two["ttft_ms_p50"] == pytest.approx(5.0, rel=1e-9)
    assert run(p, engine="vllm", prompt_cached_tokens=99, **kw)["ttft_ms_p50"] == pytest.approx(5.0, rel=1e-9)
    # a profile that did not measure it adds nothing
    assert run(base, engine="sglang", engine_version="0.5.17", prompt_cached_tokens=99, **kw)["ttft_ms_p50"] \
        == pytest.approx(5.0, rel=1e-9)


def test_sglang_runs_prefill_apart_and_its_decode_rows_wait_through_it():
    """SGLang's scheduler runs a new prefill batch before the running batch's decode (scheduler.py "Run
    prefill first if possible"): no step mixes the two, and a decode row's gap holds the prefill steps
    it waited through, so the ITL mean agrees with Little's law (running / tokens per second)."""
    p = constant_profile(fill_us=50.0, forward_ms=5.0)
    kw = dict(concurrency=32, requests=800, structured_fraction=0.0, unstructured_lengths="uniform:2:6",
              prompt_tokens=1)
    sims = {}
    for engine in ("sglang", "vllm"):
        wl = Workload(**kw)
        sims[engine] = sim = Simulation(Costs(p, "xgrammar"), EngineConfig(engine=engine), wl).run()
        steps = np.array(sim.steps, dtype=float).reshape(-1, len(STEP_FIELDS))
        col = {f: steps[:, i] for i, f in enumerate(STEP_FIELDS)}
        mixed = (col["prefill_tokens"] > 0) & (col["decode_rows"] > 0)
        assert (not mixed.any()) if engine == "sglang" else mixed.any()
    r = summarize(sims["sglang"])
    # a request of 2-6 tokens (4 on average) spends one prefill step and the rest decode steps: about a
    # quarter of the steps are prefill-only, so a waiting row's gap is two steps; the mean lies between
    assert 5.0 * 1.1 < r["itl_ms_mean"] < 5.0 * 2
    # the server's way (SGLang's histogram: the time between a request's first and last token over its
    # gaps), over the requests of the middle of the run
    sim = sims["sglang"]
    mid = slice(len(sim.req.done_t) // 5, 4 * len(sim.req.done_t) // 5)
    ref = np.sum(sim.req.done_t[mid] - sim.req.first_t[mid]) / np.sum(sim.req.out_len[mid] - 1)
    assert r["itl_ms_mean"] == pytest.approx(ref, rel=0.05)
    assert summarize(sims["vllm"])["itl_ms_mean"] < r["itl_ms_mean"]
    # --precision stops on the same gaps the summary reports (prefill waits included)
    wl = Workload(concurrency=32, structured_fraction=0.0, unstructured_lengths="uniform:2:6", prompt_tokens=1,
                  precision=0.03)
    pr = summarize(Simulation(Costs(p, "xgrammar"), EngineConfig(engine="sglang"), wl).run())
    assert pr["itl_ms_mean"] == pytest.approx(r["itl_ms_mean"], rel=0.05)
    assert pr["itl_ms_ci95"] <= 0.04 * pr["itl_ms_mean"]


def test_one_sync_point_gives_a_constant_overhead():
    """A sync sweep that kept one full-batch point measures the hidden engine CPU work at that batch
    only: the overhead stays that difference at every batch instead of growing through the origin."""
    from dataclasses import replace

    from maskcost.profile import ForwardPoint
    p = constant_profile(forward_ms=5.0)
    p = replace(p, forward=replace(p.forward, sync_points=(ForwardPoint(8, 6.0, 6.0),)))
    c = Costs(p, "xgrammar")
    assert [c.cpu_overhead_ms(b) for b in (1, 8, 64, 256)] == pytest.approx([1.0] * 4)


def test_engine_row_work_runs_serial_with_the_step():
    """BackendCosts.engine_row_us: the engine thread's own work per structured row, on the CPU branch
    that races the forward (async scheduling): 32 rows x 0.5 ms = 16 ms, then the fill (32 x 10 us),
    over a 5 ms forward."""
    from dataclasses import replace
    p = constant_profile(fill_us=10.0, forward_ms=5.0)
    p = replace(p, backends={k: replace(b, engine_row_us=500.0) for k, b in p.backends.items()})
    assert run(p, concurrency=32)["itl_ms_mean"] == pytest.approx(32 * 0.5 + 32 * 0.01, rel=1e-6)
    assert run(p, concurrency=32, structured_fraction=0.0)["itl_ms_mean"] == pytest.approx(5.0, rel=1e-6)


def test_quiet_runs_of_steady_steps_are_the_event_by_event_steps(monkeypatch):
    """engine_loop computes a run of steady steps that nothing else acts on in one go (_quiet_run): it
    must give, bitwise, the records, finish times and API-server queue that the event-by-event loop
    gives, in every regime it takes (async held outputs, sync steps, schema-off rows, SGLang without
    the API-server queue and with llguidance's batched fill, a full batch with requests waiting,
    open-loop arrivals, drawn lengths)."""
    from maskcost.profile import default_profile_path, load_profile
    p = load_profile(default_profile_path())
    cases = [(EngineConfig(engine=e, backend=b, async_scheduling=a, usable_cores=4, cpu_speed=0.8),
              Workload(concurrency=c, requests=120, structured_fraction=f))
             for e in ("vllm", "sglang") for b in ("xgrammar", "guidance") for a in (True, False)
             for c, f in ((1, 1.0), (8, 0.5))]
    cases += [(EngineConfig(max_num_seqs=4), Workload(concurrency=8, requests=100)),
              (EngineConfig(), Workload(concurrency=None, rate_per_s=20.0, requests=150)),
              (EngineConfig(backend="guidance"), Workload(concurrency=16, requests=100, prompt_lengths="lognormal:800:0.5",
                                                          unstructured_lengths="lognormal:200:0.5", structured_fraction=0.5)),
              # a team wider than its cores: the copy's spinners crowd the engine thread (Engine.spin_share)
              (EngineConfig(usable_cores=4, omp_threads=8), Workload(concurrency=32, requests=150))]

    def sims():
        out = []
        for cfg, wl in cases:
            s = Simulation(Costs(p, cfg.backend, cfg.cpu_speed), cfg, wl).run()
            out.append((np.array(s.steps, float), s.req.done_t, s.req.first_t, s.api and s.api.free_at))
        return out
    calls = []
    quiet_run = Simulation._quiet_run
    monkeypatch.setattr(Simulation, "_quiet_run", lambda self, *a: calls.append(r := quiet_run(self, *a)) or r)
    fast = sims()
    assert sum(n for n, _ in calls) > 10_000  # most steady steps were computed in runs
    monkeypatch.setattr(Simulation, "_quiet", lambda self: False)
    slow = sims()
    for (cfg, wl), a, b in zip(cases, fast, slow):  # bitwise: the run's one event lands where the steps would (At)
        assert a[0].shape == b[0].shape and np.array_equal(a[0], b[0]), (cfg, wl)
        assert np.array_equal(a[1], b[1], equal_nan=True) and np.array_equal(a[2], b[2], equal_nan=True)
        assert a[3] == b[3]


SLOT_CASES = [(EngineConfig(engine=e, backend=b, max_num_seqs=m, max_num_batched_tokens=t), Workload(concurrency=c, requests=r, **w))
              for e, b, m, t, c, r, w in [
                  ("vllm", "xgrammar", 256, 8192, 256, 1500, {}),
                  ("vllm", "guidance", 64, 512, 96, 500, {"prompt_lengths": "uniform:50:1500", "structured_fraction": 0.6}),
                  ("sglang", "guidance", 128, 1024, 160, 600, {"prompt_tokens": 900}),
                  ("vllm", "xgrammar", 32, 8192, 48, 300, {"reasoning_tokens": "uniform:5:40"}),
                  ("vllm", "xgrammar", 64, 8192, 64, 300, {"output_tokens": 300})]]
SLOT_CASES.append((EngineConfig(spec_tokens=3), Workload(concurrency=64, requests=300)))


def test_the_slot_state_kept_as_slots_change_is_what_the_slots_hold(monkeypatch):
    """The scheduler keeps the decoding slots (decoding) and their context (ctx_dec: prompt + position
    summed over the rows that have emitted) as slots change instead of summing the slots every step:
    after every step, and every run of steady steps, they are what the slot arrays say (chunked and
    drawn prompts, SGLang's prefill apart, reasoning rows, held-long outputs, drafts)."""
    from maskcost.profile import default_profile_path, load_profile
    p = load_profile(default_profile_path())
    checked = []

    def check(self):
        sl = self.scheduler
        assert np.array_equal(sl.decoding, sl.active & (sl.prefill == 0))
        dec = sl.decoding
        assert sl.ctx_dec == int(sl.prompt[dec].sum() + sl.pos[dec].sum())
        checked.append(1)
    end_step, quiet_run = Simulation._end_step, Simulation._quiet_run
    monkeypatch.setattr(Simulation, "_end_step", lambda self, *a, **k: (end_step(self, *a, **k), check(self)))
    monkeypatch.setattr(Simulation, "_quiet_run", lambda self, *a: (quiet_run(self, *a), check(self))[0])
    for cfg, wl in SLOT_CASES:
        n = len(checked)
        Simulation(Costs(p, cfg.backend), cfg, wl).run()
        assert len(checked) - n > 100, (cfg, wl)


def test_outputs_released_ahead_of_the_clock_are_the_waited_for_ones(monkeypatch):
    """With the API server between, engine_loop releases the outputs it holds at its fill's end without
    waiting there when no other event is due until then (At): the records, answer times and API-server
    queue are bitwise those of waiting for every fill's end."""
    from maskcost.model import engine as eng
    from maskcost.profile import default_profile_path, load_profile
    p = load_profile(default_profile_path())
    monkeypatch.setattr(Simulation, "_quiet", lambda self: False)  # (quiet runs: their own test)
    cases = [(cfg, wl) for cfg, wl in SLOT_CASES if cfg.engine == "vllm"] + \
        [(EngineConfig(), Workload(concurrency=c, requests=300)) for c in (1, 8, 32)] + \
        [(EngineConfig(), Workload(concurrency=None, rate_per_s=25.0, requests=300))]
    ahead = []
    release = Simulation._release_held
    monkeypatch.setattr(Simulation, "_release_held", lambda self, now=None: (
        ahead.append(now is not None and now > self.env.now), release(self, now)))

    def sims():
        return [(np.array(s.steps, float), s.req.done_t, s.req.first_t, s.api and s.api.free_at) for s in
                (Simulation(Costs(p, cfg.backend), cfg, wl).run() for cfg, wl in cases)]
    a = sims()
    assert sum(ahead) > 1000
    monkeypatch.setattr(eng.simpy.Environment, "peek", lambda self: -np.inf)  # always an event due: wait
    ahead.clear()
    b = sims()
    assert not any(ahead)
    for (cfg, wl), x, y in zip(cases, a, b):
        assert all(np.array_equal(u, v, equal_nan=True) for u, v in zip(x[:3], y[:3])) and x[3] == y[3], (cfg, wl)


def test_an_event_at_a_time_lands_on_it():
    """At(env, t) is due at t itself (a Timeout of t - now from another now may land a rounding off),
    in the order a Timeout made then would take, and refuses a time before now."""
    import simpy

    from maskcost.model.engine import At
    now, t = 911.0795019498398, 3947.8421973312193
    env = simpy.Environment(initial_time=now)
    assert now + (t - now) != t  # the rounding At avoids
    seen = []
    At(env, t).callbacks.append(lambda _e: seen.append(("at", env.now)))
    env.timeout(t - now).callbacks.append(lambda _e: seen.append(("timeout", env.now)))
    At(env, t).callbacks.append(lambda _e: seen.append(("at2", env.now)))
    env.run()
    assert seen == [("at", t), ("at2", t), ("timeout", now + (t - now))]
    with pytest.raises(ValueError, match="before now"):
        At(env, t - 1.0)


def test_what_the_engine_would_show_on_a_closed_form():
    """GPU busy = forward / step, the host's exposed share = the rest, the bound where the host's exceeds
    the GPU's; the bitmask copy = rows x ceil(V / 32) x 4 bytes, its link share at the step time."""
    from maskcost.model.metrics import H2D_LINK_BYTES_PER_S
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    hidden, exposed = run(p, concurrency=4), run(p, concurrency=32)  # steps of 6.1 and 16.1 ms
    assert hidden["gpu_busy_fraction"] == pytest.approx(6.0 / 6.1, rel=1e-3) and hidden["bound"] == "gpu"
    assert exposed["gpu_busy_fraction"] == pytest.approx(6.0 / 16.1, rel=1e-3) and exposed["bound"] == "host"
    assert exposed["host_exposed_fraction"] == pytest.approx(10.1 / 16.1, rel=1e-3)
    row_bytes = 4 * ((128256 + 31) // 32)  # 16,032 bytes a row
    assert exposed["bitmask_h2d_bytes_per_step"] == 32 * row_bytes
    assert exposed["bitmask_h2d_link_fraction"] == pytest.approx(32 * row_bytes / 16.1e-3 / H2D_LINK_BYTES_PER_S,
                                                                 rel=1e-3)
    # more rows, more host work a step: the GPU's share falls as the host's grows
    assert exposed["gpu_busy_fraction"] < hidden["gpu_busy_fraction"]


def test_gpu_busy_with_the_forward_split_by_nvml_on_a_closed_form():
    """Where the calibration's schema-off points read the GPU busy (NVML), the GPU's share of a step is the
    forward less the host's part of the schema-off step at its rows: 6 ms steps of which the GPU ran 0.5 x 6 =
    3 ms give 3 / 6.1 and 3 / 16.1 on the steps above (and the bound, read against the whole forward, as before);
    a profile without the reading keeps the upper bound, and says which it gave."""
    from dataclasses import replace
    p = constant_profile(fill_us=500.0, forward_ms=6.0, apply_us=100.0)
    split = replace(p, forward=replace(p.forward, points=tuple(replace(f, gpu_busy=0.5) for f in p.forward.points)))
    hidden, exposed = run(split, concurrency=4), run(split, concurrency=32)
    assert hidden["gpu_busy_fraction"] == pytest.approx(3.0 / 6.1, rel=1e-3) and hidden["bound"] == "gpu"
    assert exposed["gpu_busy_fraction"] == pytest.approx(3.0 / 16.1, rel=1e-3) and exposed["bound"] == "host"
    assert hidden["gpu_busy_basis"] == exposed["gpu_busy_basis"] == "nvml split"
    assert run(p, concurrency=4)["gpu_busy_basis"] == "upper bound"
    # the ITL does not move: the split says where the step's time goes, not how long it is
    assert exposed["itl_ms_mean"] == pytest.approx(run(p, concurrency=32)["itl_ms_mean"], rel=1e-9)
    # the reading survives the profile file, a fraction outside [0, 1] is refused, and calibrate takes it
    # from the schema-off sweep's records (engine.gpu_busy, validate/gpubusy.py)
    from maskcost.calibrate.engine import forward_points
    from maskcost.profile import ProfileError, profile_from_dict, profile_to_dict
    d = profile_to_dict(split)
    assert profile_from_dict(d).forward == split.forward
    d["forward"]["points"][0]["gpu_busy"] = 1.5
    with pytest.raises(ProfileError, match=r"forward.points\[0\].gpu_busy: a fraction in \[0, 1\], got 1.5"):
        profile_from_dict(d)
    from synth import summary
    eng = {"running_mean": 8.0, "step_ms": 5.4, "itl_ms": 5.5}
    assert forward_points([summary({"arm": "off", "engine": {**eng, "gpu_busy": {"fraction": 0.89}}})])[0].gpu_busy == 0.89
    assert forward_points([summary({"arm": "off", "engine": eng})])[0].gpu_busy is None
    # a hand-edited record: not NVML's {"fraction": ...}, so not read
    assert forward_points([summary({"arm": "off", "engine": {**eng, "gpu_busy": 0.5}})])[0].gpu_busy is None
    # one point read is no curve (it would scale from the origin): the upper bound, said
    one = replace(p, forward=replace(p.forward, points=(replace(p.forward.points[0], gpu_busy=0.5),
                                                        p.forward.points[1])))
    assert run(one, concurrency=4)["gpu_busy_basis"] == "upper bound"


def test_an_xgrammar_cache_of_zero_keeps_only_the_last_grammar():
    """VLLM_XGRAMMAR_CACHE_MB=0 (--xgrammar-cache-mb 0): xgrammar 0.2.7's LRU by bytes still keeps the grammar
    it compiled last (measured on this project's CPU: a second compile of the same schema with
    cache_limit_bytes=0 took 0.1 ms, the first 6.7 s), so one repeated schema compiles once, while schemas
    that take turns are compiled again and again."""
    from maskcost.profile import load_default_profile
    p = constant_profile(fill_us=10.0, forward_ms=5.0, compile_ms=40.0)
    one = [run(p, concurrency=1, requests=50, xgrammar_cache_mb=mb)["ttft_ms_p50"] for mb in (512, 0)]
    assert one[0] == pytest.approx(one[1], abs=1e-6)
    d = load_default_profile()  # its schemas in turn
    many = [run(d, concurrency=1, requests=100, xgrammar_cache_mb=mb)["ttft_ms_mean"] for mb in (512, 0)]
    assert many[1] > 1.5 * many[0]


def test_batched_fill_removes_the_measured_per_row_call_overhead():
    """vllm#51331 as --engine-version 0.33.0+batched-fill: every xgrammar row's fill less the profile's
    batch_fill_saving_us, serial and on the pool; 0.33.0 itself keeps it; llguidance rows keep it."""
    from dataclasses import replace
    p = constant_profile(fill_us=10.0, forward_ms=0.1)
    p = replace(p, backends={**p.backends, "xgrammar": replace(p.backends["xgrammar"], batch_fill_saving_us=4.0)})
    # 64 rows serially on the engine thread: 64 x 10 us, and 64 x (10 - 4) us batched
    assert run(p, concurrency=64, engine_version="0.33.0")["itl_ms_mean"] == pytest.approx(0.64, rel=1e-6)
    assert run(p, concurrency=64, engine_version="0.33.0+batched-fill")["itl_ms_mean"] == pytest.approx(0.384, rel=1e-6)
    assert run(p, "guidance", concurrency=64, engine_version="0.33.0+batched-fill")["itl_ms_mean"] == \
        pytest.approx(0.64, rel=1e-6)
    # 256 rows on the pool: 16 chunks of 16 rows on 8 threads, two rounds: 2 x 16 x 10 us, and 2 x 16 x 6 us
    pool = run(p, concurrency=256, engine_version="0.33.0+batched-fill")
    assert pool["breakdown"]["pool_wait_ms"] == pytest.approx(0.192, rel=1e-6)
    assert run(p, concurrency=256, engine_version="0.33.0")["breakdown"]["pool_wait_ms"] == pytest.approx(0.32, rel=1e-6)
    # a profile that never measured it: one line naming the way to add it
    with pytest.raises(ValueError, match="calibrate --batch-fill"):
        run(constant_profile(), concurrency=8, engine_version="0.33.0+batched-fill")
    # the embedded profile carries a saving measured on its CPU (calibrate --batch-fill), which the variant takes off
    from maskcost.profile import load_default_profile
    assert load_default_profile().backends["xgrammar"].batch_fill_saving_us > 0


def test_sglang_gives_up_on_a_grammar_after_its_poll_limit():
    """SGLang polls a waiting request's grammar once a step and aborts it after SGLANG_GRAMMAR_MAX_POLLS
    ('Grammar preprocessing timed out'): while requests without a schema keep the engine stepping, a compile
    longer than that many steps ends the structured requests waiting on it, and a short one ends none."""
    from maskcost.model.engines import SGLANG_GRAMMAR_MAX_POLLS, SGLANG_GRAMMAR_POLL_MS
    long_ms = 3 * SGLANG_GRAMMAR_MAX_POLLS * SGLANG_GRAMMAR_POLL_MS  # more polls than the limit, however short a step
    got = {ms: run(constant_profile(fill_us=10.0, forward_ms=1.0, compile_ms=ms), engine="sglang", concurrency=4,
                   requests=8, unique_schemas=True, structured_fraction=0.5, schema_order="cycle",
                   unstructured_lengths=f"fixed:{2 * SGLANG_GRAMMAR_MAX_POLLS}")["aborted"] for ms in (long_ms, 5.0)}
    assert got[long_ms] > 0 and got[5.0] == 0, got


def test_engine_policies_use_only_the_declared_view_of_the_simulation():
    """model/engines.py's policies see the simulation through SimulationView: every attribute they read
    of `sim` is one it declares, and the real Simulation has each of them."""
    import ast
    from pathlib import Path

    import maskcost.model.engines as engines
    tree = ast.parse(Path(engines.__file__).read_text())
    used = {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "sim"}
    view = engines.SimulationView
    declared = set(view.__annotations__) | {k for k, v in vars(view).items() if callable(v) and not k.startswith("_")}
    assert {"event", "grammar_key", "abort", "grammars_awaited", "polled", "cfg"} <= declared
    assert used and used <= declared, sorted(used - declared)
    sim = Simulation(Costs(constant_profile(), "xgrammar"), EngineConfig(), Workload(concurrency=1, requests=2))
    assert all(hasattr(sim, a) for a in declared)


def test_the_profile_a_command_takes_is_the_engine_versions_own():
    """Each engine class names the profile shipped for it (model/engines.py shipped_profile): SGLang's for
    both its versions, the embedded one for vLLM's, and for several engines or one with none shipped."""
    from maskcost.model.engines import VERSIONS, shipped_profile_path
    from maskcost.profile import load_profile
    for version in VERSIONS["sglang"]:
        assert shipped_profile_path(["sglang"], version).name == "sglang-0.5.17-h200.json.gz"
    assert load_profile(shipped_profile_path(["sglang"])).name == "sglang-0.5.17-h200"
    for version in VERSIONS["vllm"]:
        assert shipped_profile_path(["vllm"], version).name == "default.json.gz"
    assert shipped_profile_path(["llamacpp"]).name == shipped_profile_path(["vllm", "sglang"]).name == "default.json.gz"
    with pytest.raises(ValueError, match="modelled for"):
        shipped_profile_path(["sglang"], "0.4.0")


def test_an_engine_versions_library_pins_say_when_traces_are_of_another_library():
    """Engine.library_pins (each version's wheel METADATA): SGLang 0.5.17 pins xgrammar 0.2.1, so traces of
    0.2.7 get a note and traces of 0.2.1 none; vLLM 0.25.1 admits both; a version whose pins were not read
    says nothing."""
    from maskcost.model.engines import engine_policy
    notes = engine_policy("sglang", "0.5.17").pin_notes({"xgrammar": "0.2.7", "llguidance": "1.9.1"}, "the traces")
    assert len(notes) == 1 and "xgrammar 0.2.7" in notes[0] and "pins xgrammar==0.2.1" in notes[0]
    assert engine_policy("sglang", "0.5.17").pin_notes({"xgrammar": "0.2.1"}, "the traces") == []
    assert engine_policy("vllm", "0.25.1").pin_notes({"xgrammar": "0.2.7", "llguidance": "1.7.6"}, "x") == []
    assert engine_policy("vllm", "0.25.1").pin_notes({"llguidance": "1.9.1"}, "x")[0].startswith("note: x are of llguidance 1.9.1")
    assert engine_policy("vllm", "0.33.0").pin_notes({"xgrammar": "0.2.8"}, "x") == []
    assert "pins xgrammar==0.2.8" in engine_policy("vllm", "0.34.0").pin_notes({"xgrammar": "0.2.7"}, "x")[0]


def test_vllm_0_34_is_0_33s_engine_and_ngram_keeps_async_scheduling_from_0_33_on():
    """vLLM 0.34.0 (model/engines.py Vllm034, read from its wheel): 0.33.0's mechanisms, so a class that changes
    nothing of Vllm033's but its version and its pins (what a version whose mechanisms did not move needs; a
    method added to it must say what of 0.34.0 it mirrors, and this test then names it); ngram turns async
    scheduling off in 0.25.1 and on 0.33.0's V1 runner only, not on V2 (its default) nor in 0.34.0."""
    from maskcost.model.engines import Vllm034, engine_policy, mechanisms_version
    from maskcost.model.predict import sim_key
    assert set(vars(Vllm034)) - {"__module__", "__doc__", "__qualname__", "__firstlineno__", "__static_attributes__"} \
        == {"version", "library_pins"}
    # so a grid simulates it once, as 0.33.0 (predict.sim_key), and both give the same run
    assert mechanisms_version(engine_policy("vllm", "0.34.0")) == "0.33.0"
    assert mechanisms_version(engine_policy("vllm", "0.33.0+batched-fill")) == "0.33.0+batched-fill"
    p, w = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=400.0), Workload(concurrency=32, requests=200)
    new, old = EngineConfig(engine_version="0.34.0"), EngineConfig(engine_version="0.33.0")
    assert sim_key(p, new, w) == sim_key(p, old, w) != sim_key(p, EngineConfig(), w)
    assert run(p, concurrency=32, engine_version="0.34.0") == run(p, concurrency=32, engine_version="0.33.0")
    ngram = {"spec_tokens": 3, "spec_method": "ngram"}
    assert [EngineConfig(engine_version=v, **ngram).effective_async for v in ("0.25.1", "0.33.0", "0.34.0")] == \
        [False, True, True]


def test_a_team_wider_than_its_cores_crowds_the_engine_thread_after_each_copy():
    """vLLM with xgrammar: each step's bitmask copy leaves the OpenMP team's other threads spinning
    (omp_spin_ms each). On a team no wider than its cores they only cost CPU; a team of 8 on 4 cores shares
    them with the engine thread and the API server's loop, 9 threads: the engine thread holds 4/9 of a core
    until each spinner has spun 9 ms (20.25 ms), so a step's 20 ms of engine-thread work ends 11.25 ms later
    (the window's lost 5/9), 4 ms of it 5 ms later (all of it at 4/9); a step too small to copy on the team
    (under 9 Llama-3 rows) is not crowded."""
    from maskcost.model.step import spin_loss_ms
    from maskcost.profile import default_profile_path, load_profile
    vllm = EngineConfig().policy
    assert vllm.spin_share(EngineConfig(usable_cores=16)) is None  # the team of 16 on its 16 cores
    assert vllm.spin_share(EngineConfig(usable_cores=4, omp_threads=4)) is None
    assert vllm.spin_share(EngineConfig(backend="guidance", usable_cores=4, omp_threads=8)) is None  # pinned mask
    share, window = vllm.spin_share(EngineConfig(usable_cores=4, omp_threads=8))
    assert share == pytest.approx(4 / 9) and window == pytest.approx(20.25)
    assert spin_loss_ms(20.0, share, window) == pytest.approx(11.25)
    assert spin_loss_ms(4.0, share, window) == pytest.approx(5.0)
    assert EngineConfig(engine="sglang", usable_cores=4, omp_threads=8).policy.spin_share(
        EngineConfig(engine="sglang", usable_cores=4, omp_threads=8)) is None
    p = load_profile(default_profile_path())

    def step_ms(omp_threads, clients):
        cfg = EngineConfig(usable_cores=4, omp_threads=omp_threads)
        return summarize(Simulation(Costs(p, "xgrammar"), cfg, Workload(concurrency=clients, requests=300)).run()
                         )["breakdown"]["step_ms"]
    assert step_ms(8, 64) > step_ms(4, 64) + 5.0  # crowded: at least the smaller loss a step
    assert step_ms(8, 4) == step_ms(4, 4)  # 4 rows: the copy runs serially, no spinner


def test_every_shipped_profile_carries_the_tiers_a_users_compile_is_scaled_by():
    """predict --schema carries a user's compile to the profile's host by the profile's own compiles of the
    reference tiers over this host's (calibrate/local.py _compile_scale); a shipped profile without them would
    fall back to the single-thread bench, 2-3x off for xgrammar's 8-thread compile (docs/validation.md finding 16).
    The SGLang profile's were measured on a device host with SGLang's libraries (validation/h200-sglang-0.5.17/tiers/)."""
    from maskcost.calibrate.cache import COMPILE_REFERENCE_TIERS
    from maskcost.calibrate.local import _compile_scale
    from maskcost.model.engines import shipped_profile_path
    from maskcost.profile import load_profile
    for engine in ("vllm", "sglang"):
        p = load_profile(shipped_profile_path([engine]))
        for backend, costs in p.backends.items():
            own = {c.schema_id for c in costs.compiles}
            assert {f"tier/{t}" for t in COMPILE_REFERENCE_TIERS} <= own, (engine, backend)
            here = {f"tier/{t}": 1.0 for t in COMPILE_REFERENCE_TIERS}  # a host whose tier compiles take 1 ms each
            assert _compile_scale(p, backend, here) > 0


def test_step_clock_keeps_its_invariants():
    """model/step.py's invariants on the one function both engine loops take a step's times from: the serial CPU
    part is never negative and at least the compile wait; the step ends no earlier than its forward, its fill
    and the apply after both; the spinners only delay the engine thread's work; the fill starts where the
    serial part ends."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from maskcost.model.step import CpuTerms, FillTimes, step_clock
    ms = st.floats(0.0, 50.0)

    @settings(max_examples=300, deadline=None)
    @given(t0=st.floats(0.0, 1e6), forward=ms, adv=ms, apply=ms, add=ms, floor=ms, off=ms, dur=ms, wait=ms,
           grammar_cpu=st.booleans(), async_on=st.booleans(), pooled=st.booleans(), compile_wait=ms,
           spin=st.none() | st.tuples(st.floats(0.05, 1.0), ms))
    def check(t0, forward, adv, apply, add, floor, off, dur, wait, grammar_cpu, async_on, pooled, compile_wait, spin):
        starts = []

        def fill_at(start):
            starts.append(start)
            return FillTimes(dur, wait if pooled else 0.0, 0.0 if pooled else dur)
        c = step_clock(t0, forward, adv, apply, CpuTerms(add, floor, off), grammar_cpu, async_on, fill_at, spin,
                       compile_wait)
        assert starts == [t0 + c.cpu_serial_ms]
        assert c.cpu_serial_ms >= compile_wait >= 0.0 and c.crowded_ms >= 0.0
        assert c.gpu_end_ms >= t0 + forward - 1e-9
        assert c.fill_end_ms >= t0 + c.cpu_serial_ms + dur - 1e-9
        assert c.end_ms >= max(c.fill_end_ms, c.gpu_end_ms) + apply - 1e-9
        assert (spin is None) <= (c.crowded_ms == 0.0)
    check()
