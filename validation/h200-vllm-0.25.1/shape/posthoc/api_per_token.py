"""Shape runs 13 and 14: the API server's process CPU a token at each schema-on point (calibrate's speed points,
the schemas mixed, against the held-out points, each schema alone), and the per-request grammar validation vLLM
0.25.1's API process runs (`SamplingParams._validate_structured_outputs`: xgrammar `Grammar.from_json_schema`,
llguidance `grammar_from_json_schema` + `LLMatcher.validate_grammar`), timed on this host (docs/validation.md
finding 60). A token's CPU is the listening process's CPUs over the tokens a second the engine served (its running
gauge over its ITL). Run from the repository root: python validation/h200-vllm-0.25.1/shape/posthoc/api_per_token.py"""
import json
import platform
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def api_cpus(r: dict) -> float | None:
    for p in ((r.get("engine") or {}).get("server_cpu") or {}).get("by_process", []):
        if p.get("listens"):
            return p["cpus"]
    return None


def per_token(run: str) -> None:
    for f, what in (("xg/host.speed-sweep.jsonl", "calibrate, xgrammar, mixed"),
                    ("xg/host.speed-sweep-guidance.jsonl", "calibrate, llguidance, mixed"),
                    ("xg/flat.jsonl", "xgrammar, flat alone"), ("xg/nested.jsonl", "xgrammar, nested alone"),
                    ("gd/flat.jsonl", "llguidance, flat alone"), ("gd/nested.jsonl", "llguidance, nested alone")):
        by_c: dict[int, list[str]] = {}
        for line in (HERE / run / f).read_text().splitlines():
            r = json.loads(line)
            e, cpus = r.get("engine") or {}, api_cpus(r)
            if cpus is None or not e.get("itl_ms") or r.get("arm") != "on":
                continue
            us = cpus / (e["running_mean"] / e["itl_ms"] * 1000) * 1e6
            by_c.setdefault(r["concurrency"], []).append(f"{us:.0f} us ({cpus:.2f} CPU)")
        print(f"{run} {what:30s} " + "; ".join(f"c{c}: {', '.join(v)}" for c, v in sorted(by_c.items())))


def points(f: Path) -> list[tuple[int, float, float, float]]:
    """(clients, tokens a second, steps a second, the API process's CPUs) of each schema-on point of a sweep."""
    got = []
    for line in f.read_text().splitlines():
        r = json.loads(line)
        e, cpus = r.get("engine") or {}, api_cpus(r)
        if cpus is not None and e.get("itl_ms") and r.get("arm") == "on":
            got.append((r["concurrency"], e["running_mean"] / e["itl_ms"] * 1000, 1000 / e["itl_ms"], cpus))
    return got


def fit_check(run: str) -> None:
    """A cost a token through zero, and a cost a token with one a step, least squares on calibrate's schema-on
    speed points (both servers), against the process's CPU at the held-out 256-client points."""
    import numpy as np
    cal = points(HERE / run / "xg/host.speed-sweep.jsonl") + points(HERE / run / "xg/host.speed-sweep-guidance.jsonl")
    a, y = np.array([[t, s] for _, t, s, _ in cal]), np.array([c for *_, c in cal])
    (t_us, s_us), t0 = np.linalg.lstsq(a, y, rcond=None)[0] * 1e6, (a[:, 0] @ y) / (a[:, 0] @ a[:, 0]) * 1e6
    over = {"token": [], "step": []}
    for srv in ("xg", "gd"):
        for sch in ("flat", "nested"):
            for c, t, s, cpus in points(HERE / run / srv / f"{sch}.jsonl"):
                if c == 256:
                    over["token"].append(t0 * t / 1e6 / cpus - 1)
                    over["step"].append((t_us * t + s_us * s) / 1e6 / cpus - 1)
    print(f"{run}: a token {t0:.0f} us: the 256-client points priced {100 * min(over['token']):+.0f}% to "
          f"{100 * max(over['token']):+.0f}%; a token {t_us:.0f} us and a step {s_us:.0f} us: "
          f"{100 * min(over['step']):+.0f}% to {100 * max(over['step']):+.0f}%")


def validation_us() -> None:
    import llguidance
    import xgrammar as xgr
    for s in ("flat", "nested", "deep"):
        txt = json.dumps(json.loads((HERE / "schemas" / f"{s}.json").read_text()))

        def gd():
            g = llguidance.LLMatcher.grammar_from_json_schema(txt, defaults={"whitespace_flexible": False})
            assert not llguidance.LLMatcher.validate_grammar(g, None)

        def xg():
            xgr.Grammar.from_json_schema(json.loads(txt))
        for name, f in (("xgrammar", xg), ("llguidance", gd)):
            for _ in range(20):
                f()
            ts = []
            for _ in range(300):
                t = time.perf_counter()
                f()
                ts.append(time.perf_counter() - t)
            print(f"validation of {s:6s} by {name:10s}: median {1e6 * statistics.median(ts):.0f} us a request")


if __name__ == "__main__":
    for run in ("run13", "run14"):
        per_token(run)
    for run in ("run10", "run11", "run12", "run13", "run14"):
        fit_check(run)
    print(f"this host: {platform.processor() or platform.machine()}, "
          f"{open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}")
    validation_us()
