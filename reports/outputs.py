"""Writing an :class:`~judge_transfer_audit.results.result.AuditResult` to an output directory.

``result.json`` (versioned, lossless), ``report.html`` (self-contained), ``junit.xml`` (one
test case per check), the tables as CSV and, when given, ``timings.json`` (wall-clock
figures of the run, kept out of the result so that it is byte-identical between runs).
Every file is written by :class:`judge_transfer_audit.core.output_files.OutputFolder`: to a temporary file as
it is rendered (result.json encoded straight into it, one top-level entry at a time, never held whole),
then all renamed into place once every file is written; never onto an input or through a link, stale
files of the previous run removed only when they are still what judge-audit wrote (a manifest in the
folder).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pickle
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import pandas as pd

from judge_transfer_audit.core.collector import older_objects_frozen
from judge_transfer_audit.core.output_files import (
    MANIFEST,
    Content,
    FolderWrite,
    OutputFolder,
    check_output_folder,
    csv_text,
)
from judge_transfer_audit.core.progress import ProgressFactory, no_progress
from judge_transfer_audit.results.result import AuditResult, result_to_json, write_result_json
from judge_transfer_audit.sections.registry import entries


def _tabled_sections(result: AuditResult) -> list[str]:
    """The optional sections whose entry in the section table writes a CSV and whose payload has a tidy
    table (``to_frame()``), each written as ``NAME.csv``, in table order."""
    return [e.name for e in entries() if e.csv and callable(getattr(getattr(result, e.name).payload, "to_frame", None))]


#: The tables every run writes, besides the sections' (:func:`_other_files`).
_BASE_TABLES = ("cells", "checks", "agreement", "reader_baseline", "judge_pairs")


def output_count(result: AuditResult, *, html: bool = True, timings: Mapping[str, Any] | None = None) -> int:
    """How many files :func:`render_outputs` renders for ``result``: the total of its progress bar."""
    return 2 + len(_BASE_TABLES) + len(_tabled_sections(result)) + int(html) + int(timings is not None)


def _nothing() -> None:
    pass


def _serialised(function: Callable[[], None]) -> Callable[[], None]:
    """``function`` called under a lock: one call at a time from several threads."""
    lock = threading.Lock()

    def call() -> None:
        with lock:
            function()

    return call


#: The files every run may write besides one CSV per optional section.
_BASE_FILES = (
    "result.json",
    "junit.xml",
    "report.html",
    "timings.json",
    "cells.csv",
    "checks.csv",
    "agreement.csv",
    "reader_baseline.csv",
    "judge_pairs.csv",
)


def output_files() -> tuple[str, ...]:
    """Every file ``write_outputs`` may write (one CSV per section of the section table); the ones a run
    does not write are removed (when unchanged since judge-audit wrote them), so an output directory
    never mixes two runs."""
    return _BASE_FILES + tuple(f"{e.name}.csv" for e in entries() if e.csv)


def legacy_outputs(out_dir: str | Path) -> tuple[str, ...]:
    """Output files of a folder written by judge-audit before output manifests existed.

    Such a folder has no manifest and a ``result.json`` that is an ``audit run`` result; its
    files under :func:`output_files` names are then judge-audit's own (replaced when this run
    writes them, never removed). Anything else: ().
    """
    out = Path(out_dir)
    result = out / "result.json"
    if (out / MANIFEST).exists() or (out / MANIFEST).is_symlink() or result.is_symlink() or not result.is_file():
        return ()
    try:
        data = json.loads(result.read_text(encoding="utf-8"))
        command = data["provenance"]["command"]
    except (OSError, ValueError, KeyError, TypeError):
        return ()
    if not (isinstance(command, str) and command.startswith("audit run") and "schema_version" in data):
        return ()
    return tuple(name for name in output_files() if (out / name).is_file() and not (out / name).is_symlink())


def check_output_dir(out_dir: str | Path, inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Refuse, before the audit runs, an ``--out`` where writing would touch an input or a foreign file."""
    check_output_folder(out_dir, output_files(), inputs, adopt=legacy_outputs(out_dir))


def render_outputs(
    result: AuditResult,
    *,
    html: bool = True,
    timings: Mapping[str, Any] | None = None,
    fail_on: tuple[str, ...] = (),
    jobs: int = 1,
    done: Callable[[], None] = _nothing,
) -> dict[str, str]:
    """Every output file of ``result`` as text: file name -> content.

    ``fail_on``: cell statuses the gate was told to fail on (``audit run --gate --fail-on``),
    reported as failures in junit.xml too. ``jobs > 1`` (where ``fork`` exists): result.json is
    rendered here while a forked child renders the other files (:func:`_beside_in_child`); the
    texts are the same as with ``jobs=1``. ``done()`` is called once per file rendered
    (:func:`output_count` times), from this process, whichever process rendered it.
    :func:`write_outputs` writes the same files without holding them all (result.json's text never).
    """
    files = _output_files(result, html=html, timings=timings, fail_on=fail_on, jobs=jobs, done=done, stream=False)
    return dict(files)


