"""Finding 63: what the nested/flat bar asks of an exact model, at the record's own repeat noise, and whether the
model's misses on runs 10-14 exceed that noise. No device, no model run: reads each run's score.json (the measured
ratios of each repeat) and the model's errors as scored with main's calibrate chain (runs 10-13: the refit line of
api_token_only.txt, finding 54 and 56's model; run 14: as registered, score.json).
  python validation/h200-vllm-0.25.1/shape/posthoc/ratio_floor.py > validation/h200-vllm-0.25.1/shape/posthoc/ratio_floor.txt
"""
from __future__ import annotations

import json
import math
import re
import statistics as st
from pathlib import Path

from scipy.stats import chi2, norm

HERE = Path(__file__).resolve().parent.parent
RUNS = [f"run{i}" for i in range(1, 15)]
RECENT = RUNS[9:]  # runs 10-14: main's calibrate chain scored on each
CELLS = [(b, c) for b in ("xg", "gu") for c in (32, 128, 256)]
BAR = math.log(1.10)


def repeats() -> dict[tuple[str, str, int], list[float]]:
    """(run, backend, clients) -> each repeat's measured nested/flat ratio."""
    rep = {}
    for r in RUNS:
        for row in json.loads((HERE / r / "score.json").read_text())["rows"]:
            if row["schema"] == "nested":
                rep[(r, row["backend"][:2], row["load"])] = [x for x in row["measured_ratio_by_repeat"] if x]
    return rep


def pooled_sd(rep, keep) -> tuple[float, int]:
    """The SD of one repeat's log ratio about its point's mean, pooled over the points `keep` admits."""
    ss, df = 0.0, 0
    for k, v in rep.items():
        if keep(k) and len(v) > 1:
            lg = [math.log(x) for x in v]
            m = st.mean(lg)
            ss += sum((x - m) ** 2 for x in lg)
            df += len(lg) - 1
    return math.sqrt(ss / df), df


def errors() -> dict[tuple[str, str, int], float]:
    """(run, backend, clients) -> the model's ratio error % with main's calibrate chain."""
    err = {}
    txt = (HERE / "posthoc" / "api_token_only.txt").read_text()
    for m in re.finditer(r"^(run\d+):.*?\n.*?\n.*?\n  loop CPU fit : .*?\((.*?)\)", txt, re.M | re.S):
        if m.group(1) in RECENT:
            for b, c, e in re.findall(r"(xg|gu)(\d+) ([+-]\d+)%", m.group(2)):
                err[(m.group(1), b, int(c))] = float(e)
    for row in json.loads((HERE / "run14" / "score.json").read_text())["rows"]:
        if row["schema"] == "nested":
            err[("run14", row["backend"][:2], row["load"])] = row["error_pct"]
    return err


def exact_model(sd: float, n: int) -> tuple[float, float]:
    """P(an exact model's ratio lies within 10% of the mean of n repeats), and of all six."""
    p = 2 * norm.cdf(BAR / (sd / math.sqrt(n))) - 1
    return p, p ** 6


def main() -> None:
    rep, err = repeats(), errors()
    print("1. Repeat noise: the SD of one repeat's log(nested/flat) about its point's mean, pooled")
    for name, runs in (("runs 1-14", RUNS), ("runs 1-9", RUNS[:9]), ("runs 10-14", RECENT)):
        sd, df = pooled_sd(rep, lambda k, runs=runs: k[0] in runs)
        ps = ", ".join(f"{n} repeats: one ratio {exact_model(sd, n)[0]:.2f}, all six {exact_model(sd, n)[1]:.2f}"
                       for n in (2, 3, 4))
        print(f"  {name}: {sd:.3f} (df {df}); an exact model within 10%: {ps}")
    sd_all, _ = pooled_sd(rep, lambda k: True)
    floor = math.prod(exact_model(sd_all, len(rep[(r, "xg", 32)]))[1] for r in RUNS)
    print(f"  an exact model meeting the bar on all 14 servers at runs 1-14's SD: {floor:.1e}")
    sd, _ = pooled_sd(rep, lambda k: k[0] in RECENT)
    p5 = math.prod(exact_model(sd, len(rep[(r, "xg", 32)]))[1] for r in RECENT)
    print(f"  on all five of runs 10-14 at their SD: {p5:.2f}")
    print("\n2. The model's ratio errors (main's calibrate chain) against that noise, runs 10-14:"
          " z = log(1 + error) / (SD / sqrt(repeats))")
    zs = []
    for r in RECENT:
        cells = []
        for b, c in CELLS:
            z = math.log(1 + err[(r, b, c)] / 100) / (sd / math.sqrt(len(rep[(r, b, c)])))
            zs.append(z)
            cells.append(f"{b}{c} {err[(r, b, c)]:+.0f}% (z {z:+.1f})")
        print(f"  {r} ({len(rep[(r, 'xg', 32)])} repeats): " + ", ".join(cells))
    q = sum(z * z for z in zs)
    print(f"  sum of z^2 {q:.1f} over {len(zs)} ratios: P(chi2 >= it) {1 - chi2.cdf(q, len(zs)):.2f};"
          f" |z| <= 1.645 (inside the measured ratio's 90% band) {sum(abs(z) <= 1.645 for z in zs)} of {len(zs)}")
    print("\n3. Each cell's own repeat SD (runs 10-14) and the model's z against it")
    for b, c in CELLS:
        s, df = pooled_sd(rep, lambda k, b=b, c=c: k[0] in RECENT and k[1:] == (b, c))
        zc = [math.log(1 + err[(r, b, c)] / 100) / (s / math.sqrt(len(rep[(r, b, c)]))) for r in RECENT]
        mean_err = st.mean(err[(r, b, c)] for r in RECENT)
        print(f"  {b}{c}: SD {s:.3f} (df {df}); mean error {mean_err:+.1f}%; z "
              + " ".join(f"{r}:{z:+.1f}" for r, z in zip(RECENT, zc)))


if __name__ == "__main__":
    main()
