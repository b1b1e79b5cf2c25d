"""Resolve human votes and judge outputs against the pairs (A/B, system names, ids)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.inputs.problems import MAX_ROWS_PER_KIND, ProblemLog, quoted_values

TIE = "tie"
INVALID = "invalid"
VOTE_COLUMNS = [
    "pair_id",
    "reader_id",
    "criterion",
    "matchup",
    "focal",
    "other",
    "choice",
    "y",
    "seconds",
    "comment",
    "shown_first",
    "reader_group",
    "order",
    "line",
]


def distinct(column: pd.Series) -> set:
    """The set of a column's values, hashed once per distinct value (``set(column)`` walks an
    Arrow string column element by element: seconds at a million rows)."""
    return set(column.unique().tolist())


def member(column: pd.Series, values) -> np.ndarray:
    """``column.isin(values)`` as a boolean array, hashed once per distinct value of the column.

    pandas' ``isin`` on an Arrow string column builds one Arrow scalar per element of ``values``
    (seconds for 50k pair ids); here the column is factorized (C) and its distinct values looked
    up in a set. A missing value (None/NaN) is a member only when ``values`` holds one, as in pandas.
    """
    known = values if isinstance(values, (set, frozenset)) else set(values)
    if not known:
        return np.zeros(len(column), dtype=bool)
    codes, uniques = pd.factorize(column, sort=False)
    hit = np.fromiter(map(known.__contains__, uniques.tolist()), dtype=bool, count=len(uniques))
    out = np.zeros(len(codes), dtype=bool)
    found = codes >= 0
    out[found] = hit[codes[found]]
    if not found.all() and any(v is None or v != v for v in known):
        out[~found] = True
    return out


def unknown_ids(
    frame: pd.DataFrame,
    column: str,
    known: set[str],
    path: str,
    role: str,
    log: ProblemLog,
    where: str,
    fix: str,
    explained: frozenset | set = frozenset(),
) -> np.ndarray:
    """Rows whose id is not in ``known``: one problem per id (or one exclusion count under drop_invalid).

    The first :data:`~judge_transfer_audit.inputs.problems.MAX_ROWS_PER_KIND` ids are listed one by one, the
    rest in one "and N more" problem. Ids in ``explained`` (every row of the id in the other
    file was left out for a problem already reported) are knock-ons of that problem: they are
    not reported again (the run stops on the root problem), only counted under drop_invalid.
    """
    mask = ~member(frame[column], known)
    if not mask.any():
        return mask
    if log.drop_invalid:
        log.exclude(role, f"{column} missing from {where}", int(mask.sum()))
        return mask
    ids = frame[column].to_numpy(dtype=object)
    lines = frame["line"].to_numpy()
    seen: dict[str, tuple[int, int]] = {}
    for i in np.flatnonzero(mask):
        if ids[i] in explained:
            continue
        first, n = seen.get(ids[i], (int(lines[i]), 0))
        seen[ids[i]] = (first, n + 1)
    listed = list(seen.items())[:MAX_ROWS_PER_KIND]
    for value, (first, n) in listed:
        log.add(path, f"{column} not found in {where} ({n} row(s))", fix, line=first, column=column, value=value)
    rest = list(seen.items())[MAX_ROWS_PER_KIND:]
    if rest:
        n_rows = sum(n for _, (_, n) in rest)
        log.add(
            path,
            f"{column} not found in {where}: and {len(rest):,} more {column}s of the same kind "
            f"({n_rows:,} row(s)){quoted_values(v for v, _ in rest)}",
            fix,
            column=column,
        )
    return mask


#: Choice words (any case) that are not system names: ``tie``, ``invalid`` (judge verdicts),
#: and ``A``/``B`` (the pair's system_a/system_b). A system so named is ambiguous without a
#: pairs file (an input problem, :func:`judge_transfer_audit.inputs.pairs.reserved_system_names`).
RESERVED_CHOICES = ("tie", "invalid", "a", "b")


def _resolve_choice(choice: np.ndarray, a: np.ndarray, b: np.ndarray, keywords: tuple[str, ...] = ()) -> np.ndarray:
    """Read a choice against its pair's two systems.

    A choice written exactly as one of the pair's system names is that system (so a system
    named ``Tie`` or ``B``, declared in the pairs file, keeps its votes); otherwise each of
    ``keywords`` in any case becomes the keyword (``tie``, ``invalid``), and ``A``/``B`` in any
    case become system_a/system_b.
    """
    choice = choice.astype(object)
    codes, uniques = pd.factorize(choice, sort=False, use_na_sentinel=False)  # lower each distinct value once
    low = np.asarray([str(c).lower() for c in uniques], dtype=object)[codes]
    named = (choice == a) | (choice == b)
    out = choice
    for word in keywords:
        out = np.where(~named & (low == word), word, out)
    out = np.where(~named & (low == "a"), a, out)
    return np.where(~named & (low == "b"), b, out)


def _resolve_sides(
    m: pd.DataFrame,
    path: str,
    log: ProblemLog,
    role: str,
    keywords: tuple[str, ...],
    wide: bool,
    choice_fix: str,
    shown_fix: str,
) -> np.ndarray:
    """Resolve ``choice`` and ``shown_first`` of rows merged with their pair's system_a /
    system_b in place (:func:`_resolve_choice`: a system name, A/B, or one of ``keywords``);
    report a choice or shown_first naming no system of the pair (``wide``: a bad choice is
    reported under its criterion column). Returns the rows to leave out."""
    a, b = m["system_a"].to_numpy(dtype=object), m["system_b"].to_numpy(dtype=object)
    choice = _resolve_choice(m["choice"].to_numpy(dtype=object), a, b, keywords)
    ok = (choice == a) | (choice == b)
    for word in keywords:
        ok |= choice == word
    bad = log.rows_in(
        path,
        role,
        ~ok,
        m["line"].to_numpy(),
        m["choice"].to_numpy(),
        m["criterion"].to_numpy(dtype=object) if wide else "choice",
        "choice names a system that is not in the pair",
        choice_fix,
        "choice not in the pair",
    )
    m["choice"] = choice
    shown = _resolve_choice(m["shown_first"].to_numpy(dtype=object), a, b)
    odd = (shown != "") & (shown != a) & (shown != b)
    bad |= log.rows(
        path,
        role,
        odd & ~bad,
        m["line"].to_numpy(),
        m["shown_first"].to_numpy(),
        "shown_first",
        "shown_first names a system that is not in the pair",
        shown_fix,
        "shown_first not in the pair",
        already=bad,
    )
    m["shown_first"] = shown
    return bad


def resolve_votes(
    h: pd.DataFrame, pairs: pd.DataFrame, path: str, log: ProblemLog, *, wide: bool = False
) -> pd.DataFrame:
    """Pairwise human votes -> the normalised ``votes`` frame (``wide``: a bad choice is reported
    under its criterion column)."""
    m = h.merge(
        pairs[["pair_id", "system_a", "system_b", "focal", "other", "matchup"]], on="pair_id", how="left", sort=False
    )
    bad = _resolve_sides(
        m,
        path,
        log,
        "humans",
        (TIE,),
        wide,
        "write one of the pair's two system names (see pairs), A/B, or tie",
        "write the name (or A/B) of the system shown first, or leave it empty",
    )
    m = m[~bad]
    y = np.where(m["choice"] == m["focal"], 1.0, np.where(m["choice"] == m["other"], 0.0, np.nan))
    m["y"] = y
    return m[VOTE_COLUMNS].reset_index(drop=True)


def votes_from_ratings(
    r: pd.DataFrame, pairs: pd.DataFrame, self_pairs: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, int, int, int]:
    """Scalar ratings -> one vote per reader, pair and criterion (tie when the ratings are equal).

    A reader contributes a vote on a pair and criterion only when they rated both items on it.
    ``line`` is 0 (a vote comes from two source rows). Also returns the number of ratings
    that entered no vote and would enter none in ``self_pairs`` either (the reader rated no
    other item of the group on that criterion), the number that would enter votes of
    ``self_pairs`` only, and the number of votes ``self_pairs`` would give (self-matchups are
    left out, and counted).
    """
    keys = ["item_id", "reader_id", "criterion"]

    def merged(p: pd.DataFrame) -> pd.DataFrame:
        left = r[["item_id", "reader_id", "criterion", "rating", "reader_group", "order"]].rename(
            columns={"item_id": "item_a", "rating": "rating_a"}
        )
        right = r[["item_id", "reader_id", "criterion", "rating"]].rename(
            columns={"item_id": "item_b", "rating": "rating_b"}
        )
        return p.merge(left, on="item_a", sort=False).merge(right, on=["item_b", "reader_id", "criterion"], sort=False)

    def used(m: pd.DataFrame) -> pd.DataFrame:
        return pd.concat(
            [
                m[["item_a", "reader_id", "criterion"]].set_axis(keys, axis=1),
                m[["item_b", "reader_id", "criterion"]].set_axis(keys, axis=1),
            ]
        ).drop_duplicates()

    p = pairs[["pair_id", "item_a", "item_b", "system_a", "system_b", "focal", "other", "matchup"]].copy()
    p["_pair_order"] = np.arange(len(p))
    m = merged(p)
    m = m.sort_values(["_pair_order", "order"], kind="stable")
    ra, rb = m["rating_a"].to_numpy(), m["rating_b"].to_numpy()
    m["choice"] = np.where(ra > rb, m["system_a"], np.where(rb > ra, m["system_b"], TIE))
    m["y"] = np.where(m["choice"] == m["focal"], 1.0, np.where(m["choice"] == m["other"], 0.0, np.nan))
    m["seconds"] = np.nan
    m["comment"] = ""
    m["shown_first"] = ""
    m["line"] = 0
    m["order"] = np.arange(len(m))
    in_votes = used(m)
    n_self_only = n_self_votes = 0
    if self_pairs is not None and len(self_pairs):
        ms = merged(self_pairs[["pair_id", "item_a", "item_b"]])
        n_self_votes = len(ms)
        in_self = used(ms)
        n_self_only = len(in_self.merge(in_votes, on=keys, how="left", indicator=True).query("_merge == 'left_only'"))
    n_unused = len(r) - len(in_votes) - n_self_only
    return m[VOTE_COLUMNS].reset_index(drop=True), n_unused, n_self_only, n_self_votes


def judge_scores_by_pair(j: pd.DataFrame, pairs: pd.DataFrame, path: str, log: ProblemLog) -> pd.DataFrame:
    """Scalar judge keyed by pair_id: every system must be one of the pair's two."""
    m = j.merge(pairs[["pair_id", "system_a", "system_b"]], on="pair_id", how="left", sort=False)
    ok = (m["system"] == m["system_a"]) | (m["system"] == m["system_b"])
    bad = log.rows(
        path,
        "judge",
        ~ok.to_numpy(),
        m["line"].to_numpy(),
        m["system"].to_numpy(),
        "system",
        "system is not one of the pair's two systems",
        "score only the pair's two systems (see the pairs file)",
        "system not in the pair",
    )
    out = m[~bad][["pair_id", "system", "criterion", "judge", "sample", "score", "line"]].reset_index(drop=True)
    out.insert(2, "item_id", out["pair_id"] + ":" + out["system"])
    return out


