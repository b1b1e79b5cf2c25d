"""Small builders for input-file tests (files written into pytest's tmp_path)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data

PAIRS = """\
pair_id,system_a,system_b,focal,matchup,group_id
p1,alpha,beta,alpha,alpha vs beta,g1
p2,alpha,beta,alpha,alpha vs beta,g2
"""
HUMANS = """\
pair_id,reader_id,criterion,choice
p1,r1,empathy,alpha
p1,r2,empathy,beta
p2,r1,empathy,tie
p2,r2,empathy,alpha
"""
JUDGE = """\
pair_id,system,criterion,score
p1,alpha,empathy,4
p1,beta,empathy,3
p2,alpha,empathy,
p2,beta,empathy,2
"""


def write(dir_: Path, name: str, text: str) -> str:
    path = dir_ / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def problems(excinfo_or_callable) -> list:
    """The problems of the InputError raised by calling the argument."""
    try:
        excinfo_or_callable()
    except InputError as exc:
        return list(exc.problems)
    raise AssertionError("no InputError raised")


def basic(tmp_path: Path, humans: str = HUMANS, judge: str = JUDGE, pairs: str | None = PAIRS, **kw):
    h = write(tmp_path, "humans.csv", humans)
    j = write(tmp_path, "judge.csv", judge)
    p = write(tmp_path, "pairs.csv", pairs) if pairs is not None else None
    return lambda: load_audit_data(j, h, pairs=p, **kw)
