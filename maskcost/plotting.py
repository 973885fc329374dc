"""Figures written to PNG without a display: one place for the backend, the log2 batch axis and
the save."""
from __future__ import annotations

from pathlib import Path


def subplots(*args, **kw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(*args, **kw)


def batch_axis(ax, label: str) -> None:
    """Concurrency / batch on a log2 axis, with a light grid."""
    ax.set_xlabel(label)
    ax.set_xscale("log", base=2)
    ax.grid(alpha=0.3)


def save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")  # (long tick labels kept whole)
    plt.close(fig)
