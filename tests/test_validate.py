"""The live client, metrics parsing, output checks and sweep bookkeeping, against a small fake
OpenAI-compatible server on loopback (tests/fake_server.py)."""
import json

import pytest

from fake_server import FakeEngine, FakeServer
from maskcost.calibrate.schemas import TIERS, unique_schema
from maskcost.validate.checks import check_output
from maskcost.validate.client import ServerError
from maskcost.validate.metrics import parse_metrics, window_stats
from maskcost.validate.sweep import PointSpec, read_summaries, run_sweep

FLAT = TIERS["flat"]


def test_checks():
    s = FLAT.schema
    assert check_output(json.dumps(FLAT.examples[0]), s, "stop") == "valid"
    assert check_output('{"name": "x"', s, "length") == "truncated"
    assert check_output('{"name": "x"', s, "stop") == "invalid_json"
    assert check_output('{"name": "x"}', s, "stop").startswith("schema_violation")
    assert check_output("anything", None, "stop") == "unconstrained"


def test_parse_metrics_sums_engines_and_drops_buckets():
    text = FakeEngine("x").metrics() + 'vllm:num_requests_running{engine="1",model_name="fake"} 3\n'
    m = parse_metrics(text)
    assert m["vllm:num_requests_running"] == 3
    assert "vllm:iteration_tokens_total_count" in m
    assert not any(k.endswith("_bucket") for k in m)
    w = window_stats("vllm", {"vllm:iteration_tokens_total_count": 10, "vllm:inter_token_latency_seconds_sum": 1.0,
                              "vllm:inter_token_latency_seconds_count": 100, "vllm:generation_tokens_total": 0},
                     {"vllm:iteration_tokens_total_count": 110, "vllm:inter_token_latency_seconds_sum": 2.0,
                      "vllm:inter_token_latency_seconds_count": 300, "vllm:generation_tokens_total": 500}, 2.0)
    assert w.step_ms == pytest.approx(20.0) and w.itl_ms == pytest.approx(5.0) and w.gen_tokens_per_s == 250


def test_the_window_reads_its_engines_own_counters():
    """vLLM's prefix-cache and draft counters and its TTFT histogram, by the names its ServerMetrics gives: 300 of
    400 prompt tokens cached, 60 of 120 drafts accepted over 500 tokens (440 row-steps, 110 given drafts), TTFT 2.0 s
    over 40 requests; an engine that exports none of them reads None, whatever its counters hold."""
    from maskcost.records import SweepSummary
    from maskcost.validate.report import _server_timings, server_ttft_ms
    keys = {"vllm:prefix_cache_queries_total": 400, "vllm:prefix_cache_hits_total": 300,
            "vllm:spec_decode_num_draft_tokens_total": 120, "vllm:spec_decode_num_accepted_tokens_total": 60,
            "vllm:spec_decode_num_drafts_total": 110, "vllm:time_to_first_token_seconds_sum": 2.0,
            "vllm:time_to_first_token_seconds_count": 40}
    before = {"vllm:iteration_tokens_total_count": 0, "vllm:generation_tokens_total": 0}
    after = {"vllm:iteration_tokens_total_count": 100, "vllm:generation_tokens_total": 500, **keys}
    w = window_stats("vllm", before, after, 1.0)
    assert w.prompt_cached_fraction == 0.75 and w.spec_acceptance == 0.5 and w.spec_draft_rate(500) == 0.25
    from maskcost.model.engines import ENGINES, ServerMetrics
    from maskcost.validate.metrics import WindowStats
    g = WindowStats(1.0, 10, 100.0, None, 500.0, keys, ENGINES["llamacpp"].metrics)  # its counters: vLLM's names
    assert g.prompt_cached_fraction is None and g.spec_acceptance is None and g.spec_draft_rate(500) is None
    with pytest.raises(ValueError, match="x:ttft_sum not kept"):  # a series named but dropped from the window
        ServerMetrics("x:running", "x:steps", None, "x:gen", ttft_histogram="x:ttft", extra_counter_prefixes=("x:q",))

    def summary(engine):
        return SweepSummary.from_json({"point": "p", "arm": "on", "concurrency": 8, "repeat": 0, "requests": 40,
                                       "errors": 0, "output_tokens_mean": 10.0, "itl_ms_mean": 5.0, "config": {},
                                       "engine": {"window_s": 1.0, "counters": keys, "engine": engine}})
    assert server_ttft_ms(summary("vllm")) == pytest.approx(50.0) and server_ttft_ms(summary(None)) == 50.0
    assert _server_timings([summary("vllm")]) == {"ttft": pytest.approx(50.0)}
    assert server_ttft_ms(summary("sglang")) is None and _server_timings([summary("sglang")]) == {}


# an SGLang 0.5.17 exposition as its collectors label it (tokenizer and scheduler side, TP1)
SGLANG_LABELS = 'engine_type="unified",model_name="llama3-8b",moe_ep_rank="0",pp_rank="0",tp_rank="0"'


def sglang_exposition(decode: int, prefill: int, itl_sum: float, tokens: int) -> str:
    stream = 'engine_type="unified",is_streaming="true",model_name="llama3-8b"'
    return "\n".join([
        "# TYPE sglang:num_running_reqs gauge", f"sglang:num_running_reqs{{{SGLANG_LABELS}}} 57.0",
        "# TYPE sglang:cuda_graph_passes counter",
        f'sglang:cuda_graph_passes_total{{{SGLANG_LABELS},mode="decode_cuda_graph"}} {decode}',
        *([f'sglang:cuda_graph_passes_total{{{SGLANG_LABELS},mode="prefill_none"}} {prefill}'] if prefill else []),
        "# TYPE sglang:inter_token_latency_seconds histogram",
        f'sglang:inter_token_latency_seconds_bucket{{{stream},le="+Inf"}} {tokens}',
        f"sglang:inter_token_latency_seconds_count{{{stream}}} {tokens}",
        f"sglang:inter_token_latency_seconds_sum{{{stream}}} {itl_sum}",
        "# TYPE sglang:generation_tokens counter", f"sglang:generation_tokens_total{{{stream}}} {tokens}", ""])


