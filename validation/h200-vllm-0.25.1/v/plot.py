"""Sessions U and V, measured against predicted (post hoc figure; the scores are score.md's): per
session, each server's measured engine ITL by concurrency (points) and the grid (u/predicted-*.json)
at the median ITL speed of all that server's points (line), and at the session's idle bench (dashed).
usage (from the repository root): python3 validation/h200-vllm-0.25.1/v/plot.py validation/h200-vllm-0.25.1/v/u-v.png"""
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from maskcost.calibrate.profile import load_default_profile  # noqa: E402
from maskcost.model.config import EngineConfig  # noqa: E402
from maskcost.validate.hostspeed import attach_itl_speeds  # noqa: E402
from maskcost.validate.report import compare  # noqa: E402
from maskcost.validate.sweep import read_summaries  # noqa: E402

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V))
from scoring import grid, grid_at, measured  # noqa: E402

SERVERS = ((1, "xgrammar", "tab:blue"), (2, "guidance", "tab:orange"), (3, "xgrammar", "tab:green"))


def server_speed(path: str, grid_path: str) -> float:
    """The median ITL speed of the server's schema-on points (the model run at the grid's config)."""
    profile = load_default_profile()
    cfg = EngineConfig(**grid(grid_path)[1]["points"][0]["config"]["engine"])
    runs = [s for s in read_summaries(path) if s["arm"] == "on"]
    rows = attach_itl_speeds(compare(profile, cfg, runs), profile, cfg, runs, 4, progress=False)
    return statistics.median(r["itl_speed"] for r in rows if r["itl_speed"])


def main(out: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, sess in zip(axes, "uv"):
        idle = float(open(f"{V}/{sess}/bench-idle.txt").read().split()[-1])
        for i, backend, colour in SERVERS:
            g = f"{V}/u/predicted-{backend}.json"
            m = measured(f"{V}/{sess}/{sess}{i}.jsonl")
            sp = server_speed(f"{V}/{sess}/{sess}{i}.jsonl", g)
            cs = sorted(m)
            ax.plot(cs, [m[c] for c in cs], "o", color=colour, label=f"{sess}{i} {backend} measured")
            p = grid_at(g, sp)
            ax.plot(cs, [p[c] for c in cs], "-", color=colour, label=f"predicted at its median ITL speed {sp:.2f}")
            if i < 3:
                pb = grid_at(g, idle)
                ax.plot(cs, [pb[c] for c in cs], "--", color=colour, alpha=0.5,
                        label=f"predicted at bench-idle {idle:.2f}")
        ax.set_title(f"session {sess.upper()} (H200, vLLM 0.25.1, 14 cores, max-num-seqs 256)")
        ax.set_xlabel("concurrency")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("engine ITL ms")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
