"""audit/model/section_result.py: the three section variants, their JSON and how they are read back."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.section_result import Computed, Failed, Section, Skipped


class Payload:
    """A stand-in payload type (the variants are generic over the payload)."""


def test_each_variant_has_the_status_reason_and_payload_a_section_always_had():
    done, skipped, failed = Computed({"n": 1}), Skipped("no stories given"), Failed("it broke: boom", "InputError")
    assert (done.status, done.reason, done.payload) == (Status.PASS, "", {"n": 1})
    assert (skipped.status, skipped.reason, skipped.payload) == (Status.SKIPPED, "no stories given", None)
    assert (failed.status, failed.reason, failed.payload, failed.error) == (
        Status.ERROR,
        "it broke: boom",
        None,
        "InputError",
    )
    assert [s.computed for s in (done, skipped, failed)] == [True, False, False]
    assert all(isinstance(s, Section) for s in (done, skipped, failed))
    with pytest.raises(FrozenInstanceError):
        skipped.reason = "x"  # type: ignore[misc]


def test_a_computed_section_holds_its_result():
    with pytest.raises(ValueError, match="holds its result"):
        Computed(None)


def test_the_json_is_the_one_result_json_always_had():
    """status, reason, payload in that order (schema 2.2 and before); Failed adds error (2.3)."""
    assert list(to_jsonable(Computed([1, 2]))) == ["status", "reason", "payload"]
    assert to_jsonable(Skipped("not requested (--no-readers)")) == {
        "status": "SKIPPED",
        "reason": "not requested (--no-readers)",
        "payload": None,
    }
    assert to_jsonable(Failed("boom", "InputError")) == {
        "status": "ERROR",
        "reason": "boom",
        "payload": None,
        "error": "InputError",
    }


@pytest.mark.parametrize("section", [Skipped("no development set given"), Failed("it broke", "AuditError")])
def test_skipped_and_failed_round_trip(section):
    back = from_jsonable(Section[Payload], json.loads(json.dumps(to_jsonable(section))))
    assert back == section and type(back) is type(section)


def test_a_computed_section_reads_its_payload_by_type():
    back = from_jsonable(Section[tuple[int, ...]], to_jsonable(Computed((1, 2, 3))))
    assert back == Computed((1, 2, 3)) and back.payload == (1, 2, 3)


def test_a_schema_2_2_error_section_reads_back_without_an_error_type():
    back = from_jsonable(Section[Payload], {"status": "ERROR", "reason": "the reader analysis failed", "payload": None})
    assert back == Failed("the reader analysis failed", "")


@pytest.mark.parametrize(
    "data",
    [
        {"status": "PASS", "reason": "", "payload": None},  # computed but empty
        {"status": "FAIL", "reason": "", "payload": [1]},  # a status no section has
        {"status": "SKIPPED", "reason": 3, "payload": None},
        {"status": "ERROR", "reason": "x", "payload": None, "error": 7},
        ["PASS", "", None],
    ],
)
def test_a_section_that_no_producer_writes_is_refused(data):
    with pytest.raises((TypeError, ValueError)):
        from_jsonable(Section[tuple[int, ...]], data)


@pytest.mark.parametrize(
    "section", [Skipped("no stories given"), Failed("surface features could not be computed", "E")]
)
def test_not_computed_sections_have_no_frame_and_say_why_in_html(section):
    assert section.to_frame().empty
    assert section.reason in section._repr_html_() and section.status.value in section._repr_html_()


def test_the_result_reads_each_section_as_its_tables_payload_type():
    """The result's sections are the section table's, in its order, each read back as ``Section[payload]``."""
    from judge_transfer_audit.results.result import AuditResult
    from judge_transfer_audit.sections.registry import section_types

    assert AuditResult.section_names() == tuple(section_types())
    assert AuditResult.section_names()[:4] == ("dev", "uncertainty", "readers", "surface")
