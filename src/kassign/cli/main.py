"""The ``kassign`` command: bad input exits 2 with one line on stderr, never a traceback."""

from __future__ import annotations

import logging
import sys

import click

from kassign.core.errors import Interrupted, KassignError


# One module per command, each exposing ``command``; a module is imported only when its command runs (or
# when --help lists them all), so that `kassign partition` does not load Spark's or the assignors' code and
# `kassign pipeline` can start Spark's JVM before the rest of kassign is loaded.
_COMMANDS = {"partition": "partition_cmd", "assign": "assign_cmd", "replicas": "replicas_cmd",
             "simulate": "simulate_cmd", "pipeline": "pipeline_cmd", "plan": "plan_cmd",
             "describe-group": "describe_group_cmd"}


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = _COMMANDS.get(name)
        if module is None:
            return None
        from importlib import import_module

        return import_module(f"kassign.cli.{module}").command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kassign")
def cli() -> None:
    """kassign: where Kafka puts your data, computed exactly as Kafka does.

    key -> partition (partition), partition -> consumer (assign, describe-group, simulate), replica -> broker
    (replicas, plan), and the Spark pipeline (pipeline).
    """


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


# The signal that stopped the command, if one did: code that sees the failure it caused (a library that turned
# the interruption into its own error) can still tell that it was an interruption.
received: Interrupted | None = None


def interrupt_on_signals() -> None:
    """SIGINT and SIGTERM end the command with :class:`Interrupted` (cleanup in ``finally`` blocks runs, the
    exit is one line). Called again by code that installed its own handler meanwhile (PySpark does)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        global received
        received = Interrupted(signal.Signals(signum).name, 128 + signum)
        raise received

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)


def _invoke(argv: list[str] | None) -> int:
    """Run the command; its exit status (0, 1 for a bug of ours, 2 for bad input, 128 + the signal number
    when a signal stopped it)."""
    _show_warnings()
    if argv is None:  # the command line (from Python, the caller's own signal handling stays)
        interrupt_on_signals()
    try:
        result = cli.main(args=argv, prog_name="kassign", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except Interrupted as stopped:
        click.echo(f"kassign: interrupted by {stopped.signal_name}; nothing half-written was left behind", err=True)
        return stopped.exit_code
    except KassignError as err:
        click.echo(f"kassign: error: {_one_line(str(err))}", err=True)
        return 2
    except _NO_ARGS_IS_HELP as err:  # `kassign` alone: show help
        click.echo(err.ctx.get_help() if err.ctx else str(err))
        return 2
    except click.UsageError as err:
        hint = f" (see '{err.ctx.command_path} --help')" if err.ctx else ""
        click.echo(f"kassign: error: {_one_line(err.format_message())}{hint}", err=True)
        return 2
    except click.ClickException as err:
        click.echo(f"kassign: error: {_one_line(err.format_message())}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("kassign: aborted", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except Exception as err:  # a bug of ours: still one line, with what to report
        click.echo(f"kassign: internal error: {type(err).__name__}: {_one_line(str(err))} (please report this)", err=True)
        return 1


def _leave_now(code: int) -> None:
    """Exit without the interpreter's teardown, which takes 0.3-0.5 s once Arrow, SciPy, numba and
    matplotlib are loaded and has nothing left to do for a finished command: output is flushed
    here, files are closed, Spark is stopped. Only when no other thread still works."""
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be written anyway
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    """The ``kassign`` command. Called with ``argv`` (from Python) it returns, or raises SystemExit
    for a non-zero status; from the command line it exits the process."""
    code = _invoke(argv)
    if argv is None:
        _leave_now(code)
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
