"""Assemble :class:`judge_transfer_audit.model.data.AuditData` from the input files: :func:`load_audit_data`."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.progress import ProgressFactory, no_progress
from judge_transfer_audit.inputs.formats import Table, read_table
from judge_transfer_audit.inputs.humans import HumanInput, read_humans
from judge_transfer_audit.inputs.judge import INVALID, JudgeInput, read_judge
from judge_transfer_audit.inputs.judge_only import judge_only_item_pairs, judge_only_items
from judge_transfer_audit.inputs.layout import blank_ids
from judge_transfer_audit.inputs.pairs import (
    assign_focal,
    check_focal_names,
    pairs_from_groups,
    pairs_from_systems,
    read_pairs_file,
    reserved_system_names,
)
from judge_transfer_audit.inputs.problems import ProblemLog
from judge_transfer_audit.inputs.resolve import (
    distinct,
    judge_scores_by_item,
    judge_scores_by_pair,
    member,
    resolve_verdicts,
    resolve_votes,
    unknown_ids,
    votes_from_ratings,
)
from judge_transfer_audit.inputs.stories import read_stories, stories_by_item, stories_by_pair
from judge_transfer_audit.model.data import AuditData, Exclusion, RowCount, SourceFile

PathLike = "str | os.PathLike[str]"


def parse_focal(focal: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"a,b"`` or ``["a", "b"]`` -> ``("a", "b")`` (blanks dropped, order kept)."""
    if focal is None:
        return ()
    parts = focal.split(",") if isinstance(focal, str) else [p for f in focal for p in str(f).split(",")]
    return tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))


