"""Post hoc on runs 4-7 (docs/validation.md finding 33): can a covariate that costs no timing narrow xgrammar's
traced mean cost a token, where more outputs cost trace time? A fill's cost is heavy-tailed, nearly all of it
inside strings bounded by maxLength (finding 30), so an output's cost should follow how many of its fills fall
inside a string value, which its text says without a matcher. Calibrate could count that over every output
the server wrote on the calibration's side (its speed sweep: hundreds a schema) and time only some.

On this CPU, xgrammar, each run's own profile vocabulary, one fresh matcher an output (fill then accept each
token, EOS included: its cost c, its fills n), and x = its fills made inside a string value (the state after the
tokens before it: an open quote, after ':' or in an array). For each run and schema:
  1. the fit c = a n + b x over the calibration side's outputs (its R^2), and x / n there and in the held-out;
  2. the mean cost a token from k outputs drawn from the calibration side (2,000 draws): plain (sum c / sum n)
     and by the regression estimator (a + b X / N, with X / N over every calibration-side output), each draw's
     nested/flat ratio against the held-out sweeps' (their 3,084-3,093 outputs): how often within 5% and 10%;
  3. the model's nested/flat with each run's traces scaled by the regression estimate from the 96 outputs
     calibrate would now trace (its 32 and the speed sweep's next 64, as more_outputs.py takes them) against
     the 32 it traced (output_sample_model.ratio_lines), beside the engine's measured ratios.
  python validation/h200-vllm-0.25.1/shape/posthoc/control_variate.py   (repository root) -> stdout (.txt)"""
import random
import sys
from pathlib import Path

import numpy as np

from maskcost.calibrate.fill import in_string_value
from maskcost.calibrate.run import recorded_outputs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import check  # noqa: E402
from more_outputs import Costs, host_line, run_outputs  # noqa: E402
from output_sample_model import ratio_lines  # noqa: E402

RUNS = ("run4", "run5", "run6", "run7")
KS = (32, 96)
DRAWS = 2000


def in_value_string(vocab, toks) -> int:
    """How many of the output's fills (one before each token, EOS's included) are made inside a string value
    (maskcost.calibrate.fill.in_string_value, what calibrate now counts)."""
    return sum(in_string_value([vocab.tokens[t] for t in toks]))


def rows(cost: Costs, vocab, schema: str, outputs) -> np.ndarray:
    """(c us, n fills, x fills inside a string value) an output."""
    return np.array([(*cost(schema, o), in_value_string(vocab, o)) for o in outputs], dtype=float)


def estimates(sample: np.ndarray, x_per_n: float) -> tuple[float, float]:
    """(plain, regression) mean cost a token from the sample's rows."""
    c, n, x = sample.T
    a, b = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)[0]
    return c.sum() / n.sum(), a + b * x_per_n


def run(name: str, costs: dict) -> None:
    d, cost, cal, speed = run_outputs(name, costs)
    pool, truth, xn = {}, {}, {}
    for s in ("flat", "nested"):
        pool[s] = rows(cost, cost.vocab, s, cal[s] + speed[s])
        held = rows(cost, cost.vocab, s, recorded_outputs(d / f"{s}.raw.jsonl.gz", cost.vocab)[s])
        truth[s], xn[s] = held[:, 0].sum() / held[:, 1].sum(), pool[s][:, 2].sum() / pool[s][:, 1].sum()
        c, n, x = pool[s].T
        fit = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)
        r2 = 1 - fit[1][0] / ((c - c.mean()) ** 2).sum() if fit[1].size else float("nan")
        print(f"{name} {s:6}: calibration side {len(c)} outputs, c = {fit[0][0]:.0f} us a fill + {fit[0][1]:.0f} us a "
              f"fill in a string value (R^2 {r2:.2f}); x / n {xn[s]:.3f} there, {held[:, 2].sum() / held[:, 1].sum():.3f}"
              f" in the held-out; us a token: calibration side {c.sum() / n.sum():.0f}, held-out {truth[s]:.0f}")
    want = truth["nested"] / truth["flat"]
    rng = random.Random(name)
    for k in KS:
        errs = {"plain": [], "regression": []}
        for _ in range(DRAWS):
            got = {s: estimates(pool[s][rng.sample(range(len(pool[s])), k)], xn[s]) for s in ("flat", "nested")}
            for i, how in enumerate(errs):
                errs[how].append(abs(got["nested"][i] / got["flat"][i] / want - 1))
        print(f"{name} k={k}: " + "; ".join(f"{how} within 5% {100 * np.mean(np.array(e) <= 0.05):.0f}%, within 10% "
                                               f"{100 * np.mean(np.array(e) <= 0.10):.0f}%" for how, e in errs.items()))
    f = {}
    for s in ("flat", "nested"):
        first = rows(cost, cost.vocab, s, (cal[s][:32] + speed[s])[:96])
        f[s] = estimates(first, xn[s])[1] / estimates(first[:32], xn[s])[0]
    print("\n".join(ratio_lines(name, d / "host.json.gz", f, ("model, as calibrated (32)",
                                                             "model, 96 by regression"))))
    print(f"{name} factors (96 outputs by regression / 32's mean): flat x{f['flat']:.3f}, nested x{f['nested']:.3f}\n")


if __name__ == "__main__":
    made: dict = {}
    for r in RUNS:
        run(r, made)
    print(host_line())
