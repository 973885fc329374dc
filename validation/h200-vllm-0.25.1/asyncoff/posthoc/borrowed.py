"""After run 1 (post hoc, not registered): run 1's off/on ratios against the ones main models now for two profiles:
the shipped one (nothing read; as scored in ../run1/score.md, its figures unchanged) and shape run 21's (another H200
host, 2026-12-06: the newest `calibrate --base-url` profile of the record). Run 21's has no async-off points; predict
now borrows the shipped profile's work that async scheduling hides (cli.engine_args.with_async_off_costs), where
before (main at 6eeea91) it gave 1.00 at every no-schema cell. The same cells, request and scoring as ../check.py.
  python borrowed.py  -> borrowed.json, borrowed.md here"""
from __future__ import annotations

import importlib.util
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
# ../check.py imports the shape check's as `check`: load it under another name
_spec = importlib.util.spec_from_file_location("asyncoff_check", HERE.parent / "check.py")
_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_check)
LOADS, SCHEMAS, B, measured, predictions = _check.LOADS, _check.SCHEMAS, _check.B, _check.measured, _check.predictions

RUN21 = HERE.parents[1] / "shape" / "run21" / "xg" / "host.json.gz"
# run 21's no-schema ratios before the borrowing: this script run on main at 6eeea91's maskcost (its grammar cells as
# now), the nine cells' median |error| then
BEFORE = {"ratio": {32: 1.00, 128: 1.00, 256: 1.00}, "error_pct": {32: -28, 128: -36, 256: -19}, "median_pct": 11.4}
PROFILES = {"shipped": None, "run 21": str(RUN21)}


def errors(pred: dict, on: dict, off: dict) -> dict[tuple[str, int], tuple[float, float, float]]:
    """(schema, load) -> (measured ratio, predicted ratio, error %)."""
    out = {}
    for c in LOADS:
        for s in SCHEMAS:
            m = statistics.fmean(x["itl_ms"] for x in off[B, s, c]) / statistics.fmean(x["itl_ms"] for x in on[B, s, c])
            p = pred["ratios"][s][B][str(c)]
            out[s, c] = (m, p, 100 * (p / m - 1))
    return out


def summary(e: dict) -> str:
    none = [abs(v[2]) for (s, _), v in e.items() if s == "none"]
    return (f"median |off/on ratio error| {statistics.median(abs(v[2]) for v in e.values()):.1f}% over {len(e)} cells,"
            f" no schema {statistics.median(none):.1f}% over {len(none)}")


if __name__ == "__main__":
    on, off = measured(HERE.parent / "run1", "on"), measured(HERE.parent / "run1", "off")
    preds = {k: predictions(v) for k, v in PROFILES.items()}
    errs = {k: errors(p, on, off) for k, p in preds.items()}
    lines = ["| clients | schema | off/on measured | shipped | error | run 21's, borrowed | error |",
             "|---|---|---|---|---|---|---|"]
    for (s, c), (m, p, e) in errs["shipped"].items():
        _, q, f = errs["run 21"][s, c]
        lines.append(f"| {c} | {s} | {m:.2f} | {p:.2f} | {e:+.0f}% | {q:.2f} | {f:+.0f}% |")
    lines += [""] + [f"{k}: {summary(e)}" for k, e in errs.items()] + [
        "run 21 before the borrowing (main at 6eeea91): no schema " +
        ", ".join(f"{BEFORE['ratio'][c]:.2f} ({BEFORE['error_pct'][c]:+d}%) at {c}" for c in LOADS) +
        f"; median over the nine cells {BEFORE['median_pct']}%"]
    (HERE / "borrowed.json").write_text(json.dumps(
        {"profiles": {k: v and str(RUN21.relative_to(HERE.parents[2])) for k, v in PROFILES.items()},
         "predicted": preds, "run 21 before": BEFORE, "error_pct": {k: {f"{s} {c}": v[2] for (s, c), v in e.items()} for k, e in errs.items()}},
        indent=1) + "\n")
    (HERE / "borrowed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
