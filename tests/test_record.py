"""The record as data (maskcost/record.py): the README's how-good table is what the committed record renders."""
import pytest

from maskcost import record
from maskcost.record import ScoredPoint


def _point(session: str, measured: float, bench: float | None, read: float | None, registered: bool = True):
    return ScoredPoint("vllm", "0.25.1", "xgrammar", session, session, "schema_on", 64, 16, measured, bench, read,
                       "calibration" if read else None, registered)


def test_the_readme_table_is_what_the_record_renders():
    text = record.README.read_text()
    assert record.readme_block(text) == record.render(record.read_record()), \
        "README's how-good table is not the record's: run python -m maskcost.record"
    docs = record.readme_block(record.DOCS.read_text(), record.POOLED_BEGIN, record.POOLED_END)
    assert docs == record.render_pooled(record.read_record()), \
        "docs/validation.md's pooled result is not the record's: run python -m maskcost.record"
    table = record.readme_block(record.DOCS.read_text(), record.SESSIONS_BEGIN, record.SESSIONS_END)
    assert table == record.render_sessions(record.read_record(), record.read_sessions()), \
        "docs/validation.md's table of the sessions is not the record's: run python -m maskcost.record"
    for run in record.RUN_TABLES:
        block = record.readme_block(record.DOCS.read_text(), *record.run_table_markers(run))
        assert block == record.render_run_table(record.read_record(), run), \
            f"docs/validation.md's points of {run} are not the record's: run python -m maskcost.record"


def test_a_run_table_gives_each_point_its_interval_and_both_predictions():
    """Measured 100 ms: nothing read 120 (interval 90-150: inside), speed read at 1.05 110; measured 50 against
    80 (60-120: outside); a point with no read prediction shows '-'."""
    from dataclasses import replace
    a = replace(_point("sglang/transfer/run9", 100, 120, 110), concurrency=8, running_mean=7.96, speed_read=1.05,
                interval_ms=(90.0, 150.0))
    b = replace(_point("sglang/transfer/run9", 50, 80, None), concurrency=256, interval_ms=(60.0, 120.0))
    rows = record.render_run_table([b, a, _point("vllm/p", 1, 2, 3)], "sglang/transfer/run9").splitlines()
    assert rows[1].endswith("| speed read (1.050) | error |")
    assert rows[3] == "| xgrammar 8 | 8.0 | 100.00 | 120.00 (90.0-150.0) | +20% | 110.00 | +10% |"
    assert rows[4] == "| xgrammar 256 | - | 50.00 | 80.00 (60.0-120.0) | +60%, outside | - | - |"
    with pytest.raises(ValueError, match="no scored point of sglang/transfer/run8"):
        record.render_run_table([a], "sglang/transfer/run8")
    # two speeds read in one run: each read prediction says its own, the header none
    c = replace(a, concurrency=64, speed_read=0.9)
    rows = record.render_run_table([a, c], "sglang/transfer/run9").splitlines()
    assert rows[1].endswith("| speed read | error |") and "| 110.00 (at 0.900) | +10% |" in rows[4]


