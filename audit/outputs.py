"""Writing an :class:`~audit.result.AuditResult` to an output directory.

``result.json`` (versioned, lossless), ``report.html`` (self-contained), ``junit.xml`` (one
test case per check) and the tables as CSV. Every writer either writes its file or raises.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from audit.result import AuditResult, result_to_json


def section_tables(result: AuditResult) -> dict[str, pd.DataFrame]:
    """Tidy tables of the optional sections whose payload offers ``to_frame()``."""
    tables: dict[str, pd.DataFrame] = {}
    for name in ("dev", "uncertainty", "readers", "surface"):
        payload = getattr(result, name).payload
        to_frame = getattr(payload, "to_frame", None)
        if callable(to_frame):
            frame = to_frame()
            if isinstance(frame, pd.DataFrame):
                tables[name] = frame
    return tables


#: Every file ``write_outputs`` may write; the ones a run does not write are removed, so an
#: output directory never mixes files from two runs.
OUTPUT_FILES = ("result.json", "junit.xml", "report.html", "cells.csv", "checks.csv", "agreement.csv",
                "reader_baseline.csv", "judge_pairs.csv", "dev.csv", "uncertainty.csv", "readers.csv", "surface.csv")


def write_outputs(result: AuditResult, out_dir: str | Path, *, html: bool = True,
                  fail_on: tuple[str, ...] = ()) -> dict[str, Path]:
    """Write every output file into ``out_dir`` (created if needed); return name -> path.

    Files of an earlier run that this run does not write (a section now skipped, the report
    under ``html=False``) are removed, so nothing stale is read as current.
    """
    from reports.html import write_html
    from reports.junit import write_junit

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    paths["result"] = out / "result.json"
    paths["result"].write_text(result_to_json(result) + "\n", encoding="utf-8")
    paths["junit"] = out / "junit.xml"
    write_junit(result.checks, paths["junit"], fail_on=fail_on)  # fail_on: `audit run --fail-on`
    tables = {
        "cells": result.cells_frame(),
        "checks": result.checks_frame(),
        "agreement": result.agreement,
        "reader_baseline": result.reader_baseline,
        "judge_pairs": result.judge_pairs,
        **section_tables(result),
    }
    for name, frame in tables.items():
        paths[name] = out / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    if html:
        paths["report"] = out / "report.html"
        write_html(result, paths["report"])
    written = {p.name for p in paths.values()}
    for name in OUTPUT_FILES:
        if name not in written:
            (out / name).unlink(missing_ok=True)
    return paths
