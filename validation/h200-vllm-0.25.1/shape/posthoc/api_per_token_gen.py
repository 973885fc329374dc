"""Finding 60 again with the engine's generated-token counter: shape runs 10-14, the API server's process CPU a token
at calibrate's schema-on speed points (the schemas mixed) and at the held-out 256-client points (each schema alone),
the tokens a second read as the engine's generation counter over the CPU's window (EngineSummary.gen_tokens_per_s,
what calibrate.api_cpu fits on), where finding 60's api_per_token.py read them as the running gauge over the ITL;
and calibrate's fit through zero (both servers' speed points) against the held-out points' CPU.
Run from the repository root: python validation/h200-vllm-0.25.1/shape/posthoc/api_per_token_gen.py"""
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FILES = (("xg/host.speed-sweep.jsonl", "xgrammar mixed"), ("xg/host.speed-sweep-guidance.jsonl", "llguidance mixed"),
         ("xg/flat.jsonl", "xgrammar flat"), ("xg/nested.jsonl", "xgrammar nested"),
         ("gd/flat.jsonl", "llguidance flat"), ("gd/nested.jsonl", "llguidance nested"))


def api_cpus(r: dict) -> float | None:
    for p in ((r.get("engine") or {}).get("server_cpu") or {}).get("by_process", []):
        if p.get("listens"):
            return p["cpus"]
    return None


def points(f: Path) -> list[dict]:
    got = []
    for line in f.read_text().splitlines():
        r = json.loads(line)
        e, cpus = r.get("engine") or {}, api_cpus(r)
        if cpus is not None and e.get("gen_tokens_per_s") and e.get("itl_ms") and r.get("arm") == "on":
            got.append({"c": r["concurrency"], "cpus": cpus, "gen": e["gen_tokens_per_s"],
                        "gauge": e["running_mean"] / e["itl_ms"] * 1000, "tokens": r["output_tokens_mean"]})
    return got


def main() -> None:
    for run in ("run10", "run11", "run12", "run13", "run14"):
        pts = {what: points(HERE / run / f) for f, what in FILES}
        cal = pts["xgrammar mixed"] + pts["llguidance mixed"]
        tok = sum(p["gen"] * p["cpus"] for p in cal) / sum(p["gen"] ** 2 for p in cal)
        print(f"{run}: calibrate's fit through zero {1e6 * tok:.0f} us a structured token")
        for what, ps in pts.items():
            at = [p for p in ps if p["c"] in ((144, 224) if "mixed" in what else (256,))]
            us = [1e6 * p["cpus"] / p["gen"] for p in at]
            over = [100 * (tok * p["gen"] / p["cpus"] - 1) for p in at]
            gauge = [p["gauge"] / p["gen"] for p in at]
            cpus = ", ".join(f"{p['cpus']:.2f}" for p in at)
            print(f"  {what:18s} at {'144, 224' if 'mixed' in what else '256'} clients: "
                  f"{', '.join(f'{u:.0f}' for u in us)} us a token (median {statistics.median(us):.0f}; "
                  f"{statistics.fmean(p['tokens'] for p in at):.1f} tokens a request, process "
                  f"{cpus} CPU); the fit prices its CPU "
                  f"{', '.join(f'{o:+.0f}%' for o in over)}; gauge/counter tokens {min(gauge):.2f}-{max(gauge):.2f}")


if __name__ == "__main__":
    main()
