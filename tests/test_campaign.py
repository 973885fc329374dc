"""maskcost campaign: a pre-registered live check as data (validate/campaign.py), run end to end against a
small fake server, resumed, scored by its registered bar; a bad campaign file is one line."""
import json

import pytest

from fake_server import FakeEngine, FakeServer
from maskcost.cli import main
from maskcost.profile import default_profile_path
from maskcost.validate.campaign import CampaignError, digest, load_campaign, registration

PLAIN = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}},
         "required": ["name", "ok"], "additionalProperties": False}
RUN_U, SCORE_U = ["campaign", "run", "--unregistered"], ["campaign", "score", "--unregistered"]  # no registration


def _campaign(tmp_path, **over):
    (tmp_path / "plain.json").write_text(json.dumps(PLAIN))
    d = {"name": "fake", "held_out": [3], "schemas": ["plain.json"], "bar_pct": 1000.0,
         "calibrate_args": ["--engine-from", str(default_profile_path()), "--backend", "xgrammar",
                            "--concurrency", "1", "2", "4", "--speed-concurrency", "2", "4",
                            "--rounds", "2", "--min-requests", "6", "--off-tokens", "150",
                            "--budget-min", "0.01", "--pool-rows", "16", "32"], **over}
    # the budget: no context slope, prefill points or API-server fit; a fill pool of small steps only
    f = tmp_path / "campaign.json"
    f.write_text(json.dumps(d))
    return f


def test_a_campaign_file_is_checked_and_registered(tmp_path):
    f = _campaign(tmp_path)
    c = load_campaign(f)
    assert c.held_out == (3,) and c.server.backend == "xgrammar" and c.metric == "ITL ms"
    text = registration(f, "0.1.0")
    assert "**Bar: <= 1000%.**" in text and digest(f) in text and "plain.json" in text
    d0 = digest(f)
    (tmp_path / "plain.json").write_text(json.dumps({**PLAIN, "required": ["name"]}))
    assert digest(f) != d0  # the registration pins the schemas too
    for over, msg in [({"colour": 1}, "unknown field 'colour'"), ({"held_out": []}, "held_out"),
                      ({"schemas": []}, "give schemas or tools"), ({"schemas": ["nope.json"]}, "no such file"),
                      ({"metric": "speed"}, "metric 'speed'"), ({"server": {"gpu": 1}}, "server: expected"),
                      ({"held_out": [3, 4]}, r"held_out 4 is one of the calibration's speed points \(2 4\)")]:
        with pytest.raises(CampaignError, match=msg):
            load_campaign(_campaign(tmp_path, **over))
    (tmp_path / "bad.json").write_text("{")
    assert main(["campaign", "register", str(tmp_path / "bad.json")]) == 2


def test_an_arms_engine_flags_are_ones_predict_validate_and_report_all_take(tmp_path, capsys):
    """Transfer run 2's 6-core campaign: `--omp-threads` reached predict and then failed validate, after the
    device time spent on the steps before it. Now the three take the same host flags, and a flag one of them
    does not take is one line when the campaign is registered and before it runs, nothing sent."""
    def arm(flags, predict_args=()):
        return _arms_campaign(tmp_path, [{"name": "c6", "held_out": [3], "profile": "calibrate", "engine_args": flags,
                                          "predict_args": list(predict_args),
                                          "server": {"engine": "vllm", "engine_version": "0.25.1"}}])
    assert main(["campaign", "register", str(arm(["--cores", "6", "--omp-threads", "16", "--cpu-quota", "4"]))]) == 0
    for cmd in (["campaign", "register"], [*RUN_U, "--base-url", "http://127.0.0.1:9", "--out", str(tmp_path / "r")]):
        capsys.readouterr()
        assert main([*cmd, str(arm(["--cores", "6", "--omp-thread", "16"]))]) == 2
        err = capsys.readouterr().err
        assert "arm c6: maskcost predict refuses its flags" in err and "unrecognized arguments: --omp-thread 16" in err
        assert not (tmp_path / "r" / "steps.txt").exists()  # nothing run
    for flags, predict_args, said in [(["--cores", "six"], (), "argument --cores: invalid int value: 'six'"),
                                      (["--cores", "6"], ["--bogus"], "unrecognized arguments: --bogus"),
                                      (["-h"], (), "a help flag")]:
        assert main(["campaign", "register", str(arm(flags, predict_args))]) == 2
        assert said in capsys.readouterr().err


