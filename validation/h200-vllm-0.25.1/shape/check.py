"""Issue 36 item 2: what a schema's shape costs in the engine, relative to a flat one (README.md here).
  python check.py shipped   -> predicted-shipped.json (committed before the run: nothing read from the server)
  python check.py score RUN [PROFILE]
      -> RUN/predicted.json (the model on PROFILE; default RUN/xg/host.json.gz, the profile calibrate made on
         that server), RUN/score.json, RUN/score.md, RUN/score.png from the sweeps run.sh wrote"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from maskcost.records import busy_client_pct

HERE = Path(__file__).resolve().parent
SCHEMAS = ("flat", "nested", "deep")
LOADS = (32, 128, 256)
SERVERS = {"xg": "xgrammar", "gd": "guidance"}
BAR_PCT = 10.0  # every nested/flat ratio within this of measured
ITL_BAR_PCT = 10.0  # run 4: the median |ITL error| of every held-out point (issue 36 (a))
CORES6_LOADS = (128,)  # run 4: flat and nested with the servers on 6 cores (xg6/, gd6/)
# run 5 on: each schema predicted with the request its sweeps send (run.sh's `sweep`: the schema's prompt, shared
# by every request, so prefix-cached but for its last partial block of 16; runs 1-4's records), where runs 1-4 used
# predict's default request (posthoc/workload.txt, its script at 1fcd12b: the rule's request, not the model, made
# most of the GPU gap)
SWEEP_PROMPTS = {"flat": (109, 96), "nested": (163, 160), "deep": (189, 176)}  # (prompt tokens, of them cached)
SWEEP_REQUEST_RUNS = ("run5", "run6", "run7", "run8", "run9", "run10", "run11", "run12", "run13",
                      "run14", "run15", "run16", "run17", "run18", "run19", "run20", "run21")  # (and the GPU bar)
# runs whose 6-core points are predicted with the OpenMP team the servers really kept: started on 16 cores, moved
# to 6 by taskset -a (run.sh), a team of 16 (EngineConfig.omp_threads; docs/validation.md finding 27)
TEAM16_RUNS = ("run7", "run8", "run9", "run10", "run11", "run12", "run13", "run14")
# post hoc: predict's flags beyond the check's own (posthoc/sampling.txt, its script at 1fcd12b: --precision), none
# when registered
PREDICT_ARGS = os.environ.get("CHECK_PREDICT_ARGS", "").split()
GPU_BAR = 0.04  # run 5: median |modelled - NVML| GPU busy over the held-out points (issue 38 item 2)


def model(profile: str | None, schema_arg: list[str], loads=LOADS, more=()) -> dict[str, dict[int, dict]]:
    """backend -> load -> the predicted point, the way a user runs predict (one schema a workload)."""
    with tempfile.TemporaryDirectory() as t:
        out = Path(t) / "p.json"
        cmd = [sys.executable, "-m", "maskcost.cli", "predict", *(["--profile", profile] if profile else []),
               "--engine", "vllm", "--engine-version", "0.25.1", "--backend", *SERVERS.values(),
               "--max-num-seqs", "256", *schema_arg, "--concurrency", *map(str, loads), *more, *PREDICT_ARGS,
               "--json", str(out)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        d = json.loads(out.read_text())
    got: dict[str, dict[int, dict]] = {}
    for p in d["points"]:
        got.setdefault(p["backend"], {})[p["concurrency"]] = {
            "itl_ms": p["itl_ms_mean"], "interval": p.get("interval"), "running": p["running_mean"],
            "output_tokens": p["output_tokens_mean"], "fill_ms": p["breakdown"]["fill_ms"],
            "step_ms": p["breakdown"]["step_ms"], "gpu_busy": p.get("gpu_busy_fraction"),
            "gpu_busy_basis": p.get("gpu_busy_basis")}
    return got


def predictions(profile: str | None, cores6: bool = False, sweep_request: bool = False, team16: bool = False) -> dict:
    """schema -> backend -> load -> point, and each schema's ITL over flat's; `cores6`: also flat and nested
    at 128 clients with 6 usable cores (run 4's core-count points: the servers' affinity 0-5, cpu_count 16);
    `sweep_request`: each schema with its sweeps' prompt (SWEEP_PROMPTS), else predict's default request."""
    def arg(s: str) -> list[str]:
        a = ["--schema-id", s] if profile else ["--schema", str(HERE / "schemas" / f"{s}.json")]
        if sweep_request:
            a += ["--prompt-tokens", str(SWEEP_PROMPTS[s][0]), "--prompt-cached-tokens", str(SWEEP_PROMPTS[s][1])]
        return a
    pts = {s: model(profile, arg(s)) for s in SCHEMAS}
    ratios = {s: {b: {str(c): pts[s][b][c]["itl_ms"] / pts["flat"][b][c]["itl_ms"] for c in LOADS}
                  for b in SERVERS.values()} for s in SCHEMAS[1:]}
    return {"profile": profile or "shipped (maskcost/profiles/default.json.gz), schemas traced under the mask here",
            "request": "each schema's sweep prompt (SWEEP_PROMPTS)" if sweep_request else "predict's default",
            "points": {s: {b: {str(c): v for c, v in bp.items()} for b, bp in sp.items()} for s, sp in pts.items()},
            "ratios": ratios,
            **({"cores6": {s: {b: {str(c): v for c, v in bp.items()} for b, bp in
                               model(profile, arg(s), CORES6_LOADS, ["--cores", "6", *(["--omp-threads", "16"] if team16
                                                                                       else [])]).items()}
                    for s in SCHEMAS[:2]}}
               if cores6 else {})}


def measured(run: Path, suffix: str = "") -> dict[tuple[str, str, int], list[dict]]:
    """(backend, schema, load) -> each repeat's point (engine ITL, running, output tokens, server CPU, GPU
    busy); `suffix` "6": the points with the servers on 6 cores (run 4)."""
    got: dict[tuple[str, str, int], list[dict]] = {}
    for srv, backend in SERVERS.items():
        for s in SCHEMAS:
            f = run / f"{srv}{suffix}" / f"{s}.jsonl"
            for line in (f.read_text().splitlines() if f.is_file() else ()):
                r = json.loads(line)
                e = r.get("engine") or {}
                if e.get("itl_ms") and not r.get("errors"):
                    got.setdefault((backend, s, r["concurrency"]), []).append({
                        "repeat": r["repeat"], "itl_ms": e["itl_ms"], "running": e.get("running_mean"),
                        "step_ms": e.get("step_ms"),
                        "output_tokens": r.get("output_tokens_mean"),
                        "server_cpu": (e.get("server_cpu") or {}).get("cpus"), "client_pct": r.get("client_cpu_pct"),
                        "gpu_busy": (e.get("gpu_busy") or {}).get("fraction")})
    return got


def itl_score(points: dict, meas: dict) -> dict:
    """Each measured point's ITL (the mean of its repeats) against the model's (`points`: schema -> backend ->
    load): error = predicted / measured - 1 (issue 36 (a): median |error| <= 10%), whether its 80% interval
    held it, by backend too; and the GPU's busy fraction (NVML, issue 38) against the model's."""
    errs, inside, by, gpu = [], 0, {}, []
    for (b, s, c), pts in sorted(meas.items()):
        m = statistics.fmean(x["itl_ms"] for x in pts)
        p = points[s][b][str(c)]
        errs.append(p["itl_ms"] / m - 1)
        by.setdefault(b, []).append(errs[-1])
        iv = p.get("interval") or {}
        inside += bool(iv) and iv["lo_ratio"] * p["itl_ms"] <= m <= iv["hi_ratio"] * p["itl_ms"]
        busy = [x["gpu_busy"] for x in pts if x.get("gpu_busy") is not None]
        if busy and p.get("gpu_busy") is not None:
            gpu.append({"backend": b, "schema": s, "load": c, "measured": statistics.fmean(busy), "predicted": p["gpu_busy"],
                        "basis": p.get("gpu_busy_basis")})
    med = lambda es: 100 * statistics.median(abs(e) for e in es) if es else None  # noqa: E731
    return {"points": len(errs), "median_abs_pct": med(errs), "model_too_fast": sum(e < 0 for e in errs),
            "inside_interval": inside, "median_abs_pct_by_backend": {b: med(es) for b, es in by.items()},
            "errors_pct": [100 * e for e in errs], "gpu_busy": gpu, "step_split": step_split(points, meas)}


def step_split(points: dict, meas: dict) -> list[dict]:
    """Reported, no bar (registered from run 18; an older run scored again gets it too; finding 72): where each
    point's ITL miss lies, the engine's step (the model's mean step over the engine's) or beyond it (the model's ITL
    over its step against the engine's), over the repeats whose engine reported both."""
    out = []
    for (b, s, c), pts in sorted(meas.items()):
        p, both = points[s][b][str(c)], [x for x in pts if x.get("step_ms")]
        if both and p.get("step_ms"):
            m_step, m_itl = (statistics.fmean(x[k] for x in both) for k in ("step_ms", "itl_ms"))
            out.append({"backend": b, "schema": s, "load": c, "step_error_pct": 100 * (p["step_ms"] / m_step - 1),
                        "itl_over_step_engine": m_itl / m_step, "itl_over_step_model": p["itl_ms"] / p["step_ms"]})
    return out


def respeed(run: Path) -> list[dict]:
    """calibrate's schema-on speed points (xg/host.speed-sweep.jsonl) against the same loads run again at
    once after it (xg/respeed.jsonl, run 3): is the speed calibrate read a passing one?"""
    def itl(f: Path) -> dict[int, float]:
        return {r["concurrency"]: r["engine"]["itl_ms"] for r in map(json.loads, f.read_text().splitlines())
                if (r.get("engine") or {}).get("itl_ms")} if f.is_file() else {}
    a, b = itl(run / "xg" / "host.speed-sweep.jsonl"), itl(run / "xg" / "respeed.jsonl")
    return [{"load": c, "calibrate_ms": a[c], "again_ms": b[c], "change_pct": 100 * (b[c] / a[c] - 1)}
            for c in sorted(set(a) & set(b))]


def calibrate_time(run: Path) -> dict | None:
    """calibrate's wall time and each phase's seconds beside its own estimate (a profile that keeps them: run 8
    on), reported without a bar (goal 210 s)."""
    import gzip
    prov = json.load(gzip.open(run / "xg" / "host.json.gz"))["provenance"]
    return {k: prov.get(k) for k in ("wall_s", "phases_s", "phases_estimate_s", "resumed")} if "phases_s" in prov \
        else None


def noise(primary: list[dict]) -> dict | None:
    """Reported from run 15 on (no bar; computed for any run scored anew): the run's own repeat noise in the
    nested/flat ratio, and from run 16 the deep/flat's apart (the SD of one repeat's log ratio about its point's
    mean, pooled over the six), what an exact model would reach against it (the chance one ratio, and all six, land within the bar) and the model's
    errors in its units (z = log(1 + error) / (SD / sqrt(repeats)); the sum of z^2 against chi2 with 6 degrees
    of freedom: posthoc/ratio_floor.txt)."""
    from scipy.stats import chi2, norm
    ss, df, rows = 0.0, 0, [r for r in primary if r["error_pct"] is not None and len(r["measured_ratio_by_repeat"]) > 1]
    for r in rows:
        lg = [math.log(x) for x in r["measured_ratio_by_repeat"]]
        ss += sum((x - statistics.fmean(lg)) ** 2 for x in lg)
        df += len(lg) - 1
    if not df or not ss:
        return None
    sd = math.sqrt(ss / df)
    z = {f"{r['backend'][:2]}{r['load']}": math.log(1 + r["error_pct"] / 100)
         / (sd / math.sqrt(len(r["measured_ratio_by_repeat"]))) for r in rows}
    p_one = [2 * float(norm.cdf(math.log(1 + BAR_PCT / 100) / (sd / math.sqrt(len(r["measured_ratio_by_repeat"]))))) - 1
             for r in rows]
    q = sum(v * v for v in z.values())
    return {"repeat_sd_log_ratio": sd, "df": df, "exact_model_p_one": statistics.fmean(p_one),
            "exact_model_p_all": math.prod(p_one), "z": z, "sum_z2": q, "p_chi2": float(1 - chi2.cdf(q, len(z)))}


def score(run: Path, profile: Path | None = None) -> None:
    meas6 = measured(run, "6")
    pred = predictions(str(profile or run / "xg" / "host.json.gz"), cores6=bool(meas6),
                       sweep_request=run.name in SWEEP_REQUEST_RUNS, team16=run.name in TEAM16_RUNS)
    (run / "predicted.json").write_text(json.dumps(pred, indent=1) + "\n")
    shipped = json.loads((HERE / "predicted-shipped.json").read_text())
    meas = measured(run)
    mean = lambda b, s, c: statistics.fmean(x["itl_ms"] for x in meas[(b, s, c)]) if (b, s, c) in meas else None
    rows = []
    for b in SERVERS.values():
        for c in LOADS:
            for s in SCHEMAS[1:]:
                m, f = mean(b, s, c), mean(b, "flat", c)
                mr = None if m is None or f is None else m / f
                reps = {x["repeat"]: x["itl_ms"] for x in meas.get((b, s, c), ())}
                freps = {x["repeat"]: x["itl_ms"] for x in meas.get((b, "flat", c), ())}
                pr, sr = pred["ratios"][s][b][str(c)], shipped["ratios"][s][b][str(c)]
                rows.append({"backend": b, "load": c, "schema": s, "measured_ms": m, "flat_measured_ms": f,
                             "measured_ratio": mr,
                             "measured_ratio_by_repeat": [reps[k] / freps[k] for k in sorted(reps) if k in freps],
                             "predicted_ratio": pr, "error_pct": None if mr is None else 100 * (pr / mr - 1),
                             "shipped_ratio": sr, "shipped_error_pct": None if mr is None else 100 * (sr / mr - 1),
                             "predicted_ms": pred["points"][s][b][str(c)]["itl_ms"],
                             "itl_error_pct": None if m is None else 100 * (pred["points"][s][b][str(c)]["itl_ms"] / m - 1),
                             "flat_itl_error_pct": None if f is None else 100 * (pred["points"]["flat"][b][str(c)]["itl_ms"] / f - 1),
                             "measured_points": meas.get((b, s, c), []), "flat_points": meas.get((b, "flat", c), [])})
    primary = [r for r in rows if r["schema"] == "nested"]
    scored = [r for r in primary if r["error_pct"] is not None]
    res = {"rule": "README.md", "rows": rows, "nested_scored": len(scored), "nested_registered": len(primary),
           "bar_pct": BAR_PCT,
           "bar_met": len(scored) == len(primary) and all(abs(r["error_pct"]) <= BAR_PCT for r in scored),
           "nested_within_bar": sum(abs(r["error_pct"]) <= BAR_PCT for r in scored),
           "median_abs_ratio_error_pct": {s: statistics.median(abs(r["error_pct"]) for r in rows
                                                               if r["schema"] == s and r["error_pct"] is not None)
                                          for s in SCHEMAS[1:] if any(r["schema"] == s and r["error_pct"] is not None
                                                                      for r in rows)}}
    res["itl"] = itl_score(pred["points"], meas)
    res["noise"] = noise(primary)
    deep = [r for r in rows if r["schema"] == "deep" and r["error_pct"] is not None]
    if deep:  # run 16 (and run 1): deep alone measured; its ratio held to the same bar, apart from the primary
        res["deep_scored"], res["deep_within_bar"] = len(deep), sum(abs(r["error_pct"]) <= BAR_PCT for r in deep)
        res["deep_registered"] = sum(r["schema"] == "deep" for r in rows)
        res["deep_bar_met"] = res["deep_scored"] == res["deep_registered"] and res["deep_within_bar"] == len(deep)
        res["noise_deep"] = noise(deep)
    if meas6:  # run 4: the core-count points, and the issue's bar (a) over every held-out point
        res["itl_cores6"] = itl_score(pred["cores6"], meas6)
        errs = res["itl"]["errors_pct"] + res["itl_cores6"]["errors_pct"]
        res["itl_all"] = {"points": len(errs), "median_abs_pct": statistics.median(abs(e) for e in errs),
                          "bar_pct": ITL_BAR_PCT, "bar_met": statistics.median(abs(e) for e in errs) <= ITL_BAR_PCT}
    gb = res["itl"]["gpu_busy"] + res.get("itl_cores6", {}).get("gpu_busy", [])
    if gb and run.name in SWEEP_REQUEST_RUNS:  # run 5: the GPU busy bar, on the model's split where the profile has it
        d = statistics.median(abs(g["measured"] - g["predicted"]) for g in gb)
        res["gpu_all"] = {"points": len(gb), "median_abs_difference": d, "bar": GPU_BAR, "bar_met": d <= GPU_BAR,
                          "median_ratio": statistics.median(g["predicted"] / g["measured"] for g in gb),
                          "basis": sorted({g.get("basis") or "-" for g in gb})}
    res["respeed"] = respeed(run)
    res["calibrate_time"] = calibrate_time(run)
    # run 12 on, reported: the points whose sweep client was the limit (a process over 60% busy: records.client_busy)
    res["client_busy"] = [{"backend": b, "schema": s, "load": c, "client_pct": [x["client_pct"] for x in pts]}
                          for (b, s, c), pts in sorted({**meas, **{(b, s, f"{c} (6 cores)"): v for (b, s, c), v in
                                                                     meas6.items()}}.items(), key=str)
                          if any(busy_client_pct(x["client_pct"]) for x in pts)]
    (run / "score.json").write_text(json.dumps(res, indent=1) + "\n")
    f = lambda v, fmt="{:.2f}": "-" if v is None else fmt.format(v)
    lines = ["| backend | clients | schema | ITL measured ms (flat) | ratio measured (by repeat) | ratio predicted | "
             "error | shipped ratio | error | ITL error (flat) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['backend']} | {r['load']} | {r['schema']} | {f(r['measured_ms'], '{:.1f}')} "
                     f"({f(r['flat_measured_ms'], '{:.1f}')}) | {f(r['measured_ratio'])} "
                     f"({', '.join(f(x) for x in r['measured_ratio_by_repeat'])}) | {f(r['predicted_ratio'])} | "
                     f"{f(r['error_pct'], '{:+.0f}%')} | {f(r['shipped_ratio'])} | {f(r['shipped_error_pct'], '{:+.0f}%')} | "
                     f"{f(r['itl_error_pct'], '{:+.0f}%')} ({f(r['flat_itl_error_pct'], '{:+.0f}%')}) |")
    lines.append(f"\nnested/flat within {BAR_PCT:.0f}%: {res['nested_within_bar']} of {len(primary)} registered "
                 f"({len(scored)} measured); bar met: {res['bar_met']}; median |ratio error| "
                 + ", ".join(f"{s} {v:.1f}%" for s, v in res["median_abs_ratio_error_pct"].items()))
    if deep:
        lines.append(f"deep/flat within {BAR_PCT:.0f}%: {res['deep_within_bar']} of {res['deep_registered']} registered "
                     f"({res['deep_scored']} measured); bar met: {res['deep_bar_met']}")
    for what, n in (("", res["noise"]), ("deep/flat: ", res.get("noise_deep"))):
        if not n:
            continue
        k = len(n["z"])
        lines.append(f"{what}this run's repeat noise: SD {n['repeat_sd_log_ratio']:.3f} of a repeat's log ratio "
                     f"(df {n['df']}); an exact model within {BAR_PCT:.0f}% at one ratio {n['exact_model_p_one']:.2f}, "
                     f"all {k} {n['exact_model_p_all']:.2f}; the model's z "
                     + ", ".join(f"{a} {v:+.1f}" for a, v in n["z"].items())
                     + f"; sum z^2 {n['sum_z2']:.1f}, P(chi2 {k} >= it) {n['p_chi2']:.2f}")
    it = res["itl"]
    lines.append(f"each point's ITL (every schema measured, both backends): median |error| {f(it['median_abs_pct'], '{:.1f}')}% "
                 f"over {it['points']} (too fast in the model at {it['model_too_fast']}); inside its 80% interval "
                 f"{it['inside_interval']} of {it['points']}")
    by = it["median_abs_pct_by_backend"]
    lines.append("by backend: " + ", ".join(f"{b} {v:.1f}%" for b, v in by.items() if v is not None))
    lines.append("the step split (finding 72; step error, ITL/step engine -> model): " + (", ".join(
        f"{x['backend'][:2]} {x['schema']} {x['load']}: {x['step_error_pct']:+.0f}%, {x['itl_over_step_engine']:.2f} -> "
        f"{x['itl_over_step_model']:.2f}" for x in it["step_split"]) or "none (no step in the engine's or the model's points)"))
    if "itl_cores6" in res:
        c6, al = res["itl_cores6"], res["itl_all"]
        lines.append(f"6 cores, 128 clients: median |ITL error| {f(c6['median_abs_pct'], '{:.1f}')}% over {c6['points']} ("
                     + ", ".join(f"{e:+.0f}%" for e in c6["errors_pct"]) + f"); every held-out point: median "
                     f"{al['median_abs_pct']:.1f}% over {al['points']}, bar (<= {ITL_BAR_PCT:.0f}%) met: {al['bar_met']}")
    gb = it["gpu_busy"] + [{**g, "load": f"{g['load']} (6 cores)"} for g in res.get("itl_cores6", {}).get("gpu_busy", [])]
    if gb:
        lines.append(f"GPU busy (NVML) against the model's, {len(gb)} points: median |difference| "
                     f"{statistics.median(abs(g['measured'] - g['predicted']) for g in gb):.2f}; " + ", ".join(
                         f"{g['backend'][:2]} {g['schema']} {g['load']}: {g['measured']:.2f}/{g['predicted']:.2f}" for g in gb))
    if "gpu_all" in res:
        g = res["gpu_all"]
        lines.append(f"GPU busy bar (median |difference| <= {GPU_BAR}): {g['median_abs_difference']:.3f} over {g['points']} "
                     f"points, met: {g['bar_met']}; median model / NVML {g['median_ratio']:.2f}; the model's basis: "
                     + ", ".join(g["basis"]))
    if res["respeed"]:
        lines.append("calibrate's speed points run again at once (ITL ms, calibrate's -> again): " + ", ".join(
            f"c{r['load']} {r['calibrate_ms']:.1f} -> {r['again_ms']:.1f} ({r['change_pct']:+.0f}%)" for r in res["respeed"]))
    lines.append("points whose client was busy (a process over 60%): " + (", ".join(
        f"{x['backend'][:2]} {x['schema']} {x['load']} ({'/'.join(f'{p:.0f}%' for p in x['client_pct'] if p)})"
        for x in res["client_busy"]) or "none"))
    if res["calibrate_time"]:
        t = res["calibrate_time"]
        lines.append(f"calibrate: {t['wall_s']:.0f} s (goal 210 s; its estimate {sum(t['phases_estimate_s'].values()):.0f} s"
                     + (", resumed: its last run's phases" if t["resumed"] else "") + "): " + ", ".join(
                         f"{k} {v:.0f} s ({t['phases_estimate_s'].get(k, 0):.0f})" for k, v in t["phases_s"].items()))
    (run / "score.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    from maskcost.plotting import save, subplots
    fig, ax = subplots(1, 1, figsize=(6.5, 4.2))
    for r in rows:
        if r["measured_ratio"] is None:
            continue
        mk = "o" if r["schema"] == "nested" else "s"
        ax.scatter(r["measured_ratio"], r["predicted_ratio"], marker=mk, color="C0" if r["backend"] == "xgrammar" else "C1")
        ax.annotate(f"{r['backend'][:2]} {r['schema']} {r['load']}", (r["measured_ratio"], r["predicted_ratio"]), fontsize=7)
    xs = [v for r in rows if r["measured_ratio"] for v in (r["measured_ratio"], r["predicted_ratio"])] or [1.0]
    lim = [min(0.5, *xs) * 0.95, max(1.5, *xs) * 1.05]
    ax.plot(lim, lim, "k--", lw=0.8)
    ax.fill_between(lim, [x / 1.1 for x in lim], [x * 1.1 for x in lim], color="0.9")
    ax.set_xlabel("ITL of the schema alone / flat alone, measured")
    ax.set_ylabel("the same, predicted (profile made on that server)")
    ax.set_title("schema shape in the engine: circles nested, squares deep; blue xgrammar, orange llguidance",
                 fontsize=8)
    save(fig, run / "score.png")


if __name__ == "__main__":
    if sys.argv[1] == "shipped":
        d = predictions(None)
        (HERE / "predicted-shipped.json").write_text(json.dumps(d, indent=1) + "\n")
        print(json.dumps(d["ratios"], indent=1))
    else:
        score(Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else None)
