"""The ``audit`` command line.

``main(argv) -> int`` is the whole program: it parses ``argv``, runs the subcommand and
turns every expected failure into a plain message and an :class:`ExitStatus`. It is
tested in-process. Each subcommand lives in its own module under ``audit/cli/`` and
exposes a ``click.Command`` named ``command``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib
import io
import os
import sys
import warnings

import click

from judge_transfer_audit import __version__
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.cli.usage import Group
from judge_transfer_audit.core.errors import (
    AuditError,
    ConvergenceError,
    InputError,
    MissingDependencyError,
    ProviderError,
    WorkerLostError,
)
from judge_transfer_audit.core.redact import redact_text
from judge_transfer_audit.core.terminal_text import printable

# Subcommand modules, in the order `audit --help` lists them.
COMMAND_MODULES = (
    "run",
    "report",
    "gate",
    "diff",
    "budget",
    "features",
    "reliability",
    "consistency",
    "generate",
    "score",
    "labelstudio",
    "import_",
)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="audit")
def cli() -> None:
    """judge-audit: can your automatic judge be trusted on the data it is about to judge?

    The main command is `audit run JUDGE HUMANS`; see `audit run --help`.
    Exit statuses are listed in the README (0 ok, 1 gate failed, 2 bad input, ...).
    """


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"judge_transfer_audit.cli.{name}")
        except ModuleNotFoundError as exc:
            # A subcommand module not written yet; any other missing module is a real error.
            if exc.name == f"judge_transfer_audit.cli.{name}":
                continue
            raise
        cli.add_command(module.command)


_load_commands()


def _say(text: object) -> None:
    """One line on stderr: secrets redacted, control characters from inputs escaped."""
    click.echo(printable(redact_text(str(text))), err=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _say(f"warning ({category.__name__}): {message}")


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (without the program name); return the exit status.

    Every message printed for an expected failure goes through :func:`_say`, so text that
    came from an input (a column name, a server's reply) cannot drive the terminal.
    """
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        with warnings.catch_warnings():
            # A warning can quote an input (a system name, a glyph a font lacks): print it inert.
            warnings.showwarning = _show_warning
            # The exact command is recorded in the result's provenance (secrets redacted).
            result = cli.main(args=argv, prog_name="audit", standalone_mode=False, obj={"argv": ["audit", *argv]})
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        _say("Interrupted.")
        return ExitStatus.INTERRUPTED
    except click.ClickException as exc:
        shown = io.StringIO()
        exc.show(file=shown)
        for line in shown.getvalue().rstrip("\n").split("\n"):
            _say(line)
        return ExitStatus.USAGE_ERROR
    except InputError as exc:
        _say(f"Input error ({len(exc.problems)} problem(s)):")
        fixes: set[str] = set()
        for problem in exc.problems:
            # a fix is printed once: the next problems of the same kind only say where
            _say(f"  - {problem if problem.fix not in fixes else dataclasses.replace(problem, fix='')}")
            fixes.add(problem.fix)
        return ExitStatus.INPUT_ERROR
    except MissingDependencyError as exc:
        _say(f"Missing dependency: {exc}")
        return ExitStatus.MISSING_DEPENDENCY
    except ProviderError as exc:
        _say(f"Provider error: {exc}")
        return ExitStatus.PROVIDER_ERROR
    except WorkerLostError as exc:
        click.echo(f"Worker lost: {exc}", err=True)
        return ExitStatus.WORKER_LOST
    except ConvergenceError as exc:
        _say(f"Computation error: {exc}")
        return ExitStatus.COMPUTATION_ERROR
    except AuditError as exc:
        _say(f"Error: {exc}")
        return ExitStatus.COMPUTATION_ERROR
    except KeyboardInterrupt:
        _say("Interrupted.")
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:  # a stream closed early that run_main's guard does not cover (in-process callers)
        return ExitStatus.OUTPUT_CLOSED
    except OSError as exc:  # e.g. an output directory that cannot be written
        where = f" ({exc.filename})" if exc.filename else ""
        _say(
            f"Input error: cannot read or write a file{where}: {exc.strerror or exc}. "
            "Fix: check the path and its permissions."
        )
        return ExitStatus.INPUT_ERROR
    except Exception as exc:  # a bug: say so plainly, full traceback only on request
        if os.environ.get("JUDGE_AUDIT_DEBUG"):
            raise
        _say(
            f"Internal error ({type(exc).__name__}: {exc}). This is a bug in judge-audit; "
            "set JUDGE_AUDIT_DEBUG=1 to see the traceback and please report it."
        )
        return ExitStatus.INTERNAL_ERROR
    if isinstance(result, int):
        return result
    return ExitStatus.OK


class _ClosableStream(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` for the whole program: once the reader closes the pipe
    (``audit run ... 2>&1 | head -c100``), further text is dropped instead of raising
    ``BrokenPipeError`` in whatever was printing, so the command runs to its end and exits with
    its own status (2 for bad input stays 2; it never turns into 1 or a traceback)."""

    def __init__(self, stream):
        super().__init__()
        self._stream = stream
        self.lost = False

    @property
    def encoding(self):
        return self._stream.encoding

    @property
    def errors(self):
        return self._stream.errors

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True

    def _guarded(self, action, *args):
        if self.lost:
            return None
        try:
            return action(*args)
        except BrokenPipeError:
            self.lost = True
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET):
                raise
            self.lost = True
        # the reader is gone: later writes and the interpreter's final flush go nowhere, silently
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        return None

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # text only (click probes for a binary stream with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._guarded(self._stream.write, text)
        return len(text)

    def flush(self) -> None:
        self._guarded(self._stream.flush)


def run_main() -> None:
    """Console-script entry point (and ``python -m judge_transfer_audit``).

    A standard output or error closed early changes no status the command gives; a command that
    would exit 0 exits :attr:`ExitStatus.OUTPUT_CLOSED` (141) instead, since part of its output was lost.
    """
    streams = [_ClosableStream(sys.stdout), _ClosableStream(sys.stderr)]
    sys.stdout, sys.stderr = streams
    status = main(sys.argv[1:])
    for stream in streams:
        stream.flush()
    if status == ExitStatus.OK and any(stream.lost for stream in streams):
        status = ExitStatus.OUTPUT_CLOSED
    sys.exit(status)
