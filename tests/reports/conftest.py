import pytest

from reports.html import render_html
from tests.reports.synthetic import make_result


@pytest.fixture(scope="session")
def result():
    """A paper-shaped synthetic AuditResult with every optional section filled."""
    return make_result()


@pytest.fixture(scope="session")
def bare_result():
    """The same result with every optional section left out (SKIPPED)."""
    return make_result(sections=False)


@pytest.fixture(scope="session")
def html(result):
    return render_html(result)
