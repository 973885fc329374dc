"""The closed loop against a real llama.cpp server on this CPU (issue 5): black-box calibration,
held-out predictions written before the held-out sweeps run, then predicted vs measured.

The bound: the machine itself moves. On this 2-core VM the row cost that calibration measures
varied between runs from 7.0 to 8.9 ms (the least disturbed of 2-3 back-to-back on/off pairs),
and in one CI run the held-out sweeps, a minute later, ran about 12% faster than the calibration
(validation/llamacpp-cpu/README.md). The repeat spread within a phase was 3-12%. The test fails
above 30% median |error|: the drift between phases plus the spread within one, so a noisy
machine passes, while dropping the grammar term (-80%) or the slot limit (at --parallel 2:
+90%) fails.
"""
import json
import subprocess
import sys

import pytest

from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs
from maskcost.model.engine import Simulation
from maskcost.model.metrics import summarize

MEDIAN_ITL_ERROR_BOUND_PCT = 30.0


def test_llamacpp_step_is_decode_plus_serial_sampling():
    from dataclasses import replace

    from maskcost.profile import BackendCosts, BlackboxCost
    from synth import constant_profile
    p = constant_profile(forward_ms=2.0)
    bb = BlackboxCost("test", row_us=8000.0, launch_ms=0.0, output_tokens={"s": (40,)}, points=())
    p = replace(p, backends={"gbnf": BackendCosts((), (), (), (), bb)})
    cfg = EngineConfig(engine="llamacpp", backend="gbnf", max_num_seqs=4)
    r = summarize(Simulation(Costs(p, "gbnf"), cfg, Workload(concurrency=3, requests=60)).run())
    assert r["itl_ms_mean"] == pytest.approx(2.0 + 3 * 8.0, rel=1e-6)  # no overlap, no pool
    capped = summarize(Simulation(Costs(p, "gbnf"), replace(cfg, max_num_seqs=2),
                                  Workload(concurrency=4, requests=60)).run())
    assert capped["itl_ms_mean"] == pytest.approx(2.0 + 2 * 8.0, rel=1e-6) and capped["running_mean"] <= 2
    stepped = replace(p, backends={"gbnf": BackendCosts((), (), (), (), replace(bb, step_us=3000.0))})
    r3 = summarize(Simulation(Costs(stepped, "gbnf"), cfg, Workload(concurrency=3, requests=60)).run())
    assert r3["itl_ms_mean"] == pytest.approx(2.0 + 3.0 + 3 * 8.0, rel=1e-6)  # + the fixed part per step
    with pytest.raises(ValueError, match="black-box"):
        Simulation(Costs(p, "gbnf"), EngineConfig(engine="vllm", backend="gbnf"), Workload(concurrency=2))


def test_closed_loop_against_a_live_llama_server(tmp_path):
    # as a user runs it, in its own interpreter: run inside the test process, after the calibration
    # tests, the loop's median error was 18% and 26% in two CI runs, against 1-8% when run alone
    r = subprocess.run([sys.executable, "-m", "maskcost.cli", "llamacpp-loop", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    s = json.loads((tmp_path / "summary.json").read_text())
    pred, held = tmp_path / "predicted.json", sorted(tmp_path.glob("heldout-p*.raw.jsonl"))
    # the predictions were on disk before the first held-out request was sent
    first_sent = min(json.loads(x)["t_send"] for f in held for x in f.read_text().splitlines())
    assert pred.stat().st_mtime < first_sent
    assert s["points"] == 5 and (tmp_path / "report-p2" / "report.md").exists()
    # llama.cpp's grammar sampler is the cost: several ms per row with the 128k vocabulary
    assert s["row_us"] > 1000
    assert s["median_abs_itl_error_pct"] <= MEDIAN_ITL_ERROR_BOUND_PCT, s
    # the host's speed read back from the held-out points' ITL (report's itl_speed), against the
    # calibration a minute before on the same machine: near 1, within the same drift bound
    assert s["itl_speed_median"] is not None
    assert 1 / (1 + MEDIAN_ITL_ERROR_BOUND_PCT / 100) <= s["itl_speed_median"] <= 1 + MEDIAN_ITL_ERROR_BOUND_PCT / 100, s


def test_blackbox_fit_takes_the_least_disturbed_repeat_and_a_step_part():
    from maskcost.calibrate.blackbox import blackbox_from_sweeps
    from synth import summary

    def pt(arm, c, r, itl, running):
        return summary({"arm": arm, "concurrency": c, "repeat": r, "point": f"{arm}-c{c}-r{r}", "itl_ms_mean": itl,
                        "ttft_ms_p50": 50.0 if arm == "on" else 10.0, "engine": {"running_mean": running, "itl_ms": None}})
    # grammar time per step = 2 ms + 5 ms per row; repeat 1 of c1 disturbed (+4 ms on the on arm only)
    on = [pt("on", 1, 0, 1 + 7, 1), pt("on", 1, 1, 1 + 11, 1), pt("on", 2, 0, 2 + 12, 2)]
    off = [pt("off", 1, 0, 1, 1), pt("off", 1, 1, 1, 1), pt("off", 2, 0, 2, 2)]
    bb = blackbox_from_sweeps(on, off, {"s": (40,)}, "test")
    assert bb.step_us == pytest.approx(2000) and bb.row_us == pytest.approx(5000)
    assert bb.launch_ms == pytest.approx(50 - 10 - 7)  # TTFT on - off, less the first constrained step


def test_a_server_that_dies_mid_sweep_keeps_the_finished_points(tmp_path):
    """A real llama-server killed while a sweep runs: one error line, the finished points kept; the same
    command against a restarted server measures only the points that were missing."""
    import time

    from maskcost.llamacpp.server import LlamaServer, free_port
    from maskcost.llamacpp.tiny_gguf import write_tiny_gguf
    model = tmp_path / "tiny.gguf"
    write_tiny_gguf(model)
    port, out = free_port(), tmp_path / "s.jsonl"
    cmd = [sys.executable, "-m", "maskcost.cli", "sweep", "--base-url", f"http://127.0.0.1:{port}", "--arms", "off",
           "--concurrency", "1", "2", "3", "--off-tokens", "24", "--rounds", "2", "--min-requests", "6", "--out", str(out)]
    with LlamaServer(model, parallel=4, port=port) as srv:
        sweep = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
            time.sleep(0.05)
        srv.proc.kill()
        _, err = sweep.communicate(timeout=120)
    assert sweep.returncode != 0
    errors = [x for x in err.splitlines() if x.startswith("maskcost sweep: error")]
    assert len(errors) == 1 and "finished points are in" in errors[0] and "Traceback" not in err, err[-2000:]
    kept = [json.loads(x)["point"] for x in out.read_text().splitlines()]
    assert 1 <= len(kept) < 3
    with LlamaServer(model, parallel=4, port=port):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    points = [json.loads(x)["point"] for x in out.read_text().splitlines()]
    assert sorted(points) == ["off-c1-r0", "off-c2-r0", "off-c3-r0"] and points[:len(kept)] == kept
