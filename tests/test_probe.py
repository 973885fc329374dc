"""The in-server probe, end to end: written as sitecustomize.py, it wraps the probed methods of a
stand-in vllm package in a fresh interpreter, records each call, and the reader splits the fill
into its serial and pool calls."""
import os
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

import numpy as np

from maskcost.validate.inengine import pool_excess, pool_fills, read_probe, window_stats
from maskcost.cli import main
from maskcost.model.engines import engine_policy
from maskcost.validate.probe import write_site

FAKE = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/engine/__init__.py": "",
    "vllm/v1/structured_output/__init__.py": """
        import time
        class StructuredOutputManager:
            def grammar_bitmask(self, requests, ids, spec):
                if len(ids) > 128 and not spec:  # vLLM's pool: tasks of 16 rows (no spec decoding)
                    for _ in range(0, len(ids), 16):
                        self._fill_bitmasks([(None, 0, True)] * 16)
                time.sleep(0.002 if len(ids) > 128 else 0.001)
                return len(ids)
            def _fill_bitmasks(self, batch):
                return None
        """,
    "vllm/v1/engine/async_llm.py": """
        import asyncio
        class AsyncLLM:
            async def add_request(self, rid):
                await asyncio.sleep(0.001)
                return rid
        """,
}

MAIN = """
import asyncio, time
from vllm.v1.structured_output import StructuredOutputManager
from vllm.v1.engine.async_llm import AsyncLLM
m = StructuredOutputManager()
t = time.time()
for rows in (3, 64, 200, 256):
    assert m.grammar_bitmask({}, list(range(rows)), {}) == rows
assert m.grammar_bitmask({}, list(range(256)), {"r": [1]}) == 256  # spec decoding configured: serial
m._fill_bitmasks([(None, 0, True)] * 16)
m._fill_bitmasks(((None, 0, True),))  # the serial path's one-row call: not recorded
assert asyncio.run(AsyncLLM().add_request("r1")) == "r1"
import gc
gc.collect()  # a full collection in a process that records: one gc.collect line, n = generation 2
print(t)
"""


def _run(tmp_path, env_extra):
    fake = tmp_path / "fake"
    for rel, src in FAKE.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(textwrap.dedent(src))
    site = tmp_path / "site"
    write_site(str(site), engine_policy("vllm").probe_targets)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{fake}", **env_extra}
    out = subprocess.run([sys.executable, "-c", MAIN], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip()), out.stderr


def test_probe_records_calls_in_a_fresh_interpreter(tmp_path):
    rec = tmp_path / "rec"
    t0, err = _run(tmp_path, {"MASKCOST_PROBE_DIR": str(rec)})
    assert "_create_grammar not found; not probed" in err  # a missing method is named, not fatal
    p = read_probe(str(rec))
    names = list(p["name"])
    assert names.count("StructuredOutputManager.grammar_bitmask") == 5
    assert 2 in p["n"][p["name"] == "gc.collect"]  # the collections, with their generation
    assert "StructuredOutputManager._fill_bitmasks" in names and "AsyncLLM.add_request" in names
    fills = p["n"][p["name"] == "StructuredOutputManager.grammar_bitmask"]
    assert list(fills) == [3, 64, 200, 256, 256]
    st = window_stats(p, [(t0 - 1, t0 + 60)])
    # a fill used the pool where pool tasks ran inside it, not by its row count: the 256 rows of the
    # spec-decoding step filled serially
    assert st["grammar_bitmask serial"]["calls"] == 3 and st["grammar_bitmask pool"]["calls"] == 2
    assert st["grammar_bitmask serial"]["n_mean"] == pytest.approx((3 + 64 + 256) / 3)
    assert st["grammar_bitmask pool"]["n_mean"] == 228
    assert 1.5 < st["grammar_bitmask pool"]["mean_ms"] < 50  # slept 2 ms each
    assert st["StructuredOutputManager._fill_bitmasks"]["n_mean"] == 16  # the one-row call is not recorded
    assert window_stats(p, [(t0 + 100, t0 + 200)]) == {}


