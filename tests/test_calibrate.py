"""Calibration with the real engines (xgrammar, llguidance) and the real Llama-3 vocabulary."""
import gzip
from pathlib import Path

import pytest

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import output_text, trace_schema
from maskcost.profile import ProfileError, load_profile, profile_from_dict, profile_to_dict, save_profile
from maskcost.calibrate.run import calibrate_backends
from maskcost.calibrate.schemas import TIERS, SchemaEntry, SchemaInputError, read_corpus
from maskcost.calibrate.tokenizer import load_vocab
from synth import constant_profile

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def vocab():
    return load_vocab("llama3")


def test_vocab_and_straddle_set(vocab):
    assert vocab.size == 128256
    assert vocab.tokens[vocab.eos_id] == b"<|eot_id|>"
    ids = vocab.encode('{"name": "Bob"}')
    assert any(t in vocab.straddle_ids for t in ids)  # '{"' holds a quote and a brace
    assert 0.002 < len(vocab.straddle_ids) / vocab.size < 0.05


@pytest.mark.parametrize("backend", ["xgrammar", "guidance"])
def test_trace_has_one_entry_per_emitted_token(vocab, backend):
    be = make_backend(backend, vocab)
    entry = TIERS["flat"]
    r = trace_schema(be, entry, repeats=1)
    assert r.error is None
    n = len(vocab.encode(output_text(entry.examples[0], be.separators))) + 1  # + EOS
    t = r.traces[0]
    assert len(t.fill_us) == len(t.accept_us) == len(t.straddle) == n
    assert all(x > 0 for x in t.fill_us)
    assert r.compile.cold_ms > 0 and r.compile.memory_bytes > 0
    assert r.compile.variant_ms is not None and r.compile.variant_ms > 0
    if backend == "xgrammar":  # the rule cache: a near-identical schema compiles far faster than cold
        assert r.compile.variant_ms < r.compile.cold_ms / 3



def test_a_schemas_traced_mean_cost_says_how_well_it_is_known():
    """Three outputs of 2 tokens costing 2, 4 and 6 us (fill 1, 2, 3 a token; accept 0): the mean cost is 2 us a
    token; the residuals -2, 0, +2 give a standard error sqrt(8 / (3 x 2)) / 2 = 0.577 us, 28.9% of the mean.
    Outputs that all cost the same: 0. One output: unknown."""
    from maskcost.calibrate.fill import mean_cost_spread, spread_words
    from maskcost.profile import FillTrace
    traces = [FillTrace("a", (x, x), (0.0, 0.0), (False, False)) for x in (1.0, 2.0, 3.0)]
    traces += [FillTrace("b", (5.0, 1.0, 3.0), (1.0, 1.0, 1.0), (False,) * 3)] * 4
    traces += [FillTrace("c", (9.0,), (0.0,), (False,))]
    got = mean_cost_spread(traces)
    assert got["a"][0] == 3 and got["a"][1] == pytest.approx((8 / 6) ** 0.5 / 2 / 2)
    assert got["b"] == (4, 0.0) and got["c"] == (1, None)
    assert spread_words(traces) == "a +-29% (3 outputs), b +-0% (4 outputs), 1 schema of one output: unknown"

def test_the_fills_inside_a_string_value_are_read_from_the_tokens():
    """One flag a fill (a fill before each token, the last before EOS): inside a string value, not a key's,
    an escaped quote staying inside, arrays' items values too."""
    from maskcost.calibrate.fill import in_string_value
    toks = [b'{"', b"name", b'":"', b"ab", b"c", b'","', b"tags", b'":["', b"x", b'","', b'y\\"', b"z", b'"],"', b"age",
            b'":', b"3", b"}"]
    got = in_string_value(toks)
    assert len(got) == len(toks) + 1 and sum(got) == 8
    assert [i for i, f in enumerate(got) if f] == [3, 4, 5, 8, 9, 10, 11, 12]


def test_traces_are_scaled_to_the_mean_their_fit_and_many_outputs_give():
    """Ten traced outputs of 10 fills, fills inside a string value costing 3 us and the others 1 us (accept
    0): x = 1..10 of them. Their own mean: (10 + 2 x) / 10 a token over x = 5.5 on average: 2.1 us. Counted over
    many outputs, 0.4 of the fills are inside a string value: 1 + 2 x 0.4 = 1.8 us a token, a factor 1.8 / 2.1.
    A schema whose string share is not counted, or with fewer traces, or whose fit explains little, is left."""
    from maskcost.calibrate.fill import MIN_SCALED_TRACES, string_value_scales
    from maskcost.profile import FillTrace
    from dataclasses import replace

    def trace(sid, x, noise=0.0):
        flags = (True,) * x + (False,) * (10 - x)
        fills = [3.0 if f else 1.0 for f in flags]
        fills[0] += noise
        return FillTrace(sid, tuple(fills), (0.0,) * 10, (False,) * 10, flags)
    a = [trace("a", x) for x in range(1, 11)]
    got = string_value_scales(a + [trace("b", x) for x in range(1, 11)], {"a": 0.4})
    assert got == {"a": pytest.approx(1.8 / 2.1)}
    assert string_value_scales(a[:MIN_SCALED_TRACES - 1], {"a": 0.4}) == {}
    assert string_value_scales(a, {"a": 0.0}) == {}  # (1 + 0) / 2.1 = 0.48: outside SCALE_BOUNDS, not that kind
    noisy = [trace("n", x, noise=40.0 * (x % 2)) for x in range(1, 11)]  # the cost not the strings' doing
    assert string_value_scales(noisy, {"n": 0.4}) == {}
    assert string_value_scales([replace(t, in_string=()) for t in a], {"a": 0.4}) == {}  # no flags: no fit
    # the flags go into the profile and come back; a profile made before them has none
    from maskcost.profile import ProfileError, profile_from_dict, profile_to_dict
    from synth import constant_profile
    p = constant_profile()
    b0 = p.backends["xgrammar"]
    mine = tuple(replace(t, schema_id="s") for t in a)  # (the profile's schema, whose compile it has)
    d = profile_to_dict(replace(p, backends={**p.backends, "xgrammar": replace(b0, traces=mine)}))
    assert profile_from_dict(d).backends["xgrammar"].traces == mine
    assert "in_string" not in profile_to_dict(p)["backends"]["xgrammar"]["traces"][0]
    d["backends"]["xgrammar"]["traces"][0]["in_string"] = [1, 0]
    with pytest.raises(ProfileError, match=r"traces\[0\]\.in_string: one flag a fill \(10\), got 2"):
        profile_from_dict(d)


