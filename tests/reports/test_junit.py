"""JUnit XML: one testcase per check, the right child per status, always parseable."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.reports.junit import render_junit, write_junit

CHECKS = (
    Check("transfer.decision", Status.FAIL, 0.93, 0.0, "judge 93% outside [48, 66]", "a vs b/empathy"),
    Check("transfer.decision", Status.PASS, 0.55, None, "inside", "a vs b/engagement"),
    Check("agreement.krippendorff_alpha", Status.WARN, 0.07, 0.2, "readers barely agree"),
    Check("surface.sensitivity", Status.SKIPPED, None, None, "no stories given"),
    Check("glmm.converged", Status.ERROR, None, None, "fit failed", "a vs b/overall"),
)


def _cases(xml: str):
    root = ET.fromstring(xml)
    return root, root.findall("./testsuite/testcase")


def test_one_testcase_per_check_with_the_right_child():
    root, cases = _cases(render_junit(CHECKS))
    assert len(cases) == len(CHECKS)
    children = [[c.tag for c in case] for case in cases]
    assert children == [["failure"], ["system-out"], ["system-out"], ["skipped"], ["error"]]
    assert cases[2].find("system-out").text.startswith("WARN: readers barely agree")
    assert cases[0].find("failure").get("message") == "judge 93% outside [48, 66]"
    assert "threshold: 0.0" in cases[0].find("failure").text


def test_counts_and_names():
    root, cases = _cases(render_junit(CHECKS))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "5",
        "1",
        "1",
        "1",
    )
    assert root.get("tests") == "5"
    names = [c.get("name") for c in cases]
    assert names[0] == "transfer.decision[a vs b/empathy]"
    assert len(set(names)) == len(names)  # a cell's check is its own case
    assert cases[0].get("classname") == "judge_audit.transfer"


def test_control_characters_and_markup_still_parse():
    nasty = Check("x.y", Status.FAIL, None, None, "bad \x00\x1b[31m <b>&\"'", "s]\x07")
    root, cases = _cases(render_junit([nasty]))
    msg = cases[0].find("failure").get("message")
    assert "<b>&\"'" in msg and "\x00" not in msg


def test_empty_check_list_is_valid():
    root, cases = _cases(render_junit([]))
    assert cases == [] and root.get("tests") == "0"


def test_write_junit_round_trip(tmp_path):
    path = write_junit(CHECKS, tmp_path / "ci" / "junit.xml")
    assert ET.parse(path).getroot().find("testsuite").get("tests") == "5"
    assert path.read_text(encoding="utf-8") == render_junit(CHECKS)


def test_cell_decision_statuses_and_fail_on():
    cells = (
        Check("transfer.decision", Status.INCONCLUSIVE, 0.2, 0.1, "needs 60 pairs", "m/a"),
        Check("transfer.decision", Status.INSUFFICIENT, None, 0.1, "5 pairs", "m/b"),
    )
    root, cases = _cases(render_junit(cells))
    assert [[c.tag for c in case] for case in cases] == [["system-out"], ["skipped"]]
    assert cases[0].find("system-out").text.startswith("INCONCLUSIVE: needs 60 pairs")
    assert root.find("testsuite").get("failures") == "0" and root.find("testsuite").get("skipped") == "1"
    root, cases = _cases(render_junit(cells, fail_on=("INCONCLUSIVE", "insufficient")))
    assert [[c.tag for c in case] for case in cases] == [["failure"], ["failure"]]
    assert cases[0].find("failure").get("type") == "INCONCLUSIVE"
    assert root.find("testsuite").get("failures") == "2" and root.find("testsuite").get("skipped") == "0"
