"""The 80% interval (maskcost/interval.py): built from the record's scored points leave one machine out,
checked on hand-computed cases, and the shipped file is what the committed record builds."""
import json
import math

import pytest

from maskcost import interval, record


def test_the_shipped_intervals_are_what_the_record_builds():
    shipped = json.loads(interval.SHIPPED.read_text())
    built = [i.__dict__ for i in interval.build_all()]
    assert shipped["level"] == interval.LEVEL and shipped["intervals"] == json.loads(json.dumps(built))
    got = interval.load()
    for engine in ("vllm", "sglang"):  # both engines, nothing read: coverage measured on >= 3 machines
        iv = got[engine, "nothing_read"]
        assert iv.machines >= 3 and iv.lomo_coverage is not None and iv.lo_ratio < 1 < iv.hi_ratio
    docs = record.DOCS.read_text()
    assert record.readme_block(docs, interval.DOCS_BEGIN, interval.DOCS_END) == interval.docs_table(
        interval.build_all()), "docs/validation.md's interval table is not the record's: run python -m maskcost.interval"
    readme = (interval.RECORD.parent.parent / "README.md").read_text()
    assert interval.readme_block(readme) == interval.readme_words(interval.build_all()), \
        "README's interval sentence is not the record's: run python -m maskcost.interval"
    assert got["vllm", "speed_read"].hi_ratio / got["vllm", "speed_read"].lo_ratio < \
        got["vllm", "nothing_read"].hi_ratio / got["vllm", "nothing_read"].lo_ratio  # a speed read narrows it
    # the speed calibrate reads: the model too fast more often than not on the record's machines
    cal = got["vllm", "calibration_read"]
    assert cal.machines >= 3 and cal.lomo_coverage is not None and cal.hi_ratio > got["vllm", "speed_read"].hi_ratio


def test_each_machine_weighs_the_same():
    """Machine A's three points and B's one: the median is a quarter of the way from A's to B's (each
    machine half the weight, midpoint interpolation), where the points alone would give A's."""
    errs = [("A", 0.0)] * 3 + [("B", 1.0)]
    assert interval._quantiles(errs, (0.5,))[0] == pytest.approx(0.25)


def test_the_widening_is_the_smallest_that_holds_80_per_cent_of_left_out_machines():
    """Five machines, one point each at -0.2 .. 0.2. Leaving out an end point, the others' interval
    stops at their own extreme, so at s = 1 three of five points are held (60%). The end points come
    inside once mid + s (q10 - mid) <= -0.2 with mid 0.05 and q10 -0.1: s >= 5/3, so s = 1.7 on the grid,
    and then all five are (the coverage reported is the nested one: s chosen without each machine)."""
    errs = [(m, e) for m, e in zip("ABCDE", (-0.2, -0.1, 0.0, 0.1, 0.2))]
    assert interval._lomo(errs, 1.0) == pytest.approx(0.6)
    assert interval._widen(errs) == 1.7 and interval._lomo(errs, 1.7) == 1.0
    iv = interval.build(errs, "vllm", "nothing_read", "hand")
    assert iv.lo_ratio == pytest.approx(math.exp(-0.34), abs=1e-4)
    assert iv.hi_ratio == pytest.approx(math.exp(0.34), abs=1e-4)
    assert iv.machines == 5 and iv.points == 5 and 0 <= iv.lomo_coverage <= 1
    two = interval.build(errs[:2], "vllm", "speed_read", "hand")  # too few machines to leave one out
    assert two.lomo_coverage is None and "coverage unmeasured" in two.words()