def test_probe_site_writes_the_engines_own_targets(tmp_path, capsys):
    """The targets live with the engine's class: probe-site writes vLLM's into the site, and refuses an engine
    whose class names none, in one line."""
    assert main(["probe-site", str(tmp_path / "v")]) == 0
    site = (tmp_path / "v" / "sitecustomize.py").read_text()
    assert site.endswith("install()\n") and "'StructuredOutputManager', 'grammar_bitmask', 'rows'" in site
    assert main(["probe-site", str(tmp_path / "s"), "--engine", "sglang"]) == 2
    assert "no in-server probe for sglang" in capsys.readouterr().err and not (tmp_path / "s").exists()


def test_probe_is_inert_without_its_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("MASKCOST_PROBE_DIR", raising=False)
    _run(tmp_path, {})
    assert not (tmp_path / "rec").exists()
    with pytest.raises(ValueError, match="no probe-"):
        read_probe(str(tmp_path))


def synthetic_pool_probe(fills=25, tasks=10, task_ms=10.0, wall_ms=50.0, t0=100.0):
    """Pool fills of `tasks` tasks of task_ms each that took wall_ms: on 8 workers the tasks
    list-schedule in 2 rounds (20 ms), so 30 ms of each fill is the pool's own excess."""
    name, start, dur, n = [], [], [], []
    for k in range(fills):
        s = t0 + k
        name.append("StructuredOutputManager.grammar_bitmask"), start.append(s), dur.append(wall_ms), n.append(16 * tasks)
        for j in range(tasks):
            name.append("StructuredOutputManager._fill_bitmasks"), start.append(s + 1e-4 * (j + 1))
            dur.append(task_ms), n.append(16)
    cols = {"name": np.array(name), "thread": np.array(["t"] * len(name)), "pid": np.zeros(len(name), int),
            "start_s": np.array(start), "dur_ms": np.array(dur), "n": np.array(n)}
    return {**cols, "pool_fill": pool_fills(cols)}  # as read_probe gives it


def test_pool_excess_is_the_wall_beyond_the_tasks_list_schedule():
    p = synthetic_pool_probe()
    # 10 tasks x 10 ms over 160 rows: 0.625 ms per row filled
    assert pool_excess(p, [(99.0, 200.0)], workers=8) == (10.0, pytest.approx(30.0), pytest.approx(0.625))
    assert pool_excess(p, [(99.0, 200.0)], workers=2)[1] == pytest.approx(0.0)  # 5 rounds of 10 ms
    assert pool_excess(p, [(99.0, 110.0)], workers=8) is None  # under MIN_CALLS fills
    # the same fills without their tasks (a serial fill of 160 rows, spec decoding configured): no pool fills
    serial = {k: v[p["name"] == "StructuredOutputManager.grammar_bitmask"] for k, v in p.items() if k != "pool_fill"}
    serial["pool_fill"] = pool_fills(serial)
    assert pool_excess(serial, [(99.0, 200.0)], workers=8) is None
    assert window_stats(serial, [(99.0, 200.0)])["grammar_bitmask serial"]["calls"] == 25


