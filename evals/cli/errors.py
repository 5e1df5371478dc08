"""One error style for every command: `error: <what> (<where>)` on stderr, one line, exit 2 for bad input.

The root app's click group catches what a command lets escape, so no command needs its own try/except for
the common cases: a wrong option value or a missing file (click's usage errors), a ValueError or OSError
from the library (the user's input was refused), a pydantic ValidationError (a config field). Anything else
is a bug: one line saying so, exit 1. The traceback is printed only with `repoanchor --debug ...`.
"""

from __future__ import annotations

import sys
import traceback

import typer
from pydantic import ValidationError
from typer._click.exceptions import BadParameter, NoArgsIsHelpError, UsageError  # typer 0.29 vendors click
from typer.core import TyperGroup

USAGE = 2
"""Bad input: the exit code of every refused invocation (click's own usage errors use it too)."""
BUG = 1
state = {"debug": False}
"""Set by the root callback's --debug; read when an error escapes."""


def one_line(text: str) -> str:
    """Messages are single lines so that scripts can grep them; wrapped text is joined back."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def usage_message(error: UsageError) -> str:
    message = one_line(error.format_message()).replace("Value error, ", "")  # pydantic's prefix, via typer
    if error.ctx is not None and error.ctx.command_path and not isinstance(error, BadParameter):
        return f"{message} ({error.ctx.command_path.split(' ', 1)[-1]})"
    return message


def validation_message(error: ValidationError) -> str:
    """The first refused field, its reason and the model it belongs to; pydantic's URL left out."""
    first = error.errors()[0]
    field = ".".join(map(str, first["loc"])) or "(top level)"
    more = f"; and {error.error_count() - 1} more" if error.error_count() > 1 else ""
    return f"{first['msg'].removeprefix('Value error, ')}{more} ({error.title}:{field})"


def os_message(error: OSError) -> str:
    where = f" ({error.filename})" if error.filename else ""
    return f"{error.strerror or one_line(str(error))}{where}"


def describe(error: BaseException) -> tuple[str, int]:
    """(the one-line message, the exit code) for an error that escaped a command."""
    if isinstance(error, UsageError):
        return usage_message(error), USAGE
    if isinstance(error, ValidationError):
        return validation_message(error), USAGE
    if isinstance(error, OSError):
        return os_message(error), USAGE
    if isinstance(error, (ValueError, LookupError)):
        return one_line(error), USAGE
    name = type(error).__name__
    return f"internal error {name}: {one_line(error)} (rerun with `repoanchor --debug ...` for the traceback)", BUG


def report(error: BaseException) -> int:
    message, code = describe(error)
    if state["debug"]:
        traceback.print_exception(error, file=sys.stderr)
    typer.echo(f"error: {message}", err=True)
    return code


class ErrorGroup(TyperGroup):
    """The root group: every subcommand runs inside its `invoke`, so this is where their errors end."""

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, NoArgsIsHelpError):  # endings, and the help a bare group prints
            raise
        except Exception as error:  # each is reported on one line, never swallowed: exit non-zero
            raise typer.Exit(report(error)) from error

    def make_context(self, info_name, args, parent=None, **extra):
        # The root's own options are parsed here, before `invoke`: their usage errors get the same line.
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except NoArgsIsHelpError:
            raise
        except UsageError as error:
            raise typer.Exit(report(error)) from error


def show_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        typer.echo(f"repoanchor {version('repoanchor')}")
        raise typer.Exit(0)


def root_options(
    debug: bool = typer.Option(False, "--debug", help="Print the traceback of an error, not just its line."),
    version: bool = typer.Option(
        False, "--version", callback=show_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The root app's callback: options that come before the command (`repoanchor --debug eval ...`)."""
    state["debug"] = debug
