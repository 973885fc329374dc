"""Post hoc (run 16's registration): main's model, on each shape run's own profile, at calibrate's mixed speed points
(the three schemas together: in sample, where calibrate read the server's speed) and at the held-out points of flat
and nested alone (out of sample); each error predicted / measured - 1 of the engine's ITL. If the mix is read right
and the schemas alone are not, the schema of the mix not measured alone (deep) is mispriced the other way.
Run from validation/h200-vllm-0.25.1/shape: python3 posthoc/mix_vs_alone.py > posthoc/mix_vs_alone.txt
(the mix predicted with the three sweep prompts' mean, 154 tokens of which 144 cached: predict takes one prompt)."""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from check import SWEEP_PROMPTS  # noqa: E402

RUNS = [f"run{i}" for i in range(10, 16)]
SERVERS = (("xgrammar", "host.speed-sweep", "xg"), ("guidance", "host.speed-sweep-guidance", "gd"))


def measured(f: Path) -> dict[int, float]:
    got: dict[int, list[float]] = {}
    for line in f.read_text().splitlines():
        p = json.loads(line)
        if p["arm"] == "on" and (p.get("engine") or {}).get("itl_ms"):
            got.setdefault(p["concurrency"], []).append(p["engine"]["itl_ms"])
    return {c: statistics.fmean(v) for c, v in got.items()}


def predicted(profile: Path, backend: str, schemas: list[str], loads: list[int], prompt: tuple[int, int]) -> dict:
    with tempfile.TemporaryDirectory() as t:
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", str(profile), "--engine", "vllm",
                        "--engine-version", "0.25.1", "--backend", backend, "--max-num-seqs", "256", "--schema-id",
                        *schemas, "--prompt-tokens", str(prompt[0]), "--prompt-cached-tokens", str(prompt[1]),
                        "--concurrency", *map(str, loads), "--quiet", "--json", f"{t}/p.json"],
                       check=True, stdout=subprocess.DEVNULL)
        return {p["concurrency"]: p["itl_ms_mean"] for p in json.loads(Path(f"{t}/p.json").read_text())["points"]}


def main() -> None:
    print(__doc__.split("\n\n")[0].replace("\n", " "), "\n")
    mix_prompt = tuple(round(statistics.fmean(v[i] for v in SWEEP_PROMPTS.values())) for i in (0, 1))
    for run in RUNS:
        prof = Path(run) / "xg" / "host.json.gz"
        for backend, speed, srv in SERVERS:
            m = measured(Path(run) / "xg" / f"{speed}.jsonl")
            p = predicted(prof, backend, ["flat", "nested", "deep"], sorted(m), mix_prompt)
            mix = [100 * (p[c] / m[c] - 1) for c in sorted(m)]
            alone = []
            for s in ("flat", "nested"):
                ma = measured(Path(run) / srv / f"{s}.jsonl")
                pa = predicted(prof, backend, [s], sorted(ma), SWEEP_PROMPTS[s])
                alone += [100 * (pa[c] / ma[c] - 1) for c in sorted(ma)]
            print(f"{run} {backend:9} mixed at {', '.join(map(str, sorted(m)))}: "
                  + " ".join(f"{x:+5.1f}" for x in mix) + f" (median {statistics.median(mix):+5.1f}); alone, flat "
                  "then nested at 32, 128, 256: " + " ".join(f"{x:+5.1f}" for x in alone)
                  + f" (median {statistics.median(alone):+5.1f}); alone - mixed {statistics.median(alone) - statistics.median(mix):+5.1f}")


if __name__ == "__main__":
    main()
