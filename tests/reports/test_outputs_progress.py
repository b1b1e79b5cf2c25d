"""Writing the outputs draws a "writing outputs" bar that counts the files: its total is the number of
files written, it reaches that total with the forked child rendering most of them, a child that fails
midway does not count a file twice, and the bar never reaches the files."""

from __future__ import annotations

import io
import os
import signal
import time

import pytest

import judge_transfer_audit.reports.outputs as outputs
from judge_transfer_audit.core.progress import terminal_bars
from tests.support.progress import RecordingBars


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("html", [True, False])
def test_the_bar_counts_every_file_written_once(bare_result, tmp_path, jobs, html):
    if jobs > 1 and not hasattr(os, "fork"):
        pytest.skip("needs fork")
    bars = RecordingBars()
    written = outputs.write_outputs_detail(
        bare_result,
        tmp_path,
        html=html,
        timings={"total_seconds": 1.0},
        jobs=jobs,
        progress_bar=bars,
    )
    (bar,) = bars.bars
    assert bar.description == "writing outputs"
    assert bar.total == len(written.paths) == bar.n
    assert bar.closed
    assert outputs.output_count(bare_result, html=html, timings={"total_seconds": 1.0}) == len(written.paths)


def test_the_sections_tables_are_counted(result):
    # every optional section computed: their tables are written and counted
    files = outputs.render_outputs(result, html=False)
    assert {"readers.csv", "surface.csv", "uncertainty.csv", "dev.csv"} <= set(files)
    assert outputs.output_count(result, html=False) == len(files)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_killed_midway_is_not_counted_twice():
    parent = os.getpid()
    ticks = []

    def render(tick):
        tick()
        tick()
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        tick()
        return {"junit.xml": "<testsuites/>"}

    with outputs._beside_in_child(render, lambda: ticks.append(1)) as child:
        assert child.value() == {"junit.xml": "<testsuites/>"}
    assert len(ticks) == 3  # two from the child, the third from rendering here; none twice


def test_a_drawn_bar_shows_counts_on_the_stream_and_stays_out_of_the_files(bare_result, tmp_path):
    stream = io.StringIO()
    written = outputs.write_outputs_detail(bare_result, tmp_path, html=False, progress_bar=terminal_bars(stream))
    drawn = stream.getvalue()
    assert "writing outputs" in drawn and f"0/{len(written.paths)}" in drawn
    for path in written.paths.values():
        assert "writing outputs" not in path.read_text(encoding="utf-8")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_child_ticks_reach_this_process_while_it_works_on():
    ticks = []

    def render(tick):
        tick()
        tick()
        return {"cells.csv": "a,b\n"}

    with outputs._beside_in_child(render, lambda: ticks.append(1)) as child:
        deadline = time.monotonic() + 20
        while len(ticks) < 2 and time.monotonic() < deadline:  # this process busy elsewhere, value() not called
            time.sleep(0.01)
        assert len(ticks) == 2
        assert child.value() == {"cells.csv": "a,b\n"}
    assert len(ticks) == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_failing_progress_display_neither_stalls_the_child_nor_loses_its_value():
    def render(tick):
        tick()
        tick()
        return {"cells.csv": "a,b\n" * 50_000}  # more than a pipe's buffer: the pipe must still be drained

    def broken():
        raise OSError("the terminal went away")

    with outputs._beside_in_child(render, broken) as child:
        assert child.value() == {"cells.csv": "a,b\n" * 50_000}
