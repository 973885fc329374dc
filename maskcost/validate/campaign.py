"""A validation campaign as data: what a pre-registered live check runs and how it is scored.

A campaign file (JSON) names the server as it is started, the schemas or tools, the tokenizer, the
held-out loads and the scoring rule. `maskcost campaign register` writes the registration (the rule
in words, the file's digest) before anything runs; `maskcost campaign run` runs the three GPU-host
commands against the live server in order (calibrate --base-url, calibrate --check, predict the
held-out loads to predicted.json, validate them, report --predicted) and scores the result against
the registered bar. Steps whose output exists are not run again (a run resumes).

A campaign of several servers (`arms`, each started by the device script beside the others) calibrates
against the first; each later arm is predicted from that profile as it is (`profile: shared`), or with
its own schema-off sweep as the sync curve (`sync`: a server without async scheduling or the overlap
scheduler); any arm may fit the engine's own grammar work per row through the engine on schema-on
points at `fit_loads` (calibrate --engine-only --fit-rows). Every arm's predictions are written before
any held-out point of any arm is sent; the bar is on the median over all arms' held-out points.

A campaign with `profile` (shipped, or a profile file) calibrates nothing: every arm is predicted from
that profile as it is, the transfer check of a profile made elsewhere. With `speed_loads`, the first
arm's server is then swept at those loads (schema on and off, as README's "read the host's speed from
the server" says), `report` reads its speed, and every arm is predicted again at that speed
(predicted-read.json), before any held-out point is sent; the score then says both, and how many
held-out points fell inside the 80% interval of predicted.json.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..inputs import read_json
from ..model.config import DEFAULT_ENGINE
from ..model.engines import ENGINES
from .plan import LivePlan

CAMPAIGN_VERSION = 1
METRICS = ("ITL ms", "client ITL ms", "server TTFT ms", "TTFT p50 ms", "out tok/s", "running")


class CampaignError(ValueError):
    pass


@dataclass(frozen=True)
class Server:
    """How the server was started: recorded, and read by the device script that starts it."""
    engine: str = DEFAULT_ENGINE
    engine_version: str = ENGINES[DEFAULT_ENGINE].version  # (the engine's default version, model/engines.py)
    backend: str = "xgrammar"
    max_num_seqs: int = 256
    flags: tuple[str, ...] = ()  # more serve flags
    env: dict[str, str] = field(default_factory=dict)  # environment of the server


ARM_PROFILES = ("calibrate", "shared", "sync")


@dataclass(frozen=True)
class Arm:
    """One server of a campaign, its held-out loads and the profile it is predicted from."""
    name: str
    held_out: tuple[int, ...]  # schema-on concurrencies scored on this server
    server: Server = field(default_factory=Server)
    # calibrate: calibrate --base-url against this server (the first arm, and only it); shared: the
    # first arm's profile; sync: that profile with this server's schema-off sweep at sweep_loads as
    # its sync curve (calibrate --engine-only --sync-sweep)
    profile: str = "shared"
    sweep_loads: tuple[int, ...] = ()  # sync: the schema-off sweep's concurrencies
    # the engine's own grammar work per row fitted on this server's schema-on points at these loads
    # (calibrate --engine-only --fit-rows; never held out on this arm)
    fit_loads: tuple[int, ...] = ()
    engine_args: tuple[str, ...] = ()  # engine flags for predict, validate and report, e.g. --no-async-scheduling
    predict_args: tuple[str, ...] = ()  # more predict flags, e.g. --prompt-tokens 145


@dataclass(frozen=True)
class Campaign:
    name: str
    held_out: tuple[int, ...] = ()  # schema-on concurrencies the calibration does not run (one server)
    server: Server = field(default_factory=Server)
    schemas: tuple[str, ...] = ()  # schema files, relative to the campaign file
    tools: tuple[str, ...] = ()  # OpenAI tools lists, relative to the campaign file
    tool_choice: str = "required"
    tokenizer: str = "llama3"
    metric: str = "ITL ms"  # the primary metric of validate's report
    bar_pct: float = 10.0  # the primary's median |error| must be at most this
    repeats: int = 1
    calibrate_args: tuple[str, ...] = ()  # more `calibrate --base-url` flags
    arms: tuple[Arm, ...] = ()  # several servers (then no held_out or server of the campaign's own)
    # predict from this profile instead of calibrating: "shipped" (the embedded profile of the first
    # arm's engine) or a profile file relative to the campaign file (it may be the one an earlier
    # campaign's run calibrated: it must exist when this one runs); "" calibrates against the first arm
    profile: str = ""
    speed_loads: tuple[int, ...] = ()  # the short sweep that reads the host's speed (first arm's server)
    read_bar_pct: float | None = None  # the bar on the median |error| against predicted-read.json
    interval_min_inside: int | None = None  # the bar: at least this many held-out points in the 80% interval
    version: int = CAMPAIGN_VERSION

    def files(self, base: Path) -> tuple[list[str], list[str]]:
        return [str(base / s) for s in self.schemas], [str(base / t) for t in self.tools]

    def arm_list(self) -> tuple[Arm, ...]:
        """The servers: the arms, or the one server of a campaign without them (arm "main")."""
        return self.arms or (Arm("main", self.held_out, self.server, "shared" if self.profile else "calibrate"),)


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
    for k in ("name",) + (() if "arms" in d else ("held_out",)):
        if k not in d:
            raise CampaignError(f"{path}: missing {k!r}")
    sv = d.get("server", {})
    try:
        c = Campaign(**{**d, "server": _server(path, sv, "server"),
                        "held_out": tuple(int(x) for x in d.get("held_out", ())),
                        "schemas": tuple(d.get("schemas", ())), "tools": tuple(d.get("tools", ())),
                        "calibrate_args": tuple(d.get("calibrate_args", ())),
                        "speed_loads": tuple(int(x) for x in d.get("speed_loads", ())),
                        "arms": tuple(_arm(path, i, a) for i, a in enumerate(d.get("arms", ())))})
    except (TypeError, ValueError) as e:
        raise CampaignError(f"{path}: {e}") from None
    _check_arms(path, c, d)
    if not (c.schemas or c.tools):
        raise CampaignError(f"{path}: give schemas or tools (files, relative to the campaign file)")
    if c.metric not in METRICS:
        raise CampaignError(f"{path}: metric {c.metric!r}: one of {', '.join(METRICS)}")
    if not c.bar_pct > 0:
        raise CampaignError(f"{path}: bar_pct must be > 0")
    for f in (*c.schemas, *c.tools):  # a profile file may be one an earlier campaign writes: checked at run
        if not (path.parent / f).is_file():
            raise CampaignError(f"{path}: {f}: no such file beside the campaign")
    _check_transfer(path, c)
    _check_held_out(path, c)
    return c


def _check_held_out(path: Path, c: Campaign) -> None:
    """A held-out load is one the calibration does not run schema on: not among its speed points (LivePlan's,
    or calibrate_args' --speed-concurrency) where the campaign calibrates."""
    if c.profile:
        return
    args = list(c.calibrate_args)
    speed = set(LivePlan.speed_concurrency)
    if "--speed-concurrency" in args:
        after = args[args.index("--speed-concurrency") + 1:]
        speed = {int(a) for a in after[:next((i for i, a in enumerate(after) if a.startswith("--")), len(after))]}
    for a in c.arm_list():
        seen = sorted(speed & set(a.held_out))
        if seen:
            raise CampaignError(f"{path}: held_out {seen[0]} is one of the calibration's speed points "
                                f"({' '.join(map(str, sorted(speed)))}): a held-out load must be one it does not run")


def _check_transfer(path: Path, c: Campaign) -> None:
    """The fields of a campaign that checks a profile made elsewhere, each a one-line error."""
    if not isinstance(c.profile, str):
        raise CampaignError(f"{path}: profile: \"shipped\" or a profile file, got {c.profile!r}")
    if any(x < 1 for x in c.speed_loads):
        raise CampaignError(f"{path}: speed_loads: concurrencies >= 1")
    if c.read_bar_pct is not None and (not isinstance(c.read_bar_pct, (int, float)) or not c.read_bar_pct > 0
                                       or not c.speed_loads):
        raise CampaignError(f"{path}: read_bar_pct: a number > 0, with speed_loads (the sweep it is read from)")
    points = sum(len(a.held_out) for a in c.arm_list())
    if c.interval_min_inside is not None and (not isinstance(c.interval_min_inside, int)
                                              or not 0 <= c.interval_min_inside <= points):
        raise CampaignError(f"{path}: interval_min_inside: a whole number of points, 0 to the {points} held out")


def _server(path: Path, sv: Any, where: str) -> Server:
    if not isinstance(sv, dict) or set(sv) - {f.name for f in fields(Server)}:
        raise CampaignError(f"{path}: {where}: expected an object with {', '.join(f.name for f in fields(Server))}")
    return Server(**{**sv, "flags": tuple(sv.get("flags", ()))})


def _arm(path: Path, i: int, a: Any) -> Arm:
    known = {f.name for f in fields(Arm)}
    if not isinstance(a, dict) or set(a) - known or not {"name", "held_out"} <= set(a):
        raise CampaignError(f"{path}: arms[{i}]: expected an object with name, held_out and any of "
                            f"{', '.join(sorted(known - {'name', 'held_out'}))}")
    try:
        return Arm(**{**a, "server": _server(path, a.get("server", {}), f"arms[{i}].server"),
                      **{k: tuple(int(x) for x in a.get(k, ())) for k in ("held_out", "sweep_loads", "fit_loads")},
                      **{k: tuple(a.get(k, ())) for k in ("engine_args", "predict_args")}})
    except (TypeError, ValueError) as e:
        raise CampaignError(f"{path}: arms[{i}]: {e}") from None


def _check_arms(path: Path, c: Campaign, d: dict) -> None:
    if c.arms and ("held_out" in d or "server" in d):
        raise CampaignError(f"{path}: with arms, each arm names its server and held_out (not the campaign)")
    arms = c.arm_list()
    names = [a.name for a in arms]
    if len(set(names)) < len(names) or not all(n and n.replace("-", "").replace("_", "").isalnum() for n in names):
        raise CampaignError(f"{path}: arms: names must be distinct words (letters, digits, - and _)")
    for i, a in enumerate(arms):
        where = f"arms[{i}] ({a.name})" if c.arms else "campaign"
        if not a.held_out or any(x < 1 for x in (*a.held_out, *a.sweep_loads, *a.fit_loads)):
            raise CampaignError(f"{path}: {where}: held_out: give one or more concurrencies >= 1")
        if a.profile not in ARM_PROFILES:
            raise CampaignError(f"{path}: {where}: profile {a.profile!r}: one of {', '.join(ARM_PROFILES)}")
        if c.profile and a.profile == "calibrate":
            raise CampaignError(f"{path}: {where}: the campaign predicts from profile {c.profile!r}: no arm "
                                f"calibrates (shared or sync)")
        if not c.profile and (a.profile == "calibrate") != (i == 0):
            raise CampaignError(f"{path}: {where}: profile calibrate is the first arm's, and only its "
                                f"(the others are predicted from its profile: shared or sync)")
        if set(c.speed_loads) & set(a.held_out) and i == 0:
            raise CampaignError(f"{path}: {where}: speed_loads {sorted(set(c.speed_loads) & set(a.held_out))} are "
                                f"also held out: a point the speed is read from is not scored")
        if (a.profile == "sync") != bool(a.sweep_loads):
            raise CampaignError(f"{path}: {where}: sweep_loads go with profile sync (its schema-off sweep), and only")
        if set(a.fit_loads) & set(a.held_out):
            raise CampaignError(f"{path}: {where}: fit_loads {sorted(set(a.fit_loads) & set(a.held_out))} are "
                                f"also held out: a point the profile is fitted on is not scored")


def _content(path: Path) -> dict[str, Any]:
    """What a registration pins, as data: the campaign resolved, and each file it names by its sha256."""
    c = load_campaign(path)
    return {"campaign": json.loads(json.dumps(asdict(c))),
            "files": {f: hashlib.sha256((path.parent / f).read_bytes()).hexdigest() for f in (*c.schemas, *c.tools)}}


REGISTERED_DIGEST = re.compile(r"campaign digest `([0-9a-f]{16})`")
REGISTERED_BLOCK = re.compile(r"```json registered\n(.*?)\n```", re.S)


def find_registration(path: str | Path) -> Path | None:
    """The registration of the campaign at `path`: a Markdown file beside it (or one folder down) whose
    title names the campaign (`maskcost campaign register --out FILE` writes it)."""
    path = Path(path)
    title = f"# Campaign {load_campaign(path).name}: registration"
    for md in sorted(path.parent.glob("*.md")) + sorted(path.parent.glob("*/*.md")):
        try:
            if md.read_text().startswith(title):
                return md
        except (OSError, UnicodeDecodeError):
            continue
    return None


def check_registration(path: str | Path, reg: Path | None) -> None:
    """A campaign whose content no longer matches its registration is refused, with what changed: a field
    of the campaign, or a file it names (registrations written before the content block: the digest)."""
    path = Path(path)
    if reg is None:
        return
    text = reg.read_text()
    m = REGISTERED_DIGEST.search(text)
    if m is None:
        raise CampaignError(f"{path}: its registration {reg} holds no campaign digest line: nothing binds the run "
                            f"to it (maskcost campaign register writes one); register it again, and commit that")
    if m.group(1) == digest(path):
        return
    block = REGISTERED_BLOCK.search(text)
    what = f"digest {m.group(1)} registered, {digest(path)} now"
    if block:
        then, now = json.loads(block.group(1)), _content(path)
        fields_ = [f"{k}: registered {json.dumps(then['campaign'].get(k))}, now {json.dumps(v)}"
                   for k, v in now["campaign"].items() if then["campaign"].get(k) != v]
        files = [f"{f} changed" for f in sorted(set(now["files"]) | set(then["files"]))
                 if then["files"].get(f) != now["files"].get(f)]
        what = "; ".join(fields_ + files) or what
    raise CampaignError(f"{path}: not the campaign registered in {reg} ({what}): register it again, and commit "
                        f"that before the run")


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


def _server_line(sv: Server) -> str:
    env = " ".join(f"{k}={v}" for k, v in sv.env.items())
    return (f"{sv.engine} {sv.engine_version}, backend {sv.backend}, max-num-seqs {sv.max_num_seqs}"
            + (f", flags `{' '.join(sv.flags)}`" if sv.flags else "") + (f", env `{env}`" if env else ""))


def _arm_line(a: Arm, first: str, given: str = "") -> str:
    made = {"calibrate": "calibrate --base-url against it",
            "shared": f"the one calibrated against {first}, as it is" if not given else f"{given}, as it is",
            "sync": f"the one calibrated against {first}, with this server's schema-off sweep at "
                    f"{' '.join(map(str, a.sweep_loads))} as its sync curve"}[a.profile]
    if given and a.profile == "sync":
        made = made.replace(f"the one calibrated against {first}", given)
    fit = (f"; its engine's grammar work per row fitted on its schema-on points at "
           f"{' '.join(map(str, a.fit_loads))}" if a.fit_loads else "")
    flags = (f"; predicted, validated and reported with `{' '.join(a.engine_args)}`" if a.engine_args else "") + \
        (f"; predicted with `{' '.join(a.predict_args)}`" if a.predict_args else "")
    return (f"- Arm {a.name}: {_server_line(a.server)}. Profile: {made}{fit}{flags}. Held out: "
            f"{' '.join(map(str, a.held_out))}.")


def registration(path: str | Path, version: str) -> str:
    """The registration text, written before the run and committed with the campaign."""
    c = load_campaign(path)
    commit = source_commit(path)
    what = ", ".join([*c.schemas, *(f"{t} (tool_choice {c.tool_choice})" for t in c.tools)])
    head = [
        f"# Campaign {c.name}: registration",
        "",
        f"Registered before it runs, with maskcost {version}" + (f" (checkout at {commit}, before this file's "
                                                               f"commit)" if commit else "")
        + f"; campaign digest `{digest(path)}` (the campaign",
        "file and the files it names: `maskcost campaign register` prints it again).",
        ""]
    every = " of every arm together" if c.arms else ""
    tail = [f"- Primary: median |{c.metric} error| over the held-out schema-on points{every}, as validate "
            f"reports them. **Bar: <= {c.bar_pct:g}%.** Secondary: the same against predicted.json"
            + (" (each arm's)." if c.arms else ".")]
    if c.interval_min_inside is not None:
        tail.append(f"- The 80% interval of predicted.json (the one predict gives the profile: speed read where "
                    f"the profile carries its server's speed, else nothing read): **at least "
                    f"{c.interval_min_inside} held-out points{every} inside it.**")
    if c.speed_loads:
        tail.append(f"- With the speed read: median |{c.metric} error| over the same points against "
                    f"predicted-read.json" + (f". **Bar: <= {c.read_bar_pct:g}%.**" if c.read_bar_pct is not None
                                               else " (reported, no bar)."))
    tail += ["- Every figure of the run is reported, misses as plainly as hits; raw records kept.", "",
             "What `campaign run` and `campaign score` check against (the campaign resolved, the files it names):",
             "", "```json registered", json.dumps(_content(Path(path)), indent=1), "```", ""]
    given = {"": "", "shipped": "the shipped profile of the engine (maskcost/profiles/)"}.get(c.profile,
                                                                                                f"{c.profile}")
    reps = f"{c.repeats} repeat{'s' if c.repeats > 1 else ''}"
    speed = (f", then the first server swept at {' '.join(map(str, c.speed_loads))} (schema on and off), its "
             f"speed read by `report` and every held-out load predicted again at it to predicted-read.json"
             if c.speed_loads else "")
    if not c.arms:
        made = ("`calibrate --base-url` (its own loads), `calibrate --check`" if not given else
                f"no calibration in this campaign: {given}, as it is, `calibrate --check` of it")
        return "\n".join(head + [
            f"- Server: {_server_line(c.server)}.",
            f"- Requests: {what}; tokenizer {c.tokenizer}.",
            f"- Steps: {made}, `predict` at the held-out loads {' '.join(map(str, c.held_out))} to predicted.json"
            f"{speed}, before the held-out sweep; `validate` at them ({reps}), `report --predicted`."] + tail)
    first = c.arms[0].name
    sync = any(a.profile == "sync" for a in c.arms)
    made = (f"every arm's profile (`calibrate --base-url` against {first}; the others' sweeps and "
            f"`calibrate --engine-only`)" if not given else
            f"no calibration in this campaign: every arm from {given}"
            + (" (sync arms with their own schema-off sweep)" if sync else ""))
    return "\n".join(head + [f"- Requests: {what}; tokenizer {c.tokenizer}."]
                     + [_arm_line(a, first, given) for a in c.arms] + [
        f"- Steps: {made}, `calibrate --check` of each, `predict` of every arm's held-out loads to its "
        f"predicted.json{speed}, before any held-out point of any arm is sent; `validate` of each ({reps}), "
        f"`report --predicted` of each."] + tail)


def score(c: Campaign, reports: dict[str, tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]]
          ) -> dict[str, Any]:
    """The registered rule applied to each arm's reports, by arm name: validate's, report --predicted's
    against predicted.json, and against predicted-read.json (None where the run has none). The primary
    is the median over all arms' held-out points together."""
    from .report import score as score_rows

    def pooled(which: int) -> dict[str, Any] | None:
        if any(r[which] is None for r in reports.values()):
            return None
        return score_rows([row for r in reports.values() for row in r[which]["rows"]], c.metric)
    s = pooled(0)
    if not s or s.get("median_abs_error_pct") is None:
        raise CampaignError(f"the report scores no {c.metric} point: nothing to score")
    prim = float(s["median_abs_error_pct"])
    p, read = pooled(1), pooled(2)
    sec = p.get("median_abs_error_pct") if p else None
    per_arm = {name: {"points": r[0]["score"].get(c.metric, {}).get("points", 0),
                      "median_abs_error_pct": r[0]["score"].get(c.metric, {}).get("median_abs_error_pct"),
                      "secondary_median_abs_error_pct": (r[1]["score"].get(c.metric) or {}).get("median_abs_error_pct")
                      if r[1] is not None else None} for name, r in reports.items()}
    doc = {"campaign": c.name, "metric": c.metric, "points": s["points"], "primary_median_abs_error_pct": prim,
           "bar_pct": c.bar_pct, "met": prim <= c.bar_pct, "secondary_median_abs_error_pct": sec,
           "worst_error_pct": s.get("worst_error_pct"), "arms": per_arm}
    if p and p.get("interval_points"):
        doc["interval"] = {"points": p["interval_points"], "inside": p["inside_interval"],
                           "min_inside": c.interval_min_inside,
                           "met": None if c.interval_min_inside is None else p["inside_interval"] >= c.interval_min_inside}
    elif c.interval_min_inside is not None:  # registered, but the predictions carry no interval: not met
        doc["interval"] = {"points": 0, "inside": 0, "min_inside": c.interval_min_inside, "met": False}
    if read and read.get("median_abs_error_pct") is not None:
        m = float(read["median_abs_error_pct"])
        doc["read"] = {"points": read["points"], "median_abs_error_pct": m, "bar_pct": c.read_bar_pct,
                       "met": None if c.read_bar_pct is None else m <= c.read_bar_pct,
                       "worst_error_pct": read.get("worst_error_pct")}
    elif c.read_bar_pct is not None:  # registered, but no speed-read report: not met
        doc["read"] = {"points": 0, "median_abs_error_pct": None, "bar_pct": c.read_bar_pct, "met": False,
                       "worst_error_pct": None}
    return {**doc, "resolved_campaign": asdict(c)}
