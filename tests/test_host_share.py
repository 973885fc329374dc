"""One host, many engines (model/host_share.py): each case against a figure computed by hand."""
from dataclasses import replace

import pytest

from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs
import numpy as np

from maskcost.model.host_share import Demand, Share, next_share, quota_factor, simulate, throttled_ms
from maskcost.model.metrics import summarize
from synth import constant_profile


def run(profile, concurrency, structured_fraction=1.0, **ekw):
    """One replica's run; the bitmask copy's spinners left out unless asked for (each case isolates a mechanism)."""
    cfg = EngineConfig(**{"omp_spin_ms": 0.0, **ekw})
    wl = Workload(concurrency=concurrency, requests=max(400, 4 * concurrency), prompt_tokens=1,
                  structured_fraction=structured_fraction)
    sim, share = simulate(Costs(profile, cfg.backend, cfg.cpu_speed), cfg, wl)
    return summarize(sim), share


def test_the_factors_by_hand():
    # a vLLM replica that keeps 3 CPUs busy (engine thread 1, API server 0.5, pool 1.5), its GPU 30% of the time
    d = Demand(engine_thread=1.0, api_server=0.5, fill_pool=1.5, compile_pool=0.0, gpu=0.3)
    two = next_share(EngineConfig(usable_cores=8, cpu_count=16, replicas=2, replica_gpu="shared"), d)
    assert two.host_factor == 1.0  # 3 + 3 CPUs on 8 cores: room for both
    # a pool burst: its 8 threads and its API server (0.5) with the other's 3 on 8 cores, against 8.5 alone
    assert two.pool_factor == pytest.approx(11.5 / 8.5)
    assert two.gpu_factor == pytest.approx(1.3)  # the other's forward in flight 30% of the time
    assert two.quota_factor == 1.0
    assert next_share(EngineConfig(usable_cores=8, replicas=2), d).gpu_factor == 1.0  # a GPU each
    # a quota of 2 CPUs on a replica that would use 3: two thirds of its pace
    q = next_share(EngineConfig(usable_cores=16, cpu_quota=2.0), d)
    assert q == Share(quota_factor=1.5)
    # four replicas on 4 cores: 3 x 3 others; serial work at (3 + 9) / 4 against 3 / 4 alone
    assert next_share(EngineConfig(usable_cores=4, replicas=4), d).host_factor == pytest.approx(3.0)


def test_the_others_copy_spinners_come_all_at_once():
    """Two xgrammar replicas with a team of 8 each on the same 8 cores, each keeping 1.86 CPUs busy: its engine
    thread 0.96, its API server 0.2, its 7 spinners 0.7 on average (all 7 at once, 10% of the time). Spread,
    1.86 + 1.86 on 8 cores is room for both; in a burst the other's 1.16 and its 7 spinners with this one's
    1.86 are 10.02 threads on 8 cores: the host factor is 0.9 x 1 + 0.1 x 10.02 / 8. In its own burst its
    team of 8 shares the 8 cores with the other's 1.86 on average: the engine thread holds 8 / 9.86 of a core
    until each spinner has spun its 9 ms. One replica: no crowd, as before; a crowd of nearly nothing, a
    share of nearly 1."""
    d = Demand(engine_thread=0.96, api_server=0.2, fill_pool=0.0, compile_pool=0.0, gpu=0.07, copy_spin=0.7)
    cfg = EngineConfig(usable_cores=8, cpu_count=16, replicas=2, replica_gpu="shared", omp_threads=8)
    two = next_share(cfg, d)
    assert two.host_factor == pytest.approx(0.9 + 0.1 * 10.02 / 8)
    assert two.crowd_cpus == pytest.approx(1.86)
    share, window = cfg.policy.spin_share(cfg, two.crowd_cpus)
    assert share == pytest.approx(8 / 9.86) and window == pytest.approx(9.0 * 9.86 / 8)
    assert cfg.policy.spin_share(cfg) is None  # the team of 8 alone on its 8 cores
    assert cfg.policy.spin_share(cfg, 1e-6)[0] == pytest.approx(1.0)
    # under a quota of 1 CPU a replica holds 1.0 of its 1.86: the other's average is 1.0, its steady part 1.0 x 1.16 / 1.86
    q = next_share(replace(cfg, cpu_quota=1.0), d, quota=1.0)
    assert q.crowd_cpus == pytest.approx(1.0)
    assert q.host_factor == pytest.approx(0.9 + 0.1 * (1.0 + 1.16 / 1.86 + 7) / 8)
    one = next_share(EngineConfig(usable_cores=8, omp_threads=8), d)
    assert one.host_factor == 1.0 and one.crowd_cpus == 0.0


