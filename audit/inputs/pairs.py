"""What each pair is: read ``pairs.csv``, or derive pairs from the judge file or from groups.

A *matchup* is the set of pairs audited together: the pairs file's ``matchup`` label when
given (one label must name one pairing of systems), else the two systems of the pair
(unordered). Every pair of a matchup has the same focal system (the one whose win rate is
reported). Per pair, the first rule that applies proposes a focal system:

1. ``focal`` names given by the user (``--focal A,B``): the first listed name that is one of
   the pair's two systems;
2. the ``focal`` column of ``pairs.csv``, when filled in;
3. otherwise (automatic) the system that appears in more pairs of the study (the system the
   study is about: a new model compared with several others is focal in every matchup), and
   on a tie the first of the two names in code-point order. It is a function of the two
   systems, so every pair of an unlabelled matchup gets the same one.

When the proposals differ within a matchup (a ``focal`` column that alternates), the matchup
is *re-oriented* to one focal system: the one proposed for most of its pairs (on a tie, the
automatic rule decides); the other pairs are flipped, and a note says so. Votes and judge
outputs are read against the pair's focal system afterwards, so both sides flip together.

``AuditData.focal_source`` records which rule(s) decided ("--focal", "pairs file",
"automatic"; joined with " + " when several did).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import combinations

import numpy as np
import pandas as pd

from judge_transfer_audit.inputs.formats import Table
from judge_transfer_audit.inputs.layout import blank_ids, control_characters, duplicates, require
from judge_transfer_audit.inputs.problems import ProblemLog
from judge_transfer_audit.model.data import MatchupOrientation

PAIR_COLUMNS = ["pair_id", "system_a", "system_b", "focal", "other", "matchup", "group_id"]
SOURCE_FOCAL = "--focal"
SOURCE_FILE = "pairs file"
SOURCE_AUTO = "automatic"
#: the rules in order of precedence (a matchup's source is its strongest pair's)
SOURCES = (SOURCE_FOCAL, SOURCE_FILE, SOURCE_AUTO)


def read_pairs_file(table: Table, log: ProblemLog) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Read ``pairs.csv``: pair_id, system_a, system_b, optional focal, matchup, group_id.

    Returns ``(pairs, self_pairs)``: ``self_pairs`` (pair_id, system, line) are the rows whose
    two systems are the same (a self-matchup): they are left out of the audit, with their
    votes and judge outputs, and counted.
    """
    if not require(table, ["pair_id", "system_a", "system_b"], log, "a pairs file"):
        return None
    f = table.frame.copy()
    f["line"] = table.lines
    for c in ("focal", "matchup", "group_id"):
        if c not in f.columns:
            f[c] = ""
    lines = f["line"].to_numpy()
    bad = blank_ids(f, ["pair_id", "system_a", "system_b"], table, log, "pairs")
    bad |= control_characters(f, ["focal", "matchup", "group_id"], table, log, "pairs", already=bad)
    nf = ((f["focal"] != "") & (f["focal"] != f["system_a"]) & (f["focal"] != f["system_b"])).to_numpy()
    nf = log.rows(
        table.path,
        "pairs",
        nf,
        lines,
        f["focal"].to_numpy(),
        "focal",
        "focal is not one of the pair's two systems",
        "set focal to system_a or system_b, or leave it empty",
        "focal not in the pair",
        already=bad,
    )
    if log.drop_invalid:
        bad |= nf
    else:  # already a (fatal) problem: keep the pair so that its votes are not reported again as unknown ids
        f.loc[nf, "focal"] = ""
    f = f[~bad]
    dup = duplicates(f, ["pair_id"], table, log, "pairs", "duplicate pair_id in the pairs file", "list each pair once")
    f = f[~dup]
    same = (f["system_a"] == f["system_b"]).to_numpy()
    self_pairs = f[same][["pair_id", "system_a", "line"]].rename(columns={"system_a": "system"})
    f = f[~same]
    check_matchup_labels(f, table.path, log)
    return (
        f[["pair_id", "system_a", "system_b", "focal", "matchup", "group_id", "line"]].reset_index(drop=True),
        self_pairs.reset_index(drop=True),
    )


def _pairing(a, b) -> str:
    """The unordered pair of two system names as one key."""
    x, y = (a, b) if a <= b else (b, a)
    return f"{x} vs {y}"


