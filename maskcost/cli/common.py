"""What the commands share: the schema arguments and the schemas they name, the request shape of a
sweep, the usage error, the help formatter."""
from __future__ import annotations

import argparse
from typing import Any

from ..calibrate.schemas import TIERS, SchemaEntry
from ..model.config import DEFAULT_ENGINE

class UsageError(ValueError):
    pass


def maskcost_provenance() -> dict[str, Any]:
    """What made a result file: maskcost's version, and its git commit where it runs from a checkout (None else)."""
    import subprocess
    from pathlib import Path
    from .. import __version__
    here = Path(__file__).resolve().parents[2]
    commit = None
    if (here / ".git").exists():
        try:
            r = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
            if r.returncode == 0 and r.stdout.strip():
                commit = r.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return {"version": __version__, "commit": commit}


def check_outputs(**paths: str | None) -> None:
    """The files a command will write (flag name -> path, None: not given), checked before it runs: a UsageError,
    one line naming the flag, where two flags name one file or a path's folder cannot be made or written in (its
    folder is made here, as the command would)."""
    import tempfile
    from pathlib import Path
    given = {f"--{k.replace('_', '-')}": v for k, v in paths.items() if v}
    seen: dict[Path, str] = {}
    for flag, v in given.items():
        p = Path(v).resolve()
        if p in seen:
            raise UsageError(f"{seen[p]} {v} and {flag} {v}: one file for two outputs (give each its own)")
        seen[p] = flag
        if p.is_dir():
            raise UsageError(f"{flag} {v}: is a folder (give a file's path)")
        up = next((a for a in p.parents if a.exists()), None)
        if up is not None and not up.is_dir():
            raise UsageError(f"{flag} {v}: {up} is a file, not a folder")
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=p.parent):
                pass
        except OSError as e:
            raise UsageError(f"{flag} {v}: cannot write in {p.parent} ({e.strerror or e})") from None


class Options(argparse.Namespace):
    """A command's options, resolved once from its flags (main): read-only, so that no step changes what a
    later one reads; `replace` gives a copy with some changed (a command's own defaults, one engine's)."""

    def __init__(self, **given: Any) -> None:
        self.__dict__.update(given)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"options.{name}: a command's options are read-only (Options.replace gives a copy)")

    def replace(self, **changed: Any) -> "Options":
        return Options(**{**vars(self), **changed})


def tool_entries(args) -> list[SchemaEntry]:
    """--tools FILE...: each tool set as the grammar the command's --engine (vLLM where it has none) builds
    for --tool-choice; a named function needs one engine, since vLLM and SGLang build it differently."""
    from ..calibrate.tools import tool_entry
    files = getattr(args, "tools", None) or []
    engines = getattr(args, "engine", None) or [DEFAULT_ENGINE]
    if files and len(set(engines)) > 1 and args.tool_choice != "required":
        raise UsageError(f"--tool-choice {args.tool_choice}: vLLM and SGLang build different grammars for a "
                         f"named function; give one --engine")
    return [tool_entry(f, args.tool_choice, engines[0]) for f in files]


def add_tool_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tools", nargs="+", metavar="FILE",
                   help="OpenAI `tools` lists: each a request grammar, built the way the engine builds it for "
                        "--tool-choice, calibrated like a schema; a distinct set is a distinct grammar")
    p.add_argument("--tool-choice", default="required", metavar="required|NAME",
                   help="with --tools: required (one or more calls of any tool) or a function's name; auto builds "
                        "no grammar on the engines' JSON path")


def _entries(args) -> list[SchemaEntry]:
    from ..calibrate.schemas import corpus_files, load_schema_file, read_corpus, stratified_sample
    out: list[SchemaEntry] = [load_schema_file(p) for p in (args.schema or [])]
    out += tool_entries(args)
    for t in args.tier or []:
        if t not in TIERS:
            raise UsageError(f"--tier {t}: unknown (known: {', '.join(TIERS)})")
        out.append(TIERS[t])
    if args.corpus:
        corpus = read_corpus(corpus_files(args.corpus))
        out.extend(stratified_sample(corpus, args.sample, args.seed) if args.sample else corpus)
    return out


