"""Sweep records read at the boundary: every summary line checked once (records.SUMMARY_SCHEMA)."""
import json
from pathlib import Path

import pytest

from maskcost.records import read_summaries

from test_cli import mc

VALIDATION = Path(__file__).resolve().parent.parent / "validation"
GOOD = {"point": "on-c8-r0", "arm": "on", "concurrency": 8, "repeat": 0, "requests": 40, "errors": 0,
        "output_tokens_mean": 50.0, "itl_ms_mean": 12.0, "config": {},
        "engine": {"running_mean": 7.9, "window_s": 10.0, "steps": 800.0, "step_ms": 12.5, "itl_ms": 12.1}}


def test_every_summary_in_the_record_is_a_summary():
    """The schema holds what the record holds: every committed sweep file reads (the one file of another
    kind, refcycle's TTFT list, is not one)."""
    files = [f for f in VALIDATION.rglob("*.jsonl") if not f.name.endswith(".raw.jsonl") and "refcycle" not in f.parts]
    assert len(files) > 300
    assert sum(len(read_summaries(f)) for f in files) > 1000


@pytest.mark.parametrize("change, words", [
    ({"point": None}, "point: None is not of type 'string'"),
    ({"arm": "maybe"}, "arm: 'maybe' is not one of"),
    ({"concurrency": 0}, "concurrency: 0 is less than the minimum of 1"),
    ({"engine": {"running_mean": 1.0}}, "engine: 'window_s' is a required property"),
    ({"engine": {**GOOD["engine"], "step_ms": "slow"}}, "engine/step_ms: 'slow' is not of type"),
])
def test_a_line_that_is_not_a_summary_is_named(tmp_path, change, words):
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, **change}) + "\n")
    with pytest.raises(ValueError, match="s.jsonl:2: not a `maskcost sweep` summary") as e:
        read_summaries(f)
    assert words in str(e.value) and "\n" not in str(e.value)
    f.write_text(json.dumps(GOOD) + "\n")
    assert read_summaries(f)[0].concurrency == 8
    # what a sweep writes for a point whose every request failed (nothing to average): read back, so the
    # same command resumes after it
    failed = {**GOOD, "output_tokens_mean": None, "itl_ms_mean": None, "prompt_tokens_mean": None,
              "engine": {**GOOD["engine"], "steps": None, "step_ms": None, "itl_ms": None}}
    f.write_text(json.dumps(failed) + "\n")
    assert read_summaries(f)[0].itl_ms_mean is None


def test_report_on_a_corrupt_empty_or_foreign_file_says_what_is_wrong(tmp_path):
    for name, text, words in (("a.jsonl", '{"foo": 1}\n', "a.jsonl:1: not a `maskcost sweep` summary"),
                              ("b.jsonl", "\n", "b.jsonl: no points"),
                              ("c.jsonl", "[1, 2]\n", "c.jsonl:1: not a `maskcost sweep` summary")):
        (tmp_path / name).write_text(text)
        r = mc("report", "--sweep", str(tmp_path / name), "--out", str(tmp_path / "r"))
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and words in r.stderr, r.stderr
    (tmp_path / "ok.jsonl").write_text(json.dumps(GOOD) + "\n")
    (tmp_path / "p.json").write_text('{"points": {}}')
    r = mc("report", "--sweep", str(tmp_path / "ok.jsonl"), "--out", str(tmp_path / "r"), "--predicted",
           str(tmp_path / "p.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a `maskcost predict --json` file" in r.stderr
