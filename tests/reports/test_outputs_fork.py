"""judge_transfer_audit.reports.outputs renders result.json in this process while a forked child renders the other files
(``jobs > 1``): the same texts in the same order as in one process, a child that fails is replaced by
rendering here (the same error, from this process), and no child outlives the rendering."""

from __future__ import annotations

import os
import signal
import time

import pytest

import judge_transfer_audit.reports.outputs as outputs

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("html", [True, False])
@pytest.mark.slow
def test_two_processes_render_the_same_files_in_the_same_order(result, html):
    one = outputs.render_outputs(result, html=html, timings={"total_seconds": 1.0}, fail_on=("FAIL",), jobs=1)
    two = outputs.render_outputs(result, html=html, timings={"total_seconds": 1.0}, fail_on=("FAIL",), jobs=2)
    assert list(two) == list(one)
    assert two == one
    assert ("report.html" in two) is html


def test_an_error_in_the_child_is_raised_here_as_without_the_child(bare_result, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("cannot render the tables")

    monkeypatch.setattr(outputs, "_other_files", broken)
    with pytest.raises(ValueError, match="cannot render the tables"):
        outputs.render_outputs(bare_result, html=False, jobs=2)


def test_a_child_killed_midway_is_replaced_by_rendering_here():
    parent = os.getpid()
    calls = []

    def render(tick):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        calls.append("here")
        return {"junit.xml": "<testsuites/>"}

    with outputs._beside_in_child(render) as child:
        pid = child._pid
        assert pid
        assert child.value() == {"junit.xml": "<testsuites/>"}
    assert calls == ["here"]
    assert _gone(pid)


def test_the_child_value_comes_back_without_rendering_here():
    parent = os.getpid()

    def render(tick):
        assert os.getpid() != parent, "rendered in the parent"
        return {"cells.csv": "a,b\n" * 10_000}  # more than a pipe's buffer

    with outputs._beside_in_child(render) as child:
        assert child.value() == {"cells.csv": "a,b\n" * 10_000}


def test_an_error_of_the_parent_kills_and_reaps_the_child():
    def slow(tick):
        time.sleep(60)
        return {}

    started = time.perf_counter()
    with pytest.raises(RuntimeError, match="parent failed"):
        with outputs._beside_in_child(slow) as child:
            pid = child._pid
            raise RuntimeError("parent failed")
    assert time.perf_counter() - started < 10
    assert _gone(pid)  # killed and reaped: not even a zombie
