"""`maskcost advise`: which configurations a user controls meet a goal, cheapest first, and what
dominates the chosen one's step. The search itself is predict's grid (model/predict.py); this module
judges its points against the goal, groups them by configuration (a configuration meets the goal
where it meets it at every load asked), ranks them, and names the step's dominant cost."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from ..point import Point

# the step's parts a user can act on (metrics' breakdown, mean ms a step), what each is, what moves it
PARTS = {
    "serial fill": ("the bitmask fill on the engine thread, row after row",
                    "llguidance (cheaper rows), vLLM's fill pool (over 128 structured rows with max-num-seqs > 128), "
                    "or a faster core"),
    "pool wait": ("the engine thread waiting for its fill pool", "more cores, or a faster core"),
    "engine CPU": ("the engine's own CPU work a grammar exposes (vLLM's async scheduling, SGLang's overlap scheduler "
                   "cannot hide it then)",
                   "a faster core"),
    "compile wait": ("requests waiting for their grammar to compile", "fewer distinct schemas"),
    "apply": ("the mask's copy to the GPU and its apply", "fewer structured rows a step"),
}


@dataclass(frozen=True)
class Goal:
    """What a configuration must meet at every load; None: not asked."""
    itl_p99_ms: float | None = None
    ttft_p99_ms: float | None = None
    overhead_pct: float | None = None  # ITL on / ITL off - 1, in %
    min_tok_s: float | None = None  # output tokens per second, schema on

    def __post_init__(self) -> None:
        given = {k: v for k, v in asdict(self).items() if v is not None}
        if not given:
            raise ValueError("advise: give a goal (--itl-p99-ms, --ttft-p99-ms, --overhead-pct or --min-tok-s)")
        for k, v in given.items():
            if not v > 0:
                raise ValueError(f"--{k.replace('_', '-')} {v}: must be > 0")

    def checks(self) -> list[tuple[str, str, float, bool]]:
        """(what it is called, the point's key, the bound, whether it is a ceiling)."""
        out = [("ITL p99", "itl_ms_p99", self.itl_p99_ms, True), ("TTFT p99", "ttft_ms_p99", self.ttft_p99_ms, True),
               ("overhead", "overhead_pct", self.overhead_pct, True), ("tok/s", "out_tok_per_s", self.min_tok_s, False)]
        return [c for c in out if c[2] is not None]

    def shortfall(self, point: Point) -> float:
        """How far the point is from the goal: the worst of value / bound over the ceilings and bound /
        value over the floors; <= 1 meets it. A figure the run did not give counts as missed."""
        worst = 0.0
        for _, key, bound, ceiling in self.checks():
            v = getattr(point, key)
            if v is None or (not ceiling and v <= 0):
                return float("inf")
            worst = max(worst, v / bound if ceiling else bound / v)
        return worst

    def words(self) -> str:
        units = {"itl_ms_p99": " ms", "ttft_ms_p99": " ms", "overhead_pct": "%", "out_tok_per_s": " tok/s"}
        return ", ".join(f"{name} {'<=' if ceiling else '>='} {bound:g}{units[key]}"
                         for name, key, bound, ceiling in self.checks())


@dataclass
class Choice:
    """One configuration and its points, one a load."""
    config: dict[str, Any]  # the engine config (EngineConfig as a dict)
    points: list[Point]
    shortfall: float  # the worst over its loads (Goal.shortfall)

    @property
    def meets(self) -> bool:
        return self.shortfall <= 1.0

    @property
    def cores(self) -> int:
        return self.config["usable_cores"]

    def figures(self) -> tuple:
        """What the user is shown of it, rounded: configurations with the same are one line."""
        return tuple((round(p.itl_ms_p99 or 0, 1), round(p.itl_ms_mean or 0, 1), round(p.ttft_ms_p99 or 0),
                      round(p.out_tok_per_s or 0)) for p in self.points)

    def differences(self, other: "Choice") -> str:
        """What of the other's configuration differs from this one's, in words."""
        names = {"engine": "engine", "engine_version": "version", "backend": "backend", "max_num_seqs": "max-num-seqs",
                 "usable_cores": "cores", "async_scheduling": "async scheduling", "spec_tokens": "spec tokens"}
        return ", ".join(f"{n} {other.config[k]}" for k, n in names.items() if other.config[k] != self.config[k])

    def label(self) -> str:
        c = self.config
        return (f"{c['engine']} {c['engine_version']} {c['backend']} max-num-seqs {c['max_num_seqs']}, "
                f"{c['usable_cores']} cores" + ("" if c["async_scheduling"] else ", sync scheduling") +
                (f", spec {c['spec_tokens']} ({c['spec_method']})" if c["spec_tokens"] else ""))


def choices(points: list[Point], goal: Goal) -> list[Choice]:
    """The grid's points grouped by configuration, cheapest first: those that meet the goal by cores
    (fewest first), then how far within it; then those that miss, nearest first."""
    by: dict[str, list[Point]] = {}
    for p in points:
        by.setdefault(json.dumps(p.config["engine"], sort_keys=True), []).append(p)
    out = [Choice(ps[0].config["engine"], ps, max(goal.shortfall(p) for p in ps)) for ps in by.values()]
    # (equal shortfalls: the fewer cores first, then the label)
    return sorted(out, key=lambda c: (not c.meets, c.cores if c.meets else 0, c.shortfall, c.cores, c.label()))


def what_moves(name: str, point: Point) -> tuple[str, str]:
    """What the dominant part `name` is, and what would move it at this point (a choice it has already made,
    or one that cannot act at its load, left out): the engine's own words where it has them (Engine.parts_words)."""
    from .engines import engine_policy
    policy = engine_policy(point.engine, point.engine_version)
    if name == "serial fill":
        pool = policy.pool_move(point.concurrency or point.running_mean or 0)
        moves = ([] if point.backend == "guidance" else ["llguidance (cheaper rows)"]) + ([pool] if pool else []) + \
                ["a faster core"]
        return PARTS[name][0], ", ".join(moves)
    what, moves = policy.parts_words.get(name) or PARTS.get(name, ("the GPU forward: the grammar's host work stays "
                                                                    "under it", "a faster GPU or a smaller batch"))
    if name == "compile wait" and point.backend != "guidance":
        moves += ", or llguidance (no compile step to speak of)"
    return what, moves


# a step whose host time beyond the forward is under this share of it is the GPU's
GPU_STEP_SHARE = 0.9


def dominant(point: Point) -> tuple[str, float, float]:
    """The step's dominant part at this point: (its name, its mean ms a step, its share of the step): the
    largest host part, where the host adds to the forward at least a tenth of the step (exposed_ms); else
    "forward" (the grammar costs little there)."""
    b = point.breakdown
    step = b.step_ms or 0.0
    if not step or (b.exposed_ms or 0.0) < (1.0 - GPU_STEP_SHARE) * step:
        return "forward", b.forward_ms or 0.0, (b.forward_ms or 0.0) / step if step else 0.0
    psf = b.pool_step_fraction or 0.0
    parts = {"serial fill": (b.serial_fill_step_ms or 0.0) * (1.0 - psf),
             "pool wait": b.pool_wait_ms or 0.0,
             "engine CPU": (b.cpu_overhead_ms or 0.0) + (b.advance_ms or 0.0),
             "compile wait": b.compile_wait_ms or 0.0,
             "apply": b.apply_ms or 0.0}
    name = max(parts, key=parts.get)
    return name, parts[name], parts[name] / step if step else 0.0