def test_engine_fill_factors_scale_the_models_fills():
    """fit_engine_fill takes in-engine / model per fill kind; the model then fills that much slower."""
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.predict import run_point
    from maskcost.validate.inengine import STEP_CPU_CALLS, fit_engine_fill
    from synth import constant_profile
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    cfg = EngineConfig(max_num_seqs=256, cpu_count=16, usable_cores=16)
    base = {c: _bd(run_point(p, cfg, Workload(concurrency=c, requests=4 * c, output_tokens=40)))
            for c in (64, 256)}
    assert base[64]["serial_fill_step_ms"] == pytest.approx(6.4, rel=0.05) and base[64]["pool_fill_step_ms"] is None
    assert base[256]["pool_fill_step_ms"] > 0
    rows = [{"arm": "on", "concurrency": c, "metrics": {"running": {"measured": float(c)}},
             "predicted_breakdown": base[c],
             "inengine": {"grammar_bitmask serial": {"calls": 500, "mean_ms": 1.2 * base[c]["serial_fill_step_ms"]}}
             if c == 64 else {"grammar_bitmask pool": {"calls": 500, "mean_ms": 1.5 * base[c]["pool_fill_step_ms"]},
                              "grammar_bitmask serial": {"calls": 3, "mean_ms": 99.0}}}  # too few calls: ignored
            for c in (64, 256)]
    for r, each_ms in zip(rows, (2.0, 4.0)):  # the engine thread's other work: 4 calls per step
        r["inengine"].update({k: {"calls": 300, "mean_ms": each_ms} for k in STEP_CPU_CALLS})
    for r, c in zip(rows, (64, 256)):
        r["predicted_structured_rows"] = float(c)
        r["cpu_speed"] = 0.5  # the host at half the profile host's speed during both points
    # the pool point: tasks of 16 rows at 0.12 ms a row (1.2 x the model's 0.1), 30 ms beyond their schedule
    rows[1]["windows"] = [(99.0, 200.0)]
    rows[0]["windows"] = []
    pool_probe = synthetic_pool_probe(task_ms=16 * 0.12, wall_ms=2 * 16 * 0.12 + 30.0)
    fitted = fit_engine_fill(p, "xgrammar", rows, "test", pool_probe, 8)
    ef = fitted.backends["xgrammar"].engine_fill
    assert (ef.serial_factor, ef.pool_factor) == (pytest.approx(1.2), pytest.approx(1.5))
    assert ef.points[1].serial_ms is None
    assert [(c.batch, c.ms) for c in ef.cpu_points] == [(64.0, 4.0), (256.0, 8.0)]  # at the profile host's speed
    assert [(c.chunks, c.ms) for c in ef.pool_excess_points] == [(10.0, pytest.approx(15.0))]
    assert ef.pool_task_factor == pytest.approx(1.2, rel=0.03)
    from maskcost.profile import profile_from_dict, profile_to_dict
    loaded = profile_from_dict(profile_to_dict(fitted))  # the new fields survive the file
    assert profile_to_dict(loaded)["backends"]["xgrammar"]["engine_fill"] == \
        profile_to_dict(fitted)["backends"]["xgrammar"]["engine_fill"]
    assert loaded.backends["xgrammar"].engine_fill.cpu_points and loaded.backends["xgrammar"].engine_fill.pool_excess_points
    again = {c: _bd(run_point(fitted, cfg, Workload(concurrency=c, requests=4 * c, output_tokens=40)))
             for c in (64, 256)}
    assert again[64]["serial_fill_step_ms"] == pytest.approx(1.2 * base[64]["serial_fill_step_ms"], rel=0.02)
    # the pool from its parts: 16 tasks of 16 rows x 100 us x 1.2 (task factor) on 8 of 16 cores
    # = 2 rounds of 1.92 ms, plus the in-engine excess (15 ms at 10 tasks, 24 ms at 16 by the curve)
    assert again[256]["pool_fill_step_ms"] == pytest.approx(2 * 1.92 + 15.0 * 16 / 10, rel=0.06)  # most steps: 16 tasks
    # with a grammar in the batch the engine thread's other work is the probe's curve, not hidden
    for c, want in ((64, 4.0), (256, 8.0)):
        assert again[c]["advance_ms"] + again[c]["cpu_overhead_ms"] == pytest.approx(want, rel=0.05)  # by batch
    assert again[64]["step_ms"] == pytest.approx(4.0 + again[64]["serial_fill_step_ms"] + again[64]["apply_ms"], rel=0.05)
    # a sync step (ngram turns async off) runs the same calls in the same order (core.py step()):
    # the same curve, counted once, not the schema-off sync overhead on top
    sync = _bd(run_point(fitted, replace(cfg, async_scheduling=False),
                     Workload(concurrency=64, requests=256, output_tokens=40)))
    assert sync["advance_ms"] + sync["cpu_overhead_ms"] == pytest.approx(4.0, rel=0.05)
    assert sync["step_ms"] == pytest.approx(again[64]["step_ms"], rel=0.05)