def test_sglang_metrics_rank_labels_summed_and_steps_over_modes():
    from maskcost.validate.metrics import detect_engine
    before = parse_metrics(sglang_exposition(100, 0, 1.0, 200))
    after = parse_metrics(sglang_exposition(400, 20, 4.0, 800))
    assert detect_engine(before) == "sglang" and before["sglang:num_running_reqs"] == 57
    w = window_stats("sglang", before, after, 3.0)
    # steps: 300 decode passes + 20 prefill passes (a mode first seen in the window counts from 0)
    assert w.steps == 320 and w.step_ms == pytest.approx(3000 / 320)
    assert w.itl_ms == pytest.approx(3000 / 600) and w.gen_tokens_per_s == pytest.approx(200)


def test_unique_schema_adds_one_optional_property():
    import random
    a = unique_schema(FLAT.schema, random.Random(1))
    b = unique_schema(FLAT.schema, random.Random(2))
    assert a != b and a["required"] == FLAT.schema["required"]
    assert len(a["properties"]) == len(FLAT.schema["properties"]) + 1


def test_sweep_records_checks_and_resumes(tmp_path):
    out = tmp_path / "s.jsonl"
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        pts = [PointSpec("on", 4, 0, 12), PointSpec("off", 4, 0, 8)]
        res = run_sweep(srv.url, pts, [FLAT], out, off_tokens=10, warmup=2)
        assert [r.point for r in res] == ["on-c4-r0", "off-c4-r0"]
        on, off = res
        assert on.checks == {"valid": 12} and off.checks == {"unconstrained": 8}
        assert on.output_tokens_mean == pytest.approx(len(json.dumps(FLAT.examples[0])) / 3, abs=1)
        assert off.output_tokens_mean == 10
        assert on.itl_ms_mean > 1.0 and on.engine.engine == "vllm"
        assert on.config["schemas"] == ["tier/flat"] and "client_host" in on.provenance
        flags = on.provenance["server"]["flags"]  # the engine's own config gauges
        assert flags["vllm:cache_config_info"]["block_size"] == "16" and "props" not in flags
        raw = (tmp_path / "s.raw.jsonl").read_text().splitlines()
        assert len(raw) == 20
        # a rerun resumes: nothing is sent again for finished points
        served = srv.engine.served
        res2 = run_sweep(srv.url, pts + [PointSpec("on", 2, 1, 4)], [FLAT], out, off_tokens=10, warmup=0)
        assert len(res2) == 3 and srv.engine.served == served + 1 + 4  # one request a schema first: refused?


def test_dead_server_keeps_finished_points_and_measures_the_failed_one_again(tmp_path):
    """A point whose requests mostly failed is an error naming their schemas, and is not kept: the same command
    measures it again once the server answers (its failed requests' raw records set aside)."""
    out = tmp_path / "s.jsonl"
    eng = FakeEngine(json.dumps(FLAT.examples[0]))
    pts = [PointSpec("on", 2, 0, 8), PointSpec("on", 2, 1, 8)]
    with FakeServer(eng) as srv:
        eng.fail_after = 10
        with pytest.raises(ServerError, match="requests failed at point on-c2-r1 .*of schemas tier/flat.*not kept"):
            run_sweep(srv.url, pts, [FLAT], out, warmup=0)
        assert [json.loads(x)["point"] for x in out.read_text().splitlines()] == ["on-c2-r0"]
        eng.fail_after = None
        res = run_sweep(srv.url, pts, [FLAT], out, warmup=0)
    assert [r.point for r in res] == ["on-c2-r0", "on-c2-r1"] and res[1].checks == {"valid": 8}
    assert (tmp_path / "s.aborted.raw.jsonl").exists()


def test_a_schema_the_server_refuses_is_said_and_skipped_and_the_rest_measured(tmp_path, capsys):
    """One short request of each schema first: the one the server answers 400 is named with the server's words
    and left out of every point (the summary's config records it); every schema refused: one error, nothing kept."""
    from maskcost.calibrate.schemas import SchemaEntry
    bad = SchemaEntry("mine/bad", "mine", {**FLAT.schema, "x-fake-refuse": True}, FLAT.examples)
    aborted = SchemaEntry("mine/aborted", "mine", {**FLAT.schema, "x-fake-refuse": "stream"}, FLAT.examples)
    out = tmp_path / "s.jsonl"
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        res = run_sweep(srv.url, [PointSpec("on", 2, 0, 6)], [bad, FLAT, aborted], out, warmup=0)
        assert res[0].checks == {"valid": 6} and res[0].config["schemas"] == ["tier/flat"]
        assert "not supported by xgrammar" in res[0].config["refused_schemas"]["mine/bad"]
        assert res[0].config["refused_schemas"]["mine/aborted"] == "HTTP 400 (in the stream): Invalid grammar request"
        assert "schema mine/bad: skipped: the server refused it (HTTP 400: The provided JSON schema contains features " \
            "not supported by xgrammar.)" in capsys.readouterr().out
        with pytest.raises(ServerError, match="refused every schema .*mine/bad.*nothing was measured"):
            run_sweep(srv.url, [PointSpec("on", 2, 0, 6)], [bad], tmp_path / "t.jsonl", warmup=0)
    assert not (tmp_path / "t.jsonl").exists()


def test_a_server_that_says_its_version_elsewhere_is_known_by_it():
    """SGLang has no /version: its /server_info (Engine.info_path) gives the engine, its version and the resolved
    args a result depends on (Engine.server_args_kept), the others left out."""
    from maskcost.model.engines import ENGINES
    from maskcost.validate.sweep import server_provenance
    kept = ENGINES["sglang"].server_args_kept[0]
    eng = FakeEngine("{}")
    eng.server_info = {"version": "0.5.17", kept: 4, "not_kept_arg": 1}
    with FakeServer(eng) as srv:
        prov = server_provenance(srv.url)
    assert prov["version"] == {"version": "0.5.17", "engine": "sglang"} and prov["server_args"] == {kept: 4}