def test_a_record_row_with_half_an_interval_is_named(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("engine,engine_version,backend,session,machine,arm,concurrency,cores,measured_itl_ms,"
                 "predicted_bench_itl_ms,predicted_read_itl_ms,speed_read_from,registered,interval_lo_ms,"
                 "interval_hi_ms\n"
                 "vllm,0.25.1,xgrammar,s,m,schema_on,8,16,10,11,,,1,9.5,\n")
    with pytest.raises(ValueError, match=r"r.csv:2: .*interval_hi_ms \(empty\): give both or neither"):
        record.read_record(f)


def test_a_session_row_counts_its_registered_points_and_machines(tmp_path):
    """Two machines of one check: read errors +10%, -30% and +20% (median 20.0), one nothing-read -50%; an
    unregistered point and another check's do not enter; a session with no pattern reads '-'."""
    pts = [_point("vllm/shape/run1", 100, None, 110), _point("vllm/shape/run1", 100, 50, 70),
           _point("vllm/shape/run2", 100, None, 120), _point("vllm/shape/run2", 100, None, 500, registered=False),
           _point("vllm/p", 100, None, 300)]
    assert record._sessions_cell(pts, r"vllm/shape/run\d+") == "3 on 2: read 20.0%, nothing read 50.0%"
    assert record._sessions_cell(pts, "") == "-" and record._sessions_cell(pts, "vllm/q") == "-"
    f = tmp_path / "s.csv"
    f.write_text("session,tested,folder,record_sessions\nA,x,`a/`,vllm/[\n")
    with pytest.raises(ValueError, match=r"s.csv:2: record_sessions is not a regular expression"):
        record.read_sessions(f)
    f.write_text("session,what\nA,x\n")
    with pytest.raises(ValueError, match="not the sessions' table"):
        record.read_sessions(f)


def test_the_pooled_result_counts_each_backend_and_all(tmp_path):
    """Sessions P-Z only, registered only; +5% and -30% read, -50% at the bench (one point has it): medians 17.5
    (1 of 2 within 10%) and 50.0 (0 of 1)."""
    pts = [_point("vllm/p", 100, None, 105), _point("vllm/q", 100, 50, 70), _point("vllm/shape/run1", 100, None, 300),
           _point("vllm/r", 100, None, 500, registered=False)]
    rows = record.render_pooled(pts).splitlines()
    assert "| xgrammar | 2 | 17.5% (1 of 2 within 10%) | 50.0% (0 of 1 within 10%) |" in rows
    assert "| all | 2 | 17.5% (1 of 2 within 10%) | 50.0% (0 of 1 within 10%) |" in rows
    assert "| llguidance | 0 | - | - |" in rows
    f = tmp_path / "doc.md"
    f.write_text("a\n<!-- x -->old<!-- y -->\nb")
    record.write_block(f, "<!-- x -->", "<!-- y -->", "<!-- x -->new<!-- y -->", "the block")
    assert f.read_text() == "a\n<!-- x -->new<!-- y -->\nb"
    with pytest.raises(ValueError, match="no markers"):
        record.write_block(f, "<!-- z -->", "<!-- y -->", "", "the block")


def test_a_cell_is_the_median_over_points_with_each_run_beside_it():
    """Two runs: run1 errors +10% and -30%, run2 +20%: pooled |errors| 10, 30, 20 -> 20.0; run1's own
    median 20.0, run2's 20.0; the bench cell has one point (-50%) and one run, so no run list."""
    pts = [_point("vllm/shape/run1", 100, None, 110), _point("vllm/shape/run1", 100, 50, 70),
           _point("vllm/shape/run2", 100, None, 120), _point("vllm/shape/run2", 100, None, 500, registered=False)]
    kept = [p for p in pts if p.registered]
    assert record._median_cell(kept, True) == "20.0% of 3; run1 20.0, run2 20.0"
    assert record._median_cell(kept, False) == "50.0% of 1"
    rows = record.table_rows(pts)  # the unregistered point (+400%) does not enter
    shape = [r for r in rows if "(the shape check" in r]
    assert len(shape) == 1 and "20.0% of 3" in shape[0] and "| 2 |" in shape[0]
    # runs in their order, run 10 after run 2 (not by the string), and run 10 in the shape row's sessions
    late = [_point("vllm/shape/run10", 100, None, 105), *kept]
    assert record._median_cell(late, True).endswith("run1 20.0, run2 20.0, run10 5.0")
    assert "| 3 |" in [r for r in record.table_rows(late) if "(the shape check" in r][0]


def test_a_row_that_is_not_a_scored_point_is_named(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(record.RECORD.read_text().splitlines()[0] + "\nvllm,0.25.1,xgrammar,s,m,x,schema_on,many\n")
    with pytest.raises(ValueError, match=r"r.csv:2: not a scored point"):
        record.read_record(f)


def test_the_replica_runs_in_the_record_are_their_scores():
    """Every replicas run's registered rule (replicas/score.json: median |error| of the changes scored on their
    reference cells, both arms) is what the record's rows of that run give; each changed cell names its setting
    (config) and the reference-cell read, the schema-off rows stay out of the table (ScoredPoint.scored)."""
    import json
    import statistics
    rows = [p for p in record.read_record() if p.session.startswith("vllm/replicas/")]
    runs = sorted({p.session for p in rows})
    assert len(runs) == 7
    for s in runs:
        score = json.loads((record.ROOT / "validation/h200-vllm-0.25.1/replicas" / s.rsplit("/", 1)[1] /
                            "score.json").read_text())
        mine = [abs(e) for p in rows if p.session == s and (e := p.error_pct(True)) is not None]
        assert len(mine) == score["scored"] and statistics.median(mine) == pytest.approx(
            score["median_abs_error_pct"], abs=1e-3), s
    changed = [p for p in rows if p.speed_read_from == "reference_cell"]
    assert changed and all(p.config for p in changed)
    assert {"replicas=2 replica_gpu=shared", "cpu_quota=2.0 omp_threads=1"} <= {p.config for p in changed}
    assert any(p.arm == "schema_off" for p in rows) and not any(p.scored for p in rows if p.arm == "schema_off")


def test_a_bad_sessions_file_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    bad, readme = tmp_path / "sessions.csv", tmp_path / "README.md"
    bad.write_text("garbage,x\n")
    readme.write_text(record.README.read_text().replace("| check |", "| stale |", 1))
    before = readme.read_text()
    monkeypatch.setattr(record, "SESSIONS", bad)
    monkeypatch.setattr(record, "README", readme)
    assert record.main() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sessions.csv: not the sessions' table" in err
    assert readme.read_text() == before  # nothing written: the inputs are read first


def test_the_record_keeps_no_log_uncompressed():
    """Raw records and logs in validation/ are gzipped (issue 37: the record stays compact)."""
    root = record.README.parent / "validation"
    loose = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                   if p.suffix in (".log", ".out", ".err") or p.name.endswith(".raw.jsonl"))
    assert root.is_dir() and not loose, f"gzip these: {loose}"
