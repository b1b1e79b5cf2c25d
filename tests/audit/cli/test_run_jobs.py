"""`audit run --jobs`: same result as --jobs 1, usage errors, a lost worker's exit status,
the progress bar only on a terminal."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.cli.options import Progress
from tests.support.fixture_run import fixture_run_args, run_result


def _result(out: Path) -> str:
    return json.dumps(run_result(out), sort_keys=True)


@pytest.mark.slow
def test_jobs_2_gives_the_same_result_as_jobs_1(tmp_path):
    assert main(fixture_run_args(tmp_path / "one", "--jobs", "1")) == ExitStatus.OK
    assert main(fixture_run_args(tmp_path / "two", "--jobs", "2")) == ExitStatus.OK
    assert _result(tmp_path / "two") == _result(tmp_path / "one")


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_below_one_is_a_usage_error(tmp_path, jobs, capsys):
    assert main(fixture_run_args(tmp_path, "--jobs", jobs)) == ExitStatus.USAGE_ERROR
    assert "--jobs" in capsys.readouterr().err


def _die(_):
    os._exit(3)


@pytest.mark.slow
def test_a_worker_that_dies_stops_the_run_with_its_own_status(tmp_path, monkeypatch, capsys):
    import judge_transfer_audit.statistics.uncertainty.loro as loro

    # forked workers inherit the patched module: every leave-one-reader-out fit kills its worker
    monkeypatch.setattr(loro, "_cell_phase_one", _die)
    assert main(fixture_run_args(tmp_path, "--jobs", "2")) == ExitStatus.WORKER_LOST == 7
    assert "worker" in capsys.readouterr().err.lower()
    assert not (tmp_path / "result.json").exists()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_progress_bar_draws_only_on_a_terminal_and_not_under_quiet():
    assert Progress(enabled=True, stream=io.StringIO()).bars is False
    assert Progress(enabled=False, stream=_Terminal()).bars is False
    stream = _Terminal()
    progress = Progress(enabled=True, stream=stream)
    bar = progress.bar("bootstrap", 4)
    for _ in range(4):
        bar.advance()
    bar.close()
    assert "bootstrap" in stream.getvalue()


def test_progress_forces_bars_into_a_log_and_no_progress_keeps_them_off_a_terminal():
    log = io.StringIO()
    bar = Progress(enabled=False, stream=log, force_bars=True).bar("statistics", 3)  # -q --progress
    for _ in range(3):
        bar.advance()
    bar.close()
    assert "statistics" in log.getvalue() and "0/3" in log.getvalue()
    assert Progress(enabled=True, stream=_Terminal(), force_bars=False).bars is False
    assert Progress(enabled=True, stream=io.StringIO()).bar("statistics", 3).__class__.__name__ == "_SilentBar"


@pytest.mark.slow
def test_run_with_progress_into_a_pipe_draws_the_bars_and_keeps_them_out_of_the_files(tmp_path, capsys):
    assert main(fixture_run_args(tmp_path, "--jobs", "1", "--n-boot", "100", "--progress")) == ExitStatus.OK
    err = capsys.readouterr().err
    assert "statistics:" in err and "task" in err  # captured stderr is not a terminal: drawn because asked
    assert "loading inputs:" in err and "writing outputs:" in err  # the inputs' and the files' bars too
    assert "judge verdicts:" in err and "agreement:" in err  # every stage draws one
    for path in tmp_path.iterdir():
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(
                bar in text for bar in ("statistics:", "loading inputs:", "judge verdicts:", "writing outputs:")
            ), path.name
    assert main(fixture_run_args(tmp_path / "plain", "--jobs", "1", "--n-boot", "100")) == ExitStatus.OK
    err = capsys.readouterr().err
    assert not any(bar in err for bar in ("statistics:", "loading inputs:", "writing outputs:"))  # -q, no terminal