def test_a_summary_line_cut_short_by_a_kill_is_measured_again(tmp_path, capsys):
    out = tmp_path / "s.jsonl"
    pts = [PointSpec("off", 2, 0, 4), PointSpec("off", 2, 1, 4)]
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        run_sweep(srv.url, pts, [], out, off_tokens=10, warmup=0)
        text = out.read_text()
        out.write_text(text[:-40])  # the second point's line cut mid-write, no newline
        assert [s.point for s in read_summaries(out)] == ["off-c2-r0"]
        assert "last line was cut short" in capsys.readouterr().err
        res = run_sweep(srv.url, pts, [], out, off_tokens=10, warmup=0)
    assert [r.point for r in res] == ["off-c2-r0", "off-c2-r1"] and len(out.read_text().splitlines()) == 2


def test_a_sweep_resumes_only_with_the_settings_it_was_measured_with(tmp_path):
    out = tmp_path / "s.jsonl"
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        run_sweep(srv.url, [PointSpec("off", 2, 0, 4)], [], out, off_tokens=10, warmup=0)
        with pytest.raises(ValueError, match=r"measured otherwise \(off_tokens 10 there, 50 now\)"):
            run_sweep(srv.url, [PointSpec("off", 2, 0, 4), PointSpec("off", 4, 0, 4)], [], out, off_tokens=50,
                      warmup=0)
        with pytest.raises(ValueError, match="--max-tokens 0: must be >= 1"):
            run_sweep(srv.url, [PointSpec("off", 2, 0, 4)], [], out, max_tokens=0)
        with pytest.raises(ValueError, match="without /v1"):
            run_sweep(srv.url + "/v1", [PointSpec("off", 2, 0, 4)], [], tmp_path / "t.jsonl")
    with pytest.raises(ValueError, match="--concurrency 0: must be >= 1"):
        PointSpec("on", 0, 0, 4)
    with pytest.raises(ValueError, match="no requests"):
        PointSpec("on", 2, 0, 0)


def test_unreachable_server_is_one_clear_error(tmp_path):
    with pytest.raises(ServerError, match="127.0.0.1:9/v1/models: unreachable"):
        run_sweep("http://127.0.0.1:9", [PointSpec("on", 1, 0, 1)], [FLAT], tmp_path / "x.jsonl")


def test_spec_decode_acceptance_from_counter_deltas():
    def expo(drafted: int, accepted: int) -> dict[str, float]:
        return parse_metrics(
            "# TYPE vllm:spec_decode_num_draft_tokens counter\n"
            f'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} {drafted}\n'
            "# TYPE vllm:spec_decode_num_accepted_tokens counter\n"
            f'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
            "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n")
    ws = window_stats("vllm", expo(300, 100), expo(900, 250), 2.0)
    assert ws.spec_acceptance == pytest.approx(150 / 600)
    assert ws.counters["vllm:spec_decode_num_draft_tokens_total"] == 600
    assert window_stats("vllm", expo(300, 100), expo(300, 100), 2.0).spec_acceptance is None


def test_report_uses_committed_predictions_unchanged(tmp_path):
    from dataclasses import asdict

    from maskcost.model.config import EngineConfig
    from maskcost.point import Point
    from maskcost.validate.report import compare
    from synth import constant_profile
    cfg = EngineConfig(max_num_seqs=128)
    # a prediction file's points: the numbers must come through as written, not re-simulated
    pts = [{"engine": "vllm", "backend": "xgrammar", "concurrency": c, "config": {"engine": asdict(cfg)},
            "itl_ms_mean": 100.0 + c, "ttft_ms_p50": 1.0, "out_tok_per_s": 10.0, "running_mean": 8.0,
            "breakdown": {}, "overhead_pct": 1.0,
            "off": {"itl_ms_mean": 5.0, "itl_ms_p50": 5.0, "ttft_ms_p50": 1.0, "out_tok_per_s": 1.0,
                    "running_mean": 8.0}} for c in (8, 64)]
    typed = lambda: [Point.from_json(p) for p in pts]  # noqa: E731  (what report --predicted reads)
    meas = [{"point": f"{a}-c8-r{r}", "arm": a, "concurrency": 8, "config": {"schemas": ["s"]},
             "itl_ms_mean": 50.0, "ttft_ms_p50": 2.0, "out_tok_per_s": 20.0,
             "engine": {"itl_ms": 54.0 * (r + 1), "running_mean": 8.0}} for a in ("on", "off") for r in (0, 1)]
    from synth import summary
    rows = compare(constant_profile(), cfg, [summary(m) for m in meas], predicted=typed())
    on = next(r for r in rows if r["arm"] == "on")
    e = on["metrics"]["ITL ms"]
    assert e["predicted"] == 108.0 and e["measured"] == 81.0
    assert e["error_pct"] == pytest.approx(100 * 27 / 81) and e["spread_pct"] == pytest.approx(100 * 54 / 81)
    with pytest.raises(ValueError, match="no point made for"):
        compare(constant_profile(), EngineConfig(max_num_seqs=256), [summary(m) for m in meas], predicted=typed())
    # a prediction with a band (profile.engine_speeds): the score counts the points inside it
    from maskcost.validate.report import score
    for p, band in zip(pts, ([90.0, 120.0], [150.0, 200.0])):
        p["band"] = {"cpu_speed": [1.2, 0.8], "servers": ["a", "b"], "itl_ms_mean": band, "ttft_ms_p50": [1.0, 1.0],
                     "out_tok_per_s": [10.0, 10.0]}
    sc = score(compare(constant_profile(), cfg, [summary(m) for m in meas], predicted=typed()))
    assert (sc["band_points"], sc["inside_band"]) == (1, 0)  # 81 ms measured at 8, band 90-120
    pts[0]["band"]["itl_ms_mean"] = [80.0, 120.0]
    assert score(compare(constant_profile(), cfg, [summary(m) for m in meas], predicted=typed()))["inside_band"] == 1
    # the engine's own TTFT (its histogram over the window) against the model's mean TTFT; a file made
    # before the model reported a mean has none, and the metric is then not scored
    assert on["metrics"]["server TTFT ms"]["predicted"] is None
    for r, m in enumerate(meas):
        m["engine"]["counters"] = {"vllm:time_to_first_token_seconds_count": 4.0,
                                   "vllm:time_to_first_token_seconds_sum": 0.2 * (r + 1)}
    pts[0]["ttft_ms_mean"] = 60.0
    rows = compare(constant_profile(), cfg, [summary(m) for m in meas], predicted=typed())
    t = next(r for r in rows if r["arm"] == "on")["metrics"]["server TTFT ms"]
    assert t["measured"] == pytest.approx(75.0) and t["error_pct"] == pytest.approx(-20.0)
    assert score(rows, "server TTFT ms")["points"] == 1
    # the client's CPU share (sweep: client_cpu_pct), the busiest repeat; a report says where it was high
    meas[0]["client_cpu_pct"], meas[1]["client_cpu_pct"] = 30.0, 75.0
    from maskcost.validate.report import write_report
    rows = compare(constant_profile(), cfg, [summary(m) for m in meas], predicted=typed())
    assert next(r for r in rows if r["arm"] == "on")["client_cpu_pct"] == 75.0
    write_report(rows, tmp_path / "r", constant_profile(), cfg, ["m.jsonl"], "t")
    assert "over 60% busy per process at on 8 (75%)" in (tmp_path / "r" / "report.md").read_text()