def test_schemas_are_traced_in_turns_so_a_drifting_host_slows_each_alike(vocab, monkeypatch):
    """trace_interleaved replays one output of each schema a turn (finding 38: one schema after another, a host's
    drift priced one against the other), each schema's result as trace_schema's, said as each ends."""
    from maskcost.calibrate import fill
    be = make_backend("xgrammar", vocab)
    flat, nested = TIERS["flat"], TIERS["nested"]
    outs = {e.schema_id: [vocab.encode(output_text(x, be.separators)) for x in e.examples[:3]] for e in (flat, nested)}
    order, replay = [], fill._replay
    def spy(backend, compiled, tokens, bitmask):
        order.append(next(sid for sid, o in outs.items() if tokens[:-1] in o))
        return replay(backend, compiled, tokens, bitmask)
    monkeypatch.setattr(fill, "_replay", spy)
    ended = []
    got = fill.trace_interleaved(be, [(flat, outs[flat.schema_id]), (nested, outs[nested.schema_id])], 1, 2, 0, 0,
                                 lambda sid, r: ended.append(sid))
    assert order == [flat.schema_id, nested.schema_id] * 2  # turns, two outputs each (max_traces)
    assert ended == [flat.schema_id, nested.schema_id] and set(got) == set(ended)
    alone = fill.trace_schema(be, nested, outs[nested.schema_id], repeats=1, max_traces=2)
    assert got[nested.schema_id].tokens == alone.tokens and got[nested.schema_id].source == alone.source


def test_the_host_bench_is_taken_as_the_traces_replay(vocab, monkeypatch, tmp_path):
    """SpreadBench: one benchmark round before a replay at most every every_s seconds, so the profile's bench and its
    traces see the host over the same stretch (finding 68); topped up to `least` rounds at the end; the median; one
    bench of 30 rounds back to back kept beside it for the record."""
    from maskcost.calibrate import host
    taken = iter(range(1, 1000))
    monkeypatch.setattr(host, "bench_us", lambda vocab, rounds=30, be=None: float(next(taken)) * (rounds == 1 or 100))
    monkeypatch.setattr(host, "omp_spin_ms", lambda: None)
    hourly = host.SpreadBench(vocab, every_s=3600.0, least=5, moment=True)
    for _ in range(3):
        hourly()
    assert hourly.rounds == [1.0]  # the rest came within the hour
    assert host.host_info(vocab, hourly).bench_us == 3.0 and hourly.rounds == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert hourly.moment_us == 600.0 and hourly.bench_us() == 3.0 and len(hourly.rounds) == 5  # (once)
    assert "median of 5 one-round benches, 1 of them taken as its traces replayed" in hourly.words()
    assert "their median 1 us" in hourly.words() and "for the record: 600 us" in hourly.words()
    plain = host.SpreadBench(vocab, least=2)
    assert plain.bench_us() == 7.5 and plain.moment_us is None and "for the record" not in plain.words()
    calls = []
    res = calibrate_backends(vocab, [TIERS["flat"], TIERS["nested"]], ["xgrammar"], tmp_path / "p.jsonl", repeats=2,
                             pool_workers=(1,), pool_rows=(16,), log=lambda m: None,
                             before_replay=lambda: calls.append(1))
    assert len(calls) == 2 * len(res["xgrammar"].traces) > 0  # before every timed replay (two repeats a trace)


def test_a_schema_whose_mean_is_poorly_known_gets_more_of_its_outputs_traced(vocab, monkeypatch):
    """EnoughTraces: after a pilot, a schema's count is where its mean cost a token would be known to +-rse, at least
    `least`; one whose outputs' costs spread (a heavy tail) goes on to all of them. Each turn goes to the schema least
    far through its count, so the fewer replays of one spread over the whole run (a host's drift falls on both
    alike). The replay's times are set here: flat's outputs each cost 10 us a fill (known at once), nested's 1 and
    100 in turn (+-29% at twelve)."""
    from maskcost.calibrate import fill
    be = make_backend("xgrammar", vocab)
    flat, nested = TIERS["flat"], TIERS["nested"]
    outs = {e.schema_id: [vocab.encode(output_text(e.examples[0], be.separators))] * 12 for e in (flat, nested)}
    turn, order = iter(range(10 ** 6)), []
    def timed(backend, compiled, tokens, bitmask):
        is_flat = tokens[:-1] == outs[flat.schema_id][0]
        order.append(flat.schema_id if is_flat else nested.schema_id)
        us = 10.0 if is_flat else (1.0, 100.0)[next(turn) % 2]
        return [us] * len(tokens), [0.0] * len(tokens)
    monkeypatch.setattr(fill, "_replay", timed)
    got = fill.trace_interleaved(be, [(flat, outs[flat.schema_id]), (nested, outs[nested.schema_id])], 1, 12, 0, 0,
                                 lambda *a: None, fill.EnoughTraces(least=6, rse=0.05, pilot=2))
    assert len(got[flat.schema_id].traces) == 6 and len(got[nested.schema_id].traces) == 12
    assert got[flat.schema_id].source.startswith("6 of 12 recorded outputs")
    assert got[nested.schema_id].source.startswith("12 recorded outputs")
    assert fill.mean_cost_spread(got[nested.schema_id].traces)[nested.schema_id][1] > 0.05
    assert order[:4] == [flat.schema_id, nested.schema_id] * 2  # the pilot in turns
    assert max(i for i, s in enumerate(order) if s == flat.schema_id) >= 12  # flat's six reach the run's end
    assert fill.EnoughTraces(least=6, rse=0.05).target([], 12) == 6  # nothing traced yet: the least
    order.clear()
    plain = fill.trace_interleaved(be, [(flat, outs[flat.schema_id])], 1, 5, 0, 0, lambda *a: None)
    assert len(plain[flat.schema_id].traces) == 5  # without it: max_traces, as before


