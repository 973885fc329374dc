"""The command line as a user meets it."""
import json
import subprocess
import sys

import pytest


def mc(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "maskcost.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def test_predict_on_the_default_profile_writes_json_png_and_trace(tmp_path):
    out = tmp_path / "p.json"
    r = mc("predict", "--concurrency", "8", "160", "--max-num-seqs", "128", "256", "--schema-id", "tier/flat",
           "tier/bounded", "--json", str(out), "--trace", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert "mechanisms: vllm 0.25.1 (the profile's own" in r.stdout  # which version's mechanisms ran
    doc = json.loads(out.read_text())
    pts = doc["points"]
    assert len(pts) == 4 and {p["engine_version"] for p in pts} == {"0.25.1"}
    for k in ("concurrency", "schema", "backend", "itl_ms_mean", "itl_ms_p50", "ttft_ms_p50", "out_tok_per_s",
              "running_mean", "overhead_pct", "breakdown", "config"):
        assert k in pts[0]
    pooled = [p for p in pts if p["max_num_seqs"] == 256 and p["concurrency"] == 160][0]
    capped = [p for p in pts if p["max_num_seqs"] == 128 and p["concurrency"] == 160][0]
    assert pooled["breakdown"]["pool_step_fraction"] > 0.9 and capped["breakdown"]["pool_step_fraction"] == 0
    assert (tmp_path / "p.png").stat().st_size > 1000
    trace = json.loads((tmp_path / "t.json").read_text())
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert {"GPU", "engine thread"} <= names
    # the host-bound signature a step at a time, and what the engine's metrics would show over the run
    steps = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert steps and all(e["args"]["forward"] > 0 and e["args"]["host beyond the forward"] >= 0 for e in steps)
    shows = trace["otherData"]["engine_shows"]
    assert 0 < shows["gpu_busy_fraction"] <= 1 and shows["bound"] in ("gpu", "host")


def test_a_point_with_its_api_server_loop_near_capacity_is_said(capsys):
    """Only a point whose loop the model runs at LOOP_NEAR_FULL or more with a host-bound step is named, with its
    backend, load and the loop's share; a full loop behind a GPU-bound step, or none modelled, is not."""
    from types import SimpleNamespace
    from maskcost.cli.predict import _say_loop_near_full
    from maskcost.model.api_server import LOOP_NEAR_FULL

    def pt(busy, bound, c=256):
        return SimpleNamespace(api_server_busy_fraction=busy, bound=bound, backend="guidance", concurrency=c,
                               rate_per_s=None)
    _say_loop_near_full([pt(0.5, "host", 32), pt(None, "host"), pt(0.99, "gpu"), pt(LOOP_NEAR_FULL - 0.01, "host")])
    assert capsys.readouterr().out == ""
    _say_loop_near_full([pt(0.5, "host", 32), pt(0.854, "host")])
    out = capsys.readouterr().out
    assert out.startswith("note: 1 point(s) with the API server's loop near capacity")
    assert "guidance at 256 (85%)" in out
    assert "finding 50" in out and "at 32" not in out


def test_async_off_points_on_a_profile_with_no_async_off_points_are_said(capsys):
    """A profile without sync points (calibrate --base-url's) prices the work async scheduling hides at none: predict
    says so for the points run with async off, and says nothing where every point is async or the profile has them."""
    from types import SimpleNamespace
    from maskcost.cli.predict import _say_no_async_off_points

    def prof(sync):
        return SimpleNamespace(forward=SimpleNamespace(sync_points=sync))
    pts = [SimpleNamespace(async_scheduling=True), SimpleNamespace(async_scheduling=False)]
    _say_no_async_off_points(pts[:1], prof(()))
    _say_no_async_off_points(pts, prof((object(),)))
    assert capsys.readouterr().out == ""
    _say_no_async_off_points(pts, prof(()))
    out = capsys.readouterr().out
    assert out.startswith("note: 1 point(s) run with async scheduling off, and this profile has no async-off points")
    assert "--sync-sweep" in out



def test_async_off_points_borrow_the_shipped_profiles_hidden_work(capsys):
    """A profile with no sync points, run with async scheduling off, prices the work async scheduling hides as the
    engine's shipped profile measured it (at each of its sync batches, over this profile's own async curve), says so in
    one note and keeps the donor in its provenance; an all-async run, or a profile with sync points, is left as it is."""
    from dataclasses import replace
    from maskcost.cli.engine_args import with_async_off_costs
    from maskcost.model.config import EngineConfig
    from maskcost.model.costs import Costs
    from maskcost.profile import ForwardPoint, load_default_profile
    donor = load_default_profile()
    assert donor.forward.sync_points  # (the test's premise)
    slower = tuple(ForwardPoint(q.batch, 1.3 * q.step_ms, 1.3 * q.itl_ms) for q in donor.forward.points)
    mine = replace(donor, name="mine", forward=replace(donor.forward, points=slower, sync_points=()))
    on, off = EngineConfig(backend="xgrammar"), EngineConfig(backend="xgrammar", async_scheduling=False)
    assert with_async_off_costs(mine, [on]) is mine and with_async_off_costs(donor, [off]) is donor
    assert Costs(mine, "xgrammar").cpu_overhead_ms(32) == 0.0
    capsys.readouterr()
    got = with_async_off_costs(mine, [on, off])
    assert got.provenance["sync_points_borrowed_from"] == donor.name and "borrowed" in got.forward.source
    assert got.forward.points == slower
    out = capsys.readouterr().out
    assert out.startswith("note: this profile has no async-off points") and donor.name in out and out.count("\n") == 1
    ours, theirs = Costs(got, "xgrammar"), Costs(donor, "xgrammar")
    for b in sorted({q.batch for q in donor.forward.sync_points}):
        assert ours.cpu_overhead_ms(b) == pytest.approx(theirs.cpu_overhead_ms(b), rel=1e-9)
    assert ours.cpu_overhead_ms(32) > 1.0
    # borrowed, they price the async-off points only: an async point costs what it did on the profile's own
    assert ours.for_async(True).cpu_overhead_ms(32) == 0.0 and ours.for_async(False) is ours
    assert theirs.for_async(True) is theirs  # (measured ones price both)


def test_a_short_run_a_core_count_beyond_the_hosts_and_a_trace_are_said(tmp_path):
    """A point whose ITL did not settle is named with what settles it; --cores above the cpu_count the engine
    sizes its pools from is said; the trace file is announced; a zero default is shown in the help."""
    r = mc("predict", "--concurrency", "64", "--requests", "64", "--cores", "32", "--no-band", "--trace",
           str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert "note: --cores 32 is more than the cpu_count 16" in r.stdout
    assert "point(s) ran too short for their ITL to settle" in r.stdout and "a larger --requests" in r.stdout
    assert f"wrote {tmp_path / 't.json'}: the first point's steps" in r.stdout
    r = mc("predict", "--concurrency", "64", "--requests", "64", "--precision", "0", "--no-band")  # a fixed count
    assert r.returncode == 0 and "too short" in r.stdout and "--precision 0.02 (or more --requests)" in r.stdout
    r = mc("predict", "--concurrency", "8", "--precision", "0.05", "--no-band")
    assert r.returncode == 0 and "too short" not in r.stdout
    helped = " ".join(mc("predict", "--help").stdout.split())
    assert "--prompt-cached-tokens PROMPT_CACHED_TOKENS of which" in helped
    assert "(default: 0)" in helped.split("--prompt-cached-tokens PROMPT_CACHED_TOKENS of which")[1][:300]


def test_bad_inputs_are_one_line_errors(tmp_path):
    r = mc("predict", "--profile", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "missing.json: cannot read" in r.stderr
    (tmp_path / "s.json").write_text('{"type": "object"}')
    r = mc("predict", "--profile", str(tmp_path / "s.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--profile" in r.stderr and "not a maskcost profile" \
        in r.stderr
    r = mc("advise", "--itl-p99-ms", "30", "--profile", str(tmp_path / "s.json"))  # said of the flag, as predict
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "error: --profile" in r.stderr and \
        "not a maskcost profile" in r.stderr
    for flags, said in ((("--requests", "0"), "--requests 0: must be >= 1"), (("--cores", "0"), "--cores 0: must be"),
                        (("--structured-fraction", "1.5"), "--structured-fraction 1.5: must be in [0, 1]"),
                        (("--spec-acceptance", "2"), "--spec-acceptance 2.0: must be in [0, 1]"),
                        (("--prompt-lengths", "uniform:5"), "--prompt-lengths uniform:5: expected")):
        r = mc("predict", "--concurrency", "8", *flags)  # one line, no other output before it
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and said in r.stderr and not r.stdout, (flags, r)
    r = mc("predict", "--concurency", "8")
    assert r.returncode == 2 and r.stderr.splitlines()[-1] == ("maskcost predict: error: unrecognized arguments: "
                                                             "--concurency 8 (did you mean --concurrency?)")
    r = mc("predict", "--schema-id", "nope/nope", "--concurrency", "1")
    assert r.returncode == 2 and "--schema-id nope/nope: not in the profile" in r.stderr
    r = mc("calibrate", "--check", str(tmp_path / "missing.json"))
    assert r.returncode == 2
    r = mc("calibrate", "--out", str(tmp_path / "p.json"), "--tier", "flat")
    assert r.returncode == 2 and "forward times need a live engine" in r.stderr
    r = mc("predict", "--engine", "llamacpp", "--concurrency", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "black-box" in r.stderr
    r = mc("predict", "--backend", "gbnf", "--concurrency", "2")
    assert r.returncode == 2 and "has no gbnf costs" in r.stderr
    r = mc("predict", "--engine-version", "0.9", "--concurrency", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "modelled for 0.25.1, 0.33.0" in r.stderr
    r = mc("calibrate", "--blackbox", "--out", str(tmp_path / "p.json"), "--forward-sweep", str(tmp_path / "x"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    from maskcost.model.engines import shipped_profile_path
    r = mc("calibrate", "--engine-from", str(shipped_profile_path(["sglang"])), "--fit-rows", str(tmp_path / "s.jsonl"),
           "--out", str(tmp_path / "p.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "go with --engine-only" in r.stderr
    r = mc("predict", "--scheduler", "tcp://127.0.0.1:1", "--concurrency", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "only with --executor dask" in r.stderr
    r = mc("fit", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--speed-from-probe")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--speed-from-probe: give --probe DIR" in r.stderr
    r = mc("fit", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--probe", str(tmp_path),
           "--speed-from-probe", "--speed-from-earlier")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "none of --speed-from-meter" in r.stderr
    r = mc("fit", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--speed-from-earlier",
           "--speed-source", "fill")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "give --probe DIR (or --speed-source itl)" in r.stderr
    r = mc("fit", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--fit-with-loop")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--fit-with-loop: only with --fit-engine-fill" in r.stderr
    r = mc("fit", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--fit-frontend",
           str(tmp_path / "p.json.gz"), "--fit-engine-fill", str(tmp_path / "q.json.gz"), "--probe", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--fit-frontend: one calibration at a time" in r.stderr
    # report and validate compare one server: a flag given several values is refused, validate's before it sends
    r = mc("report", "--sweep", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--replicas", "1", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--replicas 1 2: report compares one server" in r.stderr
    r = mc("validate", "--base-url", "http://127.0.0.1:9", "--out", str(tmp_path / "v"), "--backend", "xgrammar",
           "guidance")
    assert r.returncode == 2 and "--backend xgrammar guidance: validate compares one server" in r.stderr
    assert not (tmp_path / "v").exists()


def test_predict_reads_the_cpu_speed_from_reports(tmp_path):
    """predict --cpu-speed-from-report: the median of the reports' ITL speeds (--speed-source itl, the
    default) or in-engine fill speeds (fill), the same prediction as --cpu-speed at that speed;
    reports read against another profile, or without such speeds, are one-line errors."""
    from maskcost.profile import load_default_profile
    prof = load_default_profile()
    made_with = {"name": prof.name, "created_utc": prof.created_utc}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"profile": made_with, "rows": [{"arm": "on", "fill_speed": 0.7, "itl_speed": 0.6},
                                                            {"arm": "on", "fill_speed": 0.95, "itl_speed": 0.9},
                                                            {"arm": "off", "fill_speed": None, "itl_speed": None}]}))
    b.write_text(json.dumps({"profile": made_with, "rows": [{"arm": "on", "fill_speed": 0.75, "itl_speed": 0.8}]}))
    same = ("--concurrency", "32", "--schema-id", "tier/flat", "--no-band")
    r = mc("predict", *same, "--cpu-speed-from-report", str(a), str(b), "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    assert "cpu speed: 0.800, the median ITL speed of 3 points (0.600-0.900)" in r.stdout  # mean 0.767
    got = json.loads((tmp_path / "r.json").read_text())
    assert got["cpu_speed_from_report"]["speeds"] == [0.6, 0.9, 0.8]
    assert got["cpu_speed_from_report"]["source"] == "itl"
    r = mc("predict", *same, "--cpu-speed-from-report", str(a), str(b), "--speed-source", "fill",
           "--json", str(tmp_path / "r.json"))
    assert "cpu speed: 0.750, the median in-engine fill speed of 3 points (0.700-0.950)" in r.stdout  # mean 0.8
    got = json.loads((tmp_path / "r.json").read_text())
    assert mc("predict", *same, "--cpu-speed", "0.75", "--json", str(tmp_path / "s.json")).returncode == 0
    want = json.loads((tmp_path / "s.json").read_text())["points"][0]
    assert got["points"][0]["config"] == want["config"] and got["points"][0]["itl_ms_mean"] == want["itl_ms_mean"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"profile": {"name": "elsewhere", "created_utc": "x"}, "rows": []}))
    r = mc("predict", *same, "--cpu-speed-from-report", str(other))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "read against profile 'elsewhere'" in r.stderr
    b.write_text(json.dumps({"profile": made_with, "rows": [{"arm": "on", "itl_speed": 0.8}]}))
    r = mc("predict", *same, "--cpu-speed-from-report", str(b), "--speed-source", "fill")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no point with an in-engine fill speed" in r.stderr
    b.write_text(json.dumps({"profile": made_with, "rows": [{"arm": "on"}]}))
    r = mc("predict", *same, "--cpu-speed-from-report", str(b))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no point with an ITL speed" in r.stderr
    r = mc("predict", *same, "--cpu-speed-from-report", str(tmp_path / "none.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "none.json: cannot read" in r.stderr
    b.write_text("[1, 2]")
    r = mc("predict", *same, "--cpu-speed-from-report", str(b))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a `maskcost report` report.json" in r.stderr
    r = mc("predict", *same, "--cpu-speed", "0.9", "--cpu-speed-from-report", str(a))
    assert r.returncode == 2 and "give it or --cpu-speed, not both" in r.stderr


def test_calibrate_engine_only_replaces_the_sync_curve_and_keeps_the_rest(tmp_path):
    from maskcost.profile import default_profile_path, load_profile
    sweep = tmp_path / "sync.jsonl"
    sweep.write_text("\n".join(json.dumps({
        "point": f"off-c{c}-r0", "arm": "off", "concurrency": c, "repeat": 0, "requests": 4 * c, "errors": 0,
        "output_tokens_mean": 128.0, "itl_ms_mean": 6.0 + c / 10, "config": {}, "engine": {
            "running_mean": float(c), "step_ms": 6.0 + c / 10, "itl_ms": 6.0 + c / 10, "window_s": 10.0,
            "steps": 10000 / (6.0 + c / 10)}}) for c in (1, 8, 64)))
    out = tmp_path / "p.json.gz"
    r = mc("calibrate", "--engine-only", "--engine-from", str(default_profile_path()), "--sync-sweep", str(sweep),
           "--out", str(out))
    assert r.returncode == 0, r.stderr
    base, p = load_profile(default_profile_path()), load_profile(out)
    assert [x.itl_ms for x in p.forward.sync_points] == [6.1, 6.8, 12.4]
    assert p.forward.points == base.forward.points and p.backends == base.backends
    # a new forward curve alone keeps the base's prefill points, context slope and API-server costs
    r = mc("calibrate", "--engine-only", "--engine-from", str(default_profile_path()), "--forward-sweep", str(sweep),
           "--out", str(out))
    assert r.returncode == 0, r.stderr
    p = load_profile(out)
    assert [x.itl_ms for x in p.forward.points] == [6.1, 6.8, 12.4]
    assert base.forward.prefill_points and p.forward.prefill_points == base.forward.prefill_points
    assert (p.forward.context_us_per_ktoken, p.forward.frontend_token_us, p.forward.frontend_request_ms) == \
        (base.forward.context_us_per_ktoken, base.forward.frontend_token_us, base.forward.frontend_request_ms)
    bad = mc("calibrate", "--engine-only", "--sync-sweep", str(sweep), "--out", str(out), "--forward-sweep", str(sweep))
    assert bad.returncode == 2 and "--engine-from" in bad.stderr


def test_sweep_host_bench_then_report_scales_the_host_cpu(tmp_path):
    # the sweep records this host's xgrammar benchmark; the report turns it into --cpu-speed against
    # the profile's host, and says so; without a bench it is a one-line error
    from fake_server import FakeEngine, FakeServer
    from maskcost.profile import load_default_profile
    from maskcost.calibrate.schemas import TIERS
    sweep = tmp_path / "s.jsonl"
    with FakeServer(FakeEngine(json.dumps(TIERS["flat"].examples[0]))) as srv:
        r = mc("sweep", "--base-url", srv.url, "--out", str(sweep), "--arms", "on", "--tier", "flat",
               "--concurrency", "2", "--min-requests", "4", "--host-bench")
        assert r.returncode == 0, r.stderr
    bench = json.loads(sweep.read_text().splitlines()[0])["provenance"]["client_host"]["bench_us"]
    assert bench > 0
    r = mc("report", "--sweep", str(sweep), "--out", str(tmp_path / "rep"), "--cpu-speed-from-sweep")
    assert r.returncode == 0, r.stderr
    speed = load_default_profile().host.bench_us / bench
    assert f"cpu speed vs the profile's host: {speed:.3f}" in r.stdout
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["engine_config"]["cpu_speed"] == pytest.approx(speed)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({**json.loads(sweep.read_text().splitlines()[0]),
                                 "provenance": {"client_host": {}}}) + "\n")
    r = mc("report", "--sweep", str(plain), "--out", str(tmp_path / "rep2"), "--cpu-speed-from-sweep")
    assert r.returncode == 2 and "sweep with --host-bench" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_flag_is_matched_by_its_whole_name_only():
    # argparse would take --out for predict's --output-tokens and then fail on the file name
    r = mc("predict", "--out", "x.json")
    assert r.returncode == 2 and "unrecognized arguments: --out x.json" in r.stderr


def test_predict_schema_of_an_id_the_profile_holds_is_its_own_or_renamed(tmp_path):
    """A file with the id of a profile schema: the same schema takes the profile's traces (nothing traced:
    no backend, no cache); another schema is traced under ID@DIGEST, the profile's own left as they are."""
    import os
    from maskcost.calibrate.schemas import TIERS
    from maskcost.profile import schema_sha256
    flat = TIERS["flat"]
    same, other = tmp_path / "same.json", tmp_path / "other.json"
    same.write_text(json.dumps({"id": flat.schema_id, "schema": flat.schema}))
    mine = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 8}}, "required": ["a"]}
    other.write_text(json.dumps({"id": flat.schema_id, "schema": mine}))
    env = {**os.environ, "MASKCOST_CACHE_DIR": str(tmp_path / "cache")}
    r = mc("predict", "--schema", str(same), "--concurrency", "8", "--json", str(tmp_path / "a.json"), env=env)
    assert r.returncode == 0, r.stderr
    assert "schema tier/flat (xgrammar): the profile's own traces" in r.stdout and not (tmp_path / "cache").exists()
    r = mc("predict", "--schema", str(other), "--concurrency", "8", "--json", str(tmp_path / "b.json"), env=env)
    assert r.returncode == 0, r.stderr
    new_id = f"{flat.schema_id}@{schema_sha256(mine)[:8]}"
    assert f"schema tier/flat as {new_id} (xgrammar; the profile holds another schema of that id" in r.stdout
    assert json.loads((tmp_path / "b.json").read_text())["points"][0]["schema"] == new_id


def test_predict_streams_its_points_and_resume_runs_only_the_rest(tmp_path):
    from maskcost.cli import build_parser
    from maskcost.cli.engine_args import _engine_configs, _profile, given_or_own_speeds
    from maskcost.cli.predict import _workloads
    from maskcost.model.predict import point_key
    out = tmp_path / "grid.json"
    args = ["predict", "--concurrency", "1", "8", "--backend", "xgrammar", "guidance", "--no-band", "--requests", "60"]
    r = mc(*args, "--json", str(out))
    assert r.returncode == 0, r.stderr
    full = json.loads(out.read_text())["points"]
    assert not (tmp_path / "grid.json.partial.jsonl").exists()  # the grid finished: only the result stays
    # what an interrupted run leaves: the header, one finished point, a line cut short
    a = build_parser().parse_args([*args, "--json", str(tmp_path / "b.json")])
    profile = _profile(a)
    ids = tuple(sorted(set(profile.schema_ids("xgrammar")) & set(profile.schema_ids("guidance"))))
    combos = [(c, w) for c in _engine_configs(a, profile, given_or_own_speeds(a, profile)) for w in _workloads(a, ids)]
    assert len(combos) == len(full) == 4
    marked = dict(full[0], itl_ms_mean=-1.0)  # a point read back is not run again
    (tmp_path / "b.json.partial.jsonl").write_text(
        json.dumps({"profile": [profile.name, profile.created_utc]}) + "\n"
        + json.dumps({"key": point_key(*combos[0]), "point": marked}) + "\n" + '{"key": "cut sh')
    r = mc(*args, "--json", str(tmp_path / "b.json"), "--resume")
    assert r.returncode == 0, r.stderr
    assert "--resume: 1 points read back" in r.stdout
    got = json.loads((tmp_path / "b.json").read_text())["points"]
    assert got[0]["itl_ms_mean"] == -1.0 and got[1:] == full[1:]
    # a partial file of another profile is refused in one line; --resume needs --json
    (tmp_path / "b.json.partial.jsonl").write_text(json.dumps({"profile": ["other", "x"]}) + "\n")
    r = mc(*args, "--json", str(tmp_path / "b.json"), "--resume")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not from profile" in r.stderr
    r = mc(*args, "--resume")
    assert r.returncode == 2 and "give --json" in r.stderr


def test_predict_engine_sglang_alone_takes_the_shipped_sglang_profile():
    r = mc("predict", "--engine", "sglang", "--concurrency", "8", "--no-band", "--requests", "60")
    assert r.returncode == 0, r.stderr
    assert "profile: sglang-0.5.17-h200 " in r.stdout and "mechanisms: sglang 0.5.17 (the profile's own" in r.stdout
    r = mc("predict", "--engine", "vllm", "sglang", "--concurrency", "8", "--no-band", "--requests", "60")
    assert r.returncode == 0, r.stderr
    assert "profile: sglang-0.5.17-h200" not in r.stdout


def test_every_flag_of_every_command_says_what_it_does():
    """--help of each command: no flag without a help text; calibrate and predict lead with a user's flags."""
    import argparse

    from maskcost.cli import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bare = {name: [a.option_strings[-1] if a.option_strings else a.dest for a in p._actions if not a.help]
            for name, p in sub.choices.items()}
    assert not any(bare.values()), {k: v for k, v in bare.items() if v}
    for name, first in (("calibrate", "--base-url"), ("predict", "--engine")):
        groups = [g for g in sub.choices[name]._action_groups if g._group_actions and g.title != "options"]
        assert first in [o for a in groups[0]._group_actions for o in a.option_strings]


@pytest.mark.parametrize("raised, rc, says", [(KeyboardInterrupt, 130, "interrupted; what finished is kept"),
                                              (BrokenPipeError, 1, None)])
def test_ctrl_c_and_a_closed_pipe_end_without_a_traceback(monkeypatch, capsys, raised, rc, says):
    """Ctrl-C mid-command: one line (what finished is kept; a sweep resumes); a reader that went away
    (`maskcost ... | head`): nothing more."""
    import maskcost.cli.straddle as st
    from maskcost.cli import main

    def stopped(args):
        raise raised()
    monkeypatch.setattr(st, "cmd_straddle", stopped)
    stdout = sys.stdout
    assert main(["straddle", "--tokenizer", "llama3"]) == rc
    sys.stdout = stdout  # (the closed pipe's handler sends the rest of stdout nowhere)
    err = capsys.readouterr().err
    assert (err.count("\n") == 1 and says in err) if says else err == ""


def test_ctrl_c_on_a_grid_in_worker_processes_ends_at_once(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while a grid runs in worker processes:
    the command ends within seconds with its one line, no worker left and no traceback; --resume then finishes."""
    import os
    import signal
    import time
    out = tmp_path / "g.json"
    argv = [sys.executable, "-m", "maskcost.cli", "predict", "--concurrency", "8", "64", "256", "--cores", "4", "16",
            "--backend", "xgrammar", "guidance", "--no-band", "--requests", "6000", "--json", str(out)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    partial = tmp_path / "g.json.partial.jsonl"
    t0 = time.monotonic()
    while not (partial.exists() and partial.read_text().count("\n") >= 1) and time.monotonic() - t0 < 60:
        time.sleep(0.05)  # (the workers are busy once the first point is on file)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and err.strip().splitlines()[-1].endswith("resumes where it can"), err
    assert "Traceback" not in err and "Error" not in err.replace("error", "")
    r = subprocess.run(argv + ["--resume"], capture_output=True, text=True)
    assert r.returncode == 0 and len(json.loads(out.read_text())["points"]) == 12, r.stderr


def test_calibrate_blackbox_sweeps_a_server_and_fits_the_grammar_through_it(tmp_path, capsys):
    """calibrate --blackbox --base-url (validate/calibration.BlackBoxCalibration): both arms swept against a live
    server, the grammar's cost a constrained row fitted through the engine, printed and kept in the profile; the
    same command again resumes its sweeps and writes the same fit."""
    import json

    from fake_server import FakeEngine, FakeServer
    from maskcost.cli import main
    from maskcost.profile import load_profile
    schema = tmp_path / "plain.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}},
                                  "required": ["name"]}))
    eng = FakeEngine('{"name": "Alexander"}', base_step_ms=2.0, per_request_ms=0.05)
    eng.grammar_ms_per_row = 1.5
    out = tmp_path / "bb.json.gz"
    cmd = ["calibrate", "--blackbox", "--base-url", None, "--schema", str(schema), "--backend-name", "xgrammar",
           "--concurrency", "4", "8", "--rounds", "8", "--min-requests", "32", "--out", str(out)]
    with FakeServer(eng) as srv:
        cmd[3] = srv.url
        assert main(cmd) == 0
        said = capsys.readouterr().out
        served = eng.served
        assert main(cmd) == 0 and eng.served == served  # resumed: nothing sent again
    bb = load_profile(out).backends["xgrammar"].blackbox
    assert [p.concurrency for p in bb.points] == [4, 8] and bb.row_us > 0
    assert f"fit: {bb.step_us:.0f} us per step + {bb.row_us:.0f} us per constrained row" in said
    assert said.splitlines()[-1] == f"wrote {out}" and load_profile(out).provenance["command"].startswith("maskcost")


def test_predict_quiet_writes_no_bar(capsys):
    """predict --quiet, as advise's: the points on stdout, nothing on stderr; without it, its bars there."""
    from maskcost.cli import main
    assert main(["predict", "--concurrency", "8", "--requests", "200", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "vllm" in out and err == ""
    assert main(["predict", "--concurrency", "8", "--requests", "200"]) == 0
    assert "predict" in capsys.readouterr().err


def test_outputs_that_cannot_be_written_are_refused_before_the_run(tmp_path):
    """--json/--png/--trace checked before anything runs: a file where a folder should be, a folder given as the file,
    two flags on one file; each a one-line error naming the flag."""
    from maskcost.cli.common import UsageError, check_outputs
    (tmp_path / "f.json").write_text("{}")
    for paths, words in (({"json": str(tmp_path / "f.json" / "out.json")}, "is a file, not a folder"),
                         ({"json": str(tmp_path)}, "is a folder"),
                         ({"json": str(tmp_path / "a.json"), "trace": str(tmp_path / "a.json")}, "one file for two")):
        with pytest.raises(UsageError, match=words):
            check_outputs(**paths)
    check_outputs(json=str(tmp_path / "new" / "p.json"), png=None)  # a folder to make is made
    assert (tmp_path / "new").is_dir()
    r = mc("predict", "--concurrency", "8", "--json", str(tmp_path / "f.json" / "x.json"))
    assert r.returncode == 2 and "--json" in r.stderr and "Traceback" not in r.stderr


def test_notes_on_an_overloaded_open_loop_and_an_engine_short_of_cores(capsys):
    """An open-loop point that served fewer requests than arrived, and an engine alone whose threads kept more CPUs
    busy than --cores: each named in one note; points within bounds say nothing."""
    from types import SimpleNamespace
    from maskcost.cli.predict import _say_cores_short, _say_overloaded

    def pt(**k):
        return SimpleNamespace(**{"engine": "vllm", "backend": "xgrammar", "concurrency": None, "rate_per_s": None,
                                  "out_tok_per_s": None, "output_tokens_mean": 40.0, "replicas": 1, "cpu_quota": None,
                                  "cpu_demand": 1.0, "cores": 16, **k})
    _say_overloaded([pt(rate_per_s=5.0, out_tok_per_s=200.0), pt(concurrency=8, out_tok_per_s=10.0)])
    _say_cores_short([pt(concurrency=64, cpu_demand=1.8, cores=4), pt(concurrency=64, cpu_demand=1.8, cores=1,
                                                                     cpu_quota=1.0)])
    assert capsys.readouterr().out == ""
    _say_overloaded([pt(rate_per_s=100.0, out_tok_per_s=2000.0)])
    _say_cores_short([pt(concurrency=64, cpu_demand=1.81, cores=1)])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "50.0/s served" in out[0] and "1.81 CPUs on 1" in out[1] and "--cpu-quota 1" in out[1]


def test_bad_numbers_and_a_bad_profile_host_are_one_line_errors(tmp_path):
    """inf where a finite number is meant, a negative grammar cache, a profile whose host has no CPU."""
    import gzip
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.profile import ProfileError, default_profile_path, load_profile
    for bad in ({"cpu_speed": float("inf")}, {"xgrammar_cache_mb": -1}):
        with pytest.raises(ValueError, match="--"):
            EngineConfig(**bad)
    with pytest.raises(ValueError, match="--rate inf"):
        Workload(concurrency=None, rate_per_s=float("inf"))
    d = json.loads(gzip.decompress(default_profile_path().read_bytes()))
    d["host"]["nproc"] = 0
    (tmp_path / "p.json").write_text(json.dumps(d))
    with pytest.raises(ProfileError, match="host.nproc: must be >= 1"):
        load_profile(tmp_path / "p.json")


def test_the_table_shows_the_grid_flags_that_differ_and_a_profile_of_another_engine_is_said(tmp_path):
    """A grid over --cpu-speed shows a speed column (none where one speed); --engine sglang on the vLLM profile says
    whose costs its points run on."""
    r = mc("predict", "--concurrency", "8", "--cpu-speed", "0.8", "1.2", "--no-band", "--requests", "60", "--quiet")
    assert r.returncode == 0, r.stderr
    head = next(x for x in r.stdout.splitlines() if x.startswith("engine"))
    assert "speed" in head.split() and "speed = the CPU speed given" in r.stdout
    r = mc("predict", "--engine", "vllm", "sglang", "--concurrency", "8", "--no-band", "--requests", "60", "--quiet")
    assert r.returncode == 0, r.stderr
    head = next(x for x in r.stdout.splitlines() if x.startswith("engine"))
    assert "speed" not in head.split()
    assert "note: --engine sglang: the profile h200-vllm-0.25.1-default-z was measured on a vllm server" in r.stdout