def check_matchup_labels(pairs: pd.DataFrame, path: str, log: ProblemLog) -> None:
    """A ``matchup`` label must name one pairing of systems: one problem per label that spans
    several, naming each pairing with a pair of it."""
    labelled = pairs[pairs["matchup"] != ""]
    if labelled.empty:
        return
    pairing = [_pairing(a, b) for a, b in zip(labelled["system_a"], labelled["system_b"])]
    labelled = labelled.assign(_pairing=pairing)
    for label, rows in labelled.groupby("matchup", sort=False):
        kinds = rows.drop_duplicates("_pairing")
        if len(kinds) < 2:
            continue
        named = "; ".join(f"{k} (e.g. pair {pid})" for k, pid in zip(kinds["_pairing"], kinds["pair_id"]))
        log.add(
            path,
            f"one matchup label spans {len(kinds)} different pairings of systems: {named}",
            "give each pairing of two systems its own matchup label (or leave the label empty: the "
            "matchup is then the two systems)",
            line=int(kinds["line"].iloc[1]),
            column="matchup",
            value=label,
        )


def _automatic(x: str, y: str, counts: Counter) -> str:
    """The system in more pairs of the study; on a tie the first in code-point order."""
    cx, cy = counts[x], counts[y]
    if cx != cy:
        return x if cx > cy else y
    return min(x, y)


def assign_focal(
    pairs: pd.DataFrame, focal_names: tuple[str, ...]
) -> tuple[pd.DataFrame, str, tuple[MatchupOrientation, ...], list[str]]:
    """Fill ``focal``, ``other`` and ``matchup`` (rules in the module docstring).

    Returns the frame, the focal source label, one :class:`MatchupOrientation` per matchup
    (in order of first appearance) and the notes (matchups re-oriented).

    The rules are functions of a pair's two systems, its ``focal`` and its ``matchup`` label, so they
    are applied once per distinct combination of those (a few hundred in an arena of a million pairs)
    and the matchups' tallies are counted by array operations, not pair by pair.
    """
    a = pairs["system_a"].to_numpy(dtype=object)
    b = pairs["system_b"].to_numpy(dtype=object)
    n = len(pairs)
    given = pairs["focal"].to_numpy(dtype=object) if "focal" in pairs.columns else np.full(n, "", dtype=object)
    label = (
        pairs["matchup"].astype(str).to_numpy(dtype=object)
        if "matchup" in pairs.columns
        else np.full(n, "", dtype=object)
    )
    # one proposal per distinct (system_a, system_b, focal), in order of first appearance
    combo, first = _distinct_rows(a, b, given)
    counts: Counter = Counter()
    for (x, y), m in zip(zip(a[first], b[first]), np.bincount(combo, minlength=len(first)).tolist()):
        counts[x] += m
        counts[y] += m
    rank = {name: i for i, name in enumerate(focal_names)}
    proposals, rules = [], []
    for x, y, g in zip(a[first], b[first], given[first]):
        rx, ry = rank.get(x), rank.get(y)
        if rx is not None or ry is not None:
            proposals.append(x if ry is None or (rx is not None and rx <= ry) else y)
            rules.append(0)
        elif g:
            proposals.append(g)
            rules.append(1)
        else:
            proposals.append(_automatic(x, y, counts))
            rules.append(2)
    proposal_code, proposed_name = pd.factorize(pd.Series(proposals, dtype=object), use_na_sentinel=False)
    proposed = proposal_code.astype(np.int64)[combo]
    rule = np.asarray(rules, dtype=np.int64)[combo]
    # the matchups: the label, else the unordered pair of systems; in order of first appearance
    keyed, key_first = _distinct_rows(label, a, b)
    keys = [lab if lab else _pairing(x, y) for lab, x, y in zip(label[key_first], a[key_first], b[key_first])]
    key_code, key_names = pd.factorize(pd.Series(keys, dtype=object))
    group = key_code.astype(np.int64)[keyed]
    n_groups = len(key_names)
    group_first = np.unique(group, return_index=True)[1]
    group_size = np.bincount(group, minlength=n_groups)
    group_rule = np.full(n_groups, len(SOURCES) - 1, dtype=np.int64)
    np.minimum.at(group_rule, group, rule)
    tally, tally_n = np.unique(group * max(len(proposed_name), 1) + proposed, return_counts=True)
    tally_group, tally_name = tally // max(len(proposed_name), 1), tally % max(len(proposed_name), 1)
    bounds = np.searchsorted(tally_group, np.arange(n_groups + 1))
    notes: list[str] = []
    winners = np.empty(n_groups, dtype=object)
    flips = np.zeros(n_groups, dtype=np.int64)
    for j, key in enumerate(key_names):
        lo, hi = bounds[j], bounds[j + 1]
        votes = {proposed_name[t]: int(c) for t, c in zip(tally_name[lo:hi], tally_n[lo:hi])}
        top = max(votes.values())
        tied = sorted(name for name, c in votes.items() if c == top)
        winner = tied[0] if len(tied) == 1 else _automatic(tied[0], tied[1], counts)
        flipped = int(group_size[j]) - votes[winner]
        if flipped:
            split = ", ".join(f"{name} in {c}" for name, c in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])))
            notes.append(
                f"matchup '{key}': the focal system alternated between its pairs ({split}); re-oriented "
                f"to {winner} in all {int(group_size[j])} pairs (the votes and judge outputs of the {flipped} "
                f"flipped pair(s) are read with {winner} as focal)"
            )
        winners[j], flips[j] = winner, flipped
    focal = winners[group]
    out = pairs.copy()
    out["focal"] = focal
    out["other"] = np.where(focal == a, b, a)
    default = out["focal"].astype(str) + " vs " + out["other"].astype(str)
    lab = pd.Series(label, index=out.index)
    out["matchup"] = lab.where(lab != "", default)
    firsts = out.iloc[group_first]
    orientation = tuple(
        MatchupOrientation(
            matchup=str(m),
            focal=str(f),
            other=str(o),
            source=SOURCES[int(group_rule[j])],
            n_pairs=int(group_size[j]),
            n_reoriented=int(flips[j]),
        )
        for j, (m, f, o) in enumerate(
            zip(firsts["matchup"].tolist(), firsts["focal"].tolist(), firsts["other"].tolist())
        )
    )
    used = [SOURCES[r] for r in sorted(set(rules))]
    return out, " + ".join(used), orientation, notes


