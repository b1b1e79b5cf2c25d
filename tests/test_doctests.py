"""The Examples in the public API's docstrings run, and give what they show (numpydoc style)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module_name",
    [
        "judge_transfer_audit.api",
        "judge_transfer_audit.model.policy",
        "judge_transfer_audit.core.json_text",
        "judge_transfer_audit.core.output_files",
    ],
)
def test_docstring_examples(module_name, monkeypatch):
    import importlib

    monkeypatch.chdir(ROOT)  # the examples name the fixture relative to the repository's root
    module = importlib.import_module(module_name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    outcome = doctest.testmod(module, optionflags=flags, verbose=False)
    assert outcome.attempted > 0, f"{module_name} has no Examples"
    assert outcome.failed == 0


def test_a_wrong_example_fails():
    """The check can fail: an example whose output differs is counted as failed."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(">>> 1 + 1\n3\n", {}, "wrong", "wrong.py", 0)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(test, out=lambda text: None)
    assert runner.summarize(verbose=False).failed == 1
