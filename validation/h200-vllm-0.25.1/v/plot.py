"""Sessions U and V, measured against predicted (post hoc figure; the scores are score.md's): per
session, each server's measured engine ITL by concurrency (points) and the grid (u/predicted-*.json)
at the median ITL speed of all that server's points (line), and at the session's idle bench (dashed).
usage (from the repository root): python3 validation/h200-vllm-0.25.1/v/plot.py validation/h200-vllm-0.25.1/v/u-v.png"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from maskcost.calibrate.profile import load_default_profile  # noqa: E402
from maskcost.model.config import EngineConfig  # noqa: E402
from maskcost.validate.sweep import read_summaries  # noqa: E402

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V))
sys.path.insert(0, str(V / "m"))
from scoring import UV_SERVERS, grid, grid_at, measured, median_itl_speed  # noqa: E402
from tracking import bench  # noqa: E402  (m/: a bench file's speed)

COLOURS = ("tab:blue", "tab:orange", "tab:green")


def server_speed(profile, path: str, grid_path: str) -> float:
    """The median ITL speed of the server's schema-on points (the model run at the grid's config)."""
    cfg = EngineConfig(**grid(grid_path)[1]["points"][0]["config"]["engine"])
    runs = [s for s in read_summaries(path) if s["arm"] == "on"]
    return median_itl_speed(profile, cfg, runs)


def main(out: str) -> None:
    profile = load_default_profile()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, sess in zip(axes, "uv"):
        idle = bench(f"{V}/{sess}/bench-idle.txt")
        for (i, backend), colour in zip(UV_SERVERS, COLOURS):
            g = f"{V}/u/predicted-{backend}.json"
            m = measured(f"{V}/{sess}/{sess}{i}.jsonl")
            sp = server_speed(profile, f"{V}/{sess}/{sess}{i}.jsonl", g)
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
