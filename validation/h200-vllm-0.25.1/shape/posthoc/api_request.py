"""Post hoc (finding 79): llguidance's 256-client points, where the API server's process is full, read again.

1. What the engines served there: each run's tokens a second by the engine's own counter (EngineSummary.gen_tokens_per_s)
   and the listening process's CPU, flat against nested (runs 5-20); beside it the running gauge over the ITL (finding 54
   read the decode rows a step over the ITL).
2. What the model does with the API server's price there: run 20's profile at its structured token's cost x0.9, x1.0,
   x1.1, llguidance's flat, nested and deep at 256 clients (ITL, running, the model's API server's busy share).
3. Three readings of the API server's costs, each scored as the shape check scores (check.py score on a copy of the run)
   on runs 13-20: a structured request's own cost worth X of its tokens (X 8, 16; the token's cost fitted again through
   0 on calibrate's schema-on points of both servers, tokens + X requests a second); the API server priced at the
   serial speed where the point runs on vLLM's fill pool (SERIAL-API); each step's pool fill at the pool speed and the
   rest at the serial speed, no whole-point regime (STEP). The last two need `api_request.patch` (environment switches
   only: with none set the model is main's).

Run from the root of a worktree of the commit that holds this script, with the patch applied, and the repository's
environment: git worktree add /tmp/ar COMMIT && cd /tmp/ar && git apply
validation/h200-vllm-0.25.1/shape/posthoc/api_request.patch && python validation/h200-vllm-0.25.1/shape/posthoc/api_request.py
(about 10 minutes: 40 scorings)."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
from maskcost.profile import load_profile, save_profile  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
sys.path.insert(0, str(SHAPE))
from check import SWEEP_PROMPTS  # noqa: E402


def listening_cpus(e: dict) -> float | None:
    procs = [p for p in (e.get("server_cpu") or {}).get("by_process") or [] if p.get("listens")]
    return procs[0].get("cpus") if procs else None


def served(run: Path, srv: str, schema: str, load: int) -> dict | None:
    f = run / srv / f"{schema}.jsonl"
    rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()] if f.is_file() else []
    sel = [r for r in rows if r["concurrency"] == load and r.get("arm", "on") == "on" and r.get("engine")]
    if not sel:
        return None
    cpus = [listening_cpus(r["engine"]) for r in sel]
    return {"tok_s": statistics.fmean(r["engine"]["gen_tokens_per_s"] for r in sel),
            "rows_itl": statistics.fmean(r["engine"]["running_mean"] / r["engine"]["itl_ms"] * 1e3 for r in sel),
            "L": statistics.fmean(r["output_tokens_mean"] for r in sel),
            "cpus": statistics.fmean(cpus) if None not in cpus else None}


def part1() -> None:
    print("1. llguidance at 256 clients: tokens a second by the engine's counter (in brackets: the running gauge over the ITL), "
          "the listening process's CPU; nested over flat")
    ratios, old = [], []
    for n in range(5, 21):
        run = SHAPE / f"run{n}"
        f, m = served(run, "gd", "flat", 256), served(run, "gd", "nested", 256)
        if not f or not m:
            continue
        ratios.append(m["tok_s"] / f["tok_s"])
        old.append(m["rows_itl"] / f["rows_itl"])
        cpu = (f"{f['cpus']:.2f} {m['cpus']:.2f}" if f["cpus"] and m["cpus"] else "(no process marked)")
        print(f"  run{n:<3d} flat {f['tok_s']:5.0f} ({f['rows_itl']:5.0f}) nested {m['tok_s']:5.0f} ({m['rows_itl']:5.0f}) "
              f"tokens/s; nested/flat {ratios[-1]:.2f} ({old[-1]:.2f}); API process CPUs {cpu}")
    print(f"  nested/flat by the counter: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-"
          f"{max(ratios):.2f}, over 1 on {sum(r > 1 for r in ratios)} of {len(ratios)}; by running/ITL: median "
          f"{statistics.median(old):.2f}, range {min(old):.2f}-{max(old):.2f}")


def predict_256(profile, schema: str) -> dict:
    with tempfile.TemporaryDirectory() as t:
        save_profile(profile, Path(t) / "p.json.gz")
        out = Path(t) / "o.json"
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", str(Path(t) / "p.json.gz"),
                        "--schema-id", schema, "--backend", "xgrammar", "guidance", "--engine", "vllm",
                        "--engine-version", "0.25.1", "--max-num-seqs", "256", "--concurrency", "256",
                        "--prompt-tokens", str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens",
                        str(SWEEP_PROMPTS[schema][1]), "--json", str(out)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return next(p for p in json.loads(out.read_text())["points"] if p["backend"] == "guidance")


def part2() -> None:
    print("\n2. run 20's profile, llguidance at 256 clients, the structured token's cost x0.9, x1.0, x1.1: ITL ms, "
          "running, the model's API server busy; nested/flat (measured: run 20's score)")
    prof = load_profile(SHAPE / "run20" / "xg" / "host.json.gz")
    fw = prof.forward
    for f in (0.9, 1.0, 1.1):
        p = replace(prof, forward=replace(fw, frontend_structured_token_us=fw.frontend_structured_token_us * f))
        got = {s: predict_256(p, s) for s in ("flat", "nested", "deep")}
        print(f"  x{f}: " + ", ".join(f"{s} {g['itl_ms_mean']:.1f} ({g['running_mean']:.0f}, "
                                      f"{g['api_server_busy_fraction']:.2f})" for s, g in got.items())
              + f"; nested/flat {got['nested']['itl_ms_mean'] / got['flat']['itl_ms_mean']:.3f}, deep/flat "
                f"{got['deep']['itl_ms_mean'] / got['flat']['itl_ms_mean']:.3f}")


def calib_on(run: Path) -> np.ndarray:
    """(tokens/s, requests/s, the listening process's CPUs) at calibrate's schema-on points of both servers."""
    rows = []
    for name in ("host.speed-sweep.jsonl", "host.speed-sweep-guidance.jsonl"):
        for r in (json.loads(x) for x in (run / "xg" / name).read_text().splitlines() if x.strip()):
            e, c = r["engine"], listening_cpus(r["engine"])
            tok = e.get("gen_tokens_per_s") or r.get("out_tok_per_s")
            if r["arm"] == "on" and r["concurrency"] >= 8 and c and tok:
                rows.append((tok, tok / r["output_tokens_mean"], c))
    return np.array(rows)


def scored(run: Path, profile, env: dict) -> dict:
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("*.raw.jsonl.gz", "*.log.gz", "score.*",
                                                                 "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                       env={**os.environ, **env})
        return json.loads((copy / "score.json").read_text())


VARIANTS = {"AS MADE": (0, {}), "X 8": (8, {}), "X 16": (16, {}), "SERIAL-API": (0, {"MC_API_SERIAL": "1"}),
            "STEP": (0, {"MC_REGIME": "step"})}


def part3() -> None:
    print("\n3. runs 13-20 scored as the shape check scores: median |ITL error| (llguidance's), nested/flat and "
          "deep/flat within 10%, inside the interval; llguidance's nested/flat and deep/flat errors at 256 clients")
    tot = {v: [] for v in VARIANTS}
    for n in range(13, 21):
        run = SHAPE / f"run{n}"
        prof = load_profile(run / "xg" / "host.json.gz")
        fw, pts = prof.forward, calib_on(run)
        for name, (x, env) in VARIANTS.items():
            p = prof
            if x:
                z = pts[:, 0] + x * pts[:, 1]
                a = float(z @ pts[:, 2] / (z @ z)) * 1e6
                p = replace(prof, forward=replace(fw, frontend_structured_token_us=a, frontend_structured_ms=a * x / 1e3))
            d = scored(run, p, env)
            rows = {(r["backend"], r["load"], r["schema"]): r["error_pct"] for r in d["rows"]
                    if r.get("error_pct") is not None}
            ok = lambda k: sum(abs(v) <= 10 for (_, _, s), v in rows.items() if s == k)  # noqa: E731
            it = d["itl"]
            v = (it["median_abs_pct"], it["median_abs_pct_by_backend"]["guidance"], ok("nested"), ok("deep"),
                 it["inside_interval"], it["points"])
            tot[name].append(v)
            gd = lambda s: f"{rows[('guidance', 256, s)]:+4.0f}" if ('guidance', 256, s) in rows else "   -"  # noqa: E731
            print(f"  run{n:<3d} {name:<11s} ITL {v[0]:5.1f}% ({v[1]:5.1f}%) | nested/flat {v[2]} deep/flat {v[3]} | "
                  f"interval {v[4]}/{v[5]} | llguidance 256 nested {gd('nested')} deep {gd('deep')}", flush=True)
    print("  over runs 13-20:")
    for name, vs in tot.items():
        print(f"  {name:<11s} median of the runs' median |ITL error| {statistics.median(v[0] for v in vs):.1f}% "
              f"(llguidance's {statistics.median(v[1] for v in vs):.1f}%); nested/flat {sum(v[2] for v in vs)}, "
              f"deep/flat {sum(v[3] for v in vs)}; inside the interval {sum(v[4] for v in vs)} of "
              f"{sum(v[5] for v in vs)}")


if __name__ == "__main__":
    part1()
    part2()
    part3()