def parse_scale(scale: object) -> tuple[float, float] | None:
    """``"1,5"``, ``"1:5"`` or ``(1, 5)`` -> ``(1.0, 5.0)``: the one parser of a declared score
    scale (``audit run --scale`` and ``audit.run(scale=...)`` both use it)."""
    if scale is None:
        return None
    try:
        if isinstance(scale, str):
            scale = [s for s in scale.replace(":", ",").split(",")]
        lo, hi = (float(x) for x in scale)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise InputError(
            InputProblem("scale", f"expected two numbers LO,HI, got {scale!r}", "give the scale as LO,HI, e.g. 1,5")
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise InputError(
            InputProblem(
                "scale",
                f"({lo:g}, {hi:g}): the lower bound must be below the upper bound, both finite",
                "give the scale as LO,HI with LO < HI, e.g. 1,5",
            )
        ) from None
    return (lo, hi)


class _Loader:
    def __init__(self, drop_invalid: bool, scale, focal_names):
        self.log = ProblemLog(drop_invalid)
        self.scale = scale
        self.focal_names = focal_names
        self.notes: list[str] = []
        self.sources: list[SourceFile] = []
        self.tables: dict[str, Table] = {}
        self.focal_source = ""
        self.orientation: tuple = ()
        self.n_read: dict[str, int] = {}  #: records read per role when not the table's rows (melted wide files)
        self.human_shape = "pairwise"
        self.ratings_used = 0
        self.self_matchup_hint = ""  #: added to "nothing usable" problems when self-matchups were left out
        self.rated_items: set[str] = set()
        self.judge_only_items: set[str] = set()  #: items only the judge scored (scalar ratings)
        #: (pairs, judge scores, judge verdicts) of the pairs with judge outputs and no vote
        self.judge_only: tuple | None = None

    def read(self, path, role):
        if path is None:
            return None
        t = read_table(path, role, self.log)
        if t is not None:
            self.tables[role] = t
        return t

    # -- deployment: pairwise human votes ----------------------------------------------
    def pairwise(self, h: HumanInput, j: JudgeInput, pf: tuple[pd.DataFrame, pd.DataFrame] | None):
        log, th, tj = self.log, self.tables["humans"], self.tables["judge"]
        if j.key == "item_id":
            log.add(
                tj.path,
                "the judge file is keyed by item_id but the human file holds pairwise votes",
                "key the judge file by pair_id (pair_id, system, criterion, score)",
                column="item_id",
            )
            return None
        hv, jf = h.frame, j.frame
        if pf is not None:
            (pairs, self_pairs), where = pf, "the pairs file"
            hv, jf = self._drop_self_pairs(hv, jf, self_pairs)
            reserved = reserved_system_names(pairs, True, self.tables["pairs"].path, log)
            if reserved:
                self.notes.append(
                    f"system name(s) {', '.join(reserved)} are also choice words (tie, invalid, A, B): "
                    "a choice written exactly as the system name is that system; other spellings "
                    "keep their meaning (a tie, position A/B)"
                )
        else:
            where = "the judge file"
            # Without a pairs file nothing says which system is A: the judge file's row order
            # would decide, and reordering its rows would flip the votes. Whatever the judge kind.
            sources = [(th.path, hv, "choice"), (th.path, hv, "shown_first")]
            if j.kind != "scalar":
                sources.append((tj.path, jf, "choice"))
            elif distinct(_distinct_values(jf["system"]).str.upper()) & {"A", "B"}:
                sources = []  # a system named A or B: reported below as a name that is also a choice word
            for path, frame, column in sources:
                if (
                    column in frame.columns
                    and _distinct_values(frame[column]).astype(str).str.upper().isin(["A", "B"]).any()
                ):
                    log.add(
                        path,
                        f"{column} A/B needs a pairs file saying which system is A and which is B (without one, "
                        "the judge file's row order would decide)",
                        "pass --pairs FILE (pair_id, system_a, system_b), or write the system names instead of A/B",
                        column=column,
                        value="A/B",
                    )
                    return None
            if j.kind == "scalar":
                named, unnamed = _named_systems(jf, "system"), []
            else:
                named = pd.concat([hv[["pair_id", "choice"]], jf[["pair_id", "choice"]]])
                named = named[~named["choice"].str.lower().isin(["tie", INVALID])]
                named = _named_systems(named, "choice")
                seen = distinct(named["pair_id"])
                unnamed = [pid for pid in jf["pair_id"].unique() if pid not in seen]
                where = "the judge file's pair_ids"

            def first_line() -> dict:
                return jf.groupby("pair_id", sort=False)["line"].first().to_dict()

            pairs, rejected = pairs_from_systems(
                named["pair_id"].to_numpy(dtype=object),
                named.iloc[:, 1].to_numpy(dtype=object),
                unnamed,
                self._groups(),
                tj.path,
                first_line,
                log,
            )
            named_at = jf.groupby("system", sort=False)["line"].first().to_dict() if j.kind == "scalar" else {}
            reserved_system_names(pairs, False, tj.path, log, named_at)
            # a pair without exactly two systems is already reported (a fatal problem):
            # its rows are not reported again as "pair_id not found"
            hv, jf = hv[~member(hv["pair_id"], rejected)], jf[~member(jf["pair_id"], rejected)]
        systems_all = distinct(pairs["system_a"]) | distinct(pairs["system_b"])
        check_focal_names(self.focal_names, systems_all, log)
        known = distinct(pairs["pair_id"])
        fix = (
            "use the pair ids of the pairs file"
            if pf is not None
            else "every judged pair needs two systems in the judge file"
        )
        # without a pairs file the pairs come from the judge file: a pair whose judge rows all
        # had a problem is a knock-on of that problem
        from_judge = j.rejected_ids if pf is None else frozenset()
        bad_h = unknown_ids(hv, "pair_id", known, th.path, "humans", log, where, fix, from_judge)
        bad_j = unknown_ids(jf, "pair_id", known, tj.path, "judge", log, where, fix)
        hv, jf = hv[~bad_h], jf[~bad_j]
        # ids present in one file and missing in the other
        hv = hv[
            ~unknown_ids(
                hv,
                "pair_id",
                distinct(jf["pair_id"]),
                th.path,
                "humans",
                log,
                "the judge file",
                "give the judge's output for every pair the readers judged, or remove the votes",
                j.rejected_ids,
            )
        ]
        if len(hv) == 0:  # no usable vote at all: one problem, not one per judge row
            return self._nothing_usable(th.path)
        jf = self._blank_only(jf, h, th.path, "pair_id")
        # pairs with judge outputs and no vote: kept apart (the judge-only pairs), read by the
        # prediction-powered section only; every other part of the audit uses the voted pairs
        used = distinct(hv["pair_id"])
        judged_only = ~member(jf["pair_id"], used)
        jf, jf_only = jf[~judged_only], jf[judged_only]
        only_ids = distinct(jf_only["pair_id"])
        voted, judged = member(pairs["pair_id"], used), member(pairs["pair_id"], only_ids)
        unused = int((~(voted | judged)).sum())
        if unused:
            self.notes.append(f"{unused} pair(s) of the pairs file have no votes and no judge output; left out")
            log.exclude("pairs", "pair with no vote and no judge output", unused)
        pairs_only = pairs[judged]
        pairs = pairs[voted]
        pairs = self._orient(pairs)
        votes = resolve_votes(hv, pairs, th.path, log, wide=h.layout.endswith("-wide"))
        if j.kind == "scalar":
            scores, verdicts = judge_scores_by_pair(jf, pairs, tj.path, log), None
        else:
            scores, verdicts = None, resolve_verdicts(jf, pairs, tj.path, log, wide=j.layout.endswith("-wide"))
        self.judge_only = self._judge_only(j, jf_only, pairs_only, pairs)
        return votes, pairs, scores, verdicts

    def _judge_only(
        self,
        j: JudgeInput,
        jf: pd.DataFrame,
        pairs_only: pd.DataFrame,
        voted: pd.DataFrame,
        items_used: set | None = None,
    ):
        """The judge-only pairs oriented as the voted pairs of their matchup, with their judge
        outputs (scores or verdicts); pairs of a matchup without any vote are left out, counted.
        A judge keyed by item_id: ``jf`` holds the scores of the pairs' items, ``items_used`` the
        items of the voted pairs (their scores are used there whatever happens here)."""
        if len(pairs_only) == 0:
            return None
        log, tj = self.log, self.tables["judge"]
        first = voted.drop_duplicates("matchup")
        by_systems = {}
        for f, o, m in zip(first["focal"], first["other"], first["matchup"]):
            by_systems.setdefault(frozenset((f, o)), (f, o, m))
        a = pairs_only["system_a"].to_numpy(dtype=object)
        b = pairs_only["system_b"].to_numpy(dtype=object)
        found = [by_systems.get(frozenset((x, y))) for x, y in zip(a, b)]
        known = np.array([f is not None for f in found], dtype=bool)
        if not known.all():
            n_pairs = int((~known).sum())
            ids = distinct(pairs_only["pair_id"][~known])
            if j.key == "item_id":  # a score left out only when no pair kept uses its item
                kept = pairs_only[known]
                keep = distinct(kept["item_a"]) | distinct(kept["item_b"]) | (items_used or set())
                n_rows = _n_records(jf[~member(jf["item_id"], keep)])
                jf = jf[member(jf["item_id"], keep)]
            else:
                n_rows = _n_records(jf[member(jf["pair_id"], ids)])
            log.exclude("pairs", "judge-only pair of a matchup without any human vote", n_pairs)
            log.exclude("judge", "judge output on a pair of a matchup without any human vote", n_rows)
            self.notes.append(
                f"{n_pairs} judge-only pair(s) belong to no matchup the readers judged: left out, with "
                f"their {n_rows} judge output(s) (nothing to correct them with)"
            )
            pairs_only = pairs_only[known]
            if j.key != "item_id":
                jf = jf[~member(jf["pair_id"], ids)]
            found = [f for f in found if f is not None]
        if len(pairs_only) == 0:
            return None
        out = pairs_only.copy()
        out["focal"] = [f[0] for f in found]
        out["other"] = [f[1] for f in found]
        out["matchup"] = [f[2] for f in found]
        if j.key == "item_id":
            scores, verdicts = judge_scores_by_item(jf, out), None
        elif j.kind == "scalar":
            scores, verdicts = judge_scores_by_pair(jf, out, tj.path, log), None
        else:
            scores, verdicts = None, resolve_verdicts(jf, out, tj.path, log, wide=j.layout.endswith("-wide"))
        return out, scores, verdicts

    def _orient(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """One focal system per matchup (judge_transfer_audit.inputs.pairs.assign_focal); notes for re-oriented
        matchups."""
        pairs, self.focal_source, self.orientation, notes = assign_focal(pairs, self.focal_names)
        self.notes.extend(notes)
        return pairs

    def _blank_only(self, jf: pd.DataFrame, h: HumanInput, path: str, column: str) -> pd.DataFrame:
        """Judge outputs on an id whose every human row is blank: one problem per id saying so (the id
        is in the human file, with no judgment given), rather than "not found in the human file"."""
        if not h.all_blank:
            return jf
        mask = member(jf[column], set(h.all_blank))
        if not mask.any():
            return jf
        if self.log.drop_invalid:
            self.log.exclude("judge", f"{column} whose every human row is blank", int(mask.sum()))
            return jf[~mask]
        for value in sorted(distinct(jf.loc[mask, column]), key=str):
            first, n = h.all_blank[value]
            what = "choice" if h.shape == "pairwise" else "rating"
            self.log.add(
                path,
                f"every human row of this {column} is blank ({n} row(s) with an empty {what}): no judgment was given",
                f"fill in the {what}s, or remove the {column}'s rows from the human and judge files",
                line=first,
                column=what,
                value=value,
            )
        return jf[~mask]

    def _drop_self_pairs(self, hv: pd.DataFrame, jf: pd.DataFrame, self_pairs: pd.DataFrame):
        """Leave out the self-matchups of the pairs file (the same system on both sides), with
        their votes and judge outputs, counted and noted."""
        if self_pairs.empty:
            return hv, jf
        ids = distinct(self_pairs["pair_id"])
        on_h, on_j = member(hv["pair_id"], ids), member(jf["pair_id"], ids)
        reason = "on a self-matchup pair (the same system on both sides)"
        self.log.exclude("pairs", "self-matchup (the same system on both sides)", len(self_pairs))
        self.log.exclude("humans", f"vote {reason}", int(on_h.sum()))
        self.log.exclude("judge", f"judge output {reason}", int(on_j.sum()))
        self.self_matchup_hint = (
            f"; {len(self_pairs)} pair(s) compare a system with itself and are left out: give "
            "each pair two different systems"
        )
        shown = ", ".join(f"{p} ({s})" for p, s in zip(self_pairs["pair_id"][:5], self_pairs["system"][:5]))
        more = f" and {len(self_pairs) - 5} more" if len(self_pairs) > 5 else ""
        self.notes.append(
            f"{len(self_pairs)} pair(s) of the pairs file compare a system with itself (self-matchups: "
            f"{shown}{more}): left out, with their {int(on_h.sum())} vote(s) and {int(on_j.sum())} "
            "judge output(s)"
        )
        return hv[~on_h], jf[~on_j]

    def _nothing_usable(self, path: str) -> None:
        """No usable human judgment: one problem (unless one already explains it, e.g. a reader who
        judged nothing); the judge file is then not checked against an empty human side."""
        if not self.log.problems:
            self.log.add(
                path,
                "no usable human judgment is left",
                "check the file: every row was empty or left out"
                + (" (--drop-invalid)" if self.log.drop_invalid else "")
                + self.self_matchup_hint,
            )
        return None

    def _groups(self) -> dict[str, str]:
        """pair_id -> group_id from a ``group_id`` column of the judge or human file (first non-empty)."""
        out: dict[str, str] = {}
        for role in ("humans", "judge"):
            f = self.tables[role].frame
            if "group_id" in f.columns and "pair_id" in f.columns:
                g = f[f["group_id"] != ""].drop_duplicates("pair_id")
                for pid, gid in zip(g["pair_id"], g["group_id"]):
                    out.setdefault(pid, gid)
        return out

    def configuration_gaps(self, frame: pd.DataFrame) -> None:
        """Note judge configurations without any output for pair x criterion cells that other
        configurations have (their rates are then over fewer pairs)."""
        if frame["judge"].nunique() < 2:
            return
        cells = frame[["judge", "pair_id", "criterion"]].drop_duplicates()
        n_all = len(cells[["pair_id", "criterion"]].drop_duplicates())
        for judge, n in cells.groupby("judge", sort=False).size().items():
            if n < n_all:
                self.notes.append(
                    f"judge: configuration '{judge}' has no output for {n_all - n} of {n_all} "
                    "pair x criterion cell(s) that other configurations scored; its rates use fewer pairs"
                )

    def one_sided(self, scores: pd.DataFrame) -> None:
        """Note judge cells where only one system of the pair was scored (no comparison possible)."""
        n = scores.groupby(["pair_id", "criterion", "judge", "sample"], sort=False)["system"].nunique()
        k = int((n < 2).sum())
        if k:
            self.notes.append(
                f"judge: {k} pair x criterion x configuration x sample cell(s) score only one "
                "of the two systems; they give no comparison"
            )

    # -- deployment: scalar ratings turned into prompt-matched pairs -------------------
    def scalar(self, h: HumanInput, j: JudgeInput, pf: pd.DataFrame | None):
        log, th, tj = self.log, self.tables["humans"], self.tables["judge"]
        if j.kind == "pairwise":
            return self.scalar_with_verdicts(h, j, pf)
        if pf is not None:
            log.add(
                self.tables["pairs"].path,
                "a pairs file cannot be combined with scalar ratings and a scalar judge",
                "leave out the pairs file: pairs are formed from items sharing a group_id (a pairs file with "
                "item_a and item_b defines the pairs of a pairwise judge)",
            )
        if j.kind != "scalar" or j.key != "item_id":
            log.add(
                tj.path,
                "with scalar human ratings the judge file must give scalar scores by item_id",
                "use columns item_id, system, criterion, score",
                column="item_id",
            )
            return None
        r, jf = h.frame, j.frame
        if "group_id" not in th.columns:
            log.add(
                th.path,
                "scalar ratings need a group_id column to form prompt-matched pairs",
                f"add group_id (e.g. the premise); columns found: {th.found()}",
                column="group_id",
            )
            return None
        r = r[~blank_ids(r, ["group_id"], th, log, "humans")]
        groups = r.groupby("item_id", sort=False)["group_id"].unique()
        for item in groups.index[groups.map(len).to_numpy() > 1]:
            log.add(
                th.path,
                "this item appears in more than one group",
                "give each item a single group_id",
                column="group_id",
                value=f"{item}: {', '.join(groups[item])}",
            )
        sysmap = jf.groupby("item_id", sort=False)["system"].unique()
        for item in sysmap.index[sysmap.map(len).to_numpy() > 1]:
            log.add(
                tj.path,
                "this item has more than one system",
                "give each item a single system",
                column="system",
                value=f"{item}: {', '.join(sysmap[item])}",
            )
        item_system = {k: v[0] for k, v in sysmap.items()}
        r = r[
            ~unknown_ids(
                r,
                "item_id",
                set(item_system),
                th.path,
                "humans",
                log,
                "the judge file",
                "give the judge's score for every rated item (this also names its system)",
                j.rejected_ids,
            )
        ]
        if len(r) == 0:
            return self._nothing_usable(th.path)
        jf = self._blank_only(jf, h, th.path, "item_id")
        only_items = judge_only_items(jf, r, h.rejected_ids, tj.path, log)
        self.judge_only_items = distinct(only_items["item_id"])
        jf = jf[
            ~unknown_ids(
                jf,
                "item_id",
                distinct(r["item_id"]) | distinct(only_items["item_id"]),
                tj.path,
                "judge",
                log,
                "the human file",
                "remove the judge's scores of items no reader rated, add the ratings, or give the items' "
                "group_id in the judge file (they then enter the prediction-powered estimates only)",
                h.rejected_ids,
            )
        ]
        if log.problems:
            return None
        self.rated_items = distinct(r["item_id"])
        size = r.drop_duplicates("item_id").groupby("group_id", sort=False).size()
        alone = r["group_id"].map(size).to_numpy() < 2
        if alone.any():
            log.exclude("humans", "rating of an item alone in its group (no pair)", int(alone.sum()))
            r = r[~alone]
        pairs, self_pairs = pairs_from_groups(r, item_system)
        reserved_system_names(pairs, False, tj.path, log, jf.groupby("system", sort=False)["line"].first().to_dict())
        check_focal_names(self.focal_names, set(item_system.values()), log)
        if log.problems:
            return None
        if len(self_pairs):
            self.self_matchup_hint = (
                f"; {len(self_pairs)} pair(s) compare two outputs of the same system and are "
                "left out: a group needs outputs of two different systems"
            )
        pairs = self._orient(pairs)
        votes, n_unused, n_self_only, n_self_votes = votes_from_ratings(r, pairs, self_pairs)
        if len(self_pairs):
            self.notes.append(
                f"{len(self_pairs)} pair(s) compare two outputs of the same system (self-matchups, "
                f"e.g. {self_pairs['pair_id'].iloc[0]} of {self_pairs['system_a'].iloc[0]}): left out, "
                f"with the {n_self_votes} vote(s) they would give"
            )
        log.exclude(
            "humans",
            "rating with no rating of another item of its group by the same reader and criterion (no pair)",
            n_unused,
        )
        log.exclude("humans", "rating used only in self-matchup pairs (two outputs of the same system)", n_self_only)
        self.ratings_used = len(r) - n_unused - n_self_only
        in_pairs = distinct(pairs["item_a"]) | distinct(pairs["item_b"])
        only_pairs = judge_only_item_pairs(r, only_items, item_system)
        in_only = distinct(only_pairs["item_a"]) | distinct(only_pairs["item_b"])
        outside = ~member(jf["item_id"], in_pairs | in_only)
        log.exclude(
            "judge",
            "judge score of an output in no pair (alone in its group, or compared only with outputs of its own system)",
            int(outside.sum()),
        )
        scores = judge_scores_by_item(jf[member(jf["item_id"], in_pairs)], pairs)
        if len(only_pairs):
            self.judge_only = self._judge_only(
                j, jf[member(jf["item_id"], in_only)], only_pairs, pairs, items_used=in_pairs
            )
        return votes, pairs, scores, None

    # -- scalar ratings, pairwise judge: the pairs derived from the groups, or a pairs file with items --
    def _item_systems(self, log) -> dict[str, str] | None:
        """item_id -> system from the human file's ``system`` column (None when it has none)."""
        th = self.tables["humans"]
        if "system" not in th.columns:
            return None
        f = th.frame[(th.frame["system"] != "") & (th.frame["item_id"] != "")][["item_id", "system"]].drop_duplicates()
        many = f.groupby("item_id", sort=False)["system"].unique()
        for item in many.index[many.map(len).to_numpy() > 1]:
            log.add(
                th.path,
                "this item has more than one system",
                "give each item a single system",
                column="system",
                value=f"{item}: {', '.join(many[item])}",
            )
        return {i: v[0] for i, v in many.items()}

    def _pairs_with_items(self, pf, item_system, log):
        """The pairs file's pairs with their ``item_a`` / ``item_b`` (scalar ratings, pairwise judge)."""
        tp = self.tables["pairs"]
        if not {"item_a", "item_b"} <= set(tp.columns):
            log.add(
                tp.path,
                "with scalar ratings a pairs file must name each pair's two rated items",
                f"add columns item_a and item_b (the item_id of system_a's and system_b's output); columns found: "
                f"{tp.found()}",
            )
            return None
        items = tp.frame.drop_duplicates("pair_id").set_index("pair_id")[["item_a", "item_b"]]
        pairs, self_pairs = pf
        pairs = pairs.join(items, on="pair_id")
        self_pairs = self_pairs.join(items, on="pair_id")
        for side in ("a", "b"):
            declared = pairs["item_" + side].map(item_system or {})
            clash = declared.notna() & (declared != pairs["system_" + side])
            for row in pairs[clash.to_numpy()].itertuples():
                log.add(
                    tp.path,
                    f"system_{side} is not the system the human file gives item_{side}",
                    "make the pairs file and the human file's system column agree",
                    line=int(row.line),
                    column=f"system_{side}",
                    value=f"{getattr(row, 'item_' + side)}: {getattr(row, 'system_' + side)}",
                )
        empty = (pairs["item_a"] == "") | (pairs["item_b"] == "")
        for row in pairs[empty.to_numpy()].itertuples():
            log.add(tp.path, "empty item_a or item_b", "name both rated items of the pair", line=int(row.line))
        return pairs, self_pairs

    def scalar_with_verdicts(self, h: HumanInput, j: JudgeInput, pf):
        """Scalar human ratings against a pairwise judge: the judge's verdicts are keyed by the
        pair ids derived from the groups (``i~j``, either order) or defined by a pairs file
        with ``item_a`` / ``item_b``; the readers' votes on a pair come from their two ratings."""
        log, th, tj = self.log, self.tables["humans"], self.tables["judge"]
        r, jf = h.frame, j.frame.copy()
        if j.key != "pair_id":
            log.add(
                tj.path, "a pairwise judge's verdicts are keyed by pair_id", "use columns pair_id, criterion, choice"
            )
            return None
        item_system = self._item_systems(log)
        if pf is not None:
            built = self._pairs_with_items(pf, item_system, log)
            if built is None or log.problems:
                return None
            pairs, self_pairs = built
            where, fix = "the pairs file", "use the pair ids of the pairs file"
        else:
            if item_system is None:
                log.add(
                    th.path,
                    "with a pairwise judge, scalar ratings need a system column (the system of each rated item): the "
                    "judge's verdicts name systems, not items",
                    "add a system column to the human file, or give a pairs file with pair_id, item_a, item_b, "
                    "system_a, system_b",
                    column="system",
                )
                return None
            if "group_id" not in th.columns:
                log.add(
                    th.path,
                    "scalar ratings need a group_id column to form prompt-matched pairs",
                    f"add group_id (e.g. the premise), or give a pairs file with item_a and item_b; columns found: "
                    f"{th.found()}",
                    column="group_id",
                )
                return None
            r = r[~blank_ids(r, ["group_id"], th, log, "humans")]
            missing = sorted(distinct(r["item_id"]) - set(item_system))
            for item in missing[:20]:
                log.add(
                    th.path, "this rated item has no system", "fill in its system column", column="system", value=item
                )
            if log.problems:
                return None
            size = r.drop_duplicates("item_id").groupby("group_id", sort=False).size()
            alone = r["group_id"].map(size).to_numpy() < 2
            if alone.any():
                log.exclude("humans", "rating of an item alone in its group (no pair)", int(alone.sum()))
                r = r[~alone]
            pairs, self_pairs = pairs_from_groups(r, item_system)
            # a verdict written for the pair in the other order (j~i) is the same pair
            alias = dict(zip(pairs["item_b"] + "~" + pairs["item_a"], pairs["pair_id"]))
            jf["pair_id"] = jf["pair_id"].map(lambda p: alias.get(p, p))
            where, fix = (
                "the pairs formed from the ratings (item_i~item_j within a group_id)",
                "key each verdict by the pair of items it compares, item_i~item_j (docs/data-contract.md)",
            )
        jf = jf[~unknown_ids(jf, "pair_id", distinct(pairs["pair_id"]), tj.path, "judge", log, where, fix)]
        if log.problems:
            return None
        judged = distinct(jf["pair_id"])
        unjudged = pairs[~member(pairs["pair_id"], judged)]
        pairs = pairs[member(pairs["pair_id"], judged)]
        if pf is not None:
            self.log.exclude("pairs", "self-matchup (the same system on both sides)", len(self_pairs))
            self.log.exclude("pairs", "pair with no judge verdict", len(unjudged))
        if len(pairs) == 0:
            log.add(tj.path, "no judge verdict is on a pair of the rated items", fix)
            return None
        self.rated_items = distinct(r["item_id"])
        pairs = self._orient(pairs)
        left = pd.concat([self_pairs[["pair_id", "item_a", "item_b"]], unjudged[["pair_id", "item_a", "item_b"]]])
        votes, n_unused, n_left_only, n_left_votes = votes_from_ratings(r, pairs, left)
        if len(unjudged) or len(self_pairs):
            self.notes.append(
                f"{len(unjudged)} pair(s) without a judge verdict and {len(self_pairs)} self-matchup pair(s) "
                f"(two outputs of the same system) are left out, with the {n_left_votes} vote(s) they would give"
            )
        log.exclude(
            "humans",
            "rating with no rating of another item of its group by the same reader and criterion (no pair)",
            n_unused,
        )
        log.exclude(
            "humans",
            "rating used only in pairs left out (self-matchups, or pairs without a judge verdict)",
            n_left_only,
        )
        self.ratings_used = len(r) - n_unused - n_left_only
        verdicts = resolve_verdicts(jf, pairs, tj.path, log, wide=j.layout.endswith("-wide"))
        voted = distinct(votes["pair_id"])
        silent = ~member(verdicts["pair_id"], voted)
        if silent.any():
            no_votes = ~member(pairs["pair_id"], voted)
            log.exclude("judge", "verdict on a pair no reader rated both items of", int(silent.sum()))
            if pf is not None:
                log.exclude("pairs", "pair no reader rated both items of", int(no_votes.sum()))
            verdicts, pairs = verdicts[~silent], pairs[~no_votes]
        if log.problems:
            return None
        return votes, pairs, None, verdicts.reset_index(drop=True)

    # -- optional parts -------------------------------------------------------------------
    def stories(self, ts: Table, key: str, pairs: pd.DataFrame):
        s = read_stories(ts, self.log, key, self.notes)
        if s is None:
            return None
        if key == "pair_id":
            s = s[
                ~unknown_ids(
                    s,
                    "pair_id",
                    distinct(pairs["pair_id"]),
                    ts.path,
                    "stories",
                    self.log,
                    "the human and judge files",
                    "check the pair ids",
                )
            ]
            out = stories_by_pair(s, pairs, ts.path, self.log)
        else:
            items = distinct(pairs["item_a"]) | distinct(pairs["item_b"])
            s = s[
                ~unknown_ids(
                    s,
                    "item_id",
                    items | self.rated_items | self.judge_only_items,
                    ts.path,
                    "stories",
                    self.log,
                    "the human and judge files",
                    "check the item ids",
                )
            ]
            only = member(s["item_id"], self.judge_only_items) & ~member(s["item_id"], items)
            self.log.exclude("stories", "text of an output only in pairs without votes (judge-only)", int(only.sum()))
            self.log.exclude(
                "stories",
                "text of an output in no pair (alone in its group, or compared only with outputs of its own system)",
                int((~member(s["item_id"], items) & ~only).sum()),
            )
            out = stories_by_item(s, pairs)
        expected = 2 * len(pairs)
        have = len(out.drop_duplicates(["pair_id", "system"]))
        if have < expected:
            self.notes.append(f"stories: {expected - have} of the {expected} texts of the pairs are missing")
        return out

    def dev(self, tdj: Table | None, tdh: Table | None):
        log = self.log
        dj = read_judge(tdj, log, scale=self.scale, role="dev_judge", kind="scalar") if tdj is not None else None
        dh = read_humans(tdh, log, scale=self.scale, role="dev_humans", shape="scalar") if tdh is not None else None
        if dj is None or dh is None:
            return None, None
        if dj.key != "item_id":
            log.add(
                tdj.path,
                "the development judge file must be keyed by item_id",
                "use columns item_id, system, criterion, score",
                column="pair_id",
            )
            return None, None
        jf, hf = dj.frame, dh.frame
        jf = jf[
            ~unknown_ids(
                jf,
                "item_id",
                distinct(hf["item_id"]),
                tdj.path,
                "dev_judge",
                log,
                "the development human file",
                "rate the item, or remove its judge scores",
            )
        ]
        hf = hf[
            ~unknown_ids(
                hf,
                "item_id",
                distinct(jf["item_id"]),
                tdh.path,
                "dev_humans",
                log,
                "the development judge file",
                "score the item, or remove its ratings",
            )
        ]
        jf = self._unparsable(jf, "dev_judge")
        self.n_read.update(dev_judge=dj.n_read, dev_humans=dh.n_read)
        return (
            jf[["item_id", "system", "criterion", "judge", "sample", "score", "line"]].reset_index(drop=True),
            hf[["item_id", "reader_id", "criterion", "rating", "line"]].reset_index(drop=True),
        )

    def unparsable_once(self, voted: pd.DataFrame, only: pd.DataFrame | None):
        """:meth:`_unparsable` over the voted and the judge-only pairs' outputs together (an
        item's score can sit in both), split back."""
        if only is None:
            return self._unparsable(voted, "judge"), None
        both = pd.concat([voted.assign(_only=False), only.assign(_only=True)], ignore_index=True)
        both = self._unparsable(both, "judge")
        side = both.pop("_only").to_numpy(bool)
        return both[~side].reset_index(drop=True), both[side].reset_index(drop=True)

    def _unparsable(self, frame: pd.DataFrame, role: str) -> pd.DataFrame:
        """Count unparsable judge outputs (source records: an item scored once appears in every
        pair it belongs to); remove them under drop_invalid, else keep them as missing."""
        if "score" in frame.columns:
            bad, what = frame["score"].isna().to_numpy(), "empty score"
        else:
            bad, what = (frame["choice"] == INVALID).to_numpy(), "choice=invalid"
        n = _n_records(frame[bad])
        if self.log.drop_invalid:
            self.log.exclude(role, f"unparsable judge output ({what}), removed (--drop-invalid)", n)
            return frame[~bad].reset_index(drop=True)
        self.log.keep(role, f"unparsable judge output ({what}), kept as missing, never imputed", n)
        return frame

    def row_counts(self, used: dict[str, int]) -> tuple[RowCount, ...]:
        """read = used + excluded, per input file (humans, judge, pairs, stories, dev_judge, dev_humans)."""
        units = {
            "humans": "ratings" if self.human_shape == "scalar" else "votes",
            "judge": "outputs",
            "pairs": "pairs",
            "stories": "texts",
            "dev_judge": "scores",
            "dev_humans": "ratings",
        }
        out = []
        for role in sorted(self.tables, key=lambda r: list(units).index(r) if r in units else len(units)):
            table = self.tables[role]
            read = self.n_read.get(role, len(table))
            excluded = [(reason, n) for (r, reason), n in self.log.exclusions.items() if r == role and n]
            rest = read - used.get(role, 0) - sum(n for _, n in excluded)
            if rest:  # never expected: the accounting test holds every path to zero
                excluded.append(("left out for a reason not recorded (a judge-audit bug: please report it)", rest))
            out.append(
                RowCount(
                    role=role,
                    unit=units.get(role, "rows"),
                    read=int(read),
                    used=int(used.get(role, 0)),
                    excluded=tuple(excluded),
                )
            )
        return tuple(out)


def _named_systems(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The distinct (pair_id, ``column``) rows of the rows with a pair_id, in order of first
    appearance: each pair's systems in the order the file names them."""
    return frame.loc[frame["pair_id"].notna(), ["pair_id", column]].drop_duplicates()


def _distinct_values(column: pd.Series) -> pd.Series:
    """The distinct values of ``column`` as a Series of its dtype (a per-value string operation then
    runs once per distinct value)."""
    return pd.Series(column.unique(), dtype=column.dtype)


def _n_records(frame: pd.DataFrame | None) -> int:
    """Source records in a frame: distinct (line, criterion); an item's judge score or text
    repeats in every pair it belongs to."""
    if frame is None or len(frame) == 0:
        return 0
    keys = [c for c in ("line", "criterion") if c in frame.columns]
    return int(len(frame.drop_duplicates(keys))) if keys else len(frame)


def load(
    judge,
    humans,
    *,
    pairs=None,
    stories=None,
    dev_judge=None,
    dev_humans=None,
    focal=None,
    drop_invalid=False,
    scale=None,
    progress_bar: ProgressFactory | None = None,
) -> AuditData:
    given = [judge, humans, pairs, stories, dev_judge, dev_humans]
    # one step per file read, then the human and the judge rows checked, the files combined, the stories
    steps = sum(f is not None for f in given) + 3 + (stories is not None)
    bar = (progress_bar or no_progress)("loading inputs", steps)
    try:
        return _load(judge, humans, pairs, stories, dev_judge, dev_humans, focal, drop_invalid, scale, bar)
    finally:
        bar.close()


def _load(judge, humans, pairs, stories, dev_judge, dev_humans, focal, drop_invalid, scale, bar) -> AuditData:
    """:func:`load`, advancing ``bar`` after each of its steps."""
    ld = _Loader(drop_invalid, parse_scale(scale), parse_focal(focal))
    log = ld.log

    def read(path, role):
        table = ld.read(path, role)
        if path is not None:
            bar.advance()
        return table

    tj, th = read(judge, "judge"), read(humans, "humans")
    tp, ts = read(pairs, "pairs"), read(stories, "stories")
    if (dev_judge is None) != (dev_humans is None):
        log.add(
            str(dev_judge or dev_humans),
            "a development set needs both the judge file and the human file",
            "pass both --dev-judge and --dev-humans, or neither",
        )
    tdj, tdh = read(dev_judge, "dev_judge"), read(dev_humans, "dev_humans")
    hin = read_humans(th, log, scale=ld.scale) if th is not None else None
    bar.advance()
    jin = read_judge(tj, log, scale=ld.scale) if tj is not None else None
    bar.advance()
    pf = read_pairs_file(tp, log) if tp is not None else None
    dev_j, dev_h = ld.dev(tdj, tdh)
    if hin is None or jin is None or (tp is not None and pf is None):
        log.raise_if_any()
    if hin.shape == "pairwise":
        built = ld.pairwise(hin, jin, pf)
    else:
        built = ld.scalar(hin, jin, pf)
    bar.advance()
    if built is None:
        log.raise_if_any()
        raise InputError("the input files could not be combined")  # defensive: a problem is always logged
    votes, pairs_df, scores, verdicts = built
    ld.n_read.update(humans=hin.n_read, judge=jin.n_read)
    ld.human_shape = hin.shape
    only_pairs = only_scores = only_verdicts = None
    if ld.judge_only is not None:
        only_pairs, only_scores, only_verdicts = ld.judge_only
    if scores is not None:
        ld.one_sided(scores)
        if only_scores is not None:
            ld.one_sided(only_scores)
        scores, only_scores = ld.unparsable_once(scores, only_scores)
    if verdicts is not None:
        verdicts, only_verdicts = ld.unparsable_once(verdicts, only_verdicts)
    if ld.judge_only is not None:
        ld.notes.append(
            f"{len(only_pairs)} pair(s) carry only the judge (judge outputs, no human vote): they enter "
            "only the prediction-powered estimates; every other figure uses the pairs with votes"
        )
    story_frame = None
    if ts is not None:
        story_frame = ld.stories(ts, "pair_id" if hin.shape == "pairwise" else "item_id", pairs_df)
        bar.advance()
    jframe = scores if scores is not None else verdicts
    if len(votes) == 0 and not log.problems:
        log.add(
            th.path,
            "no usable human judgment is left",
            "check the file: every row was empty or left out"
            + (" (--drop-invalid)" if drop_invalid else "")
            + ld.self_matchup_hint,
        )
    if len(jframe) == 0 and not log.problems:
        log.add(
            tj.path,
            "no usable judge output is left",
            "check the file: every row was left out" + (" (--drop-invalid)" if drop_invalid else ""),
        )
    if len(jframe) and not log.problems:
        ld.configuration_gaps(jframe)
    jcrit = distinct(jframe["criterion"])
    missing = [c for c in votes["criterion"].unique().tolist() if c != "overall" and c not in jcrit]
    if missing:
        ld.notes.append(f"criteria judged by the readers but not by the judge: {', '.join(missing)}")
    hcrit = distinct(votes["criterion"])
    extra = [c for c in jframe["criterion"].unique().tolist() if c not in hcrit]
    if extra and len(votes):
        why = (
            "no human comparison; they still enter the judge's aggregate"
            if scores is not None
            else "no human comparison"
        )
        ld.notes.append(f"criteria scored by the judge but not judged by the readers ({why}): {', '.join(extra)}")
    log.raise_if_any()
    pairs_out = pairs_df.drop(columns=[c for c in ("line", "base_a", "base_b") if c in pairs_df.columns])
    if "item_a" not in pairs_out.columns:
        pairs_out["item_a"] = pairs_out["pair_id"] + ":" + pairs_out["system_a"]
        pairs_out["item_b"] = pairs_out["pair_id"] + ":" + pairs_out["system_b"]
    pairs_out = pairs_out[
        ["pair_id", "system_a", "system_b", "focal", "other", "matchup", "group_id", "item_a", "item_b"]
    ].reset_index(drop=True)
    layouts = {"humans": hin.layout, "judge": jin.layout, "dev_humans": "scalar-long", "dev_judge": "scalar-long"}
    sources = tuple(
        SourceFile(
            role=role, path=t.path, sha256=t.sha256, format=t.format, n_rows=len(t), layout=layouts.get(role, "")
        )
        for role, t in ld.tables.items()
    )
    exclusions = tuple(
        Exclusion(role=role, reason=reason, n_rows=n) for (role, reason), n in log.exclusions.items()
    ) + tuple(Exclusion(role=role, reason=reason, n_rows=n, kept=True) for (role, reason), n in log.kept.items())
    only_frame = only_scores if only_scores is not None else only_verdicts
    if only_pairs is not None:
        only_pairs = only_pairs[pairs_out.columns.intersection(only_pairs.columns).tolist()].copy()
        if "item_a" not in only_pairs.columns:
            only_pairs["item_a"] = only_pairs["pair_id"] + ":" + only_pairs["system_a"]
            only_pairs["item_b"] = only_pairs["pair_id"] + ":" + only_pairs["system_b"]
        if "group_id" not in only_pairs.columns:
            only_pairs["group_id"] = ""
        only_pairs = only_pairs[pairs_out.columns].reset_index(drop=True)
    used = {
        "humans": len(votes) if hin.shape == "pairwise" else ld.ratings_used,
        # an item's score can serve voted and judge-only pairs: its record counts once
        "judge": _n_records(pd.concat([f for f in (jframe, only_frame) if f is not None])),
        "pairs": len(pairs_out) + (len(only_pairs) if only_pairs is not None else 0),
        "stories": _n_records(story_frame[["line"]] if story_frame is not None else None),
        "dev_judge": _n_records(dev_j),
        "dev_humans": _n_records(dev_h),
    }
    return AuditData(
        votes=votes,
        pairs=pairs_out,
        judge_scores=scores,
        judge_verdicts=verdicts,
        stories=story_frame,
        dev_judge=dev_j,
        dev_humans=dev_h,
        focal_source=ld.focal_source,
        human_shape=hin.shape,
        sources=sources,
        exclusions=exclusions,
        notes=tuple(ld.notes),
        rows=ld.row_counts(used),
        orientation=ld.orientation,
        judge_only_pairs=only_pairs,
        judge_only_scores=only_scores,
        judge_only_verdicts=only_verdicts,
    )


def load_audit_data(
    judge: str | os.PathLike[str],
    humans: str | os.PathLike[str],
    *,
    pairs: str | os.PathLike[str] | None = None,
    stories: str | os.PathLike[str] | None = None,
    dev_judge: str | os.PathLike[str] | None = None,
    dev_humans: str | os.PathLike[str] | None = None,
    focal: str | Sequence[str] | None = None,
    drop_invalid: bool = False,
    scale: tuple[float, float] | None = None,
    progress_bar: ProgressFactory | None = None,
) -> AuditData:
    """Read, validate and normalise the audit's input files (docs/data-contract.md).

    Parameters
    ----------
    judge, humans : path
        The judge's outputs and the human judgments (CSV, TSV, JSONL or Parquet, by
        extension; long or wide layouts; see the data contract).
    pairs : path, optional
        What each pair is (pair_id, system_a, system_b, optional focal, matchup, group_id).
        Without it the pairs come from the judge file (pairwise votes) or from items
        sharing a ``group_id`` (scalar ratings).
    stories : path, optional
        Story texts (pair_id or item_id, system, text; extra numeric columns are kept).
    dev_judge, dev_humans : path, optional
        A development set of scalar ratings and the judge's scores on it (both or neither).
    focal : str or sequence of str, optional
        ``"NAME[,NAME...]"``: in each pair, the first listed name present is the focal
        system (it overrides the pairs file). Otherwise the pairs file's ``focal`` column,
        else the system in more pairs of the study (then code-point order); one focal per
        matchup (an alternating one is re-oriented, with a note); ``focal_source`` and
        ``orientation`` record which rule decided.
    drop_invalid : bool, default False
        False: any invalid row stops the load. True: invalid rows (non-numeric or
        out-of-scale values, choices naming a system not in the pair, duplicates, ids
        missing from the other file...) and unparsable judge outputs are left out and
        counted in ``exclusions``. Structural problems (missing columns, empty or
        unreadable files, a pair with other than two systems...) always stop the load.
    scale : (lo, hi), optional
        The declared score scale; judge scores and human ratings outside it are problems.
    progress_bar : factory, optional
        A progress factory of :mod:`judge_transfer_audit.core.progress`: one bar, ``"loading inputs"``, over the
        files read and the checking steps (None: no bar).

    Returns
    -------
    AuditData
        Normalised frames (see the module docstring), provenance (``sources`` with
        sha256), ``exclusions`` (every row left out, counted; unparsable judge outputs are
        counted even when kept as missing) and ``notes``.

    Raises
    ------
    judge_transfer_audit.core.errors.InputError
        With one :class:`~judge_transfer_audit.core.errors.InputProblem` per problem found in any file.
    """
    return load(
        judge,
        humans,
        pairs=pairs,
        stories=stories,
        dev_judge=dev_judge,
        dev_humans=dev_humans,
        focal=focal,
        drop_invalid=drop_invalid,
        scale=scale,
        progress_bar=progress_bar,
    )