def test_sse_keeps_unicode_line_separators_inside_json(tmp_path):
    # a model may emit U+2028 / U+0085 raw inside a string; SSE lines end only at LF / CR LF
    text = json.dumps({"name": "a\u2028b\x85c", "age": 3}, ensure_ascii=False)
    with FakeServer(FakeEngine(text)) as srv:
        res = run_sweep(srv.url, [PointSpec("on", 2, 0, 4)], [FLAT], tmp_path / "u.jsonl", warmup=0)
    assert res[0].errors == 0
    raw = [json.loads(x) for x in (tmp_path / "u.raw.jsonl").read_text().splitlines()]
    assert {r["text"] for r in raw} == {text}


def test_prompt_pad_shared_or_unique_and_recorded(tmp_path):
    from maskcost.validate.sweep import read_summaries
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        shared = run_sweep(srv.url, [PointSpec("off", 2, 0, 4)], [], tmp_path / "a.jsonl", off_tokens=4,
                           warmup=0, prompt_pad=50)[0]
        p_shared = list(srv.engine.prompts)
        uniq = run_sweep(srv.url, [PointSpec("off", 2, 0, 4)], [], tmp_path / "b.jsonl", off_tokens=4,
                         warmup=0, prompt_pad=50, unique_prompts=True)[0]
        p_uniq = srv.engine.prompts[len(p_shared):]
        plain = run_sweep(srv.url, [PointSpec("off", 2, 0, 4)], [], tmp_path / "c.jsonl", off_tokens=4, warmup=0)[0]
    assert len(set(p_shared)) == 1 and len(set(p_uniq)) == 4  # the nonce leads each unique prompt
    assert all(p.startswith("[request ") for p in p_uniq) and p_shared[0].startswith("Context: the the")
    assert shared.prompt_tokens_mean - plain.prompt_tokens_mean == 51  # "Context:" + 50 pads
    assert uniq.config["unique_prompts"] and shared.config["prompt_pad"] == 50
    # a summary written before prompt_tokens_mean existed gets it back from the raw records
    old = tmp_path / "c.jsonl"
    line = json.loads(old.read_text().splitlines()[0])
    old.write_text(json.dumps({k: v for k, v in line.items() if k != "prompt_tokens_mean"}) + "\n")
    assert read_summaries(old)[0].prompt_tokens_mean == plain.prompt_tokens_mean


def test_prefix_cache_fraction_from_counter_deltas():
    def expo(queries: int, hits: int) -> dict[str, float]:
        return parse_metrics("# TYPE vllm:prefix_cache_queries counter\n"
                             f'vllm:prefix_cache_queries_total{{engine="0"}} {queries}\n'
                             "# TYPE vllm:prefix_cache_hits counter\n"
                             f'vllm:prefix_cache_hits_total{{engine="0"}} {hits}\n'
                             "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n")
    assert window_stats("vllm", expo(1000, 200), expo(3000, 1700), 1.0).prompt_cached_fraction == pytest.approx(0.75)
    assert window_stats("vllm", expo(1000, 200), expo(1000, 200), 1.0).prompt_cached_fraction is None


def test_client_processes_share_one_closed_loop(tmp_path):
    # 3 client processes hold concurrency 6 together: every request answered once, none lost, the
    # engine saw up to 6 at once, and the resumed file is the same as with one process. 8 rounds of
    # 8 ms steps: a window of a few metrics polls even on a loaded 2-core machine (3 rounds of 4 ms
    # steps left one poll in the window there, before the first request arrived)
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]), base_step_ms=8.0)) as srv:
        res = run_sweep(srv.url, [PointSpec("on", 6, 0, 48)], [FLAT], tmp_path / "p.jsonl", warmup=0,
                        client_procs=3)[0]
        assert srv.engine.served == 1 + 48 and res.requests == 48 and res.checks == {"valid": 48}  # (the schema check)
        assert res.engine.running_max >= 4 and res.config["client_procs"] == 3
        raw = [json.loads(x) for x in (tmp_path / "p.raw.jsonl").read_text().splitlines()]
        assert sorted(r["index"] for r in raw) == list(range(48))
        assert 0 < res.client_cpu_pct < 300  # the client's CPU share per process, recorded with the point