def test_the_outputs_past_the_first_spread_come_in_a_seeded_order_across_the_points():
    from maskcost.validate.server_outputs import spread, spread_rest
    items = list(range(500))
    first, rest = spread(items, 96), spread_rest(items, 96, seed=0)
    assert sorted(first + rest) == items and rest == spread_rest(items, 96, seed=0) != spread_rest(items, 96, seed=1)
    assert 150 < sum(rest[:100]) / 100 < 350 and max(rest[:100]) - min(rest[:100]) > 400  # a prefix lies across them
    assert spread_rest(items[:50], 96, seed=0) == []


def test_unsupported_schema_is_reported_and_skipped(vocab, tmp_path):
    bad = SchemaEntry("bad/not", "t", {"not": {"type": "string"}}, ({"a": 1},))
    wrong = SchemaEntry("bad/example", "t", {"type": "integer"}, ("text",))
    res = calibrate_backends(vocab, [TIERS["flat"], bad, wrong], ["guidance"], tmp_path / "p.jsonl",
                             repeats=1, pool_workers=(1, 2), pool_rows=(16,), log=lambda m: None)
    g = res["guidance"]
    assert [t.schema_id for t in g.traces] == ["tier/flat"]
    failed = dict(g.failures)
    assert "not" in failed["bad/not"] and "replay failed" in failed["bad/example"]
    assert {abs(p.workers) for p in g.pool} == {1, 2} and any(p.workers < 0 for p in g.pool)
    # the partial file lets a rerun resume without measuring again
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert len(lines) == 3


def test_corpus_reader_and_errors(tmp_path):
    entries = read_corpus([DATA / "corpus_sample.jsonl.gz"])
    assert len(entries) == 6 and all(e.examples for e in entries)
    bad = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad, "wt") as f:
        f.write('{"id": "a", "schema": {}}\nnot json\n')
    with pytest.raises(SchemaInputError, match=r"bad.jsonl.gz:2: not JSON lines"):
        read_corpus([bad])


def test_profile_roundtrip_and_errors(tmp_path):
    p = constant_profile()
    path = tmp_path / "p.json.gz"
    save_profile(p, path)
    q = load_profile(path)
    assert q.backends["xgrammar"].traces[0].fill_us == p.backends["xgrammar"].traces[0].fill_us
    d = profile_to_dict(p)
    d["maskcost_profile_version"] = 99
    with pytest.raises(ProfileError, match="version is 99"):
        profile_from_dict(d)
    d = profile_to_dict(p)
    del d["forward"]["points"]
    with pytest.raises(ProfileError, match=r"profile.forward: missing field 'points'"):
        profile_from_dict(d)
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(ProfileError, match="x.json: not JSON"):
        load_profile(tmp_path / "x.json")


def test_embedded_default_profile_is_real_and_valid():
    from maskcost.profile import load_default_profile
    p = load_default_profile()
    assert p.tokenizer == "llama3" and p.vocab_size == 128256
    assert "H200" in p.apply.source and "vLLM 0.25.1" in p.forward.source
    assert len(p.forward.points) >= 6 and set(p.backends) == {"xgrammar", "guidance"}


@pytest.mark.parametrize("backend", ["xgrammar", "guidance"])
def test_text_sampled_under_the_mask_is_seeded_and_valid(vocab, backend):
    import json

    import jsonschema

    from maskcost.calibrate.fill import sample_under_mask
    be = make_backend(backend, vocab)
    entry = TIERS["bounded"]
    compiled, _ = be.compile(entry.schema, cache=False)
    a, b = sample_under_mask(be, compiled, seed=3), sample_under_mask(be, compiled, seed=3)
    assert a == b and a[-1] == vocab.eos_id  # bounded schema: it closes before the 256-token cap
    doc = json.loads(b"".join(vocab.tokens[t] for t in a[:-1]).decode("utf-8", errors="replace"))
    jsonschema.validate(doc, entry.schema)
    assert sample_under_mask(be, compiled, seed=4) != a
    r = trace_schema(be, entry, sampled=3, seed=1, repeats=1, max_traces=3)
    assert r.error is None and len(r.traces) == 3
    assert [len(t.fill_us) for t in r.traces] != [len(r.traces[0].fill_us)] * 3  # three different outputs


def test_straddle_split():
    from dataclasses import replace

    from maskcost.calibrate.run import straddle_split
    b = constant_profile(fill_us=10.0, trace_len=50).backends["xgrammar"]
    t = b.traces[0]
    t = replace(t, fill_us=tuple(30.0 if s else 10.0 for s in t.straddle))  # straddle positions cost 3x
    sp = straddle_split(replace(b, traces=(t,)))
    assert sp["ratio"] == pytest.approx(3.0) and sp["rate"] == pytest.approx(5 / 50) and sp["tokens"] == 50
    assert straddle_split(replace(b, traces=(replace(t, straddle=(False,) * 50),))) is None