def _distinct_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code among the distinct rows of ``columns`` (in order of first appearance) and the index of
    each distinct row's first occurrence."""
    if not len(columns[0]):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # each column's codes (a missing value is a value, as for groupby(dropna=False)), combined into one
    # integer per row and numbered in order of first appearance: what groupby(sort=False).ngroup() gives
    key, size = np.zeros(len(columns[0]), dtype=np.int64), 1
    for c in columns:
        codes, uniques = pd.factorize(np.asarray(c, dtype=object), sort=False, use_na_sentinel=False)
        size *= max(len(uniques), 1)
        if size >= 2**62:  # too many combinations for one integer
            frame = pd.DataFrame({str(j): pd.Series(c, dtype=object) for j, c in enumerate(columns)})
            key = frame.groupby(list(frame.columns), sort=False, dropna=False).ngroup().to_numpy()
            break
        key = key * len(uniques) + codes
    code = pd.factorize(key, sort=False)[0].astype(np.int64)
    _, first = np.unique(code, return_index=True)
    # ngroup numbers the groups in order of first appearance: first is increasing
    return code, first


def check_focal_names(focal_names: tuple[str, ...], systems: set[str], log: ProblemLog) -> None:
    for name in focal_names:
        if name not in systems:
            log.add(
                "--focal",
                "the focal system is not a system of any pair",
                f"use one of: {', '.join(sorted(systems)) or '(none)'}",
                value=name,
            )


