"""The typed tables at the top of :class:`~judge_transfer_audit.results.result.AuditResult`: agreement, reader baseline,
judge pairs.

Each is frozen, has ``to_frame()`` (a user's DataFrame is one call away) and is written to
result.json as the frame it was before it was typed (``{"columns", "dtypes", "data"}``), so the
JSON is unchanged; reading it back gives the typed table again.

* :class:`AgreementRows`: inter-reader agreement per group and pooled, one
  :class:`~judge_transfer_audit.statistics.agreement.AgreementRow` per row
  (:func:`judge_transfer_audit.statistics.agreement.agreement_table`);
* :class:`BaselineRows`: the readers' leave-one-out agreement beside the judge's, one
  :class:`~judge_transfer_audit.statistics.agreement.BaselineRow` per row
  (:func:`judge_transfer_audit.statistics.agreement.reader_baseline`);
* :class:`JudgePairs`: every configuration's outcome and credit per pair x criterion
  (:func:`judge_transfer_audit.verdict.judge_side.judge_pair_outcomes`), kept in columns (it grows with the data).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Generic, TypeVar

import pandas as pd

from judge_transfer_audit.model.cells import JUDGE_PAIR_COLUMNS
from judge_transfer_audit.statistics.agreement import POOLED, AgreementRow, BaselineRow

R = TypeVar("R")


class _RowTable(Generic[R]):
    """A frozen tuple of typed rows written to JSON as its frame."""

    row_type: ClassVar[type]
    rows: tuple

    def to_frame(self) -> pd.DataFrame:
        columns = [f.name for f in dataclasses.fields(self.row_type)]
        return pd.DataFrame([r.__dict__ for r in self.rows], columns=columns)

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, matchup: str = POOLED, criterion: str = POOLED, level: str | None = None) -> R:
        """The row of one matchup x criterion (``"all"`` where pooled), of ``level`` when given."""
        for r in self.rows:
            if r.matchup == matchup and r.criterion == criterion and (level is None or r.level == level):
                return r
        raise KeyError((matchup, criterion))

    def __jsonable__(self) -> Any:
        return self.to_frame()

    @classmethod
    def __from_jsonable__(cls, args: tuple, data: Any, load: Callable[[Any, Any], Any]):
        if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
            raise TypeError(f"{cls.__name__} is written as a table (columns, dtypes, data)")
        columns = data["columns"]
        expected = [f.name for f in dataclasses.fields(cls.row_type)]
        if columns != expected:
            missing = [c for c in expected if c not in columns]
            extra = [c for c in columns if c not in expected]
            raise ValueError(
                f"{cls.__name__}: the table's columns are not {cls.row_type.__name__}'s"
                + (f" (missing {', '.join(missing)})" if missing else "")
                + (f" (unknown {', '.join(extra)})" if extra else "")
            )
        return cls(tuple(load(cls.row_type, dict(zip(columns, values))) for values in data.get("data", [])))


@dataclass(frozen=True)
class AgreementRows(_RowTable[AgreementRow]):
    """Inter-reader agreement (Fleiss kappa, Krippendorff alpha, raw agreement) per group and pooled."""

    row_type: ClassVar[type] = AgreementRow
    rows: tuple[AgreementRow, ...] = ()


@dataclass(frozen=True)
class BaselineRows(_RowTable[BaselineRow]):
    """Each group's reader leave-one-out agreement with the others' majority, beside the judge's."""

    row_type: ClassVar[type] = BaselineRow
    rows: tuple[BaselineRow, ...] = ()


@dataclass(frozen=True, eq=False)
class JudgePairs:
    """Per pair x criterion x judge configuration: the outcome (win, loss, tie, invalid) for the
    focal system and its credit under the run's tie rule. Columnar (one row per verdict grows with
    the data); ``frame`` is private to this class: read it through :meth:`to_frame`."""

    frame: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=list(JUDGE_PAIR_COLUMNS)))

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"JudgePairs holds a DataFrame, got {type(self.frame).__name__}")
        if list(self.frame.columns) != list(JUDGE_PAIR_COLUMNS):
            raise ValueError(
                f"JudgePairs columns are {', '.join(JUDGE_PAIR_COLUMNS)}; got {', '.join(map(str, self.frame.columns))}"
            )

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def __len__(self) -> int:
        return len(self.frame)

    def judges(self) -> tuple[str, ...]:
        """The judge configurations, in order of first appearance."""
        return tuple(str(j) for j in pd.unique(self.frame["judge"]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JudgePairs) and self.frame.equals(other.frame)

    __hash__ = None  # type: ignore[assignment]

    def __jsonable__(self) -> Any:
        return self.frame

    @classmethod
    def __from_jsonable__(cls, args: tuple, data: Any, load: Callable[[Any, Any], Any]) -> JudgePairs:
        return cls(load(pd.DataFrame, data))


__all__ = ["AgreementRows", "BaselineRows", "JudgePairs", "JUDGE_PAIR_COLUMNS"]