def test_one_engine_alone_is_the_single_engine_model():
    """One replica and no quota: the plain simulation, unchanged; a quota it never reaches: the same figures."""
    from maskcost.model.engine import Simulation
    p = constant_profile(fill_us=100.0, forward_ms=5.0)
    alone, share = run(p, 64)
    assert share is None
    cfg, wl = EngineConfig(), Workload(concurrency=64, requests=400, prompt_tokens=1)
    assert alone == summarize(Simulation(Costs(p, "xgrammar"), cfg, wl).run())
    roomy, share = run(p, 64, cpu_quota=16.0)
    assert share["factors"] == {"gpu_factor": 1.0, "host_factor": 1.0, "pool_factor": 1.0, "quota_factor": 1.0,
                                "crowd_cpus": 0.0}
    assert roomy["itl_ms_mean"] == alone["itl_ms_mean"]


def test_schema_off_replicas_on_one_gpu_take_turns():
    # every step is its forward (5 ms): two replicas on one GPU, each busy all the time, step in 2 x 5 ms
    p = constant_profile(forward_ms=5.0)
    alone, _ = run(p, 32, structured_fraction=0.0)
    assert alone["itl_ms_mean"] == pytest.approx(5.0, rel=1e-6)
    two, share = run(p, 32, structured_fraction=0.0, replicas=2, replica_gpu="shared")
    assert share["settled"]
    assert two["itl_ms_mean"] == pytest.approx(10.0, rel=0.01)
    own, _ = run(p, 32, structured_fraction=0.0, replicas=2, replica_gpu="own")
    assert own["itl_ms_mean"] == pytest.approx(5.0, rel=1e-6)


def test_replicas_that_each_fill_the_cores_share_them():
    # 256 rows of 0.1 ms: 16 chunks of 1.6 ms on 8 pool threads, 3.2 ms a step (the forward, 1 ms, hidden), the
    # pool's 8 CPUs busy throughout; two such replicas on 8 cores get half of them each: 6.4 ms
    p = constant_profile(fill_us=100.0, forward_ms=1.0)
    alone, _ = run(p, 256, usable_cores=8, cpu_count=16)
    assert alone["itl_ms_mean"] == pytest.approx(3.2, rel=1e-6)
    two, share = run(p, 256, usable_cores=8, cpu_count=16, replicas=2)
    assert share["demand"]["fill_pool"] == pytest.approx(8.0, rel=0.05)
    assert two["itl_ms_mean"] == pytest.approx(6.4, rel=0.05)
    roomy, _ = run(p, 256, usable_cores=16, cpu_count=16, replicas=2)  # 16 cores: room for both pools
    assert roomy["itl_ms_mean"] == pytest.approx(3.2, rel=1e-6)