def test_prefill_points_and_context_slope_from_sweeps():
    from maskcost.calibrate.engine import forward_from_summaries

    from synth import summary

    def pt(c, running, itl, prompt, out, ttft=None, cached=None, unique=False):
        return summary({"point": f"off-c{c}", "arm": "off", "concurrency": c, "ttft_ms_p50": ttft,
                        "prompt_tokens_mean": prompt, "config": {"unique_prompts": unique},
                        "output_tokens_mean": out, "engine": {"running_mean": running, "step_ms": itl, "itl_ms": itl,
                                                              "prompt_cached_fraction": cached}})
    base = [pt(1, 1.0, 5.0, 20, 100, ttft=15.0), pt(64, 64.0, 8.0, 20, 100)]  # context 70 per row
    # unique prompts at concurrency 1: TTFT - 10 ms (the fixed part) is the prefill step
    # (the engine's prefix-cache counter is not believed for nonce-led prompts: all of it is computed)
    pre = [pt(1, 1.0, 5.0, 1020, 16, ttft=25.0, cached=0.3, unique=True),
           pt(1, 1.0, 5.0, 3020, 16, ttft=55.0, cached=0.5, unique=True)]
    # a cached 2000-token prompt at batch 64: 1 us per 1000 context tokens x 64 x (2070 - 70) = 0.128 ms
    ctx = [pt(64, 64.0, 8.128, 2020, 100)]
    fw = forward_from_summaries(base, "test", (), pre, ctx)
    assert fw.ttft_fixed_ms == pytest.approx(10.0) and fw.context_ref_tokens == pytest.approx(70.0)
    assert [(p.tokens, p.ms) for p in fw.prefill_points] == [(1020, 15.0), (3020, 45.0)]
    assert fw.context_us_per_ktoken == pytest.approx(1.0)
    with pytest.raises(ValueError, match="concurrency-1"):
        forward_from_summaries(base[1:], "test", (), pre)
    # eager prefill: the same 20-token prompt again (one new token) at TTFT 40 against fresh ones at 15
    # and 17: 24 ms more (median of the fresh ones 16); the fixed part from the fresh ones where the
    # forward sweep has no concurrency-1 point, less the forward curve's step at one row (8 ms here; the
    # concurrency-1 points of 16-token requests sampled no running request in SGLang 0.5.17 run 3)
    eager = [pt(1, 0.0, 5.0, 20, 16, ttft=40.0), pt(1, 0.0, 5.0, 28, 16, ttft=15.0, unique=True),
             pt(1, 0.0, 5.0, 28, 16, ttft=17.0, unique=True)]
    fw = forward_from_summaries(base[1:], "test", (), (), (), eager)
    assert fw.eager_prefill_ms == pytest.approx(24.0) and fw.ttft_fixed_ms == pytest.approx(16.0 - 8.0)
    assert forward_from_summaries(base, "test").eager_prefill_ms == 0.0
    with pytest.raises(ValueError, match="--unique-prompts"):
        forward_from_summaries(base, "test", (), (), (), eager[1:])


def test_version_1_profile_loads_with_prefill_and_context_off():
    from maskcost.profile import load_profile
    p = load_profile(DATA / "v1-profile-session-d.json.gz")  # validation/h200-vllm-0.25.1/d/profiles/sync-points.json.gz
    assert p.forward.prefill_points == () and p.forward.context_us_per_ktoken == 0.0 and p.forward.points


def test_frontend_fit_on_a_real_schema_off_sweep_beats_no_front_end():
    # session E's schema-off sweep (H200, vLLM 0.25.1): TTFT grows ~linearly with concurrency and the
    # engine never held more than ~124 of 256 offered; a fitted API-server queue explains both
    from dataclasses import replace

    from maskcost.calibrate.engine import fit_frontend, forward_from_summaries
    from maskcost.profile import load_default_profile
    from maskcost.validate.sweep import read_summaries
    sweep = read_summaries(DATA / "session-e-off-sweep.jsonl")  # validation/h200-vllm-0.25.1/e/e1-off-short.jsonl
    base = load_default_profile()
    prof = replace(base, forward=forward_from_summaries(sweep, "test"))
    errs = []
    fw = fit_frontend(prof, sweep, log=lambda m: errs.append(float(m.rsplit(" ", 1)[1])))
    assert fw.frontend_token_us > 0 and fw.frontend_request_ms > 0
    assert min(errs) < 0.2 * errs[0]  # errs[0]: no front-end at all
    assert fw.ttft_fixed_ms < prof.forward.ttft_fixed_ms


def test_frontend_fit_stays_within_the_rate_the_server_served():
    """The model's API server is one queue: the fitted request and token costs never exceed the time between
    two requests at any point's measured rate; a sweep served faster forces cheaper costs."""
    from dataclasses import replace

    from maskcost.calibrate.engine import _frontend_points, fit_frontend, forward_from_summaries
    from maskcost.profile import load_default_profile
    from maskcost.validate.sweep import read_summaries
    sweep = read_summaries(DATA / "session-e-off-sweep.jsonl")
    prof = replace(load_default_profile(), forward=forward_from_summaries(sweep, "test"))

    def request_ms(fw, s):
        return fw.frontend_request_ms + fw.frontend_token_us * s.output_tokens_mean / 1e3

    def gap_ms(s):
        return 1e3 * s.output_tokens_mean / s.out_tok_per_s
    fw = fit_frontend(prof, sweep)
    assert all(request_ms(fw, s) <= gap_ms(s) * (1 + 1e-9) for s in _frontend_points(sweep, "off"))
    # the top point served twice as fast: 96 tokens a request at twice the rate
    top = max(s.concurrency for s in sweep)
    faster = [replace(s, out_tok_per_s=2 * s.out_tok_per_s) if s.concurrency == top else s for s in sweep]
    fast = next(s for s in faster if s.concurrency == top)
    assert request_ms(fw, fast) > gap_ms(fast)  # the fit above could not have served it
    fw2 = fit_frontend(prof, faster)
    assert request_ms(fw2, fast) <= gap_ms(fast) * (1 + 1e-9)


def test_frontend_fit_leaves_out_points_whose_client_was_the_queue():
    """A point whose client was over 60% busy a process offered the engine fewer requests than its
    concurrency: the API-server fit does not read it (it would put the client's cap on the API server), and
    with fewer than two points left it says so, naming the fix."""
    from dataclasses import replace

    from maskcost.calibrate.engine import _frontend_points, fit_frontend
    from maskcost.profile import load_default_profile
    from maskcost.validate.sweep import read_summaries
    sweep = read_summaries(DATA / "session-e-off-sweep.jsonl")
    kept = _frontend_points(sweep, "off")
    assert len(kept) >= 2
    busy = [replace(s, client_cpu_pct=95.0) if s.concurrency >= 64 else s for s in sweep]
    assert [s.concurrency for s in _frontend_points(busy, "off")] == [s.concurrency for s in kept if s.concurrency < 64]
    with pytest.raises(ValueError, match="client was not busy .* more client processes"):
        fit_frontend(load_default_profile(), [replace(s, client_cpu_pct=95.0) for s in sweep])


