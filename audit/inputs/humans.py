"""Read human judgments: pairwise votes or scalar ratings, long or wide."""

from __future__ import annotations

import dataclasses
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

#: Columns with a meaning of their own in a human file; in a wide layout every other column
#: (except names starting with ``_``) is a criterion.
RESERVED = {
    "pair_id",
    "item_id",
    "reader_id",
    "criterion",
    "choice",
    "rating",
    "seconds",
    "comment",
    "shown_first",
    "reader_group",
    "group_id",
    "system",
    "judge",
    "sample",
}
TIE = "tie"


@dataclass
class HumanInput:
    """Human judgments after reading, before pairs are resolved.

    ``frame`` columns, pairwise: pair_id, reader_id, criterion, choice, seconds, comment,
    shown_first, reader_group, line, order. Scalar: item_id, reader_id, criterion, rating,
    group_id, reader_group, line, order.
    """

    shape: str  #: "pairwise" or "scalar"
    layout: str  #: e.g. "pairwise-long", "scalar-wide"
    frame: pd.DataFrame
    n_read: int = 0  #: records read (rows, or row x criterion cells of a wide file)
    #: ids every one of whose rows is blank (no judgment given): id -> (first line, rows), so that a
    #: judge output on such an id is reported as that, not as an id missing from the human file
    all_blank: dict = dataclasses.field(default_factory=dict)
    #: ids of rows left out for a row problem already reported (see JudgeInput.rejected_ids)
    rejected_ids: frozenset = frozenset()


def detect_shape(table: Table) -> str | None:
    cols = set(table.columns)
    if "choice" in cols:
        return "pairwise"
    if "rating" in cols or "item_id" in cols:
        return "scalar"
    if "pair_id" in cols:
        return "pairwise"
    return None


