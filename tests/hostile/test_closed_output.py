"""A closed standard output or error never changes a command's exit status.

`audit run <bad inputs> 2>&1 | head -c100` exits 2 (bad input), not 1 (the gate's FAIL), when the
reader closes the pipe. Each case runs the real program (``python -m judge_transfer_audit``) in a subprocess with
real pipes closed early: before the program writes anything (the read end closed at once), and
through ``| head -c100`` in a shell with ``pipefail``. The status is the one the same command gives
with its output open, except that a command which succeeded (0) but lost part of what it printed
exits 141 (``ExitStatus.OUTPUT_CLOSED``): never 0 and never 1 for a failure.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from judge_transfer_audit.cli.exit_status import ExitStatus
from tests.hostile.conftest import fast_args
from tests.hostile.study import write_study

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
COMMAND = [sys.executable, "-m", "judge_transfer_audit"]


def _open(argv, tmp_path) -> tuple[int, str]:
    """The status and stderr with both streams open (written to files)."""
    with open(tmp_path / "o.txt", "w") as out, open(tmp_path / "e.txt", "w") as err:
        status = subprocess.run([*COMMAND, *argv], stdout=out, stderr=err, env=ENV, timeout=600).returncode
    return status, (tmp_path / "e.txt").read_text()


def _closed_at_once(argv, *, stderr_too: bool) -> int:
    """The status when the reader closes the pipe before the program writes anything."""
    proc = subprocess.Popen(
        [*COMMAND, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
        env=ENV,
    )
    proc.stdout.close()
    return proc.wait(timeout=600)


def _through_head(argv) -> int:
    """``COMMAND ARGV 2>&1 | head -c100`` under bash's pipefail: the program's own status."""
    line = shlex.join([*COMMAND, *argv]) + ' 2>&1 | head -c100 >/dev/null; exit "${PIPESTATUS[0]}"'
    return subprocess.run(["bash", "-c", line], env=ENV, timeout=600).returncode


def _expected(status: int) -> set[int]:
    # a short output can be written whole before head closes the pipe: then nothing is lost
    return {status} if status != 0 else {0, int(ExitStatus.OUTPUT_CLOSED)}


def _check(argv, tmp_path, want: int) -> None:
    status, err = _open(argv, tmp_path)
    assert status == want, err
    assert "Traceback" not in err and "Exception ignored" not in err
    closed = _closed_at_once(argv, stderr_too=True)
    assert closed == (want if want != 0 else ExitStatus.OUTPUT_CLOSED)
    assert _through_head(argv) in _expected(want)


@pytest.mark.slow
def test_an_input_error_stays_2_when_the_output_pipe_closes(tmp_path):
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    bad = str(tmp_path / "bad.csv")
    _check(["run", bad, bad, "--out", str(tmp_path / "out"), "--gate"], tmp_path, ExitStatus.INPUT_ERROR)


@pytest.mark.slow
def test_a_usage_error_stays_3(tmp_path):
    _check(["run", "--no-such-option"], tmp_path, ExitStatus.USAGE_ERROR)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("closed")
    files = write_study(root / "in")
    status = subprocess.run([*COMMAND, *fast_args(files, root / "out")], env=ENV, timeout=600).returncode
    assert status == 0
    return files, root / "out" / "result.json"


@pytest.mark.slow
def test_run_gate_diff_and_report_keep_their_status(saved, tmp_path):
    files, result = saved
    run = [a for a in fast_args(files, tmp_path / "run-out", "--gate", "--fail-on", "inconclusive") if a != "-q"]
    gate_status, _ = _open(["gate", "--fail-on", "inconclusive", str(result)], tmp_path)
    assert gate_status in (0, 1)
    for argv, want in [
        (run, gate_status),  # the run's --gate gives what `audit gate` gives on its result
        (["gate", "--fail-on", "inconclusive", str(result)], gate_status),
        (["diff", "--gate", "--all", str(result), str(result)], 0),
        (["report", str(result), "-o", str(tmp_path / "r.html")], 0),
    ]:
        _check(argv, tmp_path, want)


@pytest.mark.slow
def test_only_stdout_closed_leaves_stderr_clean(saved, tmp_path):
    """With stderr open, nothing is reported about the closed stdout: no traceback, no 'Exception ignored'."""
    _, result = saved
    proc = subprocess.Popen(
        [*COMMAND, "diff", "--all", str(result), str(result)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == ExitStatus.OUTPUT_CLOSED
    assert err == ""


def test_in_process_a_closed_pipe_is_dropped_and_the_status_kept(tmp_path, monkeypatch):
    """The guard run_main installs, on a real pipe whose reader is gone: no BrokenPipeError reaches
    the command, its status (2 for bad input) is kept, and the loss is recorded."""
    import io

    from judge_transfer_audit.cli import _ClosableStream, main

    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = _ClosableStream(io.TextIOWrapper(os.fdopen(write_end, "wb"), encoding="utf-8", line_buffering=True))
    monkeypatch.setattr(sys, "stderr", stream)
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    bad = str(tmp_path / "bad.csv")
    assert main(["run", bad, bad, "--out", str(tmp_path / "out")]) == ExitStatus.INPUT_ERROR
    assert stream.lost
    assert main(["run", "--no-such-option"]) == ExitStatus.USAGE_ERROR