def test_hostmeter_times_the_host_and_sees_a_busy_server_thread(vocab, tmp_path):
    """The meter for real: the single-thread bench and the batch fill each interval, /proc/stat's
    shares, and a busy-looping stand-in 'server' at about one CPU."""
    import json
    import subprocess
    import sys

    from maskcost.validate.hostmeter import read_meter, run_meter
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 30: pass",
                             "maskcost-busy-stand-in"])
    try:
        run_meter(tmp_path / "m.jsonl", vocab, match="maskcost-busy-stand-in", interval_s=0.8, duration_s=2.0)
    finally:
        busy.kill()
    head = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    assert head["meter"]["match"] == "maskcost-busy-stand-in"
    recs = read_meter(str(tmp_path / "m.jsonl"))
    assert len(recs) >= 2
    for r in recs:
        assert 1e3 < r["bench_us"] < 1e6 and 10 < r["batch_row_us"] < 1e5
        assert len(r["busy_pct"]) == len(r["steal_pct"]) >= 1 and all(0 <= x <= 100 for x in r["busy_pct"])
    assert max(t["cpu_pct"] for r in recs for t in r["threads"] if t["pid"] == busy.pid) > 40


def test_frontend_request_fit_recovers_a_saturating_api_server_cost():
    """report --fit-frontend: the API server's extra cost per structured request fitted on schema-on
    points, where a loaded loop sets the running batch: made by the model with 2 ms more per structured
    request, the fit finds 2 ms (the profile has none), keeps the schema-off costs, and the schema-off
    arm stays as it was."""
    from dataclasses import replace

    from maskcost.calibrate.engine import fit_frontend_structured
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.costs import Costs
    from maskcost.model.engine import Simulation
    from maskcost.model.metrics import summarize
    from synth import constant_profile, summary
    p = constant_profile(fill_us=20.0, forward_ms=5.0)
    p = replace(p, forward=replace(p.forward, frontend_token_us=20.0, frontend_request_ms=1.0, ttft_fixed_ms=4.0))
    cfg = EngineConfig(max_num_seqs=256, cpu_count=16, usable_cores=16)
    truth = replace(p, forward=replace(p.forward, frontend_structured_ms=2.0))

    def sim(prof, c, frac=1.0):
        return summarize(Simulation(Costs(prof, "xgrammar"), cfg, Workload(
            concurrency=c, requests=max(200, 4 * c), schemas=("s",), prompt_tokens=100, structured_fraction=frac)).run())
    sweep = []
    for c in (8, 64, 128):
        r = sim(truth, c)
        sweep.append(summary({"arm": "on", "concurrency": c, "point": f"on {c}", "ttft_ms_p50": r["ttft_ms_p50"],
                              "out_tok_per_s": r["out_tok_per_s"], "prompt_tokens_mean": 100.0,
                              "engine": {"running_mean": r["running_mean"], "prompt_cached_fraction": 0.0},
                              "config": {"schemas": ["s", "unknown/x"]}}))
    assert sweep[-1].engine.running_mean < 0.8 * 128  # the loop saturates: running is the API server's
    errs = []
    fw = fit_frontend_structured(p, cfg, sweep, log=errs.append)
    assert fw.frontend_structured_ms == pytest.approx(2.0) and len(errs) >= 13
    assert (fw.frontend_token_us, fw.frontend_request_ms, fw.ttft_fixed_ms) == (20.0, 1.0, 4.0)
    fitted = replace(p, forward=fw)
    assert sim(fitted, 128, 0.0) == sim(p, 128, 0.0)  # schema-off requests pay no schema's validation
    assert sim(fitted, 128)["running_mean"] < 0.9 * sim(p, 128)["running_mean"]
    with pytest.raises(ValueError, match="--fit-frontend: the sweeps need >= 2 schema-on points"):
        fit_frontend_structured(p, cfg, sweep[:1])


def test_engine_row_fit_recovers_the_work_it_was_measured_with(monkeypatch):
    """fit_engine_rows on 'measured' points that the model itself produced with 300 us a row finds
    300 us (to the bisection's step), and 0 where the model already meets them without it."""
    from dataclasses import replace

    from maskcost.calibrate import engine as ce
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.costs import Costs
    from maskcost.model.engine import Simulation
    from maskcost.model.measured import measured_workload
    from maskcost.model.metrics import summarize
    from synth import constant_profile, summary
    monkeypatch.setattr(Workload, "requests", 300)  # the points' request count (predict's is larger)
    base = constant_profile(fill_us=20.0, forward_ms=5.0)
    planted = replace(base, backends={k: replace(b, engine_row_us=300.0) for k, b in base.backends.items()})
    cfg = EngineConfig(backend="xgrammar")

    def point(c, profile):
        s = summary({"point": f"on-c{c}", "arm": "on", "concurrency": c, "prompt_tokens_mean": 1,
                     "config": {"schemas": ["s"]}})
        wl = measured_workload([s], ("s",), max(Workload.requests, 3 * c))
        itl = summarize(Simulation(Costs(profile, "xgrammar"), cfg, wl).run())["itl_ms_mean"]
        return replace(s, engine=replace(s.engine, itl_ms=itl))
    pts = [point(16, planted), point(48, planted)]
    fitted = ce.fit_engine_rows(base, cfg, pts).backends["xgrammar"].engine_row_us
    assert fitted == pytest.approx(300.0, abs=ce.ENGINE_ROW_US_MAX / 2 ** ce.ENGINE_ROW_STEPS + 1.0)
    assert ce.fit_engine_rows(base, cfg, [point(16, base), point(48, base)]).backends["xgrammar"].engine_row_us == 0.0
    with pytest.raises(ValueError, match="no schema-on point"):
        ce.fit_engine_rows(base, cfg, [])


def test_engine_side_keeps_what_its_sweeps_do_not_measure():
    """calibrate/refit.py: a sync sweep alone replaces the sync points only; a new forward sweep replaces the
    decode curve and keeps the base's prefill points and API server; prefill without a forward sweep is
    refused in one line; the provenance given is kept as the profile's engine_only entry, with its base's name."""
    from maskcost.calibrate.refit import ServerSweeps, engine_side
    from maskcost.profile import load_profile, default_profile_path

    from synth import summary

    def off(c, step):
        return summary({"point": f"off-c{c}-r0", "arm": "off", "concurrency": c, "engine": {
            "running_mean": float(c), "step_ms": step, "itl_ms": step}})

    base = load_profile(default_profile_path())
    pts = [off(1, 6.0), off(8, 6.5), off(64, 9.0)]
    p = engine_side(base, ServerSweeps(sync=pts, sync_files=("s.jsonl",)), provenance={"command": "x"})
    assert [x.itl_ms for x in p.forward.sync_points] == [6.0, 6.5, 9.0] and p.forward.points == base.forward.points
    assert "Sync points (--no-async-scheduling): s.jsonl." in p.forward.source
    assert p.provenance["engine_only"] == {"command": "x", "base": base.name}  # (the profile it refits named)
    p = engine_side(base, ServerSweeps(forward=pts, forward_files=("f.jsonl",)), name="new")
    assert [x.itl_ms for x in p.forward.points] == [6.0, 6.5, 9.0] and p.name == "new"
    assert p.forward.prefill_points == base.forward.prefill_points and p.forward.sync_points == base.forward.sync_points
    assert p.forward.frontend_request_ms == base.forward.frontend_request_ms and p.backends == base.backends
    with pytest.raises(ValueError, match="need the --forward-sweep"):
        engine_side(base, ServerSweeps(prefill=pts))