def test_a_quota_throttles_by_the_cpus_it_would_use_and_a_cpuset_by_its_lanes():
    p = constant_profile(fill_us=100.0, forward_ms=1.0)
    # the pool's 8 CPUs under a 4-CPU quota: twice as long (6.4 ms), as on a cpuset of 4 cores (16 chunks on 4 lanes)
    q4, share = run(p, 256, usable_cores=16, cpu_count=16, cpu_quota=4.0)
    assert share["factors"]["quota_factor"] == pytest.approx(2.0, rel=0.05)
    assert q4["itl_ms_mean"] == pytest.approx(6.4, rel=0.05)
    set4, _ = run(p, 256, usable_cores=4, cpu_count=16)
    assert set4["itl_ms_mean"] == pytest.approx(6.4, rel=1e-6)
    # 6 CPUs: the quota spreads the work (8/6 as long: 4.27 ms); 6 cores take 3 rounds of chunks (4.8 ms)
    q6, _ = run(p, 256, usable_cores=16, cpu_count=16, cpu_quota=6.0)
    set6, _ = run(p, 256, usable_cores=6, cpu_count=16)
    assert q6["itl_ms_mean"] == pytest.approx(3.2 * 8 / 6, rel=0.05)
    assert set6["itl_ms_mean"] == pytest.approx(4.8, rel=1e-6)
    # a quota above what the engine uses never binds
    q12, _ = run(p, 256, usable_cores=16, cpu_count=16, cpu_quota=12.0)
    assert q12["itl_ms_mean"] == pytest.approx(3.2, rel=1e-6)


def test_the_xgrammar_bitmask_copy_leaves_the_openmp_team_spinning():
    # 32 rows of a 4,008-int32 bitmask (128,256 int32: over torch's 32,768) copied each step of 20 ms (the
    # forward; the fill, 0.32 ms, beside it): on 8 cores the 7 other threads of the team spin 9 ms a step
    p = constant_profile(fill_us=10.0, forward_ms=20.0)
    kw = dict(usable_cores=8, cpu_count=16, cpu_quota=8.0)  # a quota it never spends: the demand reported
    _, share = run(p, 32, omp_spin_ms=9.0, **kw)
    assert share["demand"]["copy_spin"] == pytest.approx(7 * 9.0 / 20.0, rel=0.03)
    _, share = run(p, 32, omp_spin_ms=30.0, **kw)  # a spin longer than the step: until the next step's copy
    assert share["demand"]["copy_spin"] == pytest.approx(7.0, rel=0.03)
    _, share = run(p, 32, omp_spin_ms=9.0, backend="guidance", **kw)  # llguidance's bitmask is pinned: no copy
    assert share["demand"]["copy_spin"] == 0.0
    _, share = run(p, 8, omp_spin_ms=9.0, **kw)  # 8 rows, 32,064 int32: a serial copy
    assert share["demand"]["copy_spin"] == 0.0


def test_tensor_parallel_is_one_engine_whose_forward_spans_the_gpus():
    # schema off, every step its forward: 5 ms at TP 1, 2.5 ms at TP 2 with half the forward (the ratio)
    p = constant_profile(forward_ms=5.0)
    two, share = run(p, 32, structured_fraction=0.0, tensor_parallel=2, tp_forward_ratio=0.5, cpu_quota=16.0)
    assert two["itl_ms_mean"] == pytest.approx(2.5, rel=1e-6)
    # its two workers busy while it steps (all the time: a closed loop that never idles), its bitmask copy
    # serial in them (no spinners, whatever the spin time), the engine thread busy as at TP 1
    assert share["demand"]["tp_workers"] == pytest.approx(2.0, rel=0.01)
    _, share = run(constant_profile(fill_us=10.0, forward_ms=20.0), 32, tensor_parallel=2, omp_spin_ms=9.0,
                   usable_cores=8, cpu_quota=8.0)
    assert share["demand"]["copy_spin"] == 0.0
    with pytest.raises(ValueError, match="--tensor-parallel 2: modelled for vLLM only"):
        EngineConfig(engine="sglang", tensor_parallel=2)


