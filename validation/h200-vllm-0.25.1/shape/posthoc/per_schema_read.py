"""Post hoc on runs 3-8 (docs/validation.md finding 37): the replay on the calibrating CPU prices one schema
against another at a cost the engine on that CPU does not follow. Would each schema's speed read from one point
of that schema alone on the server (a report of it, the README's way of reading the speed) carry the engine's
relative cost to the other loads?

For each run, server and schema: a report of that schema's first repeat at 128 clients only, its speed given to
predict for that schema at 32, 128 and 256 clients; against it, one speed read from both schemas' first repeats
at 128 clients (what a user's one mixed sweep reads). Scored on the second repeats (each schema with its sweep's
request; the run's own profile): the nested/flat ratio's |error| at each load, and each point's |ITL error|, the
read load (128) apart from the loads not read (32, 256).
  python validation/h200-vllm-0.25.1/shape/posthoc/per_schema_read.py [RUN ...]   (repository root; default
  runs 3-8) -> stdout (per_schema_read.txt)"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

READ_LOAD = 128
PAIR = check.SCHEMAS[:2]  # flat, nested


def first_at(path: Path, out: Path) -> bool:
    """The sweep's repeat-0 point at READ_LOAD, written to `out`; whether it exists."""
    lines = [ln for ln in path.read_text().splitlines()
             if json.loads(ln)["repeat"] == 0 and json.loads(ln)["concurrency"] == READ_LOAD]
    out.write_text("\n".join(lines) + "\n")
    return bool(lines)


def speed_report(prof: str, backend: str, sweeps: list[Path], t: Path, name: str) -> list[str]:
    """predict's flags for the speed a report of `sweeps` reads."""
    d = t / name
    subprocess.run([sys.executable, "-m", "maskcost.cli", "report", "--profile", prof, "--backend", backend,
                    "--sweep", *map(str, sweeps), "--out", str(d)], check=True, capture_output=True)
    return ["--cpu-speed-from-report", str(d / "report.json")]


def predicted(prof: str, backend: str, schema: str, more: list[str]) -> dict[int, float]:
    args = ["--schema-id", schema, "--prompt-tokens", str(check.SWEEP_PROMPTS[schema][0]),
            "--prompt-cached-tokens", str(check.SWEEP_PROMPTS[schema][1])]
    return {c: p["itl_ms"] for c, p in check.model(prof, args, more=more)[backend].items()}


def run(name: str) -> dict[str, list[float]]:
    """This run's |errors|: ratio and ITL (read load, others), per-schema read and joint read."""
    prof = str(HERE / name / "xg" / "host.json.gz")
    meas = check.measured(HERE / name)
    errs: dict[str, list[float]] = {}
    for srv, backend in check.SERVERS.items():
        with tempfile.TemporaryDirectory() as td:
            t = Path(td)
            firsts = {s: t / f"{s}.jsonl" for s in PAIR}
            if not all(first_at(HERE / name / srv / f"{s}.jsonl", firsts[s]) for s in PAIR):
                continue
            joint = speed_report(prof, backend, list(firsts.values()), t, "joint")
            pred = {(mode, s): predicted(prof, backend, s, speed_report(prof, backend, [firsts[s]], t, s)
                                         if mode == "own" else joint) for mode in ("own", "joint") for s in PAIR}
        second = {(s, c): [x["itl_ms"] for x in meas.get((backend, s, c), ()) if x["repeat"] == 1]
                  for s in PAIR for c in check.LOADS}
        for c in check.LOADS:
            if not all(second[s, c] for s in PAIR):
                continue
            m_ratio = second["nested", c][0] / second["flat", c][0]
            line = [f"{name} {backend:9} c{c:3}: measured nested/flat {m_ratio:.2f}"]
            for mode in ("own", "joint"):
                p_ratio = pred[mode, "nested"][c] / pred[mode, "flat"][c]
                errs.setdefault(f"{mode} ratio", []).append(abs(100 * (p_ratio / m_ratio - 1)))
                where = "read" if c == READ_LOAD else "other"
                for s in PAIR:
                    errs.setdefault(f"{mode} itl {where}", []).append(abs(100 * (pred[mode, s][c] / second[s, c][0] - 1)))
                line.append(f"{mode} {p_ratio:.2f} ({100 * (p_ratio / m_ratio - 1):+.0f}%)")
            print(", ".join(line))
    return errs


if __name__ == "__main__":
    every: dict[str, list[float]] = {}
    for r in sys.argv[1:] or ["run3", "run4", "run5", "run6", "run7", "run8"]:
        for k, v in run(r).items():
            every.setdefault(k, []).extend(v)
    for k, v in every.items():
        print(f"{k}: median |error| {statistics.median(v):.1f}% over {len(v)}"
              + (f"; within 10%: {sum(x <= 10 for x in v)}" if "ratio" in k else ""))
