"""maskcost advise (model/advise.py, cli/advise.py): the search, the ranking and the words, against
configurations whose figures are computed by hand on constant-cost profiles."""
import json
from dataclasses import replace

import pytest

from maskcost.cli import main
from maskcost.model.advise import Goal, dominant, what_moves
from maskcost.point import Breakdown, OffArm, Point
from maskcost.profile import save_profile
from synth import constant_profile


def two_backends(tmp_path, xgrammar_fill_us, guidance_fill_us, forward_ms):
    """A profile whose xgrammar and llguidance rows cost what is given (constant, one schema "s")."""
    x = constant_profile(fill_us=xgrammar_fill_us, forward_ms=forward_ms)
    g = constant_profile(fill_us=guidance_fill_us, forward_ms=forward_ms)
    path = tmp_path / "p.json.gz"
    save_profile(replace(x, backends={"xgrammar": x.backends["xgrammar"], "guidance": g.backends["guidance"]}), path)
    return str(path)


def advise(capsys, tmp_path, profile, *flags):
    out = tmp_path / "a.json"
    rc = main(["advise", "--profile", profile, "--prompt-tokens", "1", "--quiet", "--json", str(out),
               "--spec-tokens", "0", *flags])  # the hand-computed cases are without drafts unless a test says
    return rc, capsys.readouterr().out, json.loads(out.read_text())


def test_a_goal_only_llguidance_meets(capsys, tmp_path):
    # 32 rows a step, async: xgrammar fills 32 x 0.5 = 16 ms on the engine thread, llguidance 32 x 0.05 = 1.6 ms
    # under the 5-ms forward: steps of 16 and 5 ms; ITL p99 <= 10 ms only with llguidance
    p = two_backends(tmp_path, 500.0, 50.0, 5.0)
    rc, text, res = advise(capsys, tmp_path, p, "--concurrency", "32", "--itl-p99-ms", "10", "--cores", "16",
                           "--max-num-seqs", "128", "--async-scheduling")
    assert rc == 0
    met = [c for c in res["configurations"] if c["meets"]]
    assert met and {c["config"]["backend"] for c in met} == {"guidance"}
    assert all(c["points"][0]["itl_ms_mean"] == pytest.approx(5.0, rel=0.01) for c in met)
    missed = [c for c in res["configurations"] if not c["meets"]]
    assert {c["config"]["backend"] for c in missed} == {"xgrammar"}
    assert all(c["points"][0]["itl_ms_mean"] == pytest.approx(16.0, rel=0.01) for c in missed)
    assert res["chosen"]["config"]["backend"] == "guidance" and "1. vllm" in text and "guidance" in text


def test_a_goal_one_more_core_meets(capsys, tmp_path):
    # 256 rows of 0.1 ms on vLLM's pool (max-num-seqs 256): min(cpu_count // 2, 8) threads with cpu_count = cores;
    # 3 cores: 1 thread, 16 chunks of 1.6 ms = 25.6 ms a step; 4 cores: 2 threads, 12.8 ms
    p = two_backends(tmp_path, 100.0, 100.0, 1.0)
    rc, text, res = advise(capsys, tmp_path, p, "--concurrency", "256", "--itl-p99-ms", "15", "--cores", "3",
                           "--max-num-seqs", "256", "--backend", "xgrammar", "--async-scheduling",
                           "--engine-version", "0.25.1")
    assert rc == 1 and "No configuration searched meets the goal" in text
    more = res["chosen"]["one_more_core"]
    assert more["cores"] == 4 and more["points"][0]["itl_ms_mean"] == pytest.approx(12.8, rel=0.02)
    assert res["configurations"][0]["points"][0]["itl_ms_mean"] == pytest.approx(25.6, rel=0.02)
    assert "one more core (4)" in text and "that meets the goal" in text
    assert res["chosen"]["dominant"]["part"] == "pool wait"
    # with 4 cores in the search it is the cheapest that meets it
    rc, text, res = advise(capsys, tmp_path, p, "--concurrency", "256", "--itl-p99-ms", "15", "--cores", "3", "4", "8",
                           "--max-num-seqs", "256", "--backend", "xgrammar", "--async-scheduling",
                           "--engine-version", "0.25.1")
    assert rc == 0 and res["chosen"]["config"]["usable_cores"] == 4


