"""The report tests read REAL results: the shipped fixture through the pipeline, once per session.

``result`` is the README's fixture study (deployment + dev set, every section); ``bare_result``
is the same result with every optional section SKIPPED; ``study_result`` is a small seeded study
written by :mod:`tests.reports.study` (two matchups, no dev set). Nothing here is a hand-made
payload: what the report is tested on is what the producers write.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from judge_transfer_audit.model.section_result import Skipped
from judge_transfer_audit.reports.html import render_html

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OPTIONAL = (
    "uncertainty",
    "readers",
    "surface",
    "judge_agreement",
    "judge_configurations",
    "leaderboard",
    "judge_position",
    "label_budget",
)


def fixture_result(seed: int = 1, n_boot: int = 400):
    """The shipped fixture (fixtures/deployment + fixtures/dev) through the real pipeline."""
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec

    deployment, dev = FIXTURES / "deployment", FIXTURES / "dev"
    data = load_audit_data(
        str(deployment / "judge.csv"),
        str(deployment / "humans.csv"),
        pairs=str(deployment / "pairs.csv"),
        stories=str(deployment / "stories.csv"),
        dev_judge=str(dev / "judge.csv"),
        dev_humans=str(dev / "humans.csv"),
    )
    return run_audit(data, AuditSpec(seed=seed, n_boot=n_boot))


@pytest.fixture(scope="session")
def result():
    """The fixture study's AuditResult, every section computed (run once per test session)."""
    return fixture_result()


@pytest.fixture(scope="session")
def bare_result(result):
    """The same result with the dev set and every optional section left out (SKIPPED)."""
    skipped = {name: Skipped("not computed") for name in OPTIONAL}
    return replace(result, dev=Skipped("no development set given"), **skipped)


@pytest.fixture(scope="session")
def html(result):
    return render_html(result)


@pytest.fixture(scope="session")
def study_result(tmp_path_factory):
    """A small seeded study (2 matchups x 4 criteria, 5 readers, 2 judge configurations) through the pipeline."""
    from tests.reports.study import run_study, write_study

    return run_study(write_study(tmp_path_factory.mktemp("study")))