def _add_schema_args(p: argparse.ArgumentParser, default_tiers: list[str] | None, tier_help: str = "") -> None:
    p.add_argument("--schema", nargs="+", metavar="FILE", help="JSON schema files (or {schema, examples})")
    p.add_argument("--tier", nargs="+", default=default_tiers, metavar="NAME",
                   help=f"{tier_help or 'built-in schema tiers'} (known: {', '.join(TIERS)})")
    p.add_argument("--corpus", metavar="DIR", help="gzip JSON lines of {id, subset, schema, examples}")
    p.add_argument("--sample", type=int, default=0, help="stratified sample of N corpus schemas (0: all)")
    p.add_argument("--seed", type=int, default=0, help="the seed of every random draw (the corpus sample, the "
                   "prompts, outputs sampled under the mask)")
    add_tool_args(p)


def add_sweep_args(p: argparse.ArgumentParser, out: str, concurrency: list[int], repeats: int,
                   off_tokens: int) -> None:
    """The live sweep's flags that `sweep` and `validate` share (each with its own defaults)."""
    p.add_argument("--base-url", required=True, metavar="URL", help="the live server's OpenAI API, e.g. "
                   "http://127.0.0.1:8000")
    p.add_argument("--out", required=True, metavar=out, help="where the sweep's points go: appended as each "
                   "finishes, and a run again resumes where it stopped")
    p.add_argument("--arms", nargs="+", default=["on", "off"], choices=["on", "off"],
                   help="schema on (response_format), schema off (the same server, no schema), or both")
    p.add_argument("--concurrency", type=int, nargs="+", default=concurrency, metavar="N",
                   help="closed-loop clients of each point")
    p.add_argument("--repeats", type=int, default=repeats, help="runs of each point (their spread is reported)")
    p.add_argument("--rounds", type=int, default=3, help="requests per point = max(--min-requests, rounds x "
                   "concurrency)")
    p.add_argument("--min-requests", type=int, default=16, help="the fewest requests a point sends")
    p.add_argument("--max-tokens", type=int, default=512, help="max_tokens of a schema-on request (an output "
                   "cut there is counted as truncated)")
    p.add_argument("--off-tokens", type=int, default=off_tokens, help="output length of a schema-off request "
                   "(ignore_eos)")
    p.add_argument("--unique-schemas", action="store_true", help="every request a schema of its own (one "
                   "random optional property added): defeats the engine's compile cache")
    add_request_args(p)


def sweep_request(args, out, entries: list[SchemaEntry]):
    """The live sweep the flags of add_sweep_args ask for (`sweep`, `validate`), resolved once into its request
    (validate/sweep.SweepRequest), its points in the order repeat, load, arm, written to `out`."""
    from ..validate.sweep import PointSpec, SweepRequest
    if "on" in args.arms and not entries:
        raise UsageError(f"{args.cmd}: the 'on' arm needs schemas (--schema, --tier or --corpus)")
    pts = tuple(PointSpec(a, c, r, max(args.min_requests, args.rounds * c))
                for r in range(args.repeats) for c in args.concurrency for a in args.arms)
    return SweepRequest(args.base_url, pts, tuple(entries), out, args.max_tokens, args.off_tokens, args.unique_schemas,
                        args.seed, args.prompt_pad, args.unique_prompts, args.client_procs, args.host_bench,
                        getattr(args, "label", None))


def add_request_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompt-pad", type=int, default=0, metavar="N",
                   help="lengthen every prompt by about N tokens (shared: the prefix cache holds it)")
    p.add_argument("--unique-prompts", action="store_true",
                   help="a per-request nonce first in the prompt: no prefix-cache hit, every prompt token computed")
    p.add_argument("--client-procs", type=int, metavar="N",
                   help="spread each point's concurrency over N client processes (default: by the load, as "
                        "calibrate does: 1 + clients // 16, at most 8, so the client does not cap the load it offers)")
    p.add_argument("--host-bench", action="store_true",
                   help="record this host's single-thread xgrammar benchmark (bench_us) with the sweep: with the "
                        "server on the same machine, report --cpu-speed-from-sweep scales the host work by it")


class HelpWithDefaults(argparse.HelpFormatter):
    """Every option's help ends with its default, unless it says it itself (defaults are the parser's)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        h = action.help or ""
        d = action.default
        if (action.option_strings and "default" not in h and d is not None and d is not False
                and d != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)):
            shown = " ".join(map(str, d)) if isinstance(d, (list, tuple)) else ("on" if d is True else str(d))
            h = f"{h} (default: {shown.replace('%', '%%')})".strip()
        return h