def _output_files(
    result: AuditResult,
    *,
    html: bool,
    timings: Mapping[str, Any] | None,
    fail_on: tuple[str, ...],
    jobs: int,
    done: Callable[[], None],
    stream: bool,
) -> Iterator[tuple[str, Content]]:
    """:func:`render_outputs`' files, (name, content) one at a time, result.json first: its text, or with
    ``stream`` a :data:`~judge_transfer_audit.core.output_files.TextWriter` that encodes it while it is
    written (with ``jobs > 1`` the forked child renders the other files meanwhile). Close the iterator
    (or exhaust it): the objects alive on entry stay frozen out of the garbage collector's passes, and
    the child alive, until then."""

    def result_json() -> Content:
        return functools.partial(write_result_json, result, end="\n") if stream else result_to_json(result, end="\n")

    with older_objects_frozen():
        if jobs > 1 and hasattr(os, "fork"):
            done = _serialised(done)  # called by this thread and by the one reading the child's progress
            others = _beside_in_child(
                lambda tick: _other_files(result, html=html, timings=timings, fail_on=fail_on, done=tick), done
            )
            with others:
                yield "result.json", result_json()
                done()
                yield from others.value().items()
            return
        yield "result.json", result_json()
        done()
        yield from _other_texts(result, html=html, timings=timings, fail_on=fail_on, done=done)


def _render_outputs(
    result: AuditResult,
    *,
    html: bool,
    timings: Mapping[str, Any] | None,
    fail_on: tuple[str, ...],
    done: Callable[[], None] = _nothing,
) -> dict[str, str]:
    """:func:`render_outputs` in this process alone."""
    text = result_to_json(result, end="\n")
    done()
    return {"result.json": text, **_other_files(result, html=html, timings=timings, fail_on=fail_on, done=done)}


def _other_files(
    result: AuditResult,
    *,
    html: bool,
    timings: Mapping[str, Any] | None,
    fail_on: tuple[str, ...],
    done: Callable[[], None] = _nothing,
) -> dict[str, str]:
    """Every output file but result.json, in the order they are written; ``done()`` after each."""
    return dict(_other_texts(result, html=html, timings=timings, fail_on=fail_on, done=done))


def _table_csv(name: str, frame: Any) -> str | None:
    """The CSV of a table; a section's table only when it is tidy (a frame), None otherwise."""
    return csv_text(frame) if name in _BASE_TABLES or isinstance(frame, pd.DataFrame) else None


def _other_texts(
    result: AuditResult,
    *,
    html: bool,
    timings: Mapping[str, Any] | None,
    fail_on: tuple[str, ...],
    done: Callable[[], None] = _nothing,
) -> Iterator[tuple[str, str]]:
    """:func:`_other_files` one file at a time, each rendered when the previous one is taken (``done()`` once
    it is taken, or found to write nothing), so that a writer holds one file's text at a time."""
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.junit import render_junit

    yield "junit.xml", render_junit(result.checks, fail_on=fail_on)
    done()
    tables: dict[str, Callable[[], Any]] = {
        "cells": result.cells_frame,
        "checks": result.checks_frame,
        "agreement": result.agreement.to_frame,
        "reader_baseline": result.reader_baseline.to_frame,
        "judge_pairs": result.judge_pairs.to_frame,
        **{name: getattr(result, name).payload.to_frame for name in _tabled_sections(result)},
    }
    for name, to_frame in tables.items():
        text = _table_csv(name, to_frame())
        if text is not None:
            yield f"{name}.csv", text
        del text  # not held while the next table is made
        done()
    if html:
        yield "report.html", render_html(result)
        done()
    if timings is not None:
        yield "timings.json", json.dumps(timings, indent=1, allow_nan=False) + "\n"
        done()


#: What the child writes into the pipe: one byte per ``tick()``, then one before the pickled value.
_TICK, _VALUE = b"+", b"="