def test_no_configuration_meets_it_said_plainly(capsys, tmp_path):
    p = two_backends(tmp_path, 500.0, 50.0, 5.0)  # no step is shorter than the 5-ms forward
    rc, text, res = advise(capsys, tmp_path, p, "--concurrency", "8", "--itl-p99-ms", "1", "--cores", "4")
    assert rc == 1 and "No configuration searched meets the goal" in text
    assert not any(c["meets"] for c in res["configurations"])
    # the nearest, where more cores change nothing (8 rows fill serially, the fill the step's most): the fewest
    # cores first, and what moves it leaves out what it does already or cannot do at its load
    p = two_backends(tmp_path, 800.0, 400.0, 1.0)
    rc, text, res = advise(capsys, tmp_path, p, "--concurrency", "8", "--itl-p99-ms", "1", "--cores", "16", "4")
    first = res["configurations"][0]
    assert rc == 1 and first["config"]["usable_cores"] == 4 and first["config"]["backend"] == "guidance"
    assert "What moves it: a faster core." in text  # not llguidance (it runs it), not the pool (8 rows)


def test_goal_and_dominant_by_hand():
    with pytest.raises(ValueError, match="give a goal"):
        Goal()
    with pytest.raises(ValueError, match="--itl-p99-ms"):
        Goal(itl_p99_ms=0)
    g = Goal(itl_p99_ms=10, min_tok_s=1000)
    assert g.shortfall(_pt(itl_ms_p99=5.0, out_tok_per_s=2000.0)) == 0.5
    assert g.shortfall(_pt(itl_ms_p99=5.0, out_tok_per_s=500.0)) == 2.0
    assert g.shortfall(_pt(itl_ms_p99=None, out_tok_per_s=500.0)) == float("inf")
    step = Breakdown(step_ms=20.0, forward_ms=5.0, exposed_ms=15.0, serial_fill_step_ms=12.0, pool_step_fraction=0.0,
                     pool_wait_ms=0.0, cpu_overhead_ms=2.0, advance_ms=1.0, compile_wait_ms=0.0, apply_ms=0.5)
    assert dominant(_pt(breakdown=step)) == ("serial fill", 12.0, 0.6)
    assert dominant(_pt(breakdown=replace(step, exposed_ms=1.0)))[0] == "forward"
    # what moves a part is the engine's own (Engine.parts_words): vLLM's compile cache flag is not SGLang's
    assert "VLLM_XGRAMMAR_CACHE_MB" in what_moves("compile wait", _pt(engine_version="0.25.1"))[1]
    assert "or llguidance" not in what_moves("compile wait", _pt(engine_version="0.25.1", backend="guidance"))[1]
    sg_what, sg_moves = what_moves("compile wait", _pt(engine="sglang", engine_version="0.5.17"))
    assert "CACHE_MB" not in sg_moves and "keeps every grammar" in sg_what and "or llguidance" in sg_moves
    assert "vLLM" not in what_moves("pool wait", _pt(engine="sglang", engine_version="0.5.17"))[0]


def _pt(**figures) -> Point:
    """A point of a hand-made figures (the rest of a Point filled with nothing)."""
    return Point(**{"engine": "vllm", "backend": "xgrammar", "concurrency": 8, "itl_ms_mean": None,
                    "breakdown": Breakdown(), "off": OffArm(), "config": {}, **figures})


def test_advise_without_a_goal_is_one_line(capsys):
    assert main(["advise", "--concurrency", "8"]) == 2
    assert "give a goal" in capsys.readouterr().err


def test_two_engines_each_on_its_own_profile_on_the_schemas_they_share(capsys, tmp_path):
    """--engine vllm sglang: each engine's shipped profile; they share no schema, so the user's own is traced for
    both and the search runs on it; asked without one, or with one --profile for two engines, one line."""
    assert main(["advise", "--engine", "vllm", "sglang", "--concurrency", "8", "--itl-p99-ms", "50"]) == 2
    assert "share no schema" in capsys.readouterr().err
    assert main(["advise", "--engine", "vllm", "sglang", "--profile", "x.json", "--concurrency", "8",
                 "--itl-p99-ms", "50"]) == 2
    assert "one engine at a time" in capsys.readouterr().err
    schema = tmp_path / "mine.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}},
                                  "required": ["name"]}))
    out = tmp_path / "a.json"
    rc = main(["advise", "--engine", "vllm", "sglang", "--backend", "xgrammar", "--schema", str(schema),
               "--concurrency", "8", "--itl-p99-ms", "50", "--cores", "8", "--max-num-seqs", "128", "--requests", "100",
               "--quiet", "--json", str(out)])
    res = json.loads(out.read_text())
    assert out.with_suffix(".png").stat().st_size > 0  # the plot beside the JSON
    assert rc in (0, 1) and {c["config"]["engine"] for c in res["configurations"]} == {"vllm", "sglang"}
    assert all(p["schema"] == "mine" for c in res["configurations"] for p in c["points"])


