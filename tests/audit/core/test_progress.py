"""Progress bars: counts reach the total, a grown total is shown, nothing without a bar."""

from __future__ import annotations

import io

from judge_transfer_audit.core.progress import TqdmBar, grow, no_progress, terminal_bars


def test_a_terminal_bar_reaches_its_total_and_shows_counts_and_rate():
    stream = io.StringIO()
    bar = terminal_bars(stream)("bootstrap", 4)
    assert isinstance(bar, TqdmBar)
    grow(bar, 2)
    for _ in range(6):
        bar.advance()
    assert (bar.n, bar.total) == (6, 6)
    text = stream.getvalue()
    bar.close()
    # drawn at the start and again when the total grew (later redraws are throttled to 2 a second)
    assert "bootstrap" in text and "0/4" in text and "0/6" in text


def test_no_progress_draws_nothing_and_grow_ignores_a_bar_without_it():
    bar = no_progress("x", 3)
    bar.advance()
    grow(bar, 5)
    bar.close()

    class Plain:
        def advance(self, n=1):
            pass

        def close(self):
            pass

    grow(Plain(), 2)  # a factory's bar need not have grow
    assert isinstance(terminal_bars(io.StringIO())("empty", 0), type(no_progress("", 0)))
