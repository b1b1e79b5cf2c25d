"""judge_transfer_audit.reports.outputs.render_outputs renders with the objects alive on entry frozen out of the
garbage collector's passes (full collections walked the whole result at 1,000 criteria), and leaves the collector as
it found it."""

from __future__ import annotations

import gc

import judge_transfer_audit.reports.outputs as outputs


def test_rendering_freezes_the_older_objects_and_unfreezes_them(bare_result, monkeypatch):
    assert gc.get_freeze_count() == 0
    seen = []
    csv_text = outputs.csv_text

    def recording(frame):
        seen.append(gc.get_freeze_count())
        return csv_text(frame)

    monkeypatch.setattr(outputs, "csv_text", recording)
    files = outputs.render_outputs(bare_result, html=False)
    assert seen and min(seen) > 0  # frozen while the tables were written
    assert gc.get_freeze_count() == 0  # and unfrozen after
    monkeypatch.setattr(outputs, "csv_text", csv_text)
    assert files == outputs._render_outputs(bare_result, html=False, timings=None, fail_on=())


def test_a_heap_frozen_by_the_caller_stays_frozen(bare_result):
    gc.freeze()
    try:
        outputs.render_outputs(bare_result, html=False)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
