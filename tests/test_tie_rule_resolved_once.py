"""A tie rule's name becomes its :class:`TieRule` object once, where a run is asked for.

``judge_transfer_audit.api.run`` resolves ``tie_rule=`` (and so ``audit run --tie-rule``, which
calls it); the run's settings hold the object and every module below them takes it. This test
reads the source of every module (and the benchmarks) with ast and fails on a name-to-rule
conversion anywhere else: a reference to :func:`resolve_tie_rule`, a look-up in the rule registry
(``TIE_RULES.get(...)``, ``TIE_RULES[...]``), or a rule's name passed where the rule goes (a
registered name as a positional argument, or ``tie_rule="..."``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, STRICT, TIE_RULES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "detectors", "generation", "reports", "benchmarks")

#: module -> why it may turn a name into a rule
ALLOWED = {
    "audit/model/tie_rules.py": "defines the registry and the resolver (and the report's words for a saved name)",
    "audit/api.py": "the edge: the public API (and the CLI through it) resolves the run's tie_rule setting",
}


def conversions(source: str) -> list[tuple[int, str]]:
    """(line, what) of every name-to-rule conversion in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "resolve_tie_rule":
            found.append((node.lineno, "resolve_tie_rule"))
        elif isinstance(node, ast.ImportFrom) and any(a.name == "resolve_tie_rule" for a in node.names):
            found.append((node.lineno, "imports resolve_tie_rule"))
        elif isinstance(node, ast.Attribute) and node.attr == "get" and _is_registry(node.value):
            found.append((node.lineno, "TIE_RULES.get"))
        elif isinstance(node, ast.Subscript) and _is_registry(node.value):
            found.append((node.lineno, "TIE_RULES[...]"))
        elif isinstance(node, ast.Call):
            named = [k.value for k in node.keywords if k.arg in ("tie_rule", "rule")]
            if any(_is_rule_name(a) for a in node.args) or any(_is_string(v) for v in named):
                found.append((node.lineno, "a rule's name passed where the rule goes"))
    return found


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_rule_name(node: ast.AST) -> bool:
    return _is_string(node) and node.value in set(TIE_RULES.names())


def _is_registry(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "TIE_RULES") or (
        isinstance(node, ast.Attribute) and node.attr == "TIE_RULES"
    )


def test_no_module_below_the_edge_resolves_a_tie_rule_name():
    bad = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ALLOWED:
                continue
            bad += [f"{rel}:{line} {what}" for line, what in conversions(path.read_text(encoding="utf-8"))]
    assert not bad, "take the TieRule object from the run's settings instead of resolving a name:\n" + "\n".join(bad)


def test_the_scan_finds_each_kind_of_conversion():
    source = (
        "from judge_transfer_audit.model.tie_rules import resolve_tie_rule, TIE_RULES\n"
        "from judge_transfer_audit.model import tie_rules\n"
        "a = resolve_tie_rule(name)\n"
        "b = TIE_RULES.get(name)\n"
        "c = tie_rules.TIE_RULES[name]\n"
        "d = TIE_RULES.names()\n"
        "credit_ties(outcome, 'even-split', rng)\n"
        "decide_cells(inputs, tie_rule='decisive', seed=0)\n"
        "compare(rule='strict')\n"
        "np.random.default_rng(0); sample(sampling='random')\n"
    )
    assert sorted(conversions(source)) == [
        (1, "imports resolve_tie_rule"),
        (3, "resolve_tie_rule"),
        (4, "TIE_RULES.get"),
        (5, "TIE_RULES[...]"),
        (7, "a rule's name passed where the rule goes"),
        (8, "a rule's name passed where the rule goes"),
        (9, "a rule's name passed where the rule goes"),
    ]


def test_the_run_settings_hold_a_rule_object():
    from judge_transfer_audit.model.spec import AuditSpec

    assert AuditSpec().tie_rule is EVEN_SPLIT
    assert AuditSpec(tie_rule=STRICT).tie_rule is STRICT
    with pytest.raises(TypeError, match="AuditSpec.tie_rule is a TieRule.*'decisive'"):
        AuditSpec(tie_rule="decisive")


def test_the_api_resolves_a_name_once_and_records_it(monkeypatch):
    import judge_transfer_audit.engine.pipeline as pipeline
    from judge_transfer_audit import api

    seen = {}

    def fake_run_audit(data, spec):
        seen["rule"] = spec.tie_rule
        return "result"

    monkeypatch.setattr(pipeline, "run_audit", fake_run_audit)
    fixture = ROOT / "fixtures" / "deployment"
    args = (str(fixture / "judge.csv"), str(fixture / "humans.csv"))
    assert api.run(*args, pairs=str(fixture / "pairs.csv"), tie_rule="decisive") == "result"
    assert seen["rule"] is DECISIVE
    api.run(*args, pairs=str(fixture / "pairs.csv"), tie_rule=STRICT)
    assert seen["rule"] is STRICT
    api.run(*args, pairs=str(fixture / "pairs.csv"))
    assert seen["rule"] is EVEN_SPLIT


def test_an_unknown_name_is_an_input_error_at_the_edge():
    from judge_transfer_audit import api

    fixture = ROOT / "fixtures" / "deployment"
    with pytest.raises(InputError) as info:
        api.run(str(fixture / "judge.csv"), str(fixture / "humans.csv"), tie_rule="coin")
    assert "unknown tie rule 'coin'" in str(info.value)
    assert "use one of: decisive, even-split, random, strict" in str(info.value)
