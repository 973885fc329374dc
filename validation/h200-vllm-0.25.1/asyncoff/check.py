"""vLLM 0.25.1 with async scheduling off, held out (README.md here).
  python check.py shipped   -> predicted-shipped.json (committed before the run: nothing read from the server)
  python check.py score RUN -> RUN/predicted.json (the model on RUN/xg/host.json.gz, the profile calibrate made on the
                               default server), RUN/score.json, RUN/score.md from the sweeps run.sh wrote
A cell is a schema (or none: flat's prompt with no schema, 128 tokens) at a load; the shape check's request, ITL
scoring and noise are reused as they are (../shape/check.py)."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "shape"))
from check import LOADS, SWEEP_PROMPTS, calibrate_time, itl_score, noise  # noqa: E402

SCHEMAS = ("none", "flat", "nested")  # none: the schema-off arm of flat's request (sweep --arms off --off-tokens 128)
OFF_TOKENS = 128
B = "xgrammar"  # both servers' backend
ARMS = {"on": (), "off": ("--no-async-scheduling",)}  # async scheduling: the server's flags, predict's the same
SERVERS = {"on": "xg", "off": "xgoff"}  # run.sh's folders
RATIO_BAR_PCT = 10.0  # primary: the median |off/on ratio error| over the nine cells
DIRECTION_MIN_PCT = 10.0  # primary: a cell whose predicted change is at least this has its direction scored
ITL_BAR_PCT = 15.0  # secondary: the median |ITL error| of the nine async-off points


def model(profile: str | None, schema: str, more: tuple[str, ...]) -> dict[str, dict[str, dict]]:
    """schema -> load -> the predicted point (ITL, its 80% interval, running, the step), `schema` on and none (the
    schema-off arm of the same request), the way a user runs predict."""
    arg = ["--schema-id", schema] if profile else ["--schema", str(HERE.parent / "shape" / "schemas" / f"{schema}.json")]
    with tempfile.TemporaryDirectory() as t:
        out = Path(t) / "p.json"
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", *(["--profile", profile] if profile else []),
                        "--engine", "vllm", "--engine-version", "0.25.1", "--backend", B, "--max-num-seqs", "256",
                        *arg, "--prompt-tokens", str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens",
                        str(SWEEP_PROMPTS[schema][1]), "--unstructured-lengths", f"fixed:{OFF_TOKENS}",
                        "--concurrency", *map(str, LOADS), *more, "--json", str(out)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        d = json.loads(out.read_text())
    got: dict[str, dict[str, dict]] = {schema: {}, "none": {}}
    for p in d["points"]:
        got[schema][str(p["concurrency"])] = {"itl_ms": p["itl_ms_mean"], "interval": p.get("interval"),
                                              "running": p["running_mean"], "step_ms": p["breakdown"]["step_ms"]}
        got["none"][str(p["concurrency"])] = {"itl_ms": p["off"]["itl_ms_mean"], "interval": None,
                                              "running": p["off"]["running_mean"], "step_ms": None}
    return got


def predictions(profile: str | None) -> dict:
    """arm -> schema -> backend -> load -> the predicted point, and each cell's off/on ITL ratio; `profile` None: the
    shipped profile with the schema files traced under the mask here (nothing read from the server)."""
    pts: dict[str, dict] = {}
    for arm, more in ARMS.items():
        flat, nested = model(profile, "flat", more), model(profile, "nested", more)
        pts[arm] = {s: {B: v} for s, v in {**flat, "nested": nested["nested"]}.items()}
    ratios = {s: {B: {str(c): pts["off"][s][B][str(c)]["itl_ms"] / pts["on"][s][B][str(c)]["itl_ms"] for c in LOADS}}
              for s in SCHEMAS}
    return {"profile": profile or "shipped (maskcost/profiles/default.json.gz), schemas traced under the mask here",
            "request": "each schema's sweep prompt (../shape/check.py SWEEP_PROMPTS)", "points": pts,
            "ratios": ratios}


def measured(run: Path, arm: str) -> dict[tuple[str, str, int], list[dict]]:
    """(backend, schema, load) -> each repeat's point (the engine's own ITL over the sweep's window, its running
    gauge) on the `arm` server."""
    got: dict[tuple[str, str, int], list[dict]] = {}
    for s in SCHEMAS:
        f = run / SERVERS[arm] / f"{s}.jsonl"
        for r in (json.loads(x) for x in (f.read_text().splitlines() if f.is_file() else ()) if x.strip()):
            e = r.get("engine") or {}
            if e.get("itl_ms") and not r.get("errors"):
                got.setdefault((B, s, r["concurrency"]), []).append(
                    {"repeat": r["repeat"], "itl_ms": e["itl_ms"], "running": e.get("running_mean"),
                     "gpu_busy": (e.get("gpu_busy") or {}).get("fraction")})
    return got


def rows(pred: dict, shipped: dict, on: dict, off: dict) -> list[dict]:
    """Each (load, schema) cell: the measured off/on ratio (the repeats' means; by repeat too), the model's and the
    shipped profile's, their errors (predicted / measured - 1) and directions."""
    out = []
    for c in LOADS:
        for s in SCHEMAS:
            a, z = on.get((B, s, c), []), off.get((B, s, c), [])
            if not a or not z:
                continue
            ma, mz = (statistics.fmean(x["itl_ms"] for x in p) for p in (a, z))
            ra, rz = ({x["repeat"]: x["itl_ms"] for x in p} for p in (a, z))
            mr, pr, sr = mz / ma, pred["ratios"][s][B][str(c)], shipped["ratios"][s][B][str(c)]
            scored = abs(pr - 1) * 100 >= DIRECTION_MIN_PCT
            out.append({"backend": B, "load": c, "schema": s, "on_ms": ma, "off_ms": mz, "measured_ratio": mr,
                        "measured_ratio_by_repeat": [rz[k] / ra[k] for k in sorted(rz) if k in ra],
                        "predicted_ratio": pr, "error_pct": 100 * (pr / mr - 1),
                        "direction_scored": scored, "direction_right": (pr > 1) == (mr > 1) if scored else None,
                        "shipped_ratio": sr, "shipped_error_pct": 100 * (sr / mr - 1),
                        "off_itl_error_pct": 100 * (pred["points"]["off"][s][B][str(c)]["itl_ms"] / mz - 1),
                        "on_itl_error_pct": 100 * (pred["points"]["on"][s][B][str(c)]["itl_ms"] / ma - 1),
                        "on_running": statistics.fmean(x["running"] or 0 for x in a),
                        "off_running": statistics.fmean(x["running"] or 0 for x in z)})
    return out


def bars(rs: list[dict], off_itl: dict) -> dict:
    """The registered bars (README.md)."""
    med = statistics.median(abs(r["error_pct"]) for r in rs) if rs else None
    dirs = [r for r in rs if r["direction_scored"]]
    itl = off_itl["median_abs_pct"] if off_itl["points"] else None
    n = len(LOADS) * len(SCHEMAS)
    return {"cells": len(rs), "cells_registered": n, "directions_scored": len(dirs),
            "directions_right": sum(r["direction_right"] for r in dirs), "median_abs_ratio_error_pct": med,
            "primary_met": len(rs) == n and all(r["direction_right"] for r in dirs) and med <= RATIO_BAR_PCT,
            "off_itl_median_abs_pct": itl, "secondary_met": off_itl["points"] == n and itl <= ITL_BAR_PCT}


def score(run: Path) -> None:
    shipped = json.loads((HERE / "predicted-shipped.json").read_text())
    calibrated = (run / "xg" / "host.json.gz").is_file()  # (no calibrate: the amendment's primary, the shipped profile)
    pred = predictions(str(run / "xg" / "host.json.gz")) if calibrated else shipped
    (run / "predicted.json").write_text(json.dumps(pred, indent=1) + "\n")
    on, off = measured(run, "on"), measured(run, "off")
    rs = rows(pred, shipped, on, off)
    res = {"rule": "README.md", "rows": rs, "itl_off": itl_score(pred["points"]["off"], off),
           "itl_on": itl_score(pred["points"]["on"], on),
           "noise": noise([{**r, "backend": r["schema"]} for r in rs]),  # (its z keyed by schema and load)
           "calibrate_time": calibrate_time(run) if calibrated else None}
    res["bars"] = bars(rs, res["itl_off"])
    res["primary_profile"] = pred["profile"]
    (run / "score.json").write_text(json.dumps(res, indent=1) + "\n")
    (run / "score.md").write_text(report(res))
    print(report(res))


def report(res: dict) -> str:
    pct = lambda v: "-" if v is None else f"{v:+.0f}%"  # noqa: E731
    lines = ["| clients | schema | ITL on ms | off ms | off/on measured (by repeat) | predicted | error | shipped | error "
             "| off ITL error | on ITL error | running on, off |", "|" + "---|" * 12]
    for r in res["rows"]:
        reps = ", ".join(f"{x:.2f}" for x in r["measured_ratio_by_repeat"])
        lines.append(f"| {r['load']} | {r['schema']} | {r['on_ms']:.1f} | {r['off_ms']:.1f} | {r['measured_ratio']:.2f} "
                     f"({reps}) | {r['predicted_ratio']:.2f} | {pct(r['error_pct'])} | {r['shipped_ratio']:.2f} | "
                     f"{pct(r['shipped_error_pct'])} | {pct(r['off_itl_error_pct'])} | {pct(r['on_itl_error_pct'])} | "
                     f"{r['on_running']:.0f}, {r['off_running']:.0f} |")
    b = res["bars"]
    f = lambda v: "-" if v is None else f"{v:.1f}%"  # noqa: E731
    lines += ["", f"primary profile: {res['primary_profile']}", f"primary: {b['cells']} of {b['cells_registered']} cells measured; median |off/on ratio error| "
              f"{f(b['median_abs_ratio_error_pct'])} (bar {RATIO_BAR_PCT:.0f}%); direction right at "
              f"{b['directions_right']} of the {b['directions_scored']} cells whose predicted change is at least "
              f"{DIRECTION_MIN_PCT:.0f}%; met: {b['primary_met']}",
              f"secondary: median |ITL error| of the async-off points {f(b['off_itl_median_abs_pct'])} (bar "
              f"{ITL_BAR_PCT:.0f}%); met: {b['secondary_met']}"]
    for arm in ("off", "on"):
        it = res[f"itl_{arm}"]
        if it["points"]:
            lines.append(f"async {arm}: median |ITL error| {it['median_abs_pct']:.1f}% over {it['points']} points; too "
                         f"fast in the model at {it['model_too_fast']}; inside the 80% interval {it['inside_interval']} "
                         f"(schema-on points only: the schema-off arm has none)")
    if res["rows"]:
        lines.append(f"shipped profile, nothing read: median |off/on ratio error| "
                     f"{statistics.median(abs(r['shipped_error_pct']) for r in res['rows']):.1f}%")
    n = res["noise"]
    if n:
        lines.append(f"repeat noise of the off/on log ratio: SD {n['repeat_sd_log_ratio']:.3f} (df {n['df']}); the "
                     f"model's z " + ", ".join(f"{c} {z:+.1f}" for c, z in n["z"].items()))
    t = res["calibrate_time"]
    if t:
        lines.append(f"calibrate: {t['wall_s']:.0f} s")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "shipped":
        (HERE / "predicted-shipped.json").write_text(json.dumps(predictions(None), indent=1) + "\n")
    elif len(sys.argv) == 3 and sys.argv[1] == "score":
        score(HERE / sys.argv[2])
    else:
        sys.exit(__doc__)
