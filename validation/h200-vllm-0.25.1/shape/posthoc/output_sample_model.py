"""Post hoc on runs 4-7 (docs/validation.md finding 30): the xgrammar nested/flat ratio the model predicts with
each run's own profile as calibrated (its traces of calibrate's 32 outputs a schema), and with each schema's
traces scaled by what the held-out sweeps' outputs cost a fill against calibrate's 32 on this CPU
(output_sample.txt: the mean over thousands of the engine's outputs, not 32), beside the engine's measured ITL
ratio. Only the ratio is read: the speed calibrate fitted on the original traces is kept.
  python validation/h200-vllm-0.25.1/shape/posthoc/output_sample_model.py   (repository root) -> stdout"""
import json
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from maskcost.profile import load_profile, save_profile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import check  # noqa: E402

LINE = re.compile(r"(run\d) (flat|nested)\s*: calibrate's 32 outputs\s+(\d+) us a fill; .* (\d+)$")


def factors() -> dict[str, dict[str, float]]:
    """run -> schema -> held-out us a fill / calibrate's, from output_sample.txt."""
    out: dict[str, dict[str, float]] = {}
    for m in map(LINE.match, (HERE / "output_sample.txt").read_text().splitlines()):
        if m:
            out.setdefault(m[1], {})[m[2]] = int(m[4]) / int(m[3])
    return out


def scaled(profile_path: Path, f: dict[str, float], out: Path) -> None:
    p = load_profile(profile_path)
    b = p.backends["xgrammar"]
    traces = tuple(replace(t, fill_us=type(t.fill_us)(x * f[t.schema_id] for x in t.fill_us)) if t.schema_id in f else t for t in b.traces)
    save_profile(replace(p, backends={**p.backends, "xgrammar": replace(b, traces=traces)}), out)


def ratio_lines(run: str, prof: Path, f: dict[str, float], names: tuple[str, str]) -> list[str]:
    """The model's xgrammar nested/flat at each load with `prof` as calibrated and with its traces scaled by `f`
    (schema -> factor), each against the engine's measured ratio: a line each, named `names`."""
    rows = json.loads((check.HERE / run / "score.json").read_text())["rows"]
    meas = {r["load"]: r["measured_ratio"] for r in rows if r["backend"] == "xgrammar" and r["schema"] == "nested"}
    with tempfile.TemporaryDirectory() as t:
        alt = Path(t) / "host.json.gz"
        scaled(prof, f, alt)
        got = {name: check.predictions(str(q), sweep_request=True)["ratios"]["nested"]["xgrammar"]
               for name, q in zip(names, (prof, alt))}
    out, width = [], max(map(len, names))
    for name, r in got.items():
        errs = [100 * (r[str(c)] / meas[c] - 1) for c in check.LOADS if meas.get(c)]
        out.append(f"{run} {name:{width}}: nested/flat {', '.join(f'{r[str(c)]:.2f}' for c in check.LOADS)} against "
                   f"{', '.join(f'{meas[c]:.2f}' for c in check.LOADS)} measured: errors "
                   f"{', '.join(f'{e:+.0f}%' for e in errs)}; within 10%: {sum(abs(e) <= 10 for e in errs)} of {len(errs)}")
    return out


if __name__ == "__main__":
    for run, f in factors().items():
        print("\n".join(ratio_lines(run, check.HERE / run / "xg" / "host.json.gz", f,
                                    ("as calibrated", "held-out outputs' cost"))))
        print(f"{run} factors: flat x{f['flat']:.3f}, nested x{f['nested']:.3f}\n")
