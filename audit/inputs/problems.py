"""Collect every input problem before failing, and count every row left out.

Loading never stops at the first problem: each reader of a file reports what it finds to a
:class:`ProblemLog`, and :func:`judge_transfer_audit.inputs.load_audit_data` raises one
:class:`~judge_transfer_audit.core.errors.InputError` at the end when anything was found.

Two kinds of problems:

* *structural* problems (a missing column, an empty or unreadable file, ids present in one file
  and missing in the other, a pair with other than two systems...) always stop the run;
* *row* problems (a non-numeric score, a score outside the declared scale, a choice naming a
  system not in the pair, a duplicate vote...) stop the run too, unless ``drop_invalid`` is
  set: then the rows are left out and counted as :class:`~judge_transfer_audit.model.data.Exclusion` records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from judge_transfer_audit.core.errors import InputError, InputProblem

#: Row problems of one kind (same file, column and message) listed one by one before the rest
#: are summarised in a single extra problem ("and N more rows of the same kind"); the count is
#: always exact. A handful is enough to see the pattern and to find the rows.
MAX_ROWS_PER_KIND = 5
#: Distinct values quoted in the summary of the rows not listed one by one.
MAX_VALUES_QUOTED = 5


class ProblemLog:
    """Accumulates :class:`InputProblem` records and exclusion counts.

    Parameters
    ----------
    drop_invalid : bool
        When true, :meth:`rows` turns row problems into exclusions instead of problems.
    """

    def __init__(self, drop_invalid: bool = False):
        self.drop_invalid = drop_invalid
        self.problems: list[InputProblem] = []
        self.exclusions: Counter[tuple[str, str]] = Counter()
        self.kept: Counter[tuple[str, str]] = Counter()  #: counted but kept in the frames
        self._per_kind: Counter[tuple[str, str | None, str]] = Counter()

    def add(
        self,
        file: str,
        message: str,
        fix: str = "",
        line: int | None = None,
        column: str | None = None,
        value: object = None,
    ) -> None:
        """Record one structural problem (always fatal)."""
        self.problems.append(
            InputProblem(
                file=file,
                message=message,
                fix=fix,
                line=_int_or_none(line),
                column=column,
                value=None if value is None else str(value),
            )
        )

    def rows(
        self,
        file: str,
        role: str,
        mask: np.ndarray,
        lines: np.ndarray,
        values: Iterable[object] | None,
        column: str | None,
        message: str,
        fix: str,
        reason: str,
        already: np.ndarray | None = None,
    ) -> np.ndarray:
        """Report the rows where ``mask`` is true; return ``mask`` (the rows to leave out).

        Under ``drop_invalid`` the rows are counted as an exclusion ``(role, reason)``;
        rows already left out for an earlier reason (``already``) are not counted again, so
        that every row read is counted once. Otherwise one problem per row is recorded (the
        first :data:`MAX_ROWS_PER_KIND` in full, the rest as one summary problem).
        """
        mask = np.asarray(mask, dtype=bool)
        n = int(mask.sum())
        if n == 0:
            return mask
        if self.drop_invalid:
            new = mask if already is None else mask & ~np.asarray(already, dtype=bool)
            self.exclude(role, reason, int(new.sum()))
            return mask
        idx = np.flatnonzero(mask)
        vals = None if values is None else np.asarray(list(values), dtype=object)
        kind = (file, column, message)
        shown = 0
        for i in idx:
            if self._per_kind[kind] >= MAX_ROWS_PER_KIND:
                break
            self._per_kind[kind] += 1
            shown += 1
            self.add(file, message, fix, line=int(lines[i]), column=column, value=None if vals is None else vals[i])
        if shown < n:
            rest = idx[shown:]
            self.add(
                file,
                f"{message}: and {len(rest):,} more {_rows(len(rest))} of the same kind"
                + ("" if vals is None else quoted_values(vals[rest])),
                fix,
                column=column,
                line=None,
                value=None,
            )
        return mask

    def rows_in(
        self,
        file: str,
        role: str,
        mask: np.ndarray,
        lines: np.ndarray,
        values: Iterable[object] | None,
        columns: str | np.ndarray,
        message: str,
        fix: str,
        reason: str,
        already: np.ndarray | None = None,
    ) -> np.ndarray:
        """:meth:`rows` where the column may differ per row (a wide layout: the criterion column
        the value came from); ``columns`` is one name or one name per row."""
        if isinstance(columns, str):
            return self.rows(file, role, mask, lines, values, columns, message, fix, reason, already)
        mask = np.asarray(mask, dtype=bool)
        columns = np.asarray(columns, dtype=object)
        vals = None if values is None else np.asarray(list(values), dtype=object)
        for c in dict.fromkeys(columns[mask]):
            self.rows(file, role, mask & (columns == c), lines, vals, str(c), message, fix, reason, already)
        return mask

    def exclude(self, role: str, reason: str, n: int) -> None:
        """Count ``n`` rows left out on purpose (e.g. blank choices)."""
        if n:
            self.exclusions[(role, reason)] += int(n)

    def keep(self, role: str, reason: str, n: int) -> None:
        """Count ``n`` rows reported but kept in the frames (unparsable judge outputs kept as missing)."""
        if n:
            self.kept[(role, reason)] += int(n)

    def raise_if_any(self) -> None:
        """Raise one InputError listing every problem, grouped by file (in the order files were
        first mentioned) and by line."""
        if self.problems:
            files = {f: i for i, f in enumerate(dict.fromkeys(p.file for p in self.problems))}
            ordered = sorted(
                self.problems, key=lambda p: (files[p.file], p.line if p.line is not None else float("inf"))
            )
            raise InputError(ordered)


def _rows(n: int) -> str:
    return "row" if n == 1 else "rows"


def quoted_values(values: Iterable[object]) -> str:
    """`` (values found: 'good', 'bad', ...)``: the distinct values, in order of appearance."""
    distinct = list(dict.fromkeys(str(v) for v in values))
    if not distinct:
        return ""
    shown = ", ".join(repr(v) for v in distinct[:MAX_VALUES_QUOTED])
    more = f" and {len(distinct) - MAX_VALUES_QUOTED:,} more" if len(distinct) > MAX_VALUES_QUOTED else ""
    return f" (values found: {shown}{more})"


def _int_or_none(x: object) -> int | None:
    if x is None:
        return None
    x = int(x)  # type: ignore[arg-type]
    return x if x > 0 else None
