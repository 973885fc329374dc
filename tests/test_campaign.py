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


def _campaign(tmp_path, **over):
    (tmp_path / "plain.json").write_text(json.dumps(PLAIN))
    d = {"name": "fake", "held_out": [3], "schemas": ["plain.json"], "bar_pct": 1000.0,
         "calibrate_args": ["--engine-from", str(default_profile_path()), "--backend", "xgrammar",
                            "--concurrency", "1", "2", "4", "--speed-concurrency", "2", "4",
                            "--rounds", "2", "--min-requests", "6", "--off-tokens", "150"], **over}
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
                      ({"metric": "speed"}, "metric 'speed'"), ({"server": {"gpu": 1}}, "server: expected")]:
        with pytest.raises(CampaignError, match=msg):
            load_campaign(_campaign(tmp_path, **over))
    (tmp_path / "bad.json").write_text("{")
    assert main(["campaign", "register", str(tmp_path / "bad.json")]) == 2


def test_a_campaign_runs_the_three_commands_resumes_and_scores(tmp_path, capsys):
    f = _campaign(tmp_path)
    eng = FakeEngine('{"name": "Al", "ok": true}', base_step_ms=2.0, per_request_ms=0.05)
    eng.grammar_ms_per_row = 1.5
    out = tmp_path / "run"
    with FakeServer(eng) as srv:
        # --stop-after predict: the predictions exist before anything held out is sent
        assert main(["campaign", "run", str(f), "--base-url", srv.url, "--out", str(out), "--stop-after",
                     "predict"]) == 0
        assert (out / "predicted.json").exists() and not (out / "val").exists() and not (out / "score.json").exists()
        assert "stopped after predict" in capsys.readouterr().out
        assert main(["campaign", "run", str(f), "--base-url", srv.url, "--out", str(out)]) == 0
        first = capsys.readouterr().out
        assert first.count("exists, not run again") == 2  # calibrate and predict; check runs again (no output)
        served = eng.served
        # a second run measures nothing again: every step's output exists
        assert main(["campaign", "run", str(f), "--base-url", srv.url, "--out", str(out)]) == 0
        assert eng.served == served
        assert capsys.readouterr().out.count("exists, not run again") == 4
    doc = json.loads((out / "score.json").read_text())
    assert doc["met"] is True and doc["points"] == 1 and doc["bar_pct"] == 1000.0
    assert doc["primary_median_abs_error_pct"] >= 0 and doc["resolved_campaign"]["name"] == "fake"
    assert json.loads((out / "predicted.json").read_text())["points"]  # predicted before the held-out sweep
    steps = (out / "steps.txt").read_text()
    assert steps.index(" predict rc 0") < steps.index(" validate rc 0")
    # the same run against a bar it misses says so
    strict = _campaign(tmp_path, bar_pct=1e-9)
    assert main(["campaign", "score", str(strict), "--out", str(out)]) == 0
    assert "MISSED" in capsys.readouterr().out
