"""Post hoc, all four runs: the shape check's rule (check.py) predicts each point with `maskcost predict`'s
default request (a 200-token prompt, none of it cached), where the sweeps sent a 109-token prompt shared by
every request (prefix-cached after the first). This scores the same points again with the model on the
workload each sweep really ran (`maskcost report`'s way: validate.report.compare on the measured points,
the profile at its measured speed, the pool's apart), from the same profiles, nothing else changed:
each point's ITL error, the nested/flat ratios, the GPU's busy share against NVML's (run 4).
  python posthoc/workload.py        (from validation/h200-vllm-0.25.1/shape)  -> posthoc/workload.md"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

from maskcost.model.config import EngineConfig  # noqa: E402
from maskcost.profile import load_profile  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402
from maskcost.validate.report import compare  # noqa: E402

RUNS = {"run1": "run1", "run2": "run1", "run3": "run3", "run4": "run4"}  # run -> whose profile (check.py's)


def model_points(run: str, made: str, profile=None) -> dict[tuple, dict]:
    """(backend, schema, load, cores) -> the model's ITL and GPU busy on that point's measured workload, and
    the engine's (the mean of the repeats); the model on `profile` where given, else on `made`'s profile."""
    p = profile or load_profile(HERE / made / "xg" / "host.json.gz")
    ms = p.measured_speed
    got = {}
    for sub, cores in (("", 16), ("6", 6)):
        for srv, backend in check.SERVERS.items():
            for schema in check.SCHEMAS:
                f = HERE / run / f"{srv}{sub}" / f"{schema}.jsonl"
                if not f.is_file():
                    continue
                cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend=backend, max_num_seqs=256,
                                   usable_cores=cores, cpu_count=p.host.os_cpu_count, cpu_speed=ms.cpu_speed,
                                   cpu_speed_pool=ms.pool_speed)
                for r in compare(p, cfg, [s for s in read_summaries(f) if s.arm == "on" and s.engine.itl_ms]):
                    m = r["metrics"]
                    got[(backend, schema, r["concurrency"], cores)] = {
                        "itl_ms": m["ITL ms"]["predicted"], "measured_ms": m["ITL ms"]["measured"],
                        "gpu": m["GPU busy"]["predicted"], "gpu_measured": m["GPU busy"]["measured"]}
    return got


def main() -> None:
    lines = ["| run | points | median abs ITL error, check.py's rule | on the measured workload | by backend (xgrammar, llguidance) | 6 cores | nested/flat within 10%, rule | measured workload |",
             "|---|---|---|---|---|---|---|---|"]
    gpu_lines = []
    for run, made in RUNS.items():
        pts = model_points(run, made)
        err = {k: 100 * (v["itl_ms"] / v["measured_ms"] - 1) for k, v in pts.items()}
        rule = check.json.loads((HERE / run / "score.json").read_text())
        if "itl_all" in rule or "itl" in rule:
            rule_err = (rule.get("itl_all") or rule["itl"])["median_abs_pct"]
        else:  # runs 1 and 2 scored before check.py kept it: from its rows (nested and flat, each once)
            es = {(r["backend"], r["load"], "nested"): r["itl_error_pct"] for r in rule["rows"] if r["schema"] == "nested"}
            es.update({(r["backend"], r["load"], "flat"): r["flat_itl_error_pct"] for r in rule["rows"]})
            rule_err = statistics.median(abs(e) for e in es.values() if e is not None)
        med = lambda ks: statistics.median(abs(err[k]) for k in ks) if ks else float("nan")  # noqa: E731
        by = [med([k for k in err if k[0] == b and k[1] != "deep" and k[3] == 16]) for b in ("xgrammar", "guidance")]
        six = [k for k in err if k[3] == 6]
        scored = [k for k in err if k[1] != "deep"]
        ratios = []
        for b in ("xgrammar", "guidance"):
            for c in check.LOADS:
                n, f = (b, "nested", c, 16), (b, "flat", c, 16)
                if n in pts and f in pts:
                    pr = pts[n]["itl_ms"] / pts[f]["itl_ms"]
                    mr = pts[n]["measured_ms"] / pts[f]["measured_ms"]
                    ratios.append(100 * (pr / mr - 1))
        lines.append(f"| {run} | {len(scored)} | {rule_err:.1f}% | {med(scored):.1f}% | {by[0]:.1f}%, {by[1]:.1f}% | "
                     f"{med(six):.1f}% |" if six else
                     f"| {run} | {len(scored)} | {rule_err:.1f}% | {med(scored):.1f}% | {by[0]:.1f}%, {by[1]:.1f}% | - |")
        lines[-1] += (f" {rule['nested_within_bar']} of 6 | {sum(abs(e) <= check.BAR_PCT for e in ratios)} of {len(ratios)} "
                      f"({', '.join(f'{e:+.0f}%' for e in ratios)}) |")
        g = [(k, v) for k, v in pts.items() if v["gpu_measured"] is not None and v["gpu"] is not None]
        if g:
            gpu_lines.append(f"{run}: GPU busy, the model on the measured workload against NVML, {len(g)} points: median "
                             f"|difference| {statistics.median(abs(v['gpu'] - v['gpu_measured']) for _, v in g):.3f}, "
                             f"median ratio {statistics.median(v['gpu'] / v['gpu_measured'] for _, v in g):.2f}; " + ", ".join(
                                 f"{k[0][:2]} {k[1]} {k[2]}{' (6 cores)' if k[3] == 6 else ''}: {v['gpu_measured']:.2f}/{v['gpu']:.2f}"
                                 for k, v in sorted(g)))
    text = "\n".join(lines + [""] + gpu_lines) + "\n"
    (HERE / "posthoc" / "workload.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