def test_a_campaign_runs_the_three_commands_resumes_and_scores(tmp_path, capsys):
    f = _campaign(tmp_path)
    eng = FakeEngine('{"name": "Al", "ok": true}', base_step_ms=2.0, per_request_ms=0.05)
    eng.grammar_ms_per_row = 1.5
    out = tmp_path / "run"
    with FakeServer(eng) as srv:
        # --stop-after predict: the predictions exist before anything held out is sent
        assert main([*RUN_U, str(f), "--base-url", srv.url, "--out", str(out), "--stop-after",
                     "predict"]) == 0
        assert (out / "predicted.json").exists() and not (out / "val").exists() and not (out / "score.json").exists()
        assert "stopped after predict" in capsys.readouterr().out
        assert main([*RUN_U, str(f), "--base-url", srv.url, "--out", str(out)]) == 0
        first = capsys.readouterr().out
        assert first.count("exists, not run again") == 2  # calibrate and predict; check runs again (no output)
        served = eng.served
        # a second run measures nothing again: every step's output exists
        assert main([*RUN_U, str(f), "--base-url", srv.url, "--out", str(out)]) == 0
        assert eng.served == served
        assert capsys.readouterr().out.count("exists, not run again") == 4
    # the calibrate step ran through the calibration API: its profile keeps the step's command, not this process's
    from maskcost.profile import load_profile
    assert load_profile(out / "host.json.gz").provenance["command"].startswith(
        f"maskcost calibrate --base-url {srv.url} --tokenizer ")
    doc = json.loads((out / "score.json").read_text())
    assert doc["met"] is True and doc["points"] == 1 and doc["bar_pct"] == 1000.0
    assert doc["registration"] is None and "registration none (--unregistered)" in (out / "steps.txt").read_text()
    assert doc["primary_median_abs_error_pct"] >= 0 and doc["resolved_campaign"]["name"] == "fake"
    predicted = json.loads((out / "predicted.json").read_text())
    assert predicted["points"]  # predicted before the held-out sweep
    # the predict step too ran through its request (cli/predict.PredictRequest): the file names the step's command
    assert predicted["command"].startswith(f"maskcost predict --profile {out / 'host.json.gz'} ")
    steps = (out / "steps.txt").read_text()
    assert steps.index(" predict rc 0") < steps.index(" validate rc 0")
    # the same run against a bar it misses says so
    strict = _campaign(tmp_path, bar_pct=1e-9)
    assert main([*SCORE_U, str(strict), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "MISSED" in said.out and "unregistered: not a pre-registered check" in said.out


def _arms_campaign(tmp_path, arms=None, **over):
    f = _campaign(tmp_path, **over)
    d = json.loads(f.read_text())
    d.pop("held_out")
    sg = {"engine": "sglang", "engine_version": "0.5.17"}
    d["arms"] = arms if arms is not None else [  # as SGLang run 4: one with the overlap scheduler, one without
        {"name": "a", "held_out": [3], "profile": "calibrate", "server": sg},
        {"name": "b", "held_out": [3], "profile": "sync", "sweep_loads": [2, 4], "fit_loads": [2],
         "engine_args": ["--no-async-scheduling"], "server": {**sg, "flags": ["--disable-overlap-schedule"]}}]
    f.write_text(json.dumps(d))
    return f


def test_a_campaign_of_two_servers_predicts_both_before_either_is_held_out(tmp_path, capsys):
    """arms: the first server calibrates; the second is predicted from that profile with its own schema-off
    sweep as the sync curve and its engine's grammar work per row fitted on its schema-on points; every
    arm's predictions exist before any held-out point is sent; the bar is on all arms' points together."""
    f = _arms_campaign(tmp_path)
    c = load_campaign(f)
    assert [a.name for a in c.arm_list()] == ["a", "b"] and c.arms[1].sweep_loads == (2, 4)
    text = registration(f, "0.1.0")
    assert "Arm b:" in text and "sync curve" in text and "fitted on its schema-on points at 2" in text
    engines = [FakeEngine('{"name": "Al", "ok": true}', base_step_ms=2.0, per_request_ms=0.05) for _ in range(2)]
    for e in engines:
        e.grammar_ms_per_row = 1.5
    out = tmp_path / "run"
    with FakeServer(engines[0]) as sa, FakeServer(engines[1]) as sb:
        urls = [f"a={sa.url}", f"b={sb.url}"]
        assert main([*RUN_U, str(f), "--base-url", sa.url, "--out", str(out)]) == 2  # one URL, two arms
        assert "NAME=URL for each arm (a, b)" in capsys.readouterr().err
        assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(out), "--stop-after", "predict"]) == 0
        assert (out / "a" / "predicted.json").exists() and (out / "b" / "predicted.json").exists()
        assert (out / "b" / "profile.json.gz").exists() and not (out / "a" / "val").exists()
        # b's row work is fitted at the speed its profile runs at (the one calibrate read on a), as predict runs it
        from maskcost.profile import load_profile
        pb, pa = load_profile(out / "b" / "profile.json.gz"), load_profile(out / "host.json.gz")
        assert pb.provenance["engine_rows"]["cpu_speed"] == pa.measured_speed.cpu_speed
        assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(out)]) == 0
        served = [e.served for e in engines]
        assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(out)]) == 0  # resumes: no request
        assert [e.served for e in engines] == served
    doc = json.loads((out / "score.json").read_text())
    assert doc["points"] == 2 and {k: v["points"] for k, v in doc["arms"].items()} == {"a": 1, "b": 1}
    assert doc["met"] and doc["resolved_campaign"]["arms"][1]["profile"] == "sync"
    steps = (out / "steps.txt").read_text()
    assert steps.rindex(" predict rc 0") < steps.index(" validate rc 0")
    from maskcost.profile import load_profile
    b = load_profile(out / "b" / "profile.json.gz")
    assert b.forward.sync_points and "Sync points" in b.forward.source
    # SGLang 0.5.17's one-token prefill runs eager: calibrate --base-url measured the eager pair
    assert "eager prefill" in load_profile(out / "host.json.gz").forward.source
    assert (out / "host.eager-same.jsonl").exists() and (out / "host.eager-fresh.jsonl").exists()
    assert json.loads((out / "b" / "val" / "report.json").read_text())["engine_config"]["async_scheduling"] is False