def test_straddle_counts_a_document_as_the_server_writes_it_or_as_written(tmp_path, vocab):
    """maskcost straddle: a JSON document is re-serialized with the server's separators by default, tokenized
    as the file holds it with --as-written (seed 004 measured files as written); the two differ on a file
    written with other whitespace, and the report says which it did."""
    from maskcost.calibrate.straddle import file_texts, report
    f = tmp_path / "doc.json"
    f.write_text('{\n  "name":"Ann",\n  "tags":["a","b"]\n}\n')
    assert file_texts(f) == ['{"name": "Ann", "tags": ["a", "b"]}']
    assert file_texts(f, as_written=True) == ['{\n  "name":"Ann",\n  "tags":["a","b"]\n}']
    a, b = report([vocab], [f]), report([vocab], [f], as_written=True)
    assert a["documents"] == "as the server writes them" and b["documents"] == "as written"
    assert (a["files"][0]["tokens"], a["files"][0]["straddling"]) != (b["files"][0]["tokens"], b["files"][0]["straddling"])


def _loop_point(arm: str, per_s: float, tokens: float, busy: float, listens: bool = True, helper: float = 0.0,
                loop: float | None = None):
    """A sweep point with its server's CPU: the engine core busiest, the API server's process at `busy` (marked as
    listening where `listens`), its loop thread at `loop` (default `busy`), and another process of the server's tree
    at `helper`."""
    from synth import summary
    procs = [{"pid": 2, "name": "VLLM::EngineCor", "cpus": 1.5, "threads": [0.99, 0.3]},
             {"pid": 3, "name": "python3", "cpus": helper, "threads": [helper] if helper else []},
             {"pid": 1, "name": "python3", "cpus": busy, "threads": [busy if loop is None else loop, 0.1],
              **({"listens": True} if listens else {})}]
    return summary({"arm": arm, "concurrency": 64, "output_tokens_mean": tokens, "out_tok_per_s": per_s * tokens,
                    "engine": {"server_cpu": {"cpus": busy + 1.5 + helper, "by_process": procs}}})


def test_api_cpu_fit_prices_each_streams_token_on_the_process():
    """The API server's process busy over points of known rates, 80 us a token of a schema-off stream and 150 us of
    a structured one, its loop thread at 0.85 of it: each arm's token given back, read on the process (every thread),
    a request costing nothing of its own; one arm alone or under 4 points gives none. A record without the listening
    mark reads the loop thread. Where a request did cost the process its own (1 ms here), its tokens carry it: the
    fit then misses the points of unlike lengths, and says by how much."""
    from maskcost.calibrate.api_cpu import fit_api_cpu

    def busy(arm, per_s, tokens, request_ms=0.0):
        return per_s * request_ms / 1e3 + per_s * tokens * (150.0 if arm == "on" else 80.0) / 1e6
    spec = [("off", r, 128) for r in (20, 45, 70)] + [("on", r, t) for r, t in ((30, 40), (60, 28), (110, 25))]
    pts = [_loop_point(a, r, t, busy(a, r, t), loop=0.85 * busy(a, r, t)) for a, r, t in spec]
    got = fit_api_cpu(pts)
    assert (got.points, got.read_on, got.request_ms, got.structured_ms) == (6, "process", 0.0, 0.0)
    assert (round(got.token_us, 6), round(got.structured_token_us, 6)) == (80.0, 150.0)
    assert got.median_abs_error_pct < 1e-6 and "150 us per structured token" in got.words()
    assert fit_api_cpu(pts[:3]) is None and fit_api_cpu(pts[:2] + pts[3:4]) is None  # one arm; under 4 points
    unmarked = fit_api_cpu([_loop_point(a, r, t, 0.5, listens=False, loop=busy(a, r, t)) for a, r, t in spec])
    assert unmarked.read_on == "loop thread" and round(unmarked.structured_token_us, 6) == 150.0
    # a record of both kinds: the marked points alone (the process's CPU and a loop thread's are not one quantity)
    mixed = pts + [_loop_point(a, r, t, 0.5, listens=False, loop=2 * busy(a, r, t)) for a, r, t in spec]
    got_mixed = fit_api_cpu(mixed)
    assert (got_mixed.points, got_mixed.read_on, round(got_mixed.structured_token_us, 6)) == (6, "process", 150.0)
    dear = fit_api_cpu([_loop_point(a, r, t, busy(a, r, t, 1.0)) for a, r, t in spec])
    assert 150 + 1000 / 40 < dear.structured_token_us < 150 + 1000 / 25 and dear.median_abs_error_pct > 0


def test_api_cpu_fit_takes_the_rates_of_the_window_its_cpu_was_read_on():
    """The API server's CPU is read from a point's first request to its last issued; the client's rate runs on into
    the drain. Where the engine's generated tokens over the window are recorded the fit takes them (here 10% over the
    client's, the process's busy share made from them: given back exactly), else the client's."""
    from dataclasses import replace

    from maskcost.calibrate.api_cpu import fit_api_cpu, window_tokens_per_s

    def busy(arm, per_s, tokens):
        return per_s * tokens * (140.0 if arm == "on" else 80.0) / 1e6
    pts = []
    for arm, r, t in (("off", 20, 128), ("off", 45, 128), ("off", 70, 128),
                      ("on", 30, 40), ("on", 60, 28), ("on", 110, 25)):
        p = _loop_point(arm, r / 1.1, t, busy(arm, r, t))  # the client's rate a tenth under the window's
        pts.append(replace(p, engine=replace(p.engine, gen_tokens_per_s=r * t)))
    assert window_tokens_per_s(pts[0]) == 20 * 128 and window_tokens_per_s(_loop_point("on", 10, 30, 0.1)) == 300
    got = fit_api_cpu(pts)
    assert got.median_abs_error_pct < 1e-6
    assert (round(got.structured_token_us, 4), round(got.token_us, 4)) == (140.0, 80.0)
    client = fit_api_cpu([replace(p, engine=replace(p.engine, gen_tokens_per_s=None)) for p in pts])
    assert client.structured_token_us > 153 and client.token_us > 87  # every cost a tenth dearer


