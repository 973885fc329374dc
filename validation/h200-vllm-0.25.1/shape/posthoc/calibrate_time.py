"""Where calibrate --base-url's time goes, from the record (docs/validation.md finding 35): every calibration in
validation/ that kept its sweeps' raw records (each request's send time and its end), its phases against
LivePlan.estimate_s's for the same schemas and servers, and the fits behind estimate_s's terms
(plan.POINT_S, plan.ESTIMATE_FACTORS). A point's time is its first request's send to its last answer; the time
to the next point goes to the next point's phase; a pause over 15 s between two points is the host phase
(runs that traced between the outputs and the forward sweep); "rest" is the profile's wall_s less the span of
its points (what runs before the first point and after the last: in the runs that traced first, the host
phase too).
  python validation/h200-vllm-0.25.1/shape/posthoc/calibrate_time.py   (repository root) -> stdout (calibrate_time.txt)"""
import gzip
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

from maskcost.validate.plan import LivePlan


def points(d: Path) -> list[dict]:
    """Every point of a calibration's sweeps, in the order they ran."""
    out = []
    for f in sorted(f for f in d.glob("host.*.raw.jsonl.gz") if ".aborted." not in f.name):
        pts: dict = {}
        for line in gzip.open(f):
            r = json.loads(line)
            p = pts.setdefault(r["point"], {"t0": 1e20, "t1": 0.0, "n": 0, "tok": 0})
            p["t0"], p["n"], p["tok"] = min(p["t0"], r["t_send"]), p["n"] + 1, p["tok"] + (r.get("completion_tokens") or 0)
            p["t1"] = max(p["t1"], r["t_send"] + (r.get("e2e_ms") or 0) / 1e3)
        for key, p in pts.items():
            arm, c = re.match(r"(on|off)-c(\d+)-", key).groups()
            out.append({**p, "what": f.name.split(".")[1], "arm": arm, "c": int(c), "tok": p["tok"] / p["n"]})
    return sorted(out, key=lambda p: p["t0"])


def phase(what: str) -> str:
    for name in ("outputs", "speed", "prefill"):
        if what.startswith(name):
            return name
    return {"forward-sweep": "forward"}.get(what, what)


def measured(d: Path, pts: list[dict]) -> tuple[dict[str, float], int, tuple[str, ...]]:
    """The phases' seconds, the schemas and the servers' backends of one calibration (the --base-url server's
    xgrammar on every one in the record; host.speed-sweep-B.jsonl: a --backend-url server's, backend B)."""
    tot: dict[str, float] = defaultdict(float)
    for prev, p in zip([None] + pts, pts):
        gap = p["t0"] - prev["t1"] if prev else 0.0
        if gap > 15:
            tot["host"], gap = tot["host"] + gap, 0.0
        tot[phase(p["what"])] += p["t1"] - p["t0"] + gap
    prov = json.load(gzip.open(d / "host.json.gz"))["provenance"]
    tot["rest"] = prov["wall_s"] - (pts[-1]["t1"] - pts[0]["t0"])
    speed = json.loads((d / "host.speed-sweep.jsonl").read_text().splitlines()[0])
    servers = tuple(f.stem.removeprefix("host.speed-sweep").lstrip("-") or "xgrammar"
                    for f in sorted(d.glob("host.speed-sweep*.jsonl")) if ".raw." not in f.name)
    return dict(tot), len(speed["config"]["schemas"]), servers


def steps_s(p: dict, tokens: float) -> float:
    """A point's decode steps as estimate_s counts them."""
    return p["n"] * tokens / p["c"] * (6.0 + 0.06 * p["c"]) / 1e3


def fits(every: list[dict]) -> None:
    on = [p for p in every if p["arm"] == "on" and p["what"].startswith("speed")]
    print(f"schema-on speed points ({len(on)}): time / steps at 80 tokens {sum(p['t1'] - p['t0'] for p in on) / sum(steps_s(p, 80) for p in on):.2f}"
          f" (their outputs: median {statistics.median(p['tok'] for p in on):.0f} tokens)")
    for w, name in (("forward-sweep", "forward"), ("context", "context")):
        q = [p for p in every if p["what"] == w]
        print(f"{name} points ({len(q)}): time / steps {sum(p['t1'] - p['t0'] for p in q) / sum(steps_s(p, p['tok']) for p in q):.2f}")
    pre = [p["t1"] - p["t0"] for p in every if p["what"].startswith("prefill")]
    print(f"prefill points ({len(pre)}): median {statistics.median(pre):.2f} s (16 requests each)")


if __name__ == "__main__":
    root, every, gaps = Path("validation"), [], []
    for d in sorted({f.parent for f in root.glob("**/host.forward-sweep.raw.jsonl.gz")}):
        if not (d / "host.json.gz").exists() or not (d / "host.speed-sweep.jsonl").exists():
            continue
        pts = points(d)
        every += pts
        gaps += [b["t0"] - a["t1"] for a, b in zip(pts, pts[1:]) if b["t0"] - a["t1"] <= 15]
        got, schemas, servers = measured(d, pts)
        est = LivePlan().estimate_s(schemas, 2, servers)
        keys = ("forward", "prefill", "context", "speed", "outputs", "host", "rest")
        print(f"{d.relative_to(root)} ({schemas} schemas, servers {' '.join(servers)}): measured "
              + ", ".join(f"{k} {got.get(k, 0):.0f}" for k in keys) + f"; wall {sum(got.values()):.0f} s")
        print(" " * 4 + "estimate_s (today's plan) " + ", ".join(f"{k} {v:.0f}" for k, v in est.items())
              + f"; {sum(est.values()):.0f} s")
    print(f"\nfrom one point's last answer to the next's first request ({len(gaps)}): median {statistics.median(gaps):.2f} s")
    fits(every)