def test_a_quota_is_spent_period_by_period():
    """cgroup cpu.max walked by hand: 100-ms periods, each with quota x 100 ms of CPU to spend."""
    # 3 CPUs steady for 300 ms under 2: each period's 200 ms of CPU lasts 66.7 ms; 4 periods do 266.7 ms of
    # the work, the last 33.3 ms runs in the fifth: 433.3 ms (the mean field, 3 / 2 of 300: 450)
    assert throttled_ms(np.array([300.0]), np.array([3.0]), 2.0) == pytest.approx(400 + 100 / 3)
    # under the quota on average and in every period: no wait (95 ms at 1 CPU and 5 ms at 9: 140 of 150)
    dur, cpus = np.tile([95.0, 5.0], 10), np.tile([1.0, 9.0], 10)
    assert throttled_ms(dur, cpus, 1.5) == pytest.approx(1000.0)
    # a burst of 8 CPUs for 20 ms, then 80 ms idle, under 1 CPU: 12.5 ms spends the period's 100 ms, the
    # engine waits to 100, the burst's last 7.5 ms runs then, and the idle 80: 187.5 ms where the mean
    # field (1.6 CPUs over 1) says 160
    assert throttled_ms(np.array([20.0, 80.0]), np.array([8.0, 0.0]), 1.0) == pytest.approx(187.5)
    d = Demand(engine_thread=0.0, api_server=0.0, fill_pool=1.6, compile_pool=0.0, gpu=0.0)
    cfg = EngineConfig(usable_cores=16, cpu_quota=1.0)
    assert quota_factor(cfg, d) == pytest.approx(1.6)
    assert quota_factor(cfg, d, (np.array([20.0, 80.0]), np.array([8.0, 0.0]))) == pytest.approx(1.875)
    # the segments of a run already stretched by 1.875 are first taken back to their unthrottled lengths
    assert quota_factor(cfg, d, (np.array([37.5, 150.0]), np.array([8.0, 0.0])), 1.875) == pytest.approx(1.875)
    assert quota_factor(EngineConfig(), d, (np.array([20.0]), np.array([8.0]))) == 1.0  # no quota


@pytest.mark.parametrize("kw, flag", [({"replicas": 0}, "--replicas"), ({"replica_gpu": "two"}, "--replica-gpu"),
                                      ({"cpu_quota": 0.0}, "--cpu-quota"), ({"cpu_quota": 32.0}, "--cpu-quota"),
                                      ({"omp_spin_ms": -1.0}, "--omp-spin-ms"), ({"omp_threads": 0}, "--omp-threads"),
                                      ({"tensor_parallel": 0}, "--tensor-parallel"),
                                      ({"tp_forward_ratio": 0.0}, "--tp-forward-ratio")])
def test_bad_sharing_is_one_line_naming_the_flag(kw, flag):
    with pytest.raises(ValueError, match=flag):
        EngineConfig(**kw)


def test_the_openmp_spin_is_the_profiles_hosts_unless_given(tmp_path):
    """calibrate measures the spin on its host (HostInfo.omp_spin_ms), the profile keeps it, predict takes it
    unless --omp-spin-ms is given; a profile without it (older, or made without torch) gets the default."""
    import argparse
    from maskcost.calibrate.host import omp_spin_ms
    from maskcost.cli.engine_args import host_terms
    from maskcost.profile import load_profile, save_profile
    import torch
    spin = omp_spin_ms(copies=5)
    assert (spin is None) == (torch.get_num_threads() < 2)
    assert spin is None or 0.0 <= spin <= 30.0  # the sleep after each copy bounds what one copy can leave spinning
    p = constant_profile()
    measured = replace(p, host=replace(p.host, omp_spin_ms=4.5))
    save_profile(measured, tmp_path / "p.json.gz")
    back = load_profile(tmp_path / "p.json.gz")
    assert back.host.omp_spin_ms == 4.5
    given, none = argparse.Namespace(omp_spin_ms=2.0), argparse.Namespace(omp_spin_ms=None)
    assert host_terms(given, back)["omp_spin_ms"] == 2.0
    assert host_terms(none, back)["omp_spin_ms"] == 4.5
    assert "omp_spin_ms" not in host_terms(none, p)  # EngineConfig's default
    assert EngineConfig(**host_terms(none, p)).omp_spin_ms == EngineConfig().omp_spin_ms