def test_fit_with_loop_and_serial_by_rows():
    """--fit-with-loop adds the busy loop's time outside step_with_batch_queue to the engine thread's
    work; --fit-serial-by-rows fits the serial factor as a power law in the rows, which the model
    then applies by the step's rows (held inside the fitted range), and which survives the file."""
    from maskcost.profile import ProfileError, profile_from_dict, profile_to_dict
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.costs import Costs
    from maskcost.model.predict import run_point
    from maskcost.validate.inengine import STEP_CPU_CALLS, STEP_FN, fit_engine_fill, loop_ms
    from synth import constant_profile
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    cfg = EngineConfig(max_num_seqs=256, cpu_count=16, usable_cores=16)
    concs = (8, 32, 128)
    base = {c: _bd(run_point(p, cfg, Workload(concurrency=c, requests=4 * c, output_tokens=40))) for c in concs}
    # in-engine / model = 2 x (rows / 32)^-0.2: 1.32 at 8, 1.0 at 32, 0.76 at 128 (x 2)
    want = {c: 2.0 * (c / 32.0) ** -0.2 for c in concs}
    rows = []
    for c in concs:
        st = {"grammar_bitmask serial": {"calls": 500, "mean_ms": want[c] * base[c]["serial_fill_step_ms"]}}
        st.update({k: {"calls": 300, "mean_ms": 1.0} for k in STEP_CPU_CALLS})
        # the step function 6 ms a call, busy 75% of the windows: 2 ms a step in the loop outside it
        st[STEP_FN] = {"calls": 300, "mean_ms": 6.0, "busy_fraction": 0.75}
        rows.append({"arm": "on", "concurrency": c, "metrics": {"running": {"measured": float(c)}},
                     "predicted_breakdown": base[c], "inengine": st, "windows": [], "cpu_speed": 1.0,
                     "predicted_structured_rows": float(c)})
    assert loop_ms(rows[0]["inengine"]) == pytest.approx(2.0)
    assert loop_ms({STEP_FN: {"calls": 3, "mean_ms": 6.0, "busy_fraction": 0.75}}) is None  # too few calls
    probe = synthetic_pool_probe(task_ms=1.0, wall_ms=1.0)
    plain = fit_engine_fill(p, "xgrammar", rows, "test", probe, 8).backends["xgrammar"].engine_fill
    fitted = fit_engine_fill(p, "xgrammar", rows, "test", probe, 8, with_loop=True, serial_by_rows=True)
    ef = fitted.backends["xgrammar"].engine_fill
    assert [c.ms for c in plain.cpu_points] == [4.0] * 3 and [c.ms for c in ef.cpu_points] == [6.0] * 3
    assert plain.serial_rows_exponent == 0.0 and plain.serial_factor == pytest.approx(2.0)  # the median
    assert ef.serial_rows_exponent == pytest.approx(-0.2, abs=0.01)
    assert ef.serial_factor == pytest.approx(2.0, rel=0.01)  # the line at the geometric mean of the rows, 32
    costs = Costs(fitted, "xgrammar")
    for c in concs:
        assert costs.serial_fill_factor(c) == pytest.approx(want[c], rel=0.02)
    assert costs.serial_fill_factor(1) == costs.serial_fill_factor(8)  # held inside the fitted rows
    again = _bd(run_point(fitted, cfg, Workload(concurrency=8, requests=32, output_tokens=40)))
    assert again["serial_fill_step_ms"] == pytest.approx(want[8] * base[8]["serial_fill_step_ms"], rel=0.05)
    d = profile_to_dict(fitted)
    assert profile_from_dict(d).backends["xgrammar"].engine_fill.serial_rows_exponent == pytest.approx(-0.2, abs=0.01)
    for r in rows[1:]:  # one serial point cannot give a slope
        r["inengine"]["grammar_bitmask serial"]["calls"] = 3
    with pytest.raises(ValueError, match="--fit-serial-by-rows: 1 points with serial fills"):
        fit_engine_fill(p, "xgrammar", rows, "test", probe, 8, serial_by_rows=True)
    bad = profile_to_dict(fitted)
    bad["backends"]["xgrammar"]["engine_fill"]["points"] = bad["backends"]["xgrammar"]["engine_fill"]["points"][:1]
    with pytest.raises(ProfileError, match="serial_rows_exponent"):
        profile_from_dict(bad)