@pytest.mark.parametrize("arms,msg", [
    ([{"name": "a", "held_out": [3]}], "profile calibrate is the first arm's"),
    ([{"name": "a", "held_out": [3], "profile": "calibrate"}, {"name": "a", "held_out": [4]}], "distinct"),
    ([{"name": "a", "held_out": [3], "profile": "calibrate"}, {"name": "b", "held_out": [4], "profile": "sync"}],
     "sweep_loads go with profile sync"),
    ([{"name": "a", "held_out": [3, 8], "profile": "calibrate", "fit_loads": [8]}], r"fit_loads \[8\] are also held out"),
    ([{"name": "a", "held_out": [3], "profile": "calibrate", "gpu": 1}], r"arms\[0\]: expected an object"),
])
def test_a_bad_arm_is_one_line(tmp_path, arms, msg):
    with pytest.raises(CampaignError, match=msg):
        load_campaign(_arms_campaign(tmp_path, arms))
    f = _arms_campaign(tmp_path, [{"name": "a", "held_out": [3], "profile": "calibrate"}])
    d = json.loads(f.read_text())
    d["held_out"] = [3]
    f.write_text(json.dumps(d))
    with pytest.raises(CampaignError, match="with arms, each arm names its server and held_out"):
        load_campaign(f)