def pairs_from_systems(
    pair_ids: np.ndarray,
    systems: np.ndarray,
    unnamed: list,
    group: dict[str, str],
    source_path: str,
    first_line: Callable[[], dict],
    log: ProblemLog,
) -> tuple[pd.DataFrame, set]:
    """Pairs named by the judge file (or by the votes): each pair_id must show exactly two systems.

    ``pair_ids`` and ``systems`` are the distinct (pair_id, system) rows in order of first appearance;
    ``unnamed`` the pair ids named without any system. A pair with other than two systems is a
    problem (its line from ``first_line()``: pair_id -> first line); returns the pairs in order of
    first appearance and the pair ids of those problems.
    """
    codes, ids = pd.factorize(pd.Series(pair_ids, dtype=object), sort=False)
    ids = np.asarray(ids, dtype=object)
    n_systems = np.bincount(codes, minlength=len(ids))
    order = np.argsort(codes, kind="stable")  # each pair's systems together, in order of appearance
    start = np.concatenate(([0], np.cumsum(n_systems)[:-1])).astype(np.int64)
    two = n_systems == 2
    rejected = set(ids[~two].tolist()) | set(unnamed)
    if rejected:
        lines = first_line()
        bad = [(pid, systems[order[s : s + n]].tolist()) for pid, s, n in zip(ids[~two], start[~two], n_systems[~two])]
        for pid, names in bad + [(pid, []) for pid in unnamed]:
            log.add(
                source_path,
                f"a pair must have exactly two systems, this one has {len(names)}",
                "give the pair's two systems (or a pairs file with system_a, system_b)",
                line=lines.get(pid),
                column="pair_id",
                value=f"{pid}: {', '.join(names) if names else '(none)'}",
            )
    kept = ids[two]
    if len(kept) == 0:
        return pd.DataFrame([], columns=["pair_id", "system_a", "system_b", "focal", "matchup", "group_id"]), rejected
    blank = np.full(len(kept), "", dtype=object)
    frame = pd.DataFrame(
        {
            "pair_id": kept,
            "system_a": systems[order[start[two]]],
            "system_b": systems[order[start[two] + 1]],
            "focal": blank,
            "matchup": blank,
            "group_id": np.array([group.get(pid, "") for pid in kept.tolist()], dtype=object) if group else blank,
        }
    )
    return frame, rejected


def pairs_from_groups(ratings: pd.DataFrame, item_system: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Prompt-matched pairs from scalar ratings: every two items sharing a ``group_id``.

    Items keep their order of first appearance in the ratings file; the pair of items
    ``(i, j)`` (i first) gets ``pair_id = "i~j"``, system_a = system of i, system_b = system
    of j. Returns ``(pairs, self_pairs)``: two items of the same system (e.g. two
    human-written stories) form a *self-matchup*, which compares nothing between systems;
    those pairs come back apart (same columns) so that the loader can count what they leave out.
    """
    items = ratings.drop_duplicates("item_id")[["item_id", "group_id"]]
    rows = []
    for gid, g in items.groupby("group_id", sort=False):
        for i, j in combinations(g["item_id"].tolist(), 2):
            si, sj = item_system[i], item_system[j]
            rows.append((f"{i}~{j}", si, sj, "", "", gid, i, j))
    frame = pd.DataFrame(
        rows, columns=["pair_id", "system_a", "system_b", "focal", "matchup", "group_id", "item_a", "item_b"]
    )
    same = (frame["system_a"] == frame["system_b"]).to_numpy()
    return frame[~same].reset_index(drop=True), frame[same].reset_index(drop=True)


def reserved_system_names(
    pairs: pd.DataFrame, declared: bool, path: str, log: ProblemLog, first_line: dict[str, int] | None = None
) -> list[str]:
    """System names that are also choice words (``tie``, ``invalid``, ``A``, ``B``; any case).

    Without a pairs file (``declared`` False) such a name is an input problem: a vote
    ``Tie`` could mean a tie or that system, ``B`` that system or the pair's second one.
    With a pairs file the pair's systems are declared, so a choice written exactly as the
    system name is the system; the names are returned for a note. ``first_line``: system
    name -> the line that first names it.
    """
    from judge_transfer_audit.inputs.resolve import RESERVED_CHOICES

    found: dict[str, str] = {}
    for col in ("system_a", "system_b"):
        for name in pairs[col].unique().tolist():  # each distinct name once, in order of first appearance
            if str(name).lower() in RESERVED_CHOICES:
                found.setdefault(str(name), str(name))
    if not declared:
        for name in found:
            log.add(
                path,
                "a system name is also a choice word (tie, invalid, A, B; any case): its votes could not "
                "be told from ties or from positions A/B",
                f"rename the system in every file (e.g. '{name}-model'), or give a pairs file (pair_id, system_a, "
                "system_b) declaring the pair's systems: a choice written exactly as a declared system name is "
                "that system",
                line=(first_line or {}).get(name),
                column="system",
                value=name,
            )
    return list(found)