def test_fill_speed_is_where_the_models_fill_meets_the_engines():
    """report --speed-from-probe: the speed at which the model's fill per step equals the probe's,
    from the pool fills where the model's steps mostly pool, else the serial ones."""
    from maskcost.validate.inengine import fill_speed
    serial_step = {"pool_step_fraction": 0.0, "serial_fill_step_ms": 30.0, "pool_fill_step_ms": None}
    pool_step = {"pool_step_fraction": 0.9, "serial_fill_step_ms": 2.0, "pool_fill_step_ms": 40.0}
    row = {"arm": "on", "cpu_speed": 0.9, "predicted_breakdown": serial_step,
           "inengine": {"grammar_bitmask serial": {"calls": 300, "mean_ms": 45.0}}}
    assert fill_speed(row) == pytest.approx(0.6)  # the engine filled 1.5x slower than the model at 0.9
    row.update(predicted_breakdown=pool_step, inengine={"grammar_bitmask pool": {"calls": 300, "mean_ms": 32.0},
                                                        "grammar_bitmask serial": {"calls": 300, "mean_ms": 9.0}})
    assert fill_speed(row) == pytest.approx(1.125)  # the pool's fill, not the few serial steps'
    row["inengine"]["grammar_bitmask pool"]["calls"] = 3  # too few fills to say
    assert fill_speed(row) is None
    assert fill_speed({**row, "arm": "off"}) is None and fill_speed({**row, "inengine": None}) is None


def test_earlier_median_speeds_never_use_a_points_own_fill():
    """report --speed-from-earlier: each schema-on row at the median fill speed of the rows whose first
    window began before its own, in time order (not file order); the first at the given speed; rows
    without a fill speed add nothing."""
    import json
    from maskcost.validate.hostspeed import earlier_median_speeds
    rows = [{"arm": "on", "windows": [[30.0, 31.0]], "fill_speed": 0.9},
            {"arm": "on", "windows": [[10.0, 11.0]], "fill_speed": 0.6},
            {"arm": "off", "windows": [[5.0, 6.0]], "fill_speed": None},
            {"arm": "on", "windows": [[20.0, 21.0], [40.0, 41.0]], "fill_speed": None},
            {"arm": "on", "windows": [[50.0, 51.0]], "fill_speed": 1.2},
            {"arm": "on", "windows": [[60.0, 61.0]], "fill_speed": 0.7}]
    got = {json.loads(k)[0][0]: v for k, v in earlier_median_speeds(rows, 1.0, "fill").items()}
    assert got == {10.0: 1.0, 20.0: 0.6, 30.0: 0.6, 50.0: pytest.approx(0.75), 60.0: 0.9}
    itl = [{**r, "itl_speed": r["fill_speed"] and r["fill_speed"] + 0.1} for r in rows]  # the other source's key
    got = {json.loads(k)[0][0]: v for k, v in earlier_median_speeds(itl, 1.0, "itl").items()}
    assert got == {10.0: 1.0, 20.0: 0.7, 30.0: 0.7, 50.0: pytest.approx(0.85), 60.0: 1.0}


def _bd(point) -> dict:
    """A predicted point's breakdown as a report row carries it (a dict, as in the JSON)."""
    from dataclasses import asdict
    return asdict(point.breakdown)



def test_what_inengine_reads_is_among_the_engines_probe_targets():
    """validate/inengine.py reads the probe's records by Vllm.probe_names: each a "Class.method" the probe times
    (a renamed target would leave inengine reading nothing)."""
    from maskcost.model.engines import Vllm
    targets = {f"{cls}.{method}" for _module, cls, method, _n in Vllm.probe_targets}
    assert set(Vllm.probe_names.values()) <= targets
