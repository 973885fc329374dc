"""Speed goal of calibration (issue 3), printed as a ratio (goal time / measured time; > 1 is met):
100 corpus schemas (stratified by subset) calibrated for xgrammar AND llguidance on this machine
in under 5 minutes: fill traces from each schema's example, compile cold and warm, the pools,
the host benchmark; the engine side is copied from the embedded profile (no server needed).

Run: python benchmarks/bench_calibrate.py [CORPUS_DIR] [N]  (default ../shared/data/schemas/dev, 100;
the goal is for N = 100, a larger N gives a fuller per-subset table)
It writes the profile and a per-subset table (compile and fill p50/p99, failures) to
benchmarks/out/, the table as Markdown next to the JSON.
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from maskcost.calibrate.host import cpu_model
from maskcost.profile import default_profile_path, load_profile

GOAL_S = 300.0


def subset_table(profile_path: Path, corpus_ids: dict[str, str]) -> list[dict]:
    p = load_profile(profile_path)
    rows = []
    for subset in sorted(set(corpus_ids.values())) + ["all"]:
        def ours(sid: str) -> bool:
            return sid in corpus_ids and (subset == "all" or corpus_ids[sid] == subset)
        row = {"subset": subset, "schemas": sum(1 for s in corpus_ids if ours(s))}
        for name, b in p.backends.items():
            comp = [c.cold_ms for c in b.compiles if ours(c.schema_id)]
            fill = [f for t in b.traces if ours(t.schema_id) for f in t.fill_us]
            row[name] = {"failed": sum(1 for sid, _ in b.failures if ours(sid)),
                         "compile_ms_p50": float(np.percentile(comp, 50)) if comp else None,
                         "compile_ms_p99": float(np.percentile(comp, 99)) if comp else None,
                         "fill_us_p50": float(np.percentile(fill, 50)) if fill else None,
                         "fill_us_p99": float(np.percentile(fill, 99)) if fill else None,
                         "fill_us_mean": statistics.mean(fill) if fill else None}
        rows.append(row)
    return rows


def markdown(rows: list[dict], header: str) -> str:
    f = lambda v, nd=1: "-" if v is None else f"{v:.{nd}f}"  # noqa: E731
    out = [header, "", "| subset | n | backend | failed | compile p50 ms | p99 | fill p50 us | p99 | mean |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for b in ("xgrammar", "guidance"):
            x = r[b]
            out.append(f"| {r['subset']} | {r['schemas']} | {b} | {x['failed']} | {f(x['compile_ms_p50'])} | "
                       f"{f(x['compile_ms_p99'])} | {f(x['fill_us_p50'])} | {f(x['fill_us_p99'])} | "
                       f"{f(x['fill_us_mean'])} |")
    return "\n".join(out) + "\n"


def main() -> None:
    corpus = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parents[2] / "shared/data/schemas/dev")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    prof = out / f"calibrate-{n}.json.gz"
    for f in (prof, prof.with_name(prof.name + ".partial.jsonl")):
        f.unlink(missing_ok=True)
    host = f"{cpu_model()}, nproc {len(os.sched_getaffinity(0))}, Python {platform.python_version()}"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "maskcost.cli", "calibrate", "--out", str(prof), "--tokenizer", "llama3",
                    "--corpus", corpus, "--sample", str(n), "--engine-from", str(default_profile_path())],
                   check=True)
    dt = time.perf_counter() - t
    print(f"host: {host}")
    goal = GOAL_S * n / 100
    print(f"{n} corpus schemas x 2 backends calibrated: {dt:.0f} s wall, ratio {goal / dt:.2f}x "
          f"(goal {GOAL_S:.0f} s per 100)")
    from maskcost.calibrate.schemas import corpus_files, read_corpus, stratified_sample
    ids = {e.schema_id: e.subset for e in stratified_sample(read_corpus(corpus_files(corpus)), n, 0)}
    rows = subset_table(prof, ids)
    (out / f"subsets-{n}.json").write_text(json.dumps({"host": host, "schemas": n, "wall_s": dt, "rows": rows},
                                                      indent=1))
    md = markdown(rows, f"Calibrated on {host}: xgrammar 0.2.7 (compile max_threads 8, cache off for cold), "
                        f"llguidance 1.7.6, Llama-3 vocabulary; fill from each schema's first example, "
                        f"median of 3 fresh matchers per position; {n} schemas, stratified, seed 0.")
    (out / f"subsets-{n}.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
