"""The section table's rules: each seed slot is the stream a run spawns there, the checks come in the
table's order (decisions first, then the failed sections' ERRORs, then the others'), and a section the
spec does not request is Skipped with its flag."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.engine.steps import sections_of_run, seed_of
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Failed, Skipped
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.sections.registry import RUN_SEEDS, entry, names, section_checks


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1])
def test_a_seed_slot_is_the_stream_spawned_at_that_key(seed):
    """``seed_of(root, key)`` is the child ``root.spawn`` makes at ``key``: the streams of a run that
    spawned the run's own seeds and the sections' one after the other, in slot order."""
    root = np.random.SeedSequence(seed)
    spawned = dict(zip(range(5), root.spawn(5)))
    spawned[5] = root.spawn(1)[0]
    (parent,) = root.spawn(1)
    spawned.update({(6, k): child for k, child in enumerate(parent.spawn(4))})
    spawned[7], spawned[8] = root.spawn(2)
    slots = {**RUN_SEEDS, **{n: entry(n).seed for n in names() if entry(n).seed is not None}}
    assert len(slots) == 12  # the tie draws, the verdict and ten sections (the label budget draws nothing)
    for who, key in slots.items():
        want = spawned[key if len(key) == 2 else key[0]]
        got = seed_of(np.random.SeedSequence(seed), key)
        assert (got.generate_state(4) == want.generate_state(4)).all(), who
        assert (got.spawn(3)[2].generate_state(2) == want.spawn(3)[2].generate_state(2)).all(), who


def test_checks_come_in_the_tables_order():
    failed = {
        name: Failed(f"{name} broke", error="InputError")
        for name in ("agreement_decision", "judge_position", "leaderboard", "dev", "label_budget")
    }
    checks = section_checks(Policy(), failed, primary="j", focal={})
    assert [(c.name, c.status) for c in checks] == [
        ("agreement.decision", Status.ERROR),  # a decision: listed first
        ("dev.computed", Status.ERROR),  # the failed sections with an error check, in table order
        ("leaderboard.computed", Status.ERROR),
        ("judge.position_bias", Status.ERROR),  # a section whose own check reports its failure
    ]
    assert section_checks(Policy(), {}, primary="j") == []  # every section missing is Skipped: no check


def test_a_section_the_spec_does_not_request_is_skipped_with_its_flag():
    spec = AuditSpec(uncertainty=False, readers=True, surface=False)
    done = {n: Skipped("computed") for n in names() if n not in ("uncertainty", "surface")}
    optional = sections_of_run(spec, done)
    assert tuple(optional) == names()
    assert optional["uncertainty"] == Skipped("not requested (--no-uncertainty)")
    assert optional["surface"] == Skipped("not requested (--no-surface)")
    assert optional["readers"] is done["readers"]


def test_no_section_takes_a_name_of_the_results_own_keys():
    from dataclasses import fields, replace

    from judge_transfer_audit.results.result import AuditResult
    from judge_transfer_audit.sections.registry import BUILTIN, RESULT_KEYS, register

    assert RESULT_KEYS == tuple(f.name for f in fields(AuditResult))
    assert not set(RESULT_KEYS) & set(names())
    with pytest.raises(ValueError, match="'cells' is a field of the result"):
        register(replace(BUILTIN[-1], name="cells", seed=None))
    assert "cells" not in names()