def test_a_campaign_from_a_shipped_profile_reads_the_speed_and_scores_the_interval(tmp_path, capsys):
    """profile: shipped calibrates nothing: both arms are predicted from the embedded profile (with the
    80% interval of the model's measured errors), then the first server's speed is read from a short
    sweep and both arms predicted again at it, all before any held-out point; the score says the
    nothing-read median, the points inside the interval and the speed-read median, each against its bar."""
    from maskcost.calibrate.schemas import TIERS
    flat = TIERS["flat"]  # a schema the embedded profile holds: its traces are used, nothing traced here
    (tmp_path / "flat.json").write_text(json.dumps({"id": flat.schema_id, "schema": flat.schema}))
    f = _arms_campaign(tmp_path, [{"name": "a", "held_out": [3]}, {"name": "b", "held_out": [3]}],
                       profile="shipped", speed_loads=[2], read_bar_pct=1000.0, interval_min_inside=0)
    d = json.loads(f.read_text())
    d.pop("calibrate_args")
    d["schemas"] = ["flat.json"]
    f.write_text(json.dumps(d))
    c = load_campaign(f)
    assert c.profile == "shipped" and c.speed_loads == (2,) and [a.profile for a in c.arm_list()] == ["shared"] * 2
    text = registration(f, "0.1.0")
    assert "no calibration in this campaign" in text and "predicted-read.json" in text and "at least 0 held-out" in text
    (tmp_path / "bad").mkdir()
    for arm, bad, msg in [({}, {"speed_loads": [3]}, r"speed_loads \[3\] are also held out"),
                          ({"profile": "calibrate"}, {}, "no arm calibrates")]:
        with pytest.raises(CampaignError, match=msg):
            load_campaign(_arms_campaign(tmp_path / "bad", [{"name": "a", "held_out": [3], **arm}],
                                         **{"profile": "shipped", **bad}))
    engines = [FakeEngine(json.dumps(flat.examples[0]), base_step_ms=2.0, per_request_ms=0.05) for _ in range(2)]
    for e in engines:
        e.grammar_ms_per_row = 1.5
    out = tmp_path / "run"
    with FakeServer(engines[0]) as sa, FakeServer(engines[1]) as sb:
        urls = [f"a={sa.url}", f"b={sb.url}"]
        assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(out), "--stop-after", "speed"]) == 0
        assert "the profile's own traces" in capsys.readouterr().out
        assert not (out / "host.json.gz").exists() and engines[1].served == 0  # nothing calibrated, b untouched
        for arm in "ab":
            pts = json.loads((out / arm / "predicted.json").read_text())["points"]
            lo, hi = pts[0]["itl_ms_pi80"]
            assert lo < pts[0]["itl_ms_mean"] < hi and "leave-one-machine-out" in pts[0]["interval"]["words"]
            read = json.loads((out / arm / "predicted-read.json").read_text())
            assert read["cpu_speed_from_report"]["median"] > 0 and not (out / arm / "val").exists()
        assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(out)]) == 0
    assert "80% interval of predicted.json: " in capsys.readouterr().out  # the score's lines say both bars
    doc = json.loads((out / "score.json").read_text())
    assert doc["points"] == 2 and doc["interval"]["points"] == 2 and doc["interval"]["met"] is True
    assert doc["read"]["points"] == 2 and doc["read"]["met"] is True
    steps = (out / "steps.txt").read_text()
    assert steps.rindex(" speed rc 0") < steps.index(" validate rc 0")
    # a schema file the profile does not hold: validate and report could not price it, so refused at run
    (tmp_path / "flat.json").write_text(json.dumps({"id": flat.schema_id, "schema": {**flat.schema, "required": []}}))
    assert main([*RUN_U, str(f), "--base-url", *urls, "--out", str(tmp_path / "y")]) == 2
    assert "not a schema profile" in capsys.readouterr().err
    # a profile file that an earlier campaign has not written yet: one line at run, not at registration
    nope = _arms_campaign(tmp_path / "bad", [{"name": "a", "held_out": [3]}], profile="nope.json.gz")
    assert load_campaign(nope).profile == "nope.json.gz"
    assert main([*RUN_U, str(nope), "--base-url", "http://127.0.0.1:9", "--out", str(tmp_path / "x")]) == 2
    assert "profile nope.json.gz: no such file" in capsys.readouterr().err


def test_a_campaign_without_a_registration_is_refused_unless_said(tmp_path, capsys):
    """Nothing binds a campaign with no registration beside it: run and score refuse it in one line naming the
    command that registers it; --unregistered goes on, and the score says it is not a pre-registered check."""
    f = _campaign(tmp_path)
    for action in (["run", "--base-url", "http://127.0.0.1:9"], ["score"]):
        assert main(["campaign", action[0], str(f), *action[1:], "--out", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err
        assert "no registration found beside it" in err and "--unregistered" in err and err.count("\n") == 1, err
    reg = tmp_path / "REGISTRATION.md"
    assert main(["campaign", "register", str(f), "--out", str(reg)]) == 0
    assert main(["campaign", "score", str(f), "--out", str(tmp_path / "r")]) == 2  # registered: on to the score
    err = capsys.readouterr().err
    assert "no registration" not in err and "run the campaign first" in err, err


def test_a_campaign_changed_since_its_registration_is_refused(tmp_path, capsys):
    """The registration binds: change a field or a schema file after `campaign register` and `campaign run`
    and `campaign score` refuse it in one line naming what changed; registered again, it runs."""
    from maskcost.validate.campaign import check_registration, find_registration
    f = _campaign(tmp_path)
    reg = tmp_path / "REGISTRATION.md"
    assert main(["campaign", "register", str(f), "--out", str(reg)]) == 0
    assert find_registration(f) == reg and "```json registered" in reg.read_text()
    check_registration(f, reg)  # as registered: no complaint
    d = json.loads(f.read_text())
    f.write_text(json.dumps({**d, "bar_pct": 5}))
    capsys.readouterr()
    for action in (["run", "--base-url", "http://127.0.0.1:9"], ["score"]):
        assert main(["campaign", action[0], str(f), *action[1:], "--out", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err
        assert "bar_pct: registered 1000.0, now 5" in err and err.count("\n") == 1, err
    f.write_text(json.dumps(d))
    (tmp_path / "plain.json").write_text(json.dumps({**PLAIN, "required": ["name"]}))
    with pytest.raises(CampaignError, match="plain.json changed"):
        check_registration(f, reg)
    assert main(["campaign", "register", str(f), "--out", str(reg)]) == 0
    check_registration(f, reg)  # registered again: it binds the new content
    reg.write_text("\n".join(ln for ln in reg.read_text().splitlines() if "campaign digest" not in ln))
    with pytest.raises(CampaignError, match="holds no campaign digest line"):  # a registration that binds nothing
        check_registration(f, reg)
