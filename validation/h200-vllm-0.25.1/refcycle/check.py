"""Issue 38's exercise 4: a deeply nested $ref cycle's TTFT, request by request, with xgrammar's cache as vLLM
ships it (512 MB) and with VLLM_XGRAMMAR_CACHE_MB=0.
  python check.py predict [OUT]           -> predicted.json (committed before the run), or OUT (a post hoc one)
  python check.py score DIR [PREDICTED]   -> DIR/score.json, DIR/score.md, DIR/score.png from run.sh's ttft.jsonl
                                             (against PREDICTED: DIR/score-<its name>.*)
The sequences, the servers and the rule: README.md here."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = {"cache512": 512, "cache0": 0}
SEQUENCES = {"repeat": ("cycle_a",), "alternate": ("cycle_c", "cycle_d")}  # seq.py's, in turn
REQUESTS = 10


def predict(path: Path = HERE / "predicted.json") -> None:
    from maskcost.calibrate.local import add_local_schemas
    from maskcost.calibrate.schemas import load_schema_file
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.costs import Costs
    from maskcost.model.engine import Simulation
    from maskcost.profile import default_profile_path, load_profile
    prof = load_profile(default_profile_path())  # the embedded vLLM 0.25.1 one
    entries = [load_schema_file(HERE / "schemas" / f"{n}.json") for n in ("cycle_a", "cycle_c", "cycle_d")]
    prof, ids, _ = add_local_schemas(prof, entries, ["xgrammar"], None)
    costs = Costs(prof, "xgrammar")
    out = {"profile": prof.name, "compile_ms": {s: costs.compile[s].cold_ms for s in ids}, "servers": {}}
    for server, mb in SERVERS.items():
        cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256,
                           cpu_count=16, usable_cores=16, xgrammar_cache_mb=mb)
        out["servers"][server] = {"config_xgrammar_cache_mb": mb, "sequences": {}}
        for seq, schemas in SEQUENCES.items():
            wl = Workload(concurrency=1, requests=REQUESTS, prompt_tokens=32, prompt_cached_tokens=16, output_tokens=8,
                          schemas=schemas, schema_order="cycle")
            sim = Simulation(costs, cfg, wl).run()
            ttft = (sim.req.first_t - sim.req.arrival + prof.forward.ttft_fixed_ms).tolist()
            out["servers"][server]["sequences"][seq] = {"schemas": list(sim.req.schema), "ttft_ms": ttft}
    # a request compiles where its TTFT is over a cached request's (the least of all) by half its compile or more
    base = min(t for s in out["servers"].values() for v in s["sequences"].values() for t in v["ttft_ms"])
    out["cached_ttft_ms"] = base
    for s in out["servers"].values():
        for v in s["sequences"].values():
            v["compiles"] = [t - base > 0.5 * out["compile_ms"][x] for t, x in zip(v["ttft_ms"], v["schemas"])]
    path.write_text(json.dumps(out, indent=1) + "\n")
    for server, s in out["servers"].items():
        for seq, v in s["sequences"].items():
            print(server, seq, [round(t) for t in v["ttft_ms"]], "compiles:", "".join("C" if c else "." for c in v["compiles"]))


def score(run: Path, predicted: Path = HERE / "predicted.json") -> None:
    pred = json.loads(predicted.read_text())
    tag = "" if predicted == HERE / "predicted.json" else "-" + predicted.stem
    recs = [json.loads(line) for line in (run / "ttft.jsonl").read_text().splitlines()]
    rows, right, total = [], 0, 0
    for server, s in pred["servers"].items():
        # the server's TTFT without a compile: its reference requests (a tiny grammar, seq.py)
        ref = [r["ttft_ms"] for r in recs if r["server"] == server and r["sequence"] == "reference" and r["ttft_ms"]]
        base = statistics.median(ref) if ref else None
        got = [r for r in recs if r["server"] == server and r["sequence"] != "reference"]
        for r in got:
            p = s["sequences"][r["sequence"]]
            i = r["i"] - 1
            half = 0.5 * pred["compile_ms"][r["schema"]]
            measured = None if r["ttft_ms"] is None or base is None else r["ttft_ms"] - base > half
            ok = measured is not None and measured == p["compiles"][i]
            right, total = right + ok, total + 1
            rows.append({"server": server, "sequence": r["sequence"], "i": r["i"], "schema": r["schema"],
                         "predicted_ttft_ms": p["ttft_ms"][i], "measured_ttft_ms": r["ttft_ms"],
                         "predicted_compiles": p["compiles"][i], "measured_compiles": measured, "right": ok})
    first = [x for x in rows if x["predicted_compiles"] and x["measured_ttft_ms"]]
    errs = [100 * (x["predicted_ttft_ms"] / x["measured_ttft_ms"] - 1) for x in first]
    res = {"rule": "README.md", "requests": total, "pattern_right": right, "bar_met": total > 0 and right == total,
           "compiling_requests_ttft_error_pct_median": statistics.median(abs(e) for e in errs) if errs else None,
           "rows": rows}
    (run / f"score{tag}.json").write_text(json.dumps(res, indent=1) + "\n")
    lines = ["| server | sequence | TTFT measured (ms), request 1..10 | predicted | compiles measured | predicted |", "|---|---|---|---|---|---|"]
    for server in SERVERS:
        for seq in SEQUENCES:
            rs = [x for x in rows if x["server"] == server and x["sequence"] == seq]
            f = lambda v: "-" if v is None else f"{v:.0f}"
            lines.append(f"| {server} | {seq} | {' '.join(f(x['measured_ttft_ms']) for x in rs)} | "
                         f"{' '.join(f(x['predicted_ttft_ms']) for x in rs)} | "
                         f"{''.join('?' if x['measured_compiles'] is None else 'C' if x['measured_compiles'] else '.' for x in rs)} | "
                         f"{''.join('C' if x['predicted_compiles'] else '.' for x in rs)} |")
    lines.append(f"\nthe compile pattern right for {right} of {total} requests (bar: all); median |TTFT error| of the "
                 f"requests that compile: {res['compiling_requests_ttft_error_pct_median'] if errs else '-'}%")
    (run / f"score{tag}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    from maskcost.plotting import save, subplots
    fig, axes = subplots(1, 2, figsize=(10, 3.6))
    for ax, server in zip(axes, SERVERS):
        for k, seq in enumerate(SEQUENCES):
            rs = [x for x in rows if x["server"] == server and x["sequence"] == seq]
            ax.plot([x["i"] for x in rs], [x["measured_ttft_ms"] for x in rs], "o-", color=f"C{k}", label=f"{seq} measured")
            ax.plot([x["i"] for x in rs], [x["predicted_ttft_ms"] for x in rs], "x--", color=f"C{k}", label=f"{seq} predicted")
        ax.set_title(f"{server}: TTFT by request, concurrency 1", fontsize=9)
        ax.set_xlabel("request in the sequence")
        ax.set_ylabel("TTFT (ms)")
        ax.legend(fontsize=7)
    save(fig, run / f"score{tag}.png")


if __name__ == "__main__":
    a = sys.argv
    {"predict": lambda: predict(*(Path(x) for x in a[2:3])),
     "score": lambda: score(Path(a[2]), *(Path(x) for x in a[3:4]))}[a[1]]()
