"""Post hoc (docs/validation.md finding 52 (i)): at each point of the named sweep files, the mean of the
vllm:num_requests_running gauge the sweep scraped (EngineSummary.running_mean) over the engine's decode rows a step
(its generated tokens over the window / the steps it counted), with the range over each file.
  python validation/h200-vllm-0.25.1/shape/posthoc/gauge_rows.py FILE...   (repository root) -> gauge_rows.txt, of
      runs 10-12's held-out and speed points and run 12's forward sweep, and the runs' llguidance speed points"""
import sys

from maskcost.records import read_summaries


def main(paths: list[str]) -> None:
    for path in paths:
        got = []
        for s in read_summaries(path):
            e = s.engine
            if e.steps and e.gen_tokens_per_s and e.running_mean:
                got.append((s.point, e.running_mean / (e.gen_tokens_per_s * e.window_s / e.steps)))
        if got:
            lo, hi = min(r for _, r in got), max(r for _, r in got)
            print(f"{path.split('shape/')[-1]}: {lo:.2f}-{hi:.2f} over {len(got)} points; "
                  + ", ".join(f"{p} {r:.2f}" for p, r in got))


if __name__ == "__main__":
    main(sys.argv[1:])
