"""Find tie rules decided by name and tie credits written as a number, with ast.

What counts as a finding (:func:`scan`):

- a comparison of something named ``*tie_rule*`` with a string (``tie_rule != "decisive"``);
- a dict keyed by tie rule names (a per-rule table beside the rule objects);
- ``0.5`` in a statement that also speaks of a tie or of NaN (``np.where(np.isnan(y), 0.5, y)``,
  ``n_focal + 0.5 * n_ties``), compared with a vote or credit (``credit == 0.5``), or listed as an
  allowed credit (``credit.isin([0, 0.5, 1])``).

The rule objects of audit/model/tie_rules.py are the one place a credit may be written down; any
other finding needs an allow-list entry that says why it is not a tie credit.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

RULE_NAMES = frozenset({"even-split", "decisive", "strict", "random"})
_NAN_CALLS = frozenset({"isnan", "isna", "isnull", "fillna", "nan_to_num"})
_VOTE_WORDS = ("credit", "vote", "vals", "judged", "y_judge", "choice")
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With, ast.Try)


def _names(node: ast.AST) -> Iterator[str]:
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            yield n.id
        elif isinstance(n, ast.Attribute):
            yield n.attr
        elif isinstance(n, ast.arg):
            yield n.arg


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _is_half(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float and node.value == 0.5


def _speaks_of_votes(node: ast.AST) -> bool:
    return any(w in name.lower() for name in _names(node) for w in _VOTE_WORDS) or (
        isinstance(node, ast.Name) and node.id == "y"
    )


def _findings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            rule_side = [o for o in operands if any("tie_rule" in n for n in _names(o))]
            if rule_side and any(_strings(o) for o in operands if o not in rule_side):
                yield node.lineno, "a tie rule compared with a string"
            if any(_is_half(o) for o in operands) and any(_speaks_of_votes(o) for o in operands):
                yield node.lineno, "a vote or credit compared with 0.5"
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(keys & RULE_NAMES) >= 2:
                yield node.lineno, "a table keyed by tie rule names"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isin":
            if any(_is_half(e) for a in node.args if isinstance(a, (ast.List, ast.Tuple, ast.Set)) for e in a.elts):
                yield node.lineno, "0.5 listed as an allowed credit"
        elif isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
            if not any(_is_half(n) for n in ast.walk(node)):
                continue
            names = set(_names(node))
            tie = any("tie" in n.lower() for n in names) or any(
                "tie" in s.lower() for s in _strings(node) if len(s) < 20
            )
            if tie or names & _NAN_CALLS:
                yield node.lineno, "0.5 beside a tie or a NaN"


def scan(source: str) -> list[tuple[int, str, str]]:
    """``(line number, what, the stripped source line)`` of every finding, sorted, one per line."""
    lines = source.splitlines()
    seen: dict[int, str] = {}
    for lineno, what in _findings(ast.parse(source)):
        seen.setdefault(lineno, what)
    return [(n, what, lines[n - 1].strip()) for n, what in sorted(seen.items())]