def test_the_default_search_has_speculative_decoding_and_no_configuration_twice(capsys, tmp_path):
    """Searched where --spec-tokens is not given: off and 4 n-gram drafts; vLLM 0.25.1 turns async scheduling
    off with n-gram drafts, so async on with drafts is not searched apart from its sync twin; the drafts'
    acceptance is said to be a guess."""
    p = two_backends(tmp_path, 100.0, 100.0, 5.0)
    out = tmp_path / "a.json"
    rc = main(["advise", "--profile", p, "--prompt-tokens", "1", "--quiet", "--json", str(out), "--concurrency", "8",
               "--itl-p99-ms", "100", "--cores", "16", "--max-num-seqs", "128", "--backend", "xgrammar",
               "--engine-version", "0.25.1"])
    text, res = capsys.readouterr().out, json.loads(out.read_text())
    cfgs = [(c["config"]["spec_tokens"], c["config"]["async_scheduling"])
            for c in res["configurations"]]
    assert sorted(cfgs) == [(0, False), (0, True), (4, False)]
    assert rc == 0 and "acceptance 0.7" in text and "a guess for your workload" in text
    # 4 drafts at 0.7 acceptance: more than one token a row a step, so more tokens a second than sync without
    tok = {k: c["points"][0]["out_tok_per_s"] for k, c in zip(cfgs, res["configurations"])}
    assert tok[(4, False)] > tok[(0, False)]
    # a step's token budget that cannot hold the drafts: those configurations are left out, said, not an error
    rc = main(["advise", "--profile", p, "--prompt-tokens", "1", "--quiet", "--json", str(out), "--concurrency", "8",
               "--itl-p99-ms", "100", "--cores", "16", "--max-num-seqs", "40", "--backend", "xgrammar",
               "--engine-version", "0.25.1", "--max-num-batched-tokens", "150"])
    text, res = capsys.readouterr().out, json.loads(out.read_text())
    assert rc == 0 and {c["config"]["spec_tokens"] for c in res["configurations"]} == {0}
    assert "not searched: max-num-seqs 40 with 4 draft tokens" in text


def test_the_default_search_has_no_drafts_where_the_engine_has_none(capsys, tmp_path):
    """llama.cpp's loop samples one token a slot a step: no speculative configuration is searched for it."""
    from maskcost.profile import BackendCosts, BlackboxCost
    p = constant_profile(forward_ms=2.0)
    bb = BlackboxCost("test", row_us=800.0, launch_ms=0.0, output_tokens={"s": (40,)}, points=())
    path = tmp_path / "lc.json.gz"
    save_profile(replace(p, backends={"gbnf": BackendCosts((), (), (), (), bb)}), path)
    out = tmp_path / "a.json"
    rc = main(["advise", "--profile", str(path), "--engine", "llamacpp", "--prompt-tokens", "1", "--quiet", "--json",
               str(out), "--concurrency", "2", "--itl-p99-ms", "100", "--cores", "4", "--max-num-seqs", "4"])
    text, res = capsys.readouterr().out, json.loads(out.read_text())
    assert rc == 0 and res["configurations"]
    assert {c["config"]["spec_tokens"] for c in res["configurations"]} == {0}
    assert "no speculative decoding modelled" in text and "speculative decoding searched" not in text


def test_advise_runs_from_its_request_resolved_once(capsys, tmp_path):
    """advise's flags become one frozen AdviseRequest (cli/advise.advise_request); run_advice runs it, the same
    twice, and the --json names the command it stands for."""
    import dataclasses

    from maskcost.cli import _parse
    from maskcost.cli.advise import advise_request, run_advice
    p = two_backends(tmp_path, 500.0, 50.0, 5.0)
    out = tmp_path / "r.json"
    argv = ["advise", "--profile", p, "--prompt-tokens", "1", "--quiet", "--json", str(out), "--spec-tokens", "0",
            "--concurrency", "32", "--itl-p99-ms", "10", "--cores", "16", "--max-num-seqs", "128",
            "--async-scheduling", "--backend", "guidance"]
    req = advise_request(_parse(argv), command=["maskcost", *argv])
    assert req.configs["vllm"] and {c.backend for c in req.configs["vllm"]} == {"guidance"} and req.tied
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.json = "elsewhere.json"
    assert run_advice(req) == 0
    first = json.loads(out.read_text())
    assert run_advice(req) == 0
    again = json.loads(out.read_text())
    assert first["command"] == "maskcost " + " ".join(argv)
    assert [c["points"][0]["itl_ms_mean"] for c in first["configurations"]] == \
        [c["points"][0]["itl_ms_mean"] for c in again["configurations"]]
    capsys.readouterr()
