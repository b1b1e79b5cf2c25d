"""What each pair is: read ``pairs.csv``, or derive pairs from the judge file or from groups.

Focal system (the one whose win rate is reported), per pair, first rule that applies:

1. ``focal`` names given by the user (``--focal A,B``): the first listed name that is one of
   the pair's two systems;
2. the ``focal`` column of ``pairs.csv``, when filled in;
3. otherwise the first of the two system names in sorted (code-point) order.

``AuditData.focal_source`` records which rule(s) decided ("--focal", "pairs file",
"first in sorted order"; joined with " + " when several did).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from audit.inputs.formats import Table
from audit.inputs.layout import blank_ids, duplicates, require
from audit.inputs.problems import ProblemLog

PAIR_COLUMNS = ["pair_id", "system_a", "system_b", "focal", "other", "matchup", "group_id"]
SOURCE_FOCAL = "--focal"
SOURCE_FILE = "pairs file"
SOURCE_SORTED = "first in sorted order"


def read_pairs_file(table: Table, log: ProblemLog) -> pd.DataFrame | None:
    """Read ``pairs.csv``: pair_id, system_a, system_b, optional focal, matchup, group_id."""
    if not require(table, ["pair_id", "system_a", "system_b"], log, "a pairs file"):
        return None
    f = table.frame.copy()
    f["line"] = table.lines
    for c in ("focal", "matchup", "group_id"):
        if c not in f.columns:
            f[c] = ""
    lines = f["line"].to_numpy()
    bad = blank_ids(f, ["pair_id", "system_a", "system_b"], table, log, "pairs")
    same = ((f["system_a"] == f["system_b"]) & (f["system_a"] != "")).to_numpy()
    bad |= log.rows(table.path, "pairs", same, lines, f["system_a"].to_numpy(), "system_b",
                    "a pair must compare two different systems (system_a equals system_b)",
                    "name the two different systems of the pair", "pair with other than two systems")
    nf = ((f["focal"] != "") & (f["focal"] != f["system_a"]) & (f["focal"] != f["system_b"])).to_numpy()
    nf = log.rows(table.path, "pairs", nf, lines, f["focal"].to_numpy(), "focal",
                  "focal is not one of the pair's two systems", "set focal to system_a or system_b, or leave it empty",
                  "focal not in the pair")
    if log.drop_invalid:
        bad |= nf
    else:  # already a (fatal) problem: keep the pair so that its votes are not reported again as unknown ids
        f.loc[nf, "focal"] = ""
    f = f[~bad]
    dup = duplicates(f, ["pair_id"], table, log, "pairs", "duplicate pair_id in the pairs file",
                     "list each pair once")
    return f[~dup][["pair_id", "system_a", "system_b", "focal", "matchup", "group_id", "line"]].reset_index(drop=True)


def assign_focal(pairs: pd.DataFrame, focal_names: tuple[str, ...]) -> tuple[pd.DataFrame, str]:
    """Fill ``focal``, ``other`` and ``matchup``; return the frame and the focal source label."""
    a = pairs["system_a"].to_numpy(dtype=object)
    b = pairs["system_b"].to_numpy(dtype=object)
    given = pairs["focal"].to_numpy(dtype=object) if "focal" in pairs.columns else np.full(len(pairs), "", dtype=object)
    rank = {name: i for i, name in enumerate(focal_names)}
    focal, sources = [], []
    for x, y, g in zip(a, b, given):
        rx, ry = rank.get(x), rank.get(y)
        if rx is not None or ry is not None:
            focal.append(x if ry is None or (rx is not None and rx <= ry) else y)
            sources.append(SOURCE_FOCAL)
        elif g:
            focal.append(g)
            sources.append(SOURCE_FILE)
        else:
            focal.append(min(x, y))
            sources.append(SOURCE_SORTED)
    out = pairs.copy()
    out["focal"] = np.asarray(focal, dtype=object)
    out["other"] = np.where(out["focal"].to_numpy() == a, b, a)
    label = out["matchup"] if "matchup" in out.columns else pd.Series("", index=out.index)
    default = out["focal"].astype(str) + " vs " + out["other"].astype(str)
    if "base_a" in out.columns:  # derived pairs: label by the undecorated system names
        fa = np.where(out["focal"].to_numpy() == a, out["base_a"], out["base_b"])
        oa = np.where(out["focal"].to_numpy() == a, out["base_b"], out["base_a"])
        default = pd.Series(fa, index=out.index).astype(str) + " vs " + pd.Series(oa, index=out.index).astype(str)
    out["matchup"] = label.where(label.astype(str) != "", default)
    source = " + ".join(dict.fromkeys(sources))
    return out, source


def check_focal_names(focal_names: tuple[str, ...], systems: set[str], log: ProblemLog) -> None:
    for name in focal_names:
        if name not in systems:
            log.add("--focal", "the focal system is not a system of any pair",
                    f"use one of: {', '.join(sorted(systems)) or '(none)'}", value=name)


def pairs_from_systems(systems: dict[str, list[str]], group: dict[str, str], source_path: str,
                       first_line: dict[str, int], log: ProblemLog) -> pd.DataFrame:
    """Pairs named by the judge file (or by the votes): each pair_id must show exactly two systems."""
    rows = []
    for pid, names in systems.items():
        if len(names) != 2:
            log.add(source_path, f"a pair must have exactly two systems, this one has {len(names)}",
                    "give the pair's two systems (or a pairs file with system_a, system_b)",
                    line=first_line.get(pid), column="pair_id",
                    value=f"{pid}: {', '.join(names) if names else '(none)'}")
            continue
        a, b = names
        rows.append((pid, a, b, "", "", group.get(pid, "")))
    return pd.DataFrame(rows, columns=["pair_id", "system_a", "system_b", "focal", "matchup", "group_id"])


def pairs_from_groups(ratings: pd.DataFrame, item_system: dict[str, str]) -> pd.DataFrame:
    """Prompt-matched pairs from scalar ratings: every two items sharing a ``group_id``.

    Items keep their order of first appearance in the ratings file; the pair of items
    ``(i, j)`` (i first) gets ``pair_id = "i~j"``, system_a = system of i, system_b = system
    of j. When both items come from the same system, each side is named
    ``"<system> [<item_id>]"`` so that the two sides (and a vote for one of them) stay
    distinguishable; the matchup is then "<system> vs <system>".
    """
    items = ratings.drop_duplicates("item_id")[["item_id", "group_id"]]
    rows = []
    for gid, g in items.groupby("group_id", sort=False):
        for i, j in combinations(g["item_id"].tolist(), 2):
            si, sj = item_system[i], item_system[j]
            ni, nj = (si, sj) if si != sj else (f"{si} [{i}]", f"{sj} [{j}]")
            rows.append((f"{i}~{j}", ni, nj, "", "", gid, i, j, si, sj))
    return pd.DataFrame(rows, columns=["pair_id", "system_a", "system_b", "focal", "matchup", "group_id",
                                       "item_a", "item_b", "base_a", "base_b"])