def test_api_cpu_reads_the_listening_process_loop():
    """The loop is the busiest thread of the process marked as listening on the port, not a busier process of
    the server's tree; in a record from before the mark, the busiest process outside vLLM's named children;
    nothing without server CPU. What the fit reads (api_cpus): that process's every thread where marked, else the
    loop thread."""
    from synth import summary

    from maskcost.calibrate.api_cpu import loop_cpus
    assert loop_cpus(_loop_point("on", 50, 30, 0.42, helper=0.6)) == 0.42
    assert loop_cpus(_loop_point("on", 50, 30, 0.42, listens=False)) == 0.42  # (the engine core's 0.99 not)
    assert loop_cpus(_loop_point("on", 50, 30, 0.42, listens=False, helper=0.6)) == 0.6  # unmarked: a guess
    assert loop_cpus(summary({"arm": "on", "concurrency": 64})) is None
    from maskcost.calibrate.api_cpu import api_cpus
    assert api_cpus(_loop_point("on", 50, 30, 0.5, loop=0.42)) == (0.5, "process")
    assert api_cpus(_loop_point("on", 50, 30, 0.5, listens=False, loop=0.42)) == (0.42, "loop thread")


def test_a_server_of_two_api_processes_is_noted_and_no_loop_read():
    """vLLM with --api-server-count 2 (shape/gil's api2 sweeps): two VLLM::APIServer children do the API server's
    work, the parent that listens only holds the socket. api_server_processes counts them (1 for one process, 0
    without server CPU); with_frontend says so in the profile's notes and reads no loop's CPU, the model having one
    API server queue: the curve as it was."""
    from synth import summary

    from maskcost.calibrate.api_cpu import api_server_processes
    from maskcost.profile import load_default_profile
    from maskcost.validate.server_fits import with_frontend

    def two(arm: str, per_s: float, tokens: float):
        procs = [{"pid": 2, "name": "VLLM::EngineCor", "cpus": 2.7, "threads": [0.47, 0.06]},
                 {"pid": 3, "name": "VLLM::APIServer", "cpus": 0.7, "threads": [0.58, 0.07]},
                 {"pid": 4, "name": "VLLM::APIServer", "cpus": 0.61, "threads": [0.54, 0.07]},
                 {"pid": 1, "name": "python3", "cpus": 0.0, "threads": [], "listens": True}]
        return summary({"arm": arm, "concurrency": 64, "output_tokens_mean": tokens, "out_tok_per_s": per_s * tokens,
                        "engine": {"server_cpu": {"cpus": 4.0, "by_process": procs}}})
    pts = [two("off", r, 128) for r in (20, 45, 70)] + [two("on", r, t) for r, t in ((30, 40), (60, 28), (110, 25))]
    bare = summary({"arm": "on", "concurrency": 64})
    assert [api_server_processes(s) for s in (pts[0], _loop_point("on", 50, 30, 0.42), bare)] == [2, 1, 0]
    base = load_default_profile()
    p = with_frontend(base, pts[:3], pts[3:], ttft_fit=False)
    assert p.forward == base.forward
    assert [n for n in p.provenance["notes"] if "2 API server processes (--api-server-count 2)" in n]
    one = with_frontend(base, [_loop_point("off", r, 128, 0.1 * r / 20) for r in (20, 45, 70)],
                        [_loop_point("on", r, t, 0.3) for r, t in ((30, 40), (60, 28))], ttft_fit=False)
    assert not [n for n in one.provenance.get("notes", []) if "API server processes" in n]


def test_api_cpu_fit_on_real_calibrations_prices_each_streams_token(tmp_path):
    """Shape runs 9 and 12's calibrations (H100 hosts, vLLM 0.25.1, the servers on this machine): the schema-off sweep
    (128 tokens a request) and both servers' schema-on speed points (25-41 tokens). Run 12's record marks the listening
    process: its CPU is read, a structured token more than twice a schema-off one's, within 15% at the median; run 9's
    does not: its loop thread. with_frontend takes it over the TTFT fit, a request costing nothing of its own, the rest
    of the curve kept; one server's points alone fit too."""
    from dataclasses import replace

    from maskcost.calibrate.api_cpu import fit_api_cpu
    from maskcost.calibrate.engine import forward_from_summaries
    from maskcost.profile import load_default_profile
    from maskcost.validate.server_fits import with_frontend
    from maskcost.validate.sweep import read_summaries

    def records(d):
        return read_summaries(d / "host.forward-sweep.jsonl"), \
            read_summaries(d / "host.speed-sweep.jsonl") + read_summaries(d / "host.speed-sweep-guidance.jsonl")
    fwd, on = records(DATA / "api-cpu-run12")  # validation/h200-vllm-0.25.1/shape/run12/xg/host.*.jsonl
    got = fit_api_cpu(fwd + on)
    assert got.read_on == "process" and got.median_abs_error_pct < 15 and got.points >= 10
    assert 60 < got.token_us < 100 and 150 < got.structured_token_us < 230
    assert got.structured_token_us > 2 * got.token_us
    base = replace(load_default_profile(), forward=forward_from_summaries(fwd, "test"))
    p = with_frontend(base, fwd, on, ttft_fit=False)
    fw = p.forward
    assert (fw.frontend_token_us, fw.frontend_request_ms, fw.frontend_structured_ms, fw.frontend_structured_token_us) \
        == (got.token_us, 0.0, 0.0, got.structured_token_us)
    assert fw.ttft_fixed_ms == pytest.approx(max(0.0, base.forward.ttft_fixed_ms - got.token_us / 1e3))
    assert "process CPU" in fw.source and fw.points == base.forward.points
    assert any("read from its CPU" in n for n in p.provenance["notes"])
    _priced_as_read_at_the_speed_read(p, tmp_path)
    xg = fit_api_cpu(fwd + read_summaries(DATA / "api-cpu-run12" / "host.speed-sweep.jsonl"))  # one server's points
    assert xg.read_on == "process" and 100 < xg.structured_token_us < got.structured_token_us
    fwd9, on9 = records(DATA / "api-cpu")  # validation/h200-vllm-0.25.1/shape/run9/xg/host.*.jsonl: no mark
    assert fit_api_cpu(fwd9 + on9).read_on == "loop thread"
    # no server CPU in the records (a server elsewhere) and no TTFT fit asked for: the profile as it was
    bare = [replace(s, engine=replace(s.engine, server_cpu=None)) for s in fwd + on]
    assert with_frontend(base, bare[:len(fwd)], bare[len(fwd):], ttft_fit=False) == base


