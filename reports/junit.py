"""JUnit XML for CI: one ``<testcase>`` per check.

Mapping (what CI test reporters show):

========  ===============================================================
status    testcase child
========  ===============================================================
PASS      none (passed); value/threshold in ``<system-out>``
WARN      none (passed) + ``<system-out>WARN: reason</system-out>``
INCONCL.  none (passed) + ``<system-out>INCONCLUSIVE: reason</system-out>``; a
          ``<failure type="INCONCLUSIVE">`` when ``fail_on`` holds INCONCLUSIVE
INSUFF.   ``<skipped message=reason>`` (too few pairs or readers to decide); a
          ``<failure type="INSUFFICIENT">`` when ``fail_on`` holds INSUFFICIENT
FAIL      ``<failure type="FAIL" message=reason>`` with value/threshold
ERROR     ``<error type="ERROR" message=reason>``
SKIPPED   ``<skipped message=reason>``
========  ===============================================================

``classname`` is ``judge_audit.<first part of the check name>`` and ``name`` is
``<check name>[<scope>]``, so every cell's check is its own test case. All text is escaped
by the XML writer; characters XML 1.0 cannot hold (control characters) become U+FFFD, so the
file always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable

from judge_transfer_audit.model.checks import Check, Status

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", "" if text is None else str(text))


def _status(check: Check) -> str:
    return str(getattr(check.status, "value", check.status))


def _detail(check: Check) -> str:
    parts = [f"status: {_status(check)}", f"check: {check.name}", f"scope: {check.scope}"]
    if check.value is not None:
        parts.append(f"value: {check.value!r}")
    if check.threshold is not None:
        parts.append(f"threshold: {check.threshold!r}")
    if check.reason:
        parts.append(f"reason: {check.reason}")
    return _clean("\n".join(parts))


def render_junit(checks: Iterable[Check], *, suite_name: str = "judge-audit", fail_on: Iterable[str] = ()) -> str:
    """JUnit XML text (UTF-8 declaration included) with one test case per check.

    Parameters
    ----------
    checks : iterable of judge_transfer_audit.model.checks.Check
    suite_name : str
        Name of the ``<testsuites>`` and ``<testsuite>`` elements.
    fail_on : iterable of str
        Extra statuses reported as failures (``audit run --fail-on inconclusive``).
    """
    checks = list(checks)
    extra = {str(getattr(s, "value", s)).upper() for s in fail_on}
    counts = {s: sum(_status(c) == s.value for c in checks) for s in Status}
    failing = {Status.FAIL.value} | (extra & {Status.INCONCLUSIVE.value, Status.INSUFFICIENT.value, Status.WARN.value})
    skipped = {Status.SKIPPED.value, Status.INSUFFICIENT.value} - failing
    totals = {
        "tests": str(len(checks)),
        "failures": str(sum(counts[Status(s)] for s in failing)),
        "errors": str(counts[Status.ERROR]),
        "skipped": str(sum(counts[Status(s)] for s in skipped)),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": _clean(suite_name), **totals})
    suite = ET.SubElement(root, "testsuite", {"name": _clean(suite_name), **totals})
    for check in checks:
        group = check.name.split(".", 1)[0] if check.name else "check"
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": _clean(f"judge_audit.{group}"),
                "name": _clean(f"{check.name}[{check.scope}]"),
                "time": "0",
            },
        )
        status = _status(check)
        message = _clean(check.reason or status)
        if status in failing:
            ET.SubElement(case, "failure", {"type": status, "message": message}).text = _detail(check)
        elif status == Status.ERROR.value:
            ET.SubElement(case, "error", {"type": "ERROR", "message": message}).text = _detail(check)
        elif status in skipped:
            ET.SubElement(case, "skipped", {"message": message})
        elif status in (Status.WARN.value, Status.INCONCLUSIVE.value):
            ET.SubElement(case, "system-out").text = _clean(f"{status}: {check.reason}\n") + _detail(check)
        else:
            ET.SubElement(case, "system-out").text = _detail(check)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(
    checks: Iterable[Check],
    path: str | Path,
    *,
    suite_name: str = "judge-audit",
    inputs=(),
    fail_on: Iterable[str] = (),
) -> Path:
    """Write :func:`render_junit` output to ``path`` (UTF-8, atomically); returns the path written.

    ``inputs`` are files the write must never replace (e.g. the result.json read).
    """
    from judge_transfer_audit.core.output_files import write_file

    return write_file(path, render_junit(checks, suite_name=suite_name, fail_on=fail_on), inputs=inputs)