def test_client_processes_by_load_as_calibrate_runs_them(tmp_path):
    """calibrate's sweeps (and sweep / validate without --client-procs) spread a point over 1 + clients // 16
    client processes, at most 8 (LivePlan.client_procs_at): each point records its own count, never more
    processes than streams."""
    from maskcost.validate.plan import LivePlan
    plan = LivePlan()
    assert [plan.client_procs_at(c) for c in (1, 8, 16, 32, 64, 112, 256)] == [1, 1, 2, 3, 5, 8, 8]
    small = LivePlan(client_streams_per_proc=3)  # the rule at a load the stand-in server takes (6 streams: 3)
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]), base_step_ms=8.0)) as srv:
        got = run_sweep(srv.url, [PointSpec("on", 1, 0, 4), PointSpec("on", 6, 0, 24)], [FLAT], tmp_path / "p.jsonl",
                        warmup=0, client_procs=lambda c: 8 if c == 1 else small.client_procs_at(c))
    assert [r.client_procs for r in got] == [1, 3]  # 8 asked at 1 stream: 1
    assert got[1].requests == 24 and got[1].checks == {"valid": 24}
    assert got[1].config["client_procs"].startswith("by load")
    with pytest.raises(ValueError, match="--client-procs 0: must be >= 1"):
        run_sweep("http://127.0.0.1:1", [], [FLAT], tmp_path / "q.jsonl", client_procs=0)


def _burn(seconds: float) -> None:
    import time
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass


def test_client_cpu_counts_the_finished_client_processes():
    # --client-procs: the client processes end with each point; their CPU must count in its share
    import multiprocessing as mp
    from maskcost.validate.sweep import client_cpu_s
    before = client_cpu_s()
    p = mp.get_context("spawn").Process(target=_burn, args=(0.4,))
    p.start()
    p.join()
    assert client_cpu_s() - before >= 0.4


def test_meter_speed_picks_between_the_speeds_of_a_prediction_grid(tmp_path):
    """report --speed-from-meter: each point at the host speed the meter measured in its windows;
    with a grid of committed predictions, interpolated in 1 / speed between the two around it."""
    from dataclasses import asdict, replace

    from maskcost.model.config import EngineConfig
    from maskcost.point import Point
    from maskcost.validate.hostmeter import read_meter, speed_of, window_meter
    from maskcost.validate.report import compare
    from synth import constant_profile
    cfg = EngineConfig(max_num_seqs=256)
    off = {"itl_ms_mean": 5.0, "itl_ms_p50": 5.0, "ttft_ms_p50": 1.0, "out_tok_per_s": 1.0, "running_mean": 8.0}
    pts = [Point.from_json({"engine": "vllm", "backend": "xgrammar", "concurrency": 8,
                            "config": {"engine": asdict(replace(cfg, cpu_speed=sp))}, "itl_ms_mean": itl,
                            "ttft_ms_p50": 1.0, "out_tok_per_s": 10.0, "running_mean": 8.0,
                            "breakdown": {"step_ms": sp}, "overhead_pct": 1.0, "off": off})
           for sp, itl in ((0.5, 200.0), (1.0, 100.0))]
    from synth import summary
    meas = [summary({"point": "on-c8-r0", "arm": "on", "concurrency": 8, "config": {"schemas": ["s"]},
                     "itl_ms_mean": 50.0, "ttft_ms_p50": 2.0, "out_tok_per_s": 20.0,
                     "engine": {"itl_ms": 150.0, "running_mean": 8.0, "window_start_unix_s": 1000.0,
                                "window_s": 10.0}})]
    prof = constant_profile()
    f = tmp_path / "meter.jsonl"
    lines = [{"schema_version": 1, "meter": {}}] + [
        {"t_unix_s": t, "interval_s": 1.0, "bench_us": prof.host.bench_us * k, "batch_row_us": 500.0,
         "busy_pct": [50.0, 10.0], "steal_pct": [2.0, 0.0], "threads": [{"name": "EngineCore", "cpu_pct": 90.0, "cpu": 3}]}
        for t, k in ((995.0, 9.0), (1002.0, 1.5), (1009.0, 1.5), (1020.0, 9.0))]  # only 2 inside the window
    f.write_text("\n".join(json.dumps(x) for x in lines))
    recs = read_meter(str(f))
    m = window_meter(recs, [(1000.0, 1010.0)])
    assert m["records"] == 2 and m["steal_pct"] == 1.0 and m["threads"]["EngineCore"]["cpus"] == [3]
    speed = speed_of(recs, prof.host.bench_us, "test")
    assert speed([(1000.0, 1010.0)]) == pytest.approx(2 / 3)
    rows = compare(prof, cfg, meas, predicted=pts, speed_of=speed)
    assert rows[0]["cpu_speed"] == pytest.approx(2 / 3)
    assert rows[0]["metrics"]["ITL ms"]["predicted"] == pytest.approx(150.0)  # halfway in 1 / speed
    assert rows[0]["metrics"]["ITL ms"]["error_pct"] == pytest.approx(0.0)
    fixed = compare(prof, replace(cfg, cpu_speed=0.8), meas, predicted=pts)  # one speed for all: the same rule
    assert fixed[0]["metrics"]["ITL ms"]["predicted"] == pytest.approx(125.0)  # 1/0.8 is a quarter of the way
    with pytest.raises(ValueError, match="no prediction at cpu speed 0.667"):
        compare(prof, cfg, meas, predicted=pts[:1], speed_of=speed)  # outside the file's speeds
    with pytest.raises(ValueError, match="no meter record inside"):
        speed([(2000.0, 2010.0)])
    f.write_text("not json\n")
    with pytest.raises(ValueError, match="meter.jsonl:1: not JSON lines"):
        read_meter(str(f))


def test_validate_sweeps_then_reports(tmp_path):
    """maskcost validate: the sweep against a live server, then the report on it, in one command."""
    from maskcost.cli import main
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        rc = main(["validate", "--base-url", srv.url, "--out", str(tmp_path / "v"), "--tier", "flat",
                   "--concurrency", "2", "--repeats", "1", "--rounds", "1", "--min-requests", "4",
                   "--off-tokens", "10"])
    assert rc == 0
    doc = json.loads((tmp_path / "v" / "report.json").read_text())
    assert sorted((r["arm"], r["concurrency"]) for r in doc["rows"]) == [("off", 2), ("on", 2)]
    assert doc["sweeps"] == [str(tmp_path / "v" / "sweep.jsonl")] and (tmp_path / "v" / "report.md").exists()
    assert all("itl_speed" in r for r in doc["rows"])  # None where the model cannot meet this fake's ITL
    # the tracking rule's backtest needs no probe with ITL speeds
    assert main(["fit", "--sweep", str(tmp_path / "v" / "sweep.jsonl"), "--out", str(tmp_path / "e"),
                 "--speed-from-earlier"]) == 0