class _beside_in_child(contextlib.AbstractContextManager):
    """``render(tick)`` run in a forked child process while this one works on; :meth:`value` waits for it.

    The child sends a byte through a pipe at each ``tick()`` (a file rendered), then its value
    pickled, and exits (``os._exit``: no atexit handlers, no flushed buffers of the parent). A thread
    of this process reads the pipe as the child writes it and calls ``tick()`` here for each of the
    child's (so a progress bar moves while this process renders its own part). If the child fails in
    any way (an exception, killed, out of memory, a value that does not pickle), :meth:`value` calls
    ``render`` again here, so an error is raised exactly as it would be without the child, from this
    process, and a success gives the same value. Leaving the ``with`` block early (an error of the
    parent's own work, Ctrl-C) kills and reaps the child: no process is left behind.
    """

    def __init__(self, render, tick: Callable[[], None] = _nothing):
        self._render, self._tick = render, tick
        self._pid, self._ticked, self._payload, self._reader = 0, 0, b"", None
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is inherited (the child never flushes)
            with contextlib.suppress(Exception):
                stream.flush()
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to spare: render here when asked
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:  # the child
            status = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps(render(lambda: os.write(write_fd, _TICK)), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(_VALUE + payload)
                status = 0
            except BaseException:  # noqa: BLE001 - reported by the parent rendering again
                pass
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid = pid
        self._reader = threading.Thread(target=self._read, args=(read_fd,), name="outputs-child", daemon=True)
        self._reader.start()

    def _read(self, read_fd: int) -> None:
        """The child's ticks, passed on as they come, then its pickled value (run by the reading thread)."""
        with os.fdopen(read_fd, "rb") as pipe:
            while (byte := pipe.read(1)) == _TICK:
                self._ticked += 1
                try:
                    self._tick()
                except Exception:  # noqa: BLE001 - a failing progress display must not stall the child's pipe
                    self._tick = _nothing
            if byte == _VALUE:
                self._payload = pipe.read()

    def value(self):
        """The child's value (waiting for it), or ``render`` run here if the child failed (ticking only
        past the ticks the child had sent)."""
        if self._reader is not None:
            self._reader.join()
        status = self._reap(kill=False)
        payload, self._payload = self._payload, b""  # not held beside the value
        if status == 0 and payload:
            with contextlib.suppress(Exception):
                return pickle.loads(payload)
        ticked, tick = self._ticked, self._tick

        def past_the_child() -> None:
            nonlocal ticked
            if ticked:
                ticked -= 1
            else:
                tick()

        return self._render(past_the_child)

    def _reap(self, *, kill: bool) -> int | None:
        if not self._pid:
            return None
        pid, self._pid = self._pid, 0
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
            except InterruptedError:  # pragma: no cover - PEP 475 retries already
                continue
            except ChildProcessError:
                return None
            return os.waitstatus_to_exitcode(status)

    def __exit__(self, *exc) -> None:
        self._reap(kill=True)  # a killed child closes its end: the reading thread sees the end of the pipe
        if self._reader is not None:
            self._reader.join()


def write_outputs(
    result: AuditResult,
    out_dir: str | Path,
    *,
    html: bool = True,
    inputs: Iterable[str | os.PathLike | None] = (),
    timings: Mapping[str, Any] | None = None,
    fail_on: tuple[str, ...] = (),
    jobs: int = 1,
) -> dict[str, Path]:
    """Write every output file into ``out_dir`` (created if needed); return key -> path.

    Keys are the file stems (``result``, ``report``, ``cells``, ...). ``inputs`` are the
    run's input files: an output that would overwrite one is refused
    (:class:`~judge_transfer_audit.core.errors.InputError`). :func:`write_outputs_detail` also says which stale
    files were removed or kept.
    """
    return {
        Path(name).stem: path
        for name, path in write_outputs_detail(
            result, out_dir, html=html, inputs=inputs, timings=timings, fail_on=fail_on, jobs=jobs
        ).paths.items()
    }


def write_outputs_detail(
    result: AuditResult,
    out_dir: str | Path,
    *,
    html: bool = True,
    inputs: Iterable[str | os.PathLike | None] = (),
    timings: Mapping[str, Any] | None = None,
    fail_on: tuple[str, ...] = (),
    jobs: int = 1,
    progress_bar: ProgressFactory | None = None,
) -> FolderWrite:
    """:func:`write_outputs`, returning the :class:`~judge_transfer_audit.core.output_files.FolderWrite` record.

    ``progress_bar``: a factory of :mod:`judge_transfer_audit.core.progress`; its bar ``"writing outputs"`` counts
    the files rendered and is closed once they are on disk.
    """
    bar = (progress_bar or no_progress)("writing outputs", output_count(result, html=html, timings=timings))
    try:
        with OutputFolder(
            out_dir, command="run", inputs=inputs, may_write=output_files(), adopt=legacy_outputs(out_dir)
        ) as folder:
            files = _output_files(
                result, html=html, timings=timings, fail_on=fail_on, jobs=jobs, done=bar.advance, stream=True
            )
            with contextlib.closing(files):
                for name, content in files:
                    folder.add(name, content)
                    del content  # a file's text is not held while the next is rendered
            return folder.commit()
    finally:
        bar.close()
