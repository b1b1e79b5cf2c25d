"""Writing an :class:`~judge_transfer_audit.results.result.AuditResult` to an output directory.

``result.json`` (versioned, lossless), ``report.html`` (self-contained), ``junit.xml`` (one
test case per check), the tables as CSV and, when given, ``timings.json`` (wall-clock
figures of the run, kept out of the result so that it is byte-identical between runs).
Everything is rendered first and then written by :func:`judge_transfer_audit.core.output_files.write_folder`:
atomic, never onto an input or through a link, stale files of the previous run removed
only when they are still what judge-audit wrote (a manifest in the folder).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import signal
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from judge_transfer_audit.core.output_files import MANIFEST, FolderWrite, check_output_folder, csv_text, write_folder
from judge_transfer_audit.results.result import AuditResult, result_to_json


def section_tables(result: AuditResult) -> dict[str, pd.DataFrame]:
    """The main table of every computed optional section whose payload offers ``to_frame()``, by
    section name (written as ``<section>.csv``)."""
    tables: dict[str, pd.DataFrame] = {}
    for name in result.section_names():
        payload = getattr(result, name).payload
        to_frame = getattr(payload, "to_frame", None)
        if callable(to_frame):
            frame = to_frame()
            if isinstance(frame, pd.DataFrame):
                tables[name] = frame
    return tables


#: The files of an output folder that predates the folder's manifest: adopted as judge-audit's own.
LEGACY_FILES = (
    "result.json",
    "junit.xml",
    "report.html",
    "timings.json",
    "cells.csv",
    "checks.csv",
    "agreement.csv",
    "reader_baseline.csv",
    "judge_pairs.csv",
    "dev.csv",
    "uncertainty.csv",
    "readers.csv",
    "surface.csv",
)
#: Every file ``write_outputs`` may write (one CSV per optional section); the ones a run does not
#: write are removed (when unchanged since judge-audit wrote them), so an output directory never
#: mixes two runs.
OUTPUT_FILES = LEGACY_FILES + tuple(
    f"{name}.csv" for name in AuditResult.section_names() if f"{name}.csv" not in LEGACY_FILES
)


def legacy_outputs(out_dir: str | Path) -> tuple[str, ...]:
    """Output files of a folder written by judge-audit before output manifests existed.

    Such a folder has no manifest and a ``result.json`` that is an ``audit run`` result; its
    files under :data:`LEGACY_FILES` names are then judge-audit's own (replaced when this run
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
    return tuple(name for name in LEGACY_FILES if (out / name).is_file() and not (out / name).is_symlink())


def check_output_dir(out_dir: str | Path, inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Refuse, before the audit runs, an ``--out`` where writing would touch an input or a foreign file."""
    check_output_folder(out_dir, OUTPUT_FILES, inputs, adopt=legacy_outputs(out_dir))


@contextlib.contextmanager
def _older_objects_frozen():
    """The objects alive on entry (the result, the run's data, every module) left out of the cyclic garbage
    collector's passes until exit (``gc.freeze``); objects made inside are collected as usual.

    Rendering a large result makes millions of short-lived lists and strings, which trigger full collections,
    and a full collection walks every object alive: at 1,000 criteria two of them took 0.37 of the 2.2 CPU-s
    of writing. Nothing is left uncollected that would otherwise be freed inside: what was alive
    on entry is still referenced by the caller. A heap the caller froze already is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def render_outputs(
    result: AuditResult,
    *,
    html: bool = True,
    timings: Mapping[str, Any] | None = None,
    fail_on: tuple[str, ...] = (),
    jobs: int = 1,
) -> dict[str, str]:
    """Every output file of ``result`` as text: file name -> content.

    ``fail_on``: cell statuses the gate was told to fail on (``audit run --gate --fail-on``),
    reported as failures in junit.xml too. ``jobs > 1`` (where ``fork`` exists): result.json is
    rendered here while a forked child renders the other files (:func:`_beside_in_child`); the
    texts are the same as with ``jobs=1``.
    """
    with _older_objects_frozen():
        if jobs > 1 and hasattr(os, "fork"):
            others = _beside_in_child(lambda: _other_files(result, html=html, timings=timings, fail_on=fail_on))
            with others:
                text = result_to_json(result) + "\n"
                return {"result.json": text, **others.value()}
        return _render_outputs(result, html=html, timings=timings, fail_on=fail_on)


def _render_outputs(
    result: AuditResult, *, html: bool, timings: Mapping[str, Any] | None, fail_on: tuple[str, ...]
) -> dict[str, str]:
    """:func:`render_outputs` in this process alone."""
    return {
        "result.json": result_to_json(result) + "\n",
        **_other_files(result, html=html, timings=timings, fail_on=fail_on),
    }


def _other_files(
    result: AuditResult, *, html: bool, timings: Mapping[str, Any] | None, fail_on: tuple[str, ...]
) -> dict[str, str]:
    """Every output file but result.json, in the order they are written."""
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.junit import render_junit

    files = {"junit.xml": render_junit(result.checks, fail_on=fail_on)}
    tables = {
        "cells": result.cells_frame(),
        "checks": result.checks_frame(),
        "agreement": result.agreement.to_frame(),
        "reader_baseline": result.reader_baseline.to_frame(),
        "judge_pairs": result.judge_pairs.to_frame(),
        **section_tables(result),
    }
    for name, frame in tables.items():
        files[f"{name}.csv"] = csv_text(frame)
    if html:
        files["report.html"] = render_html(result)
    if timings is not None:
        files["timings.json"] = json.dumps(timings, indent=1, allow_nan=False) + "\n"
    return files


class _beside_in_child(contextlib.AbstractContextManager):
    """``render()`` run in a forked child process while this one works on; :meth:`value` waits for it.

    The child sends its value back pickled through a pipe and exits (``os._exit``: no atexit
    handlers, no flushed buffers of the parent). If the child fails in any way (an exception, killed,
    out of memory, a value that does not pickle), :meth:`value` calls ``render()`` again here, so an
    error is raised exactly as it would be without the child, from this process, and a success gives
    the same value. Leaving the ``with`` block early (an error of the parent's own work, Ctrl-C) kills
    and reaps the child: no process is left behind.
    """

    def __init__(self, render):
        self._render = render
        self._pid = 0
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is inherited (the child never flushes)
            with contextlib.suppress(Exception):
                stream.flush()
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to spare: render here when asked
            os.close(read_fd)
            os.close(write_fd)
            self._read_fd = -1
            return
        if pid == 0:  # the child
            status = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps(render(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            except BaseException:  # noqa: BLE001 - reported by the parent rendering again
                pass
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def value(self):
        """The child's value (waiting for it), or ``render()`` run here if the child failed."""
        payload = b""
        if self._read_fd >= 0:
            with os.fdopen(self._read_fd, "rb") as pipe:
                self._read_fd = -1
                payload = pipe.read()
        status = self._reap(kill=False)
        if status == 0 and payload:
            with contextlib.suppress(Exception):
                return pickle.loads(payload)
        return self._render()

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
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1
        self._reap(kill=True)


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
) -> FolderWrite:
    """:func:`write_outputs`, returning the :class:`~judge_transfer_audit.core.output_files.FolderWrite` record."""
    files = render_outputs(result, html=html, timings=timings, fail_on=fail_on, jobs=jobs)
    return write_folder(
        out_dir, files, command="run", inputs=inputs, may_write=OUTPUT_FILES, adopt=legacy_outputs(out_dir)
    )