def judge_scores_by_item(j: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Scalar judge keyed by item_id -> one row per pair the item belongs to."""
    sides = pd.concat(
        [
            pairs[["pair_id", "item_a", "system_a"]].set_axis(["pair_id", "item_id", "side"], axis=1).assign(_o=0),
            pairs[["pair_id", "item_b", "system_b"]].set_axis(["pair_id", "item_id", "side"], axis=1).assign(_o=1),
        ]
    )
    sides["_p"] = np.tile(np.arange(len(pairs)), 2)
    sides = sides.sort_values(["_p", "_o"], kind="stable")
    m = sides.merge(j, on="item_id", sort=False)
    m = m.sort_values(["_p", "_o", "line"], kind="stable")
    m["system"] = m["side"]
    return m[["pair_id", "system", "item_id", "criterion", "judge", "sample", "score", "line"]].reset_index(drop=True)


def resolve_verdicts(
    j: pd.DataFrame, pairs: pd.DataFrame, path: str, log: ProblemLog, *, wide: bool = False
) -> pd.DataFrame:
    """Pairwise judge verdicts: A/B resolved, choice must be a system of the pair, tie or invalid."""
    m = j.merge(pairs[["pair_id", "system_a", "system_b"]], on="pair_id", how="left", sort=False)
    bad = _resolve_sides(
        m,
        path,
        log,
        "judge",
        (TIE, INVALID),
        wide,
        "write one of the pair's two system names, A/B, tie, or invalid (unparsable output)",
        "write the name (or A/B) of the system the judge saw first, or leave it empty",
    )
    return m[~bad][["pair_id", "criterion", "judge", "sample", "choice", "shown_first", "line"]].reset_index(drop=True)
