"""A validation campaign as data: what a pre-registered live check runs and how it is scored.

A campaign file (JSON) names the server as it is started, the schemas or tools, the tokenizer, the
held-out loads and the scoring rule. `maskcost campaign register` writes the registration (the rule
in words, the file's digest) before anything runs; `maskcost campaign run` runs the three GPU-host
commands against the live server in order (calibrate --base-url, calibrate --check, predict the
held-out loads to predicted.json, validate them, report --predicted) and scores the result against
the registered bar. Steps whose output exists are not run again (a run resumes).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..inputs import read_json

CAMPAIGN_VERSION = 1
METRICS = ("ITL ms", "client ITL ms", "server TTFT ms", "TTFT p50 ms", "out tok/s", "running")


class CampaignError(ValueError):
    pass


@dataclass(frozen=True)
class Server:
    """How the server was started: recorded, and read by the device script that starts it."""
    engine: str = "vllm"
    engine_version: str = "0.25.1"
    backend: str = "xgrammar"
    max_num_seqs: int = 256
    flags: tuple[str, ...] = ()  # more serve flags
    env: dict[str, str] = field(default_factory=dict)  # environment of the server


@dataclass(frozen=True)
class Campaign:
    name: str
    held_out: tuple[int, ...]  # schema-on concurrencies the calibration does not run
    server: Server = field(default_factory=Server)
    schemas: tuple[str, ...] = ()  # schema files, relative to the campaign file
    tools: tuple[str, ...] = ()  # OpenAI tools lists, relative to the campaign file
    tool_choice: str = "required"
    tokenizer: str = "llama3"
    metric: str = "ITL ms"  # the primary metric of validate's report
    bar_pct: float = 10.0  # the primary's median |error| must be at most this
    repeats: int = 1
    calibrate_args: tuple[str, ...] = ()  # more `calibrate --base-url` flags
    version: int = CAMPAIGN_VERSION

    def files(self, base: Path) -> tuple[list[str], list[str]]:
        return [str(base / s) for s in self.schemas], [str(base / t) for t in self.tools]


def load_campaign(path: str | Path) -> Campaign:
    """The campaign of `path`, checked: one line naming the file and what is wrong."""
    path = Path(path)
    d = read_json(path, "", CampaignError)
    if not isinstance(d, dict):
        raise CampaignError(f"{path}: a campaign is a JSON object")
    known = {f.name for f in fields(Campaign)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise CampaignError(f"{path}: unknown field {unknown[0]!r} (known: {', '.join(sorted(known))})")
    if d.get("version", CAMPAIGN_VERSION) != CAMPAIGN_VERSION:
        raise CampaignError(f"{path}: campaign version {d.get('version')}, this maskcost reads {CAMPAIGN_VERSION}")
    for k in ("name", "held_out"):
        if k not in d:
            raise CampaignError(f"{path}: missing {k!r}")
    sv = d.get("server", {})
    if not isinstance(sv, dict) or set(sv) - {f.name for f in fields(Server)}:
        raise CampaignError(f"{path}: server: expected an object with {', '.join(f.name for f in fields(Server))}")
    try:
        c = Campaign(**{**d, "server": Server(**{**sv, "flags": tuple(sv.get("flags", ()))}),
                        "held_out": tuple(int(x) for x in d["held_out"]),
                        "schemas": tuple(d.get("schemas", ())), "tools": tuple(d.get("tools", ())),
                        "calibrate_args": tuple(d.get("calibrate_args", ()))})
    except (TypeError, ValueError) as e:
        raise CampaignError(f"{path}: {e}") from None
    if not c.held_out or any(x < 1 for x in c.held_out):
        raise CampaignError(f"{path}: held_out: give one or more concurrencies >= 1")
    if not (c.schemas or c.tools):
        raise CampaignError(f"{path}: give schemas or tools (files, relative to the campaign file)")
    if c.metric not in METRICS:
        raise CampaignError(f"{path}: metric {c.metric!r}: one of {', '.join(METRICS)}")
    if not c.bar_pct > 0:
        raise CampaignError(f"{path}: bar_pct must be > 0")
    for f in (*c.schemas, *c.tools):
        if not (path.parent / f).is_file():
            raise CampaignError(f"{path}: {f}: no such file beside the campaign")
    return c


def digest(path: str | Path) -> str:
    """What the registration pins: the campaign file and every schema or tools file it names."""
    path = Path(path)
    c = load_campaign(path)
    h = hashlib.sha256(path.read_bytes())
    for f in (*c.schemas, *c.tools):
        h.update((path.parent / f).read_bytes())
    return h.hexdigest()[:16]


def source_commit(path: str | Path) -> str | None:
    """The git commit the campaign file sits in (the code that registers it), where it is in a checkout."""
    import subprocess
    try:
        r = subprocess.run(["git", "-C", str(Path(path).resolve().parent), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


def registration(path: str | Path, version: str) -> str:
    """The registration text, written before the run and committed with the campaign."""
    c = load_campaign(path)
    commit = source_commit(path)
    what = ", ".join([*c.schemas, *(f"{t} (tool_choice {c.tool_choice})" for t in c.tools)])
    sv = c.server
    env = " ".join(f"{k}={v}" for k, v in sv.env.items())
    return "\n".join([
        f"# Campaign {c.name}: registration",
        "",
        f"Registered before it runs, with maskcost {version}" + (f" (checkout at {commit}, before this file's "
                                                               f"commit)" if commit else "")
        + f"; campaign digest `{digest(path)}` (the campaign",
        "file and the files it names: `maskcost campaign register` prints it again).",
        "",
        f"- Server: {sv.engine} {sv.engine_version}, backend {sv.backend}, max-num-seqs {sv.max_num_seqs}"
        + (f", flags `{' '.join(sv.flags)}`" if sv.flags else "") + (f", env `{env}`" if env else "") + ".",
        f"- Requests: {what}; tokenizer {c.tokenizer}.",
        f"- Steps: `calibrate --base-url` (its own loads), `calibrate --check`, `predict` at the held-out "
        f"loads {' '.join(map(str, c.held_out))} to predicted.json before the held-out sweep, `validate` at "
        f"them ({c.repeats} repeat{'s' if c.repeats > 1 else ''}), `report --predicted`.",
        f"- Primary: median |{c.metric} error| over the held-out schema-on points, as validate reports it. "
        f"**Bar: <= {c.bar_pct:g}%.** Secondary: the same against predicted.json.",
        "- Every figure of the run is reported, misses as plainly as hits; raw records kept.",
        ""])


def score(c: Campaign, report: dict[str, Any], predicted_report: dict[str, Any] | None) -> dict[str, Any]:
    """The registered rule applied to validate's report (and report --predicted's)."""
    s = report["score"].get(c.metric)
    if not s or s.get("median_abs_error_pct") is None:
        raise CampaignError(f"the report scores no {c.metric} point: nothing to score")
    prim = float(s["median_abs_error_pct"])
    sec = None
    if predicted_report is not None and (p := predicted_report["score"].get(c.metric)):
        sec = p.get("median_abs_error_pct")
    return {"campaign": c.name, "metric": c.metric, "points": s["points"], "primary_median_abs_error_pct": prim,
            "bar_pct": c.bar_pct, "met": prim <= c.bar_pct, "secondary_median_abs_error_pct": sec,
            "worst_error_pct": s.get("worst_error_pct"), "resolved_campaign": asdict(c)}
