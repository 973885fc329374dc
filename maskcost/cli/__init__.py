"""maskcost's command line: one module per command (calibrate, predict, advise, report and fit, validate,
campaign, sweep, straddle, llamacpp-loop, hostmeter and probe-site); this module builds the parser from them
and turns bad input into one line."""
from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import sys
from typing import Callable

from ..calibrate.schemas import SchemaInputError
from ..calibrate.tokenizer import TokenizerError
from ..profile import ProfileError
from . import advise, calibrate, campaign, hostmeter, llamacpp_loop, predict, report, straddle, sweep, validate
from .common import HelpWithDefaults, Options, UsageError

COMMANDS = (calibrate, predict, advise, report, validate, campaign, sweep, straddle, llamacpp_loop, hostmeter)


class _Parser(argparse.ArgumentParser):
    """A flag is matched only by its whole name: `--out` is not taken for `--output-tokens`."""
    def __init__(self, *a, **k):
        k.setdefault("allow_abbrev", False)
        super().__init__(*a, **k)


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="maskcost", description="price grammar-constrained decoding: calibrate a profile, predict from it, validate it "
                                 "against a live server")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    for m in COMMANDS:
        m.add_parser(sub)
    for p in sub.choices.values():
        p.formatter_class = HelpWithDefaults
    ap.commands = sub.choices  # each command's own parser, by name
    return ap


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line; a flag the command does not know is its error (its usage, and the nearest flag)."""
    ap = build_parser()
    ns, extra = ap.parse_known_args(argv)
    if extra:
        command = ap.commands[ns.cmd]
        flags = [s for a in command._actions for s in a.option_strings]
        near = difflib.get_close_matches(extra[0].split("=")[0], flags, n=1)
        command.error(f"unrecognized arguments: {' '.join(extra)}" + (f" (did you mean {near[0]}?)" if near else ""))
    return ns


def _argv_problem(argv: list[str]) -> str:
    """What the parser refuses in the command line `argv` (its error, or the flags its command does not take);
    '' where it parses. `campaign` checks its steps' flags with it before it runs any."""
    out = io.StringIO()
    with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
        try:
            extra = build_parser().parse_known_args(argv)[1]
        except SystemExit as e:
            lines = out.getvalue().strip().splitlines()
            if e.code == 0 or not lines:  # --help (or -h) among them: it prints the help and stops
                return "a help flag (-h, --help)"
            return lines[-1].split(": error: ", 1)[-1]
    return f"unrecognized arguments: {' '.join(extra)}" if extra else ""


def main(argv: list[str] | None = None) -> int:
    # resolved once, read-only; argv_problem, parse_command, guarded: what `campaign` checks its steps' flags with,
    # resolves a step's request from and reports a step's error with (cli/campaign.py), passed, not imported
    args = Options(**vars(_parse(argv)), argv_problem=_argv_problem, parse_command=_parse, guarded=guarded)
    return guarded(args.cmd, lambda: args.func(args))


def guarded(cmd: str, run: Callable[[], int]) -> int:
    """`run`'s rc, the errors a command meets each turned into one line naming the command, and its rc."""
    try:
        return run()
    except KeyboardInterrupt:  # Ctrl-C: what finished is on file (sweeps append as they go)
        print(f"maskcost {cmd}: interrupted; what finished is kept: the same command again resumes where it "
              f"can", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`maskcost ... | head`): no more output, no error line (a
        # server's closed socket reaches here as httpx's own errors, which the sweeps turn into one line)
        sys.stdout = open(os.devnull, "w")  # (what Python flushes at exit goes nowhere)
        return 1
    except ImportError as e:  # the calibrate extra (xgrammar, llguidance) is not installed
        print(f"maskcost {cmd}: error: {e.name or e} is not installed: this needs the calibrate extra "
              f"(pip install -e \".[calibrate]\" or pip install \"maskcost[calibrate]\")", file=sys.stderr)
        return 2
    except (UsageError, ProfileError, SchemaInputError, TokenizerError, ValueError, OSError) as e:
        print(f"maskcost {cmd}: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"maskcost {cmd}: error: {e}", file=sys.stderr)
        return 1