def test_report_says_which_points_had_failed_requests(tmp_path, capsys):
    from maskcost.cli import main
    eng = FakeEngine(json.dumps(FLAT.examples[0]))
    out = tmp_path / "s.jsonl"
    with FakeServer(eng) as srv:
        eng.fail_after = 11  # (one request a schema first) 2 of the second point's 8 requests fail: kept, said
        run_sweep(srv.url, [PointSpec("on", 2, 0, 4), PointSpec("on", 2, 1, 8)], [FLAT], out, warmup=0)
    assert main(["report", "--sweep", str(out), "--out", str(tmp_path / "r")]) == 0
    assert "1 point(s) of the sweep had failed requests (on-c2-r1: 2 of 8)" in capsys.readouterr().out


def test_itl_speed_is_where_the_models_itl_meets_the_engines():
    """report's itl_speed: the CPU speed at which the model's ITL equals the engine's at a point; found
    from slower speeds where the fill hides behind the forward at the first tries; None where even
    the GPU's part is slower than measured, or the speed is outside SPEED_RANGE."""
    from maskcost.model.config import EngineConfig
    from maskcost.validate.hostspeed import attach_itl_speeds, solve_speed
    from maskcost.validate.report import compare
    from synth import constant_profile
    assert solve_speed(lambda s: 20 + 30 / s, 20 + 30 / 0.8, 1.0) == pytest.approx(0.8, rel=1e-3)
    assert solve_speed(lambda s: 20 + 30 / s, 20 + 30 / 0.8, 3.0) == pytest.approx(0.8, rel=1e-3)
    assert solve_speed(lambda s: 20 + 30 / s, 20 + 30 / 8.0, 1.0) is None  # faster than SPEED_RANGE
    assert solve_speed(lambda s: 20.0 + (1 if s < 0.9 else 0) * 0.01 / s, 30.0, 1.0) is None  # never that slow
    prof, cfg = constant_profile(fill_us=400.0), EngineConfig(max_num_seqs=256)  # 8 rows: 3.2 ms of fill at speed 1
    meas = [{"point": "on-c8-r0", "arm": "on", "concurrency": 8, "config": {"schemas": ["s"]}, "itl_ms_mean": 8.0,
             "ttft_ms_p50": 2.0, "out_tok_per_s": 20.0,
             "engine": {"itl_ms": 8.0, "running_mean": 8.0, "window_start_unix_s": 1000.0, "window_s": 10.0}}]
    from synth import summary
    row = attach_itl_speeds(compare(prof, cfg, [summary(m) for m in meas]), prof, cfg, [summary(m) for m in meas], 4)[0]
    assert row["itl_speed"] == pytest.approx(0.4, rel=0.01)  # 3.2 ms / 0.4 = 8 ms: the fill paces the step
    meas[0]["engine"]["itl_ms"] = 4.0  # under the 5 ms forward: no speed makes the model that fast
    assert attach_itl_speeds(compare(prof, cfg, [summary(m) for m in meas]), prof, cfg, [summary(m) for m in meas],
                             4)[0]["itl_speed"] is None


def test_validate_sweeps_only_the_schemas_it_is_given_and_says_what_the_profile_lacks(tmp_path, capsys):
    """The built-in tiers are validate's default only where no schema is given (they were added to a user's
    --schema files before); a sweep schema the profile has no trace of is named, not dropped silently."""
    from maskcost.cli import main
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(FLAT.schema))
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        rc = main(["validate", "--base-url", srv.url, "--out", str(tmp_path / "v"), "--schema", str(mine),
                   "--tier", "flat", "--concurrency", "2", "--repeats", "1", "--rounds", "1", "--min-requests", "4",
                   "--off-tokens", "10"])
    assert rc == 0
    first = json.loads((tmp_path / "v" / "sweep.jsonl").read_text().splitlines()[0])
    assert first["config"]["schemas"] == ["mine", "tier/flat"]
    assert "the sweep's schemas mine are not in the profile" in capsys.readouterr().out


def test_an_sglang_servers_version_picks_its_mechanisms():
    """calibrate --base-url takes the version the server reports where it is modelled; predict then runs the
    profile's own version (provenance server_engine), which --engine-version overrides."""
    import argparse
    from dataclasses import replace

    from maskcost.cli.engine_args import engine_version
    from maskcost.model.config import EngineConfig
    from maskcost.profile import default_profile_path, load_profile
    from maskcost.validate.server_calibration import _served_version
    cfg = EngineConfig(engine="sglang")
    assert _served_version(cfg, {"version": {"version": "0.5.17", "engine": "sglang"}}).engine_version == "0.5.17"
    assert _served_version(cfg, {"version": {"version": "0.9.9", "engine": "sglang"}}).engine_version is None
    assert _served_version(replace(cfg, engine_version="0.5.23"),
                           {"version": {"version": "0.5.17"}}).engine_version == "0.5.23"
    p = load_profile(default_profile_path())
    p = replace(p, provenance={**p.provenance, "server_engine": {"engine": "sglang", "version": "0.5.17"}})
    assert engine_version(argparse.Namespace(engine_version=None), p, "sglang") == ("0.5.17", "the profile's own")
    assert engine_version(argparse.Namespace(engine_version="0.5.23"), p, "sglang")[0] == "0.5.23"
    assert engine_version(argparse.Namespace(engine_version=None), p, "vllm")[0] == "0.25.1"


