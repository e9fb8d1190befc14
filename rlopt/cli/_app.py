"""The ``rlopt`` group: its commands, loaded only when one is run or its help shown.

``rlopt --help`` and ``rlopt link`` pay only for what they use: each command lives in a
module of this package that is imported when the command is called, so the start-up
of the command line imports neither scikit-learn nor Pyomo (a test keeps it so).
"""

from __future__ import annotations

import signal
import sys
import warnings
from importlib import import_module
from typing import NamedTuple

import typer
from typer._click.exceptions import ClickException  # typer's own click (typer is pinned)
from typer.core import TyperCommand, TyperGroup

from rlopt.exceptions import InputError, RloptError, SolverError


class Entry(NamedTuple):
    module: str
    summary: str


COMMANDS: dict[str, Entry] = {
    "risk": Entry("risk", "The worst case of a masked file, proven, with a report."),
    "link": Entry("link", "Record linkage with a baseline distance (am, md, pld)."),
    "learn": Entry("learn", "The distance of a family that re-identifies the most."),
    "attack": Entry("link", "Transparency attack with the published masking parameters."),
    "mask": Entry("mask", "Mask a file, or build a published test file."),
    "data": Entry("mask", "Write a bundled file (Census, EIA, acs12, cps1985)."),
    "tradeoff": Entry("tradeoff", "Risk against utility of one masking method over its parameter."),
    "compare": Entry("release", "Masking methods and parameters on one risk-utility map."),
    "models": Entry("release", "Privacy models of a released file (k-anonymity, ...)."),
    "intersect": Entry("release", "Intersection attack on k-anonymous releases."),
    "integral": Entry("integral", "What two published models reveal of a database's update."),
    "private-model": Entry("integral", "The most useful integrally private model of a file."),
    "membership": Entry("membership", "The worst-case membership attack on a fully synthetic release."),
    "run": Entry("grids", "Run an experiment grid (resumable)."),
    "reproduce": Entry("grids", "Regenerate the published tables."),
    "report": Entry("grids", "HTML report of an experiment run."),
    "serve": Entry("serve", "The local web application: load two files, watch the interval close."),
}
"""Every command, in the order ``rlopt --help`` lists them: the module that holds it
and its one-line summary (the command's ``short_help``)."""


def summary(name: str) -> str:
    return COMMANDS[name].summary


def _argument_name(param) -> str:
    """``ORIGINAL``, ``[INPUT]`` (optional) or ``RELEASE...`` (several)."""
    name = param.metavar or param.name.upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if param.required else f"[{name}]"


class Command(TyperCommand):
    """A command in plain text: arguments by their names, options in sections
    (``rich_help_panel``); a Ctrl-C it does not handle itself said in one line."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # typer would end it with 130 and nothing said
            print("interrupted: nothing was finished", file=sys.stderr)
            raise typer.Exit(130) from None

    def collect_usage_pieces(self, ctx) -> list[str]:
        arguments = [_argument_name(p) for p in self.get_params(ctx) if p.param_type_name == "argument"]
        return [self.options_metavar or "[OPTIONS]", *arguments]

    def format_options(self, ctx, formatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                sections.setdefault("Arguments", []).append(
                    (_argument_name(param), getattr(param, "help", "") or "")
                )
                continue
            record = param.get_help_record(ctx)
            if record is None:
                continue
            section = getattr(param, "rich_help_panel", None) or "Options"
            sections.setdefault(section, []).append(record)
        for section, rows in sections.items():
            with formatter.section(section):
                formatter.write_dl(rows)


class _LazyGroup(TyperGroup):
    """The commands of :data:`COMMANDS`, each built from its module on first use."""

    def list_commands(self, ctx) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = import_module(f"rlopt.cli.{entry.module}")
        return typer.main.get_group(module.app).get_command(ctx, cmd_name)

    def format_commands(self, ctx, formatter) -> None:
        """The list of commands from their summaries, without importing them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.summary) for name, entry in COMMANDS.items()])


def commands() -> typer.Typer:
    """The Typer of one command module: plain help (no boxes), options in sections."""
    return typer.Typer(rich_markup_mode=None, add_completion=False)


app = typer.Typer(
    name="rlopt",
    cls=_LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


@app.callback(epilog="Help of a command: rlopt COMMAND --help. The method: docs/method.md.")
def _rlopt() -> None:
    """Worst-case re-identification risk of masked microdata.

    First result on your own files: rlopt risk ORIGINAL.csv MASKED.csv
    """


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def main() -> None:
    """Entry point of the console script: bad input, whether the parser or the command
    finds it, ends with one line ``error: ...`` and exit code 2; a solver that failed,
    or any other error rlopt raises on purpose, with one line and exit code 1; Ctrl-C
    with exit code 130."""
    warnings.showwarning = _show_warning
    if sys.platform == "win32":  # rlopt serve stops a run with CTRL_BREAK_EVENT: its Ctrl-C
        signal.signal(signal.SIGBREAK, signal.default_int_handler)
    try:
        code = app(standalone_mode=False, prog_name="rlopt")
    except ClickException as exc:  # the parser's: a bad option, a missing argument
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare ``rlopt``: its help
            print(exc.format_message())
            sys.exit(exc.exit_code)
        where = getattr(getattr(exc, "ctx", None), "command_path", "rlopt")
        print(f"error: {exc.format_message()} (see: {where} --help)", file=sys.stderr)
        sys.exit(exc.exit_code)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except (SolverError, RloptError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:  # Ctrl-C before a command had anything to keep (while loading)
        print("interrupted: nothing was finished", file=sys.stderr)
        sys.exit(130)
    except typer.Abort:  # an input stream that ended (EOFError), as click reports it
        print("error: aborted: an input or a worker's stream ended early", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
