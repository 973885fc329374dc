"""Post hoc (finding 81): finding 80 (4)'s trace redraws again, with calibrate's own step after the traces applied.

Finding 80 (4) redrew a run's traced outputs (flat's and nested's: 96 with replacement; deep's: 96 of its own without
replacement) and read how far the model's ratios moved, but kept each redraw's traces as they were, already scaled by
the factor calibrate had fitted on the traces it drew (validate/server_fits.string_value_scaled: each schema's traces
taken to the mean cost a token that every output the server wrote implies, through the traces' own fit of cost on
fills inside a string value; calibrate.fill.string_value_scales). A new calibrate's sample is scaled again by its own
fit, so the redraw alone overstates what one calibrate's sample does. Here each redraw is scored both ways on the
same draws: AS DRAWN (finding 80's method) and RESCALED (the run's factor undone, the redraw's own factor applied,
at the share of fills inside a string value that the run's factor implies: s = (f * mean - a) / b from the traces'
own fit, which needs no tokenizer). Runs 17-21, five draws a run, both backends; the model's nested/flat and
deep/flat ITL ratios at 32, 128 and 256 clients (the shape check's request) against the run's profile as made.

Run from the repository root with the repository's environment (about 15 minutes: 165 predictions):
  python validation/h200-vllm-0.25.1/shape/posthoc/trace_sample_rescaled.py > validation/h200-vllm-0.25.1/shape/posthoc/trace_sample_rescaled.txt
"""
import json
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
from maskcost.calibrate.fill import string_value_scales  # noqa: E402
from maskcost.profile import load_profile, save_profile  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
sys.path.insert(0, str(SHAPE))
from check import SWEEP_PROMPTS  # noqa: E402

RUNS, DRAWS, N = range(17, 22), 5, 96
SCHEMAS = ("flat", "nested", "deep")


def itl(profile, schema: str) -> dict:
    with tempfile.TemporaryDirectory() as t:
        save_profile(profile, Path(t) / "p.json.gz")
        out = Path(t) / "o.json"
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", str(Path(t) / "p.json.gz"),
                        "--schema-id", schema, "--backend", "xgrammar", "guidance", "--engine", "vllm",
                        "--engine-version", "0.25.1", "--max-num-seqs", "256", "--concurrency", "32", "128", "256",
                        "--prompt-tokens", str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens",
                        str(SWEEP_PROMPTS[schema][1]), "--json", str(out), "--quiet"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return {(p["backend"], p["concurrency"]): p["itl_ms_mean"] for p in json.loads(out.read_text())["points"]}


def ratios(profile) -> dict:
    got = {s: itl(profile, s) for s in SCHEMAS}
    return {(s, *k): got[s][k] / got["flat"][k] for s in ("nested", "deep") for k in got["flat"]}


def factors(profile) -> dict:
    """backend -> schema -> the factor calibrate scaled its traces by (from the profile's note)."""
    out = {}
    for note in profile.provenance.get("notes", []):
        m = re.match(r"(\w+): traces scaled to the mean cost", note)
        if m:
            out[m.group(1)] = {sid: float(f) for sid, f in re.findall(r"(\w+) x([0-9.]+)", note.rsplit("):", 1)[1])}
    return out


def scaled(traces, k: float):
    return [replace(t, fill_us=tuple(x * k for x in t.fill_us), accept_us=tuple(x * k for x in t.accept_us))
            for t in traces]


def share(raw) -> float:
    """The share of fills inside a string value that factor-free traces `raw` and their calibrated factor imply."""
    c, n, x = (np.array(col, dtype=float) for col in zip(*[(sum(t.fill_us) + sum(t.accept_us), len(t.fill_us),
                                                              sum(t.in_string)) for t in raw[0]]))
    (a, b), *_ = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)
    return float((raw[1] * c.sum() / n.sum() - a) / b)


def main() -> None:
    rng = random.Random(1)
    moved = {"AS DRAWN": {}, "RESCALED": {}}
    for r in RUNS:
        prof = load_profile(SHAPE / f"run{r}" / "xg" / "host.json.gz")
        base, fs = ratios(prof), factors(prof)
        for _ in range(DRAWS):
            variants = {"AS DRAWN": {}, "RESCALED": {}}
            for name, b in prof.backends.items():
                keep = [t for t in b.traces if t.schema_id not in SCHEMAS]
                drawn, rescaled = list(keep), list(keep)
                for s in SCHEMAS:
                    own = [t for t in b.traces if t.schema_id == s]
                    d = rng.sample(own, N) if s == "deep" and len(own) > N else [rng.choice(own) for _ in range(N)]
                    drawn += d
                    f = fs[name][s]
                    raw = scaled(d, 1 / f)  # the redraw before calibrate's factor
                    f_new = string_value_scales(raw, {s: share((scaled(own, 1 / f), f))}).get(s, 1.0)
                    rescaled += scaled(raw, f_new)
                variants["AS DRAWN"][name] = replace(b, traces=tuple(drawn))
                variants["RESCALED"][name] = replace(b, traces=tuple(rescaled))
            for v, bk in variants.items():
                got = ratios(replace(prof, backends=bk))
                for k in got:
                    moved[v].setdefault((r, *k), []).append(math.log(got[k] / base[k]))
        print(f"run{r} done", file=sys.stderr, flush=True)
    print(f"the SD of a redraw's log ratio about the run's as made ({DRAWS} draws a run of {N} outputs a schema; "
          "flat and nested with replacement, deep without), in %: AS DRAWN (finding 80 (4)) / RESCALED (calibrate's "
          "factor fitted again on the redraw)")
    for s in ("nested", "deep"):
        for r in RUNS:
            cells = sorted({k[2:] for k in moved["AS DRAWN"] if k[0] == r and k[1] == s})
            print(f"  {s}/flat run{r}: " + ", ".join(
                f"{b[:2]}{c} {100 * statistics.pstdev(moved['AS DRAWN'][(r, s, b, c)]):.1f}/"
                f"{100 * statistics.pstdev(moved['RESCALED'][(r, s, b, c)]):.1f}" for b, c in cells))
        for v in moved:
            by_b = {}
            for k, xs in moved[v].items():
                if k[1] == s:
                    by_b.setdefault(k[2], []).extend(xs)
            print(f"  {s}/flat {v:<8s} over runs {RUNS.start}-{RUNS.stop - 1}: " + ", ".join(
                f"{b} {100 * math.sqrt(statistics.fmean(x * x for x in xs)):.1f}% (RMS)" for b, xs in sorted(by_b.items())))


if __name__ == "__main__":
    main()
