"""Read the automatic judge: scalar scores or pairwise verdicts, long or wide."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.inputs.formats import Table
from judge_transfer_audit.inputs.layout import (
    blank_ids,
    checked_numbers,
    control_characters,
    duplicates,
    read_records,
    scale_numbers,
)
from judge_transfer_audit.inputs.problems import ProblemLog

#: Columns with a meaning of their own in a judge file; in a wide layout every other column
#: (except names starting with ``_``) is a criterion.
RESERVED = {
    "pair_id",
    "item_id",
    "system",
    "criterion",
    "score",
    "choice",
    "judge",
    "sample",
    "group_id",
    "reader_id",
    "text",
    "comment",
    "rationale",
    "shown_first",
}
DEFAULT_JUDGE = "judge"
INVALID = "invalid"
TIE = "tie"


@dataclass
class JudgeInput:
    """The judge file after reading, before pairs are resolved.

    ``frame`` columns, scalar: <key>, system, criterion, judge, sample, score, line
    (``score`` NaN = unparsable output), and group_id when keyed by item_id with a group_id
    column. Pairwise: pair_id, criterion, judge, sample, choice,
    shown_first ("" when absent: the order the judge saw, resolved against the pair later),
    line (``choice`` "invalid" = unparsable output).
    """

    kind: str  #: "scalar" or "pairwise"
    key: str  #: "pair_id" or "item_id"
    layout: str
    frame: pd.DataFrame
    n_read: int = 0  #: records read (rows, or row x criterion cells of a wide file)
    #: ids of rows left out for a row problem already reported (a bad score, a blank id...):
    #: an id missing downstream because of them is a knock-on, not a problem of its own
    rejected_ids: frozenset = frozenset()


def read_judge(
    table: Table,
    log: ProblemLog,
    *,
    scale: tuple[float, float] | None = None,
    role: str = "judge",
    kind: str | None = None,
) -> JudgeInput | None:
    """Read a judge file; report problems to ``log``. ``kind`` forces "scalar" (dev set)."""
    cols = set(table.columns)
    if _mixes_scores_and_verdicts(table, log, role):
        return None
    detected = "pairwise" if ("choice" in cols or ("system" not in cols and "score" not in cols)) else "scalar"
    if {"choice", "score"} <= cols and not (table.frame["choice"] != "").any() and (table.frame["score"] != "").any():
        detected = "scalar"  # scores, with an empty choice column (a template's leftover)
    if kind is not None and detected != kind:
        log.add(
            table.path,
            f"the {role} file must hold {kind} scores (item_id, system, criterion, score)",
            f"give {kind} scores; columns found: {table.found()}",
        )
        return None
    kind = detected
    key = "item_id" if ("item_id" in cols and "pair_id" not in cols) else "pair_id"
    value = "score" if kind == "scalar" else "choice"
    if role.startswith("dev") and "system" not in cols:  # a development set needs no system names
        table.frame["system"] = ""
        cols.add("system")
    ids = [key, "system"] if kind == "scalar" else [key]
    read = read_records(table, log, role, ids, value, f"a {kind} judge", RESERVED)
    if read is None:
        return None
    frame, wide = read
    n_read = len(frame)
    must_fill = [c for c in ids if not (c == "system" and role.startswith("dev"))]
    bad = blank_ids(frame, must_fill + ["criterion"], table, log, role)
    bad |= control_characters(frame, ["system", "judge", "choice", "group_id"], table, log, role, already=bad)
    if "judge" in frame.columns:
        frame["judge"] = frame["judge"].where(frame["judge"] != "", DEFAULT_JUDGE)
    else:
        frame["judge"] = DEFAULT_JUDGE
    if "sample" in frame.columns:
        s, nonint, bad = checked_numbers(
            frame,
            "sample",
            table,
            log,
            role,
            bad,
            lambda v: (v != np.round(v)) | (np.abs(v) > 2**53),
            "sample is not a whole number",
            "number repeated samples 0, 1, 2, ...",
            "non-integer sample",
        )
        frame["sample"] = np.where(np.isfinite(s) & ~nonint, s, 0).astype(np.int64)
    else:
        frame["sample"] = 0
    if kind == "scalar":
        nums, bad_v = scale_numbers(frame, "score", table, log, role, scale, wide, bad)
        bad |= bad_v
        frame["score"] = nums
        keys = [key, "system", "criterion", "judge", "sample"]
    else:
        # an empty verdict is an unparsable output; the words tie / invalid in any spelling are
        # told apart from a system so named against the pair's systems (judge_transfer_audit.inputs.resolve)
        frame["choice"] = frame["choice"].where(frame["choice"] != "", INVALID)
        keys = [key, "criterion", "judge", "sample"]
        # the order shown: both orders of one pair are two rows, not a duplicate output
        frame["shown_first"] = frame["shown_first"].str.strip() if "shown_first" in frame.columns else ""
        if "shown_first" in table.columns:
            keys = keys + ["shown_first"]
    rejected = frozenset(frame.loc[bad, key].unique().tolist()) if bad.any() else frozenset()
    frame = frame[~bad]
    # a judge file holding one row per reader (the human file given first by mistake): one
    # problem instead of one "duplicate judge output" per reader
    if (
        role == "judge"
        and "reader_id" in frame.columns
        and frame.duplicated(keys).any()
        and not frame.duplicated(keys + ["reader_id"]).any()
    ):
        log.add(
            table.path,
            f"the {role} file repeats its outputs once per reader_id: it looks like the human file",
            "give the judge's outputs here; the command takes the judge file first: audit run JUDGE HUMANS",
            column="reader_id",
        )
        return None
    dup = duplicates(
        frame,
        keys,
        table,
        log,
        role,
        "duplicate judge output for the same "
        + ("item/system" if kind == "scalar" else "pair")
        + ", criterion, judge and sample",
        "keep one row per output, or number repeated outputs in a 'sample' column",
    )
    frame = frame[~dup]
    out_cols = list(dict.fromkeys(keys + [value] + (["shown_first"] if kind == "pairwise" else []) + ["line"]))
    if key == "item_id" and "group_id" in frame.columns:  # the groups of items no reader rated
        out_cols.append("group_id")
    return JudgeInput(
        kind=kind,
        key=key,
        layout=f"{kind}-{'wide' if wide else 'long'}",
        frame=frame[out_cols].reset_index(drop=True),
        n_read=n_read,
        rejected_ids=rejected,
    )


def _mixes_scores_and_verdicts(table: Table, log: ProblemLog, role: str) -> bool:
    """A file with some rows giving a ``score`` and others a ``choice`` (two judges of different
    kinds in one file): one problem naming the judges of each kind, not one "duplicate judge
    output" per row."""
    f = table.frame
    if "score" not in f.columns or "choice" not in f.columns:
        return False
    scored, chose = f["score"] != "", f["choice"] != ""
    if not scored.any() or not chose.any():
        return False

    def who(rows) -> str:
        if "judge" in f.columns:
            names = list(dict.fromkeys(f.loc[rows, "judge"].where(f.loc[rows, "judge"] != "", DEFAULT_JUDGE)))
            return (
                ("judge " if len(names) == 1 else "judges ") + ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
            )
        first = int(table.lines[np.flatnonzero(rows.to_numpy())[0]])
        return f"{int(rows.sum())} row(s), first on line {first}"

    log.add(
        table.path,
        f"this file mixes scores ({who(scored)}) and verdicts ({who(chose)})",
        "split it into two files, one of scores (pair_id, system, criterion, score) and one of verdicts (pair_id, "
        "criterion, choice), and audit each with its own run; or keep one kind in this file",
        column="choice",
    )
    return True
