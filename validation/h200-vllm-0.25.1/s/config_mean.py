"""Each configuration's mean over its servers against the grid at the bench's speed (post hoc, after
session S; the numbers are s/report.sh's primary's, pre-registered as the directions' inputs, read here
as errors): does the model predict what a configuration runs at, averaged over server restarts, where a
single server's point moves by the restart? The xgrammar 14-core and 4-core servers (three each, at 64
and 128; server 5 alone at 256) and the ngram server (one, at 64 and 256).
usage (from the repository root): python3 validation/h200-vllm-0.25.1/s/config_mean.py > validation/h200-vllm-0.25.1/s/config-mean.md"""
import statistics
import sys

sys.path.insert(0, "validation/h200-vllm-0.25.1")
sys.path.insert(0, "validation/h200-vllm-0.25.1/m")
from scoring import grid_at, mean_over, measured  # noqa: E402
from tracking import bench  # noqa: E402  (m/: a bench file's speed)

V = "validation/h200-vllm-0.25.1"
SPEED = bench(f"{V}/s/bench-start.txt")
CONFIGS = (  # label, grid, servers
    ("xgrammar, 14 cores", f"{V}/r/predicted-xgrammar.json", ("s1-14", "s3-14", "s5-14")),
    ("xgrammar, 4 cores (cpu_count 16)", f"{V}/r/predicted-taskset4.json", ("s2-4", "s4-4", "s6-4")),
    ("ngram 3, 14 cores", f"{V}/r/posthoc/predicted-ngram3.json", ("ngram3",)),
)


def main() -> None:
    print("# A configuration's mean over its servers against the model (post hoc, after session S)\n")
    print(__doc__.split("usage")[0].strip().replace("\n", " "), "\n")
    print(f"Grids read at the bench's speed {SPEED:.4f}.\n")
    print("| config | concurrency | servers | predicted ITL ms | measured: mean (servers) | error | the servers' errors |")
    print("|---|---|---|---|---|---|---|")
    config_errors, server_errors = [], []
    for label, grid, names in CONFIGS:
        pred, per = grid_at(grid, SPEED), [measured(f"{V}/s/{n}.jsonl") for n in names]
        for c in sorted({c for m in per for c in m}):
            vals = [m[c] for m in per if c in m]
            mean = mean_over(per, c)
            err = 100 * (pred[c] - mean) / mean
            errs = [100 * (pred[c] - v) / v for v in vals]
            config_errors.append(abs(err))
            server_errors += [abs(e) for e in errs]
            print(f"| {label} | {c} | {len(vals)} | {pred[c]:.1f} | {mean:.1f} ({', '.join(f'{v:.1f}' for v in vals)}) | "
                  f"{err:+.1f}% | {', '.join(f'{e:+.1f}%' for e in errs)} |")
    print(f"\nMedian |error|: against the configuration's mean {statistics.median(config_errors):.1f}% "
          f"({len(config_errors)} points, largest {max(config_errors):.1f}%); against each server's point "
          f"{statistics.median(server_errors):.1f}% ({len(server_errors)}, {sum(e < 10 for e in server_errors)} within 10%).")


if __name__ == "__main__":
    main()