def read_humans(
    table: Table,
    log: ProblemLog,
    *,
    scale: tuple[float, float] | None = None,
    role: str = "humans",
    shape: str | None = None,
) -> HumanInput | None:
    """Read a human file; report problems to ``log``. ``shape`` forces "scalar" (dev set)."""
    cols = set(table.columns)
    if "reader_id" not in cols and "score" in cols:
        log.add(
            table.path,
            f"the {role} file has a score column and no reader_id: it looks like a judge file",
            (
                "give the ratings to --dev-humans and the judge's scores to --dev-judge"
                if role.startswith("dev")
                else "give the human judgments here; the command takes the judge file first: audit run JUDGE HUMANS"
            )
            + f" (columns found: {table.found()})",
        )
        return None
    detected = detect_shape(table)
    if shape is not None and detected is not None and detected != shape:
        log.add(
            table.path,
            f"the {role} file must hold {shape} ratings (item_id, reader_id, criterion, rating)",
            f"give {shape} ratings; columns found: {table.found()}",
        )
        return None
    shape = shape or detected
    if shape is None:
        log.add(
            table.path,
            f"cannot tell what the {role} file holds",
            "give pairwise votes (pair_id, reader_id, criterion, choice) or scalar ratings "
            f"(item_id, reader_id, criterion, rating); columns found: {table.found()}",
        )
        return None
    id_col, value = ("pair_id", "choice") if shape == "pairwise" else ("item_id", "rating")
    read = read_records(table, log, role, [id_col, "reader_id"], value, f"{shape} judgments", RESERVED)
    if read is None:
        return None
    frame, wide = read
    n_read = len(frame)
    bad = blank_ids(frame, [id_col, "reader_id", "criterion"], table, log, role)
    for c in ("reader_group", "comment", "shown_first", "group_id"):
        if c not in frame.columns:
            frame[c] = ""
    bad |= control_characters(
        frame, ["choice", "shown_first", "reader_group", "group_id"], table, log, role, already=bad
    )
    if "seconds" in frame.columns:
        secs, _, bad = checked_numbers(
            frame,
            "seconds",
            table,
            log,
            role,
            bad,
            lambda v: v < 0,
            "seconds is negative",
            "write the time spent in seconds (>= 0)",
            "negative seconds",
        )
        frame["seconds"] = secs
    else:
        frame["seconds"] = np.nan
    if shape == "pairwise":
        # the choice is kept as written: whether 'Tie' is the tie word or a system named Tie is
        # decided against the pair's systems (judge_transfer_audit.inputs.resolve)
        blank = (frame["choice"] == "").to_numpy()
    else:
        nums, bad_r = scale_numbers(frame, "rating", table, log, role, scale, wide, bad)
        bad |= bad_r
        frame["rating"] = nums
        blank = np.isnan(nums) & ~bad_r
    frame["order"] = np.arange(len(frame))
    _reader_groups(frame, table, log)
    frame = _readers_who_judged_nothing(frame, blank, bad, table, log, role)
    keep = ~bad
    rejected = frozenset(frame.loc[bad, id_col].unique().tolist()) if bad.any() else frozenset()
    frame, blank = frame[keep], blank[keep]
    dup = duplicates(
        frame[~blank],
        [id_col, "reader_id", "criterion"],
        table,
        log,
        role,
        "duplicate judgment: this reader already judged this "
        f"{'pair' if shape == 'pairwise' else 'item'} on this criterion",
        "keep one row per reader, id and criterion",
    )
    n_blank = int(blank.sum())
    all_blank: dict[str, tuple[int, int]] = {}
    if n_blank:
        given = set(frame.loc[~blank, id_col])
        ids, lines = frame[id_col].to_numpy(dtype=object), frame["line"].to_numpy()
        for i in np.flatnonzero(blank):
            if ids[i] not in given:
                first, n = all_blank.get(ids[i], (int(lines[i]), 0))
                all_blank[ids[i]] = (first, n + 1)
    log.exclude(role, f"blank {value} (no judgment given)", n_blank)
    frame = frame[~blank]
    frame = frame[~dup]
    cols = (
        [id_col, "reader_id", "criterion", value]
        + (
            ["seconds", "comment", "shown_first", "reader_group"]
            if shape == "pairwise"
            else ["group_id", "reader_group", "seconds"]
        )
        + ["line", "order"]
    )
    frame = frame[cols].reset_index(drop=True)
    frame["order"] = np.arange(len(frame))
    return HumanInput(
        shape=shape,
        layout=f"{shape}-{'wide' if wide else 'long'}",
        frame=frame,
        n_read=n_read,
        rejected_ids=rejected,
        all_blank=all_blank,
    )


def _reader_groups(frame, table, log):
    """A reader belongs to one reader_group: two different non-empty values are a problem."""
    g = frame[frame["reader_group"] != ""]
    if g.empty:
        return
    n = g.groupby("reader_id", sort=False)["reader_group"].unique()
    for reader in n.index[n.map(len).to_numpy() > 1]:
        rows = g[g["reader_id"] == reader]
        first = rows["reader_group"].iloc[0]
        other = rows[rows["reader_group"] != first].iloc[0]
        log.add(
            table.path,
            "this reader has two different reader_group values",
            "give each reader one reader_group",
            line=int(other["line"]),
            column="reader_group",
            value=f"{reader}: {first} then {other['reader_group']}",
        )


def _readers_who_judged_nothing(frame, blank, bad, table, log, role):
    empty_reader = pd.Series(blank).groupby(frame["reader_id"].to_numpy()).all()
    for reader in empty_reader.index[empty_reader.to_numpy()]:
        if reader == "":
            continue
        first = int(frame["line"].to_numpy()[(frame["reader_id"] == reader).to_numpy()][0])
        log.add(
            table.path,
            "this reader judged nothing (every judgment is empty)",
            "remove the reader's rows or fill in their judgments",
            line=first,
            column="reader_id",
            value=reader,
        )
    return frame
