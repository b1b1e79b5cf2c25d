"""A progress factory that records its bars (description, total, units advanced, closed) for tests."""

from __future__ import annotations


class RecordingBar:
    def __init__(self, description: str, total: int):
        self.description, self.total, self.n, self.closed = description, total, 0, False

    def advance(self, n: int = 1) -> None:
        self.n += n

    def close(self) -> None:
        self.closed = True


class RecordingBars:
    """``factory(description, total)`` of :mod:`judge_transfer_audit.core.progress`; :attr:`bars` holds every bar it
    made."""

    def __init__(self):
        self.bars: list[RecordingBar] = []

    def __call__(self, description: str, total: int) -> RecordingBar:
        self.bars.append(RecordingBar(description, total))
        return self.bars[-1]