def test_a_finished_live_calibration_is_kept_only_for_the_same_inputs(tmp_path):
    """calibrate --base-url's rerun: the profile at OUT is kept where its digest of inputs is this run's; a changed
    note, sweep file or unhashable input makes it again (or says so), never reuses it."""
    from dataclasses import replace

    from maskcost.model.config import EngineConfig
    from maskcost.profile import default_profile_path, load_profile, save_profile
    from maskcost.validate.server_calibration import files_digest, finished, inputs_key
    out = tmp_path / "host.json.gz"
    (tmp_path / "host.speed-sweep.jsonl").write_text('{"concurrency": 8}\n')
    (tmp_path / "host.json.gz.partial.jsonl").write_text("a trace cut short\n")  # (not an input)
    key = inputs_key(("http://h:1", ["note"]), EngineConfig(), files_digest(out))
    assert key == inputs_key(("http://h:1", ["note"]), EngineConfig(), files_digest(out))  # the same, again
    assert key != inputs_key(("http://h:1", ["other note"]), EngineConfig(), files_digest(out))
    assert finished(out, key) is None  # no profile yet
    p = load_profile(default_profile_path())
    save_profile(replace(p, provenance={**p.provenance, "inputs_sha256": key}), out)
    assert finished(out, key).provenance["kept"] is True and "kept" not in load_profile(out).provenance
    assert finished(out, key[::-1]) is None
    (tmp_path / "host.json.gz.partial.jsonl").write_text("another\n")
    assert inputs_key(("http://h:1", ["note"]), EngineConfig(), files_digest(out)) == key
    (tmp_path / "host.speed-sweep.jsonl").write_text('{"concurrency": 16}\n')  # a sweep measured again
    assert inputs_key(("http://h:1", ["note"]), EngineConfig(), files_digest(out)) != key
    with pytest.raises(TypeError, match="no stable digest"):
        inputs_key(object())


def test_server_cpu_of_a_local_server_by_its_port(tmp_path):
    """The server's processes found by the port it listens on (here the fake server: this test's own
    process), a busy child of it counted, and the CPUs they kept busy recorded with each sweep point."""
    import multiprocessing
    import os
    import time

    from maskcost.validate.servercpu import cpu_seconds, cpus_over, server_pids, server_tree
    assert server_pids("http://10.255.255.1:8000") == []  # not on this machine: nothing
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        busy = multiprocessing.get_context("fork").Process(target=_spin, args=(1.5,))
        busy.start()
        try:
            pids, listening = server_tree(srv.url)
            assert os.getpid() in pids and busy.pid in pids and pids == server_pids(srv.url)
            assert listening == {os.getpid()}  # the process with the listening socket (vLLM's API server)
            before, t0 = cpu_seconds(pids), time.perf_counter()
            time.sleep(1.0)
            got = cpus_over(before, cpu_seconds(pids), time.perf_counter() - t0, listening)
        finally:
            busy.join()
        assert [x["pid"] for x in got["by_process"] if x.get("listens")] == [os.getpid()]
        child = next(x for x in got["by_process"] if x["pid"] == busy.pid)
        assert 0.6 < child["cpus"] <= 1.05
        assert child["threads_busy"] == 1 and 0.6 < child["threads"][0] <= 1.05  # its one spinning thread
        assert got["cpus"] >= 0.6
        out = tmp_path / "s.jsonl"
        run_sweep(srv.url, [PointSpec("on", 2, 0, 6)], [FLAT], out, warmup=0)
        assert read_summaries(out)[0].engine.server_cpu is not None


def _spin(seconds: float) -> None:
    import time
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class _FakeNvml:
    """pynvml's calls GpuMeter makes: two GPUs, the server's process on the second, at 40% and 90% busy."""
    class _Util:
        def __init__(self, gpu):
            self.gpu = gpu

    class _Proc:
        def __init__(self, pid):
            self.pid = pid

    def __init__(self, server_pid):
        self.server_pid = server_pid

    def nvmlInit(self):
        pass

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [self._Proc(self.server_pid)] if h == 1 else [self._Proc(1)]

    def nvmlDeviceGetUtilizationRates(self, h):
        return self._Util(40 if h == 0 else 90)