def test_the_widening_is_at_least_the_one_every_engines_machines_need():
    """Engine A: three machines whose errors agree (0.0 each), so its own leave-one-machine-out needs no
    widening (s = 1.0). Engine B: the five machines above, which need 1.7. Pooled by points (A's 3 always
    held, B's 3 of 5 below 1.7 and 5 of 5 at it): 6 of 8 = 75% below 1.7, so the mode's widening is 1.7, and
    A takes it; B keeps its own 1.7 (the larger of the two)."""
    a = [("a1", 0.0), ("a2", 0.0), ("a3", 0.0)]
    b = [(m, e) for m, e in zip("ABCDE", (-0.2, -0.1, 0.0, 0.1, 0.2))]
    assert interval._widen(a) == 1.0 and interval._widen(a, (b,)) == 1.7 and interval._widen(b, (a,)) == 1.7
    assert interval._lomo_pooled([a, b], 1.65) == pytest.approx(0.75) and interval._lomo_pooled([a, b], 1.7) == 1.0
    assert interval.build(a, "sglang", "speed_read", "hand", others=(b,)).widen == 1.7
    assert interval.build(a, "sglang", "speed_read", "hand").widen == 1.0


def _pt(engine: str, itl_ms: float):
    from maskcost.point import Breakdown, OffArm, Point
    return Point(engine=engine, backend="xgrammar", concurrency=8, itl_ms_mean=itl_ms, breakdown=Breakdown(),
                 off=OffArm(), config={})


def test_a_point_carries_its_engines_interval():
    shipped = interval.load()
    pts = interval.with_intervals([_pt("vllm", 10.0), _pt("sglang", 20.0), _pt("nosuch", 1.0)], read="report")
    v = shipped["vllm", "speed_read"]
    assert pts[0].itl_ms_pi80 == pytest.approx([10 * v.lo_ratio, 10 * v.hi_ratio])
    # SGLang with its speed read from a report: three machines in the record, its own interval
    r = shipped["sglang", "speed_read"]
    assert pts[1].itl_ms_pi80 == pytest.approx([20 * r.lo_ratio, 20 * r.hi_ratio])
    assert pts[1].interval["mode"] == "speed_read" and pts[2].itl_ms_pi80 is None
    assert "itl_ms_pi80" in pts[0].to_json() and "itl_ms_pi80" not in pts[2].to_json()
    # read at calibration: one machine, too few to measure, so the wider nothing-read one
    sg = interval.with_intervals([_pt("sglang", 20.0)], read="calibration")
    s = shipped["sglang", "nothing_read"]
    assert sg[0].itl_ms_pi80 == pytest.approx([20 * s.lo_ratio, 20 * s.hi_ratio])
    assert sg[0].interval["mode"] == "nothing_read"
    assert interval.for_point("llamacpp", "calibration", shipped) is None  # one machine: no interval shown
    cal = interval.with_intervals([_pt("vllm", 10.0)], read="calibration")  # the profile's own speed (calibrate --base-url)
    c = shipped["vllm", "calibration_read"]
    assert cal[0].itl_ms_pi80 == pytest.approx([10 * c.lo_ratio, 10 * c.hi_ratio])
    assert interval.for_point("vllm", None, shipped).mode == "nothing_read"


