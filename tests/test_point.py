"""A predicted point as a typed record (maskcost/point.py): the model builds it, its JSON goes out and comes back
the same, a record that is not one is refused naming the field, and every prediction file the record keeps
(written by older versions of maskcost) still loads."""
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from maskcost.model.config import EngineConfig, Workload
from maskcost.model.predict import run_point_band
from maskcost.point import Band, Breakdown, OffArm, Point, PointError
from maskcost.profile import default_profile_path, load_profile

ROOT = Path(__file__).resolve().parent.parent


def _point() -> Point:
    return run_point_band(load_profile(default_profile_path()), EngineConfig(),
                          Workload(concurrency=32, requests=96, schemas=("tier/flat",)))


def test_a_point_goes_out_as_json_and_comes_back_the_same():
    p = _point()
    assert isinstance(p.breakdown, Breakdown) and isinstance(p.off, OffArm) and isinstance(p.band, Band)
    assert p.breakdown.step_ms > 0 and p.off.itl_ms_mean < p.itl_ms_mean
    d = json.loads(json.dumps(p.to_json()))
    assert list(d)[:3] == ["engine", "engine_version", "backend"] and d["band"]["itl_ms_mean"] == list(p.band.itl_ms_mean)
    assert "interval" not in d and "host_share" not in d  # absent where there is none, as predict always wrote
    assert Point.from_json(d) == p
    alone = replace(p, band=None)
    assert "band" not in alone.to_json() and Point.from_json(alone.to_json()).band is None


def test_a_record_that_is_not_a_point_is_refused_naming_the_field():
    d = _point().to_json()
    with pytest.raises(PointError, match=r"^p: missing field 'itl_ms_mean'$"):
        Point.from_json({k: v for k, v in d.items() if k != "itl_ms_mean"}, "p")
    with pytest.raises(PointError, match=r"^p\.off\.itl_ms_mean: expected a number, got 'fast'$"):
        Point.from_json({**d, "off": {**d["off"], "itl_ms_mean": "fast"}}, "p")
    with pytest.raises(PointError, match=r"^p\.band\.itl_ms_mean: expected 2 values, got 3$"):
        Point.from_json({**d, "band": {**d["band"], "itl_ms_mean": [1.0, 2.0, 3.0]}}, "p")
    with pytest.raises(PointError, match=r"^p\.concurrency: expected int, got bool$"):
        Point.from_json({**d, "concurrency": True}, "p")
    with pytest.raises(PointError, match=r"^p: expected an object, got list$"):
        Point.from_json([d], "p")
    with pytest.raises(PointError, match=r"^p\.config\.engine: expected the engine config"):
        Point.from_json({**d, "config": {}}, "p")  # (what report --predicted picks its points by)


def test_every_prediction_file_of_the_record_loads():
    """The validation record's predict --json files, made by every version of maskcost since the first
    campaign: a field added since is None where a file lacks it; none of them is refused."""
    files = subprocess.run(["git", "ls-files", "validation"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout: the record's files are not listed")
    points = 0
    for f in files:
        if "predicted" not in Path(f).name or not f.endswith(".json"):
            continue
        doc = json.loads((ROOT / f).read_text())
        if not (isinstance(doc, dict) and str(doc.get("command", "")).startswith("maskcost predict")):
            continue  # (a check's own predictions file, not predict's)
        for i, q in enumerate(doc["points"]):
            Point.from_json(q, f"{f}: point {i}")
            points += 1
    assert points > 4000