def test_the_gpus_busy_fraction_is_read_on_the_servers_gpu_and_reported_beside_the_models(tmp_path, monkeypatch):
    """validate reads the GPU's busy share over each point's window (NVML, the server's own GPU) and the
    report puts it against the model's forward share; with no NVML here the point has no such field."""
    import os
    import sys

    from maskcost.validate.gpubusy import GpuMeter
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML: nothing measured, nothing recorded
    m = GpuMeter([os.getpid()])
    m.start()
    assert m.stop() is None
    monkeypatch.setitem(sys.modules, "pynvml", _FakeNvml(os.getpid()))
    assert GpuMeter([]).nvml is None  # a server elsewhere: this machine's GPUs are not its
    assert GpuMeter([os.getpid() + 10**6]).nvml is None  # NVML names none of its processes, two GPUs: which?
    with FakeServer(FakeEngine(json.dumps(FLAT.examples[0]))) as srv:
        out = tmp_path / "s.jsonl"
        run_sweep(srv.url, [PointSpec("on", 2, 0, 6)], [FLAT], out, warmup=0)
    busy = read_summaries(out)[0].engine.gpu_busy
    assert busy["fraction"] == pytest.approx(0.9) and busy["gpus"] == [1] and busy["samples"] >= 1
    from maskcost.validate.report import METRICS
    get = dict((n, g) for n, g, _ in METRICS)["GPU busy"]
    assert get(read_summaries(out)[0]) == pytest.approx(0.9)
    from maskcost.cli import main
    assert main(["report", "--sweep", str(out), "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("- GPU busy (the share"))
    meas, pred = line.rsplit(": on 2 ", 1)[1].split(" / ")
    assert float(meas) == pytest.approx(0.9) and 0.0 < float(pred) <= 1.0
    assert "- GPU busy: 1 points, median |error|" in md
    # the server's CPUs (this test's own process serves it) beside the engine's demand in the model
    line = next(x for x in md.splitlines() if x.startswith("- Server CPUs (its processes'"))
    meas, pred = line.rsplit(": on 2 ", 1)[1].split(" / ")
    assert float(meas) >= 0.0 and float(pred) > 0.0


def test_a_backend_whose_modelled_fill_takes_no_factor_is_not_fitted():
    """calibrate --backend-url on SGLang's llguidance: its fills run batched in the model (no in-engine
    factor reaches them), so its own server's points cannot read one; the profile is left as it was, said."""
    from dataclasses import replace
    from pathlib import Path

    from maskcost.model.config import EngineConfig
    from maskcost.model.engines import shipped_profile_path
    from maskcost.profile import MeasuredSpeed, load_profile
    from maskcost.validate.server_fits import fit_backend_fill
    p = load_profile(shipped_profile_path(("sglang",)))
    point = read_summaries(Path(__file__).parent / "data" / "sglang-llguidance-c64.jsonl")  # a real SGLang point
    p = replace(p, measured_speed=MeasuredSpeed(1.0, "xgrammar", "test", ((64, 1.0),)))
    cfg = EngineConfig(engine="sglang", engine_version="0.5.17", backend="xgrammar", max_num_seqs=256)
    got = fit_backend_fill(p, cfg, "guidance", point, "http://gd")
    assert got.backends["guidance"] == p.backends["guidance"]
    assert "does not take the in-engine factors" in got.provenance["notes"][-1]


def test_a_backend_fill_factor_fitted_on_its_server_is_drawn_toward_the_record(monkeypatch):
    """calibrate --backend-url's fill factor for llguidance: the factor at which the model meets each of its
    server's points (here a model whose ITL is linear in it), medians serial and pool, then each drawn halfway in
    the log toward the record's (server_fits.FILL_PRIORS); the profile's note gives the fit and the drawn factor."""
    from dataclasses import replace
    from pathlib import Path

    import maskcost.validate.server_fits as sf
    from maskcost.model.config import EngineConfig
    from maskcost.profile import MeasuredSpeed, load_default_profile
    from maskcost.records import itl_ms
    p = load_default_profile()
    pts = read_summaries(Path(__file__).parent / "data" / "session-e-off-sweep.jsonl")  # (their ITL the targets)
    p = replace(p, measured_speed=MeasuredSpeed(1.0, "xgrammar", "test", tuple((s.concurrency, 1.0) for s in pts)))
    carried = p.backends["guidance"].engine_fill

    def model(q, cfg, summaries):  # the model's ITL: half the measured at the carried factor, linear in the factor
        k = q.backends["guidance"].engine_fill.serial_factor / carried.serial_factor
        return [{"metrics": {"ITL ms": {"predicted": itl_ms(summaries[0]) * 0.5 * (1 + 0.5 * k)}}}]
    monkeypatch.setattr(sf, "compare", model)
    cfg = EngineConfig(backend="xgrammar", max_num_seqs=256)
    fitted = sf.fit_backend_fill(p, cfg, "guidance", pts, "http://gd")
    assert fitted.backends["guidance"].engine_fill.serial_factor == pytest.approx(2.0 * carried.serial_factor, rel=1e-3)
    prior = sf.FILL_PRIORS["guidance"]
    drawn = sf.fit_backend_fill(p, cfg, "guidance", pts, "http://gd", prior)
    ef = drawn.backends["guidance"].engine_fill
    assert ef.serial_factor == pytest.approx(carried.serial_factor * (2.0 * prior.serial) ** 0.5, rel=1e-3)
    assert ef.pool_factor == pytest.approx(carried.pool_factor * (2.0 * prior.pool) ** 0.5, rel=1e-3)
    note = drawn.provenance["notes"][-1]
    assert "x2.000 serial" in note and f"drawn toward the record's x{prior.serial:.3f} serial" in note


def test_the_record_fill_prior_is_the_record_and_only_over_the_embedded_profile(tmp_path):
    """FILL_PRIORS' llguidance medians are those of the factors fitted on shape runs 5-18 (their profiles' notes),
    over the embedded profile as it is; fill_priors gives them only where wanted and the factors are carried from
    it, and says so where not."""
    import gzip
    import hashlib
    import re
    import statistics
    from pathlib import Path

    from maskcost.profile import default_profile_path
    from maskcost.validate.server_calibration import fill_priors
    from maskcost.validate.server_fits import FILL_PRIORS
    prior = FILL_PRIORS["guidance"]
    assert hashlib.sha256(default_profile_path().read_bytes()).hexdigest() == prior.profile_sha256
    shape = Path(__file__).parent.parent / "validation" / "h200-vllm-0.25.1" / "shape"
    ks = []
    for r in range(5, 19):
        notes = json.loads(gzip.open(shape / f"run{r}" / "xg" / "host.json.gz").read())["provenance"]["notes"]
        ks.append(next(tuple(map(float, m)) for n in notes
                       for m in re.findall(r"in-engine fill x([0-9.]+) serial, x([0-9.]+) pool", n)))
    assert prior.serial == pytest.approx(statistics.median(k for k, _ in ks), abs=6e-4)
    assert prior.pool == pytest.approx(statistics.median(k for _, k in ks), abs=6e-4)
    notes: list[str] = []
    said: list[str] = []
    assert fill_priors(default_profile_path(), {"guidance": "u"}, notes, log=said.append) == {"guidance": prior}
    assert not notes and not said
    assert fill_priors(default_profile_path(), {"guidance": "u"}, notes, wanted=False) == {} and not notes  # (none)
    other = tmp_path / "other.json.gz"
    other.write_bytes(gzip.compress(b"{}"))
    assert fill_priors(other, {"guidance": "u"}, notes, log=said.append) == {}
    assert "kept as fitted" in notes[0] and f"carried from {other}" in notes[0] and said == [f"calibrate: {notes[0]}"]
    assert fill_priors(None, {"guidance": "u"}, notes, log=said.append) == {}  # (no factors carried: a fit over 1.0)
    assert "no in-engine factors are carried" in notes[1]
    assert fill_priors(other, {"xgrammar": "u"}, [], log=said.append) == {}