def test_a_workloads_cost_spread_is_each_schemas_excess_weighted_by_its_cost():
    """Schema a: three outputs costing 2, 4, 6 us over 2 tokens each: known to 28.9% (test_calibrate's case); b: four
    alike, known exactly; c: one output, taken as one output's spread among a and b: the median of 0.289 x sqrt(3)
    and 0 x 2, 0.25. Reference 0.1: excesses a sqrt(0.289^2 - 0.1^2) = 0.271, b 0, c sqrt(0.25^2 - 0.1^2) = 0.229.
    Weighted by the cost a request (a 4 us, b 12 us, c 9 us): sqrt((4 x 0.271)^2 + (9 x 0.229)^2) / 25. Scaled:
    only the named schemas' traces, fill and accept, by exp(-+z x rse)."""
    from dataclasses import replace

    from maskcost.calibrate.cost_spread import Z80, scaled, workload_spread
    from maskcost.model.engines import shipped_profile_path
    from maskcost.profile import BackendCosts, FillTrace, load_profile
    traces = [FillTrace("a", (x, x), (0.0, 0.0), (False, False)) for x in (1.0, 2.0, 3.0)]
    traces += [FillTrace("b", (5.0, 1.0, 3.0), (1.0, 1.0, 1.0), (False,) * 3)] * 4
    traces += [FillTrace("c", (9.0,), (0.0,), (False,))]
    P = replace(load_profile(shipped_profile_path(["vllm"])), backends={"xgrammar": BackendCosts(tuple(traces), (), (), ())})
    a_se = (8 / 6) ** 0.5 / 2 / 2
    a, c = math.sqrt(a_se ** 2 - 0.1 ** 2), math.sqrt((a_se * 3 ** 0.5 / 2) ** 2 - 0.1 ** 2)
    sp = workload_spread(P, "xgrammar", (), 0.1)
    assert sp.one_output_rse == pytest.approx(a_se * 3 ** 0.5 / 2) and sp.one_output == ("c",)
    assert sp.rse == pytest.approx(math.hypot(4 * a, 9 * c) / 25) and sp.material
    assert workload_spread(P, "xgrammar", ("b",), 0.1).rse == 0 and not workload_spread(P, "xgrammar", ("b",), 0.1).material
    assert workload_spread(P, "xgrammar", ("a",), 0.3).rse == 0  # known better than the reference: no excess
    lo, hi = sp.factors()
    assert lo == pytest.approx(math.exp(-Z80 * sp.rse)) and hi * lo == pytest.approx(1.0)
    got = scaled(P, {"xgrammar": sp}, ("a",), 1).backends["xgrammar"].traces
    assert [t.fill_us for t in got[:3]] == [(x * hi, x * hi) for x in (1.0, 2.0, 3.0)]
    assert got[3:] == tuple(traces[3:])  # b and c as they were


def test_the_interval_is_widened_in_quadrature_about_its_centre():
    """ITL 10 ms, interval 6-12 (log -0.511, +0.182; centre -0.164, half-widths 0.347); the cost's ends at 9 and 12
    ms (log -0.105, +0.182): the ends move to exp(-0.164 -+ hypot(0.347, 0.105 | 0.182)). No ends or no
    interval: unchanged."""
    from maskcost.point import Breakdown, OffArm, Point
    p = Point(engine="vllm", backend="xgrammar", concurrency=8, itl_ms_mean=10.0, breakdown=Breakdown(), off=OffArm(),
              config={"engine": {}}, itl_ms_pi80=(6.0, 12.0), interval={"words": "80% interval x0.60-x1.20"})
    w = interval.widened(p, (9.0, 12.0), 0.25)
    lr, hr = math.log(0.6), math.log(1.2)
    c, h = (lr + hr) / 2, (hr - lr) / 2
    assert w.itl_ms_pi80 == pytest.approx((10 * math.exp(c - math.hypot(h, math.log(10 / 9))),
                                           10 * math.exp(c + math.hypot(h, math.log(1.2)))))
    assert w.itl_ms_pi80[0] < 6.0 and w.itl_ms_pi80[1] > 12.0
    assert w.interval["cost_rse"] == 0.25 and w.interval["cost_itl_ms"] == (9.0, 12.0)
    assert w.interval["words"].endswith("widened for its schemas' mean cost a token known to +-25% beyond the record's")
    assert interval.widened(p, (None, None), 0.25) == p
    from dataclasses import replace
    assert interval.widened(replace(p, itl_ms_pi80=None, interval=None), (9.0, 12.0), 0.25).itl_ms_pi80 is None


def test_a_coverage_under_the_target_is_never_rounded_up_to_it():
    from dataclasses import replace
    iv = interval.Interval("vllm", "calibration_read", 0.77, 1.34, 1.05, 278, 22, 0.7986, 0.8022, "record")
    assert "79.9% leave-one-machine-out coverage" in iv.words()
    assert "81% leave-one-machine-out" in replace(iv, lomo_coverage=0.8077).words()
