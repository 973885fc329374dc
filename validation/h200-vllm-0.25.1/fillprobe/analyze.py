"""The fill probe's reading (README.md here: the rule, written before the run). From the repository root:
    python validation/h200-vllm-0.25.1/fillprobe/analyze.py RUN      (RUN: the unpacked results folder)
For each schema alone and each repeat, `maskcost report --probe` on that repeat's points with the machine's own
profile (RUN/xg/host.json.gz); from each row the engine's serial fill a step (grammar_bitmask) and the model's, the
speed at which they meet (fill_speed), the engine thread's other work a step, the step and the ITL; then the rule's
q = fill_speed(schema) / fill_speed(flat), per load and repeat. Writes RUN/reading.json and RUN/reading.md."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from maskcost.records import raw_records_path

SCHEMAS, LOADS = ("flat", "nested", "deep"), (32, 128)
STEP = "EngineCore.step_with_batch_queue"


def profile_of(run: Path) -> Path:
    """The machine's own profile, else (calibrate skipped: README) shape run 16's."""
    own = run / "xg" / "host.json.gz"
    return own if own.exists() else Path(__file__).parent.parent / "shape" / "run16" / "xg" / "host.json.gz"


def one_repeat(run: Path, schema: str, repeat: int, tmp: Path) -> list[dict]:
    """The report rows of one schema's points of one repeat (one row a load)."""
    src = run / "xg" / f"{schema}.jsonl"
    lines = [ln for ln in src.read_text().splitlines() if ln.strip() and json.loads(ln).get("repeat") == repeat]
    if not lines:
        return []
    part = tmp / f"{schema}-r{repeat}.jsonl"
    part.write_text("\n".join(lines) + "\n")
    raw = raw_records_path(src)
    os.symlink(raw.resolve(), part.with_name(part.name.removesuffix(".jsonl") + ".raw.jsonl" + raw.suffix * (raw.suffix == ".gz")))
    out = tmp / f"rep-{schema}-r{repeat}"
    subprocess.run([sys.executable, "-m", "maskcost.cli", "report", "--sweep", str(part), "--probe", str(run / "probe"),
                    "--profile", str(profile_of(run)), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads((out / "report.json").read_text())["rows"]


def reading(row: dict, schema: str, repeat: int) -> dict:
    st, b = row.get("inengine") or {}, row["predicted_breakdown"] or {}
    fill = st.get("grammar_bitmask serial", {})
    return {"schema": schema, "repeat": repeat, "concurrency": row["concurrency"],
            "running": row["metrics"]["running"]["measured"],
            "itl_ms": row["metrics"]["ITL ms"]["measured"], "itl_model_ms": row["metrics"]["ITL ms"]["predicted"],
            "fill_engine_ms": fill.get("mean_ms"), "fill_calls": fill.get("calls"),
            "fill_model_ms": b.get("serial_fill_step_ms"), "fill_speed": row.get("fill_speed"),
            "step_engine_ms": st.get(STEP, {}).get("mean_ms"), "step_model_ms": b.get("step_ms"),
            "cpu_speed": row["cpu_speed"]}


def ratio(a, a_less, b, b_less) -> float | None:
    """(a - a_less) / (b - b_less); None where a term is missing or the divisor is not positive."""
    if None in (a, a_less, b, b_less) or not b - b_less > 0:
        return None
    return (a - a_less) / (b - b_less)


def against_flat(by: dict, schema: str, c: int, key: str) -> dict:
    """`key` of the schema over flat's at load c, each repeat, and their median."""
    got = [by[schema, c, r][key] / by["flat", c, r][key] for r in (0, 1)
           if (schema, c, r) in by and ("flat", c, r) in by and by[schema, c, r][key] and by["flat", c, r][key]]
    return {"by_repeat": got, "median": statistics.median(got) if got else None}


def main(run: Path) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as t:
        for s in SCHEMAS:
            for r in (0, 1):
                rows += [reading(x, s, r) for x in one_repeat(run, s, r, Path(t)) if x["arm"] == "on"]
    for x in rows:
        x["rest_ratio"] = ratio(x["step_engine_ms"], x["fill_engine_ms"], x["step_model_ms"], x["fill_model_ms"])
        x["itl_over_step"] = ratio(x["itl_ms"], 0.0, x["step_engine_ms"], 0.0)
        x["itl_over_step_model"] = ratio(x["itl_model_ms"], 0.0, x["step_model_ms"], 0.0)
    by = {(x["schema"], x["concurrency"], x["repeat"]): x for x in rows}
    q = {f"{s}/flat c{c}": against_flat(by, s, c, "fill_speed") for s in SCHEMAS[1:] for c in LOADS}
    rest = {f"{s}/flat c{c}": against_flat(by, s, c, "rest_ratio") for s in SCHEMAS[1:] for c in LOADS}
    profile = str(profile_of(run))
    (run / "reading.json").write_text(json.dumps({"profile": profile, "points": rows, "q": q, "rest": rest},
                                                 indent=1) + "\n")
    md = [f"The model on {profile}.", "", "| schema | clients | repeat | running | ITL ms engine / model | fill ms a step engine / model | fill speed | "
          "step ms engine / model | rest r | ITL/step engine / model |", "|---|---|---|---|---|---|---|---|---|---|"]
    f = lambda v, d=2: "" if v is None else f"{v:.{d}f}"
    for x in rows:
        md.append(f"| {x['schema']} | {x['concurrency']} | {x['repeat']} | {f(x['running'], 0)} | {f(x['itl_ms'])} / "
                  f"{f(x['itl_model_ms'])} | {f(x['fill_engine_ms'])} / {f(x['fill_model_ms'])} | {f(x['fill_speed'], 3)} | "
                  f"{f(x['step_engine_ms'])} / {f(x['step_model_ms'])} | {f(x['rest_ratio'], 3)} | "
                  f"{f(x['itl_over_step'], 3)} / {f(x['itl_over_step_model'], 3)} |")
    md += ["", "q = fill speed of the schema over flat's, same load and repeat (the rule: README.md):", ""]
    md += [f"- {k}: {', '.join(f'{v:.3f}' for v in d['by_repeat'])} (median {f(d['median'], 3)})" for k, d in q.items()]
    md += ["", "rest r of the schema over flat's (r: the engine's step less its fill over the model's):", ""]
    md += [f"- {k}: {', '.join(f'{v:.3f}' for v in d['by_repeat'])} (median {f(d['median'], 3)})" for k, d in rest.items()]
    (run / "reading.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