def _priced_as_read_at_the_speed_read(p, tmp_path):
    """Costs read from the server's process are that host's time (finding 77): with_frontend marks them as read here
    (AS_READ_HERE) until the speed is read, at_speed_read then marks them read at that speed, which the profile file
    keeps; a file never holds the mark (0) nor a speed <= 0, one without the field is at the profile host's speed
    (1.0); a fit that carries them beside its own brings them to the profile host's speed."""
    from dataclasses import replace

    from maskcost.profile import AS_READ_HERE, FRONTEND_COSTS, MeasuredSpeed, ProfileError, load_profile, save_profile
    from maskcost.validate.server_fits import at_speed_read
    assert p.forward.frontend_read_speed == AS_READ_HERE
    assert at_speed_read(p) == p  # no speed read yet: nothing to mark
    read = at_speed_read(replace(p, measured_speed=MeasuredSpeed(0.72, "xgrammar", "test", ((192, 0.72),))))
    assert read.forward.frontend_read_speed == 0.72
    assert at_speed_read(read) == read
    save_profile(read, tmp_path / "p.json.gz")
    assert load_profile(tmp_path / "p.json.gz").forward.frontend_read_speed == 0.72
    norm = read.forward.frontend_at_profile_speed()
    assert norm.frontend_read_speed == 1.0
    assert [getattr(norm, f) for f in FRONTEND_COSTS] == pytest.approx([getattr(read.forward, f) * 0.72
                                                                        for f in FRONTEND_COSTS])
    for bad, why in ((AS_READ_HERE, "must be > 0"), (-1.0, "must be > 0"), ("fast", "expected float")):
        save_profile(replace(read, forward=replace(read.forward, frontend_read_speed=bad)), tmp_path / "bad.json.gz")
        with pytest.raises(ProfileError, match=f"frontend_read_speed: {why}"):
            load_profile(tmp_path / "bad.json.gz")
    import gzip
    import json
    d = json.loads(gzip.open(tmp_path / "p.json.gz", "rt").read())
    del d["forward"]["frontend_read_speed"]
    (tmp_path / "old.json").write_text(json.dumps(d))
    assert load_profile(tmp_path / "old.json").forward.frontend_read_speed == 1.0


def test_calibration_is_an_api_a_request_run_returns_the_profile_it_wrote(tmp_path):
    """validate/calibration.py: a profile from this host's traces and another profile's engine side, made by a
    request built in code (no command line), the profile it returns the file it wrote, its command the one given;
    the command line resolves the same request (cli/calibrate.calibration_request) from its flags."""
    from maskcost.calibrate.refit import ServerSweeps
    from maskcost.cli import _parse
    from maskcost.cli.calibrate import calibration_request
    from dataclasses import replace
    from maskcost.profile import default_profile_path
    from maskcost.validate.calibration import SweepsCalibration
    # the engine side from a profile whose API server's costs were read at speed 0.5 (frontend_read_speed): the
    # curve it copies keeps them, brought to its profile host's speed (x0.5), its structured request's cost the bench
    # ratio's too (engine_base.engine_side), so neither is priced at 0.5 twice
    d = load_profile(default_profile_path())
    base = tmp_path / "base.json.gz"
    save_profile(replace(d, forward=replace(d.forward, frontend_read_speed=0.5)), base)
    out = tmp_path / "p.json.gz"
    req = SweepsCalibration(out, load_vocab("llama3"), (TIERS["flat"],), ("xgrammar",), ServerSweeps(),
                            engine_from=str(base), traces_per_schema=2, repeats_fill=1,
                            pool_rows=(16,), command=("my", "notebook"))
    p = req.run(log=lambda m: None)
    q = load_profile(out)
    assert q.provenance == p.provenance and p.provenance["command"] == "my notebook"
    assert list(q.backends) == ["xgrammar"]
    assert any(n == f"forward curve copied from {base}" for n in p.provenance["notes"])
    assert p.forward.points == d.forward.points
    ratio = float(next(n for n in p.provenance["notes"] if "this host's bench_us" in n).split("scaled x")[1].split()[0])
    assert p.forward.frontend_read_speed == 1.0
    assert p.forward.frontend_token_us == pytest.approx(0.5 * d.forward.frontend_token_us)
    assert p.forward.frontend_structured_ms == pytest.approx(0.5 * ratio * d.forward.frontend_structured_ms, rel=2e-3)
    flags = _parse(["calibrate", "--out", str(out), "--tier", "flat", "--backend", "xgrammar", "--engine-from",
                    str(base), "--traces-per-schema", "2", "--repeats-fill", "1",
                    "--pool-rows", "16"])
    got = calibration_request(flags)
    # a request built in code checks its own fields, in one line
    from maskcost.validate.calibration import BlackBoxCalibration
    with pytest.raises(ValueError, match="forward times need a live engine"):
        SweepsCalibration(out, req.vocab, req.entries, req.backends, ServerSweeps())
    with pytest.raises(ValueError, match="give a live server"):
        BlackBoxCalibration(out, "gbnf", "llama3", req.entries)
    assert type(got) is SweepsCalibration and got.entries == req.entries and got.sweeps == req.sweeps
    assert (got.backends, got.traces_per_schema, got.pool_rows, got.engine_from) == (req.backends, 2, (16,),
                                                                                    req.engine_from)
