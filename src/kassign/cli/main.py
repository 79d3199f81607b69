"""The ``kassign`` command: bad input exits 2 with one line on stderr, never a traceback."""

from __future__ import annotations

import logging
import sys

import click

from kassign.errors import KassignError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kassign")
def cli() -> None:
    """kassign: where Kafka puts your data, computed exactly as Kafka does.

    key -> partition (partition), partition -> consumer (assign), replica -> broker (replicas).
    """


def _register_commands() -> None:
    # One module per command; each exposes `command`.
    from kassign.cli import assign_cmd, partition_cmd, replicas_cmd

    for module in (partition_cmd, assign_cmd, replicas_cmd):
        cli.add_command(module.command)
    # -- further commands register below this line --
    from kassign.cli import simulate_cmd
    cli.add_command(simulate_cmd.command)
    from kassign.cli import pipeline_cmd
    cli.add_command(pipeline_cmd.command)
    from kassign.cli import plan_cmd
    cli.add_command(plan_cmd.command)


_register_commands()


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _one_line(text: str) -> str:
    from kassign.cli.common import printable

    return printable(" ".join(text.split()))


class _OncePerMessage(logging.Filter):
    """A warning repeated for every round or member is shown once."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self._seen:
            return False
        self._seen.add(message)
        return True


class _OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"kassign: {record.levelname.lower()}: {_one_line(record.getMessage())}"


def _show_warnings() -> None:
    """kassign's warnings (ignored member data, fallbacks) on stderr, prefixed, each once."""
    logger = logging.getLogger("kassign")
    if any(getattr(h, "_kassign_cli", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_OneLineFormatter())
    handler.addFilter(_OncePerMessage())
    handler._kassign_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.propagate = False


def main(argv: list[str] | None = None) -> None:
    _show_warnings()
    try:
        cli.main(args=argv, prog_name="kassign", standalone_mode=False)
    except KassignError as err:
        click.echo(f"kassign: error: {_one_line(str(err))}", err=True)
        sys.exit(2)
    except _NO_ARGS_IS_HELP as err:  # `kassign` alone: show help
        click.echo(err.ctx.get_help() if err.ctx else str(err))
        sys.exit(2)
    except click.UsageError as err:
        hint = f" (see '{err.ctx.command_path} --help')" if err.ctx else ""
        click.echo(f"kassign: error: {_one_line(err.format_message())}{hint}", err=True)
        sys.exit(2)
    except click.ClickException as err:
        click.echo(f"kassign: error: {_one_line(err.format_message())}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("kassign: aborted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except Exception as err:  # a bug of ours: still one line, with what to report
        click.echo(f"kassign: internal error: {type(err).__name__}: {_one_line(str(err))} (please report this)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
