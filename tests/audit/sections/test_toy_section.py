"""A section added through the section table alone reaches every output; without its entry, none does.

The toy section below is what a new section's folder holds (its compute, its payload with
``to_frame``, a check, its terminal line and its report renderer) and one table entry
(:func:`judge_transfer_audit.sections.registry.registered`). A real audit of the fixture then carries it
to result.json (and back through ``result_from_json``), to its CSV, to the terminal summary, to the
HTML report and to the checks; nothing else in the package is edited. The same audit without the
entry writes none of it, and every other output is the same: the section's own seed slot leaves
every other section's random stream as it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.section_result import Computed
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.results.result import read_result
from judge_transfer_audit.sections._guard import guarded, int_seed
from judge_transfer_audit.sections.registry import Checks, Report, SectionEntry, Step, Terminal, registered

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "fixtures" / "deployment"
#: the fixture audit, the slow optional sections left out (the toy does not read them)
ARGS = [
    "run",
    str(FIXTURE / "judge.csv"),
    str(FIXTURE / "humans.csv"),
    "--pairs",
    str(FIXTURE / "pairs.csv"),
    "--out",
    "out",
    "--seed",
    "7",
    "--no-uncertainty",
    "--no-readers",
    "--no-surface",
    "--no-progress",
]


# ----------------------------------------------------------------------------- the toy section's folder


@dataclass(frozen=True)
class VotesPerCell:
    """The toy payload: the decided cells' votes per cell, and the seed the section drew."""

    primary: str
    n_cells: int
    n_votes: int
    seed: int

    @property
    def votes_per_cell(self) -> float:
        return self.n_votes / self.n_cells

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"primary": self.primary, "n_cells": self.n_cells, "n_votes": self.n_votes, "seed": self.seed}]
        )


def compute(data, spec, *, primary, cells, seed):
    """Reads the run's primary judge and the decided cells; draws its seed from its own slot."""
    return guarded(
        lambda: VotesPerCell(str(primary), len(cells), sum(c.n_votes for c in cells), int_seed(seed)),
        "votes per cell",
    )


def checks(section, context) -> list[Check]:
    """``toy.votes_per_cell``: at least 10 votes per cell."""
    if not section.computed:
        return []
    value = section.payload.votes_per_cell
    status = Status.PASS if value >= 10 else Status.WARN
    return [Check("toy.votes_per_cell", status, value, 10.0, f"{value:.1f} votes per cell")]


def terminal_lines(result) -> list[str]:
    payload = result.votes_per_cell.payload
    return [] if payload is None else [f"Votes per cell: {payload.votes_per_cell:.1f} over {payload.n_cells} cells"]


def render(result, payload: VotesPerCell, ctx: dict) -> None:
    ctx["facts"].append({"key": "votes per cell", "value": f"{payload.votes_per_cell:.1f}"})
    ctx["tables"].append(table(payload.to_frame(), caption="Votes per cell"))


def report(result) -> list[dict]:
    return [render_section("votes-per-cell", "Votes per cell: the toy section", result, result.votes_per_cell, render)]


# ----------------------------------------------------------------------------- its one table entry

ENTRY = SectionEntry(
    "votes_per_cell",
    VotesPerCell,
    Step(compute, reads=("primary",), after="cells"),
    seed=(9,),
    checks=Checks(checks),
    terminal=Terminal(terminal_lines),
    report=Report(report),
)


def _audit(folder: Path, monkeypatch, capsys) -> str:
    folder.mkdir()
    monkeypatch.chdir(folder)
    status = main(ARGS)
    out = capsys.readouterr().out
    assert status in (0, 1), out
    return out


@pytest.mark.slow
def test_a_section_added_by_one_table_entry_reaches_every_output(tmp_path, monkeypatch, capsys):
    with registered(ENTRY):
        printed = _audit(tmp_path / "with", monkeypatch, capsys)
        out = tmp_path / "with" / "out"
        result = read_result(out / "result.json")  # read back while the section is registered
    data = json.loads((out / "result.json").read_text(encoding="utf-8"))
    keys = list(data)
    assert keys.index("votes_per_cell") == keys.index("agreement_decision") + 1  # after the built-in ones
    assert keys.index("matchup_transfers") == keys.index("votes_per_cell") + 1
    payload = result.votes_per_cell.payload
    assert result.votes_per_cell == result.sections["votes_per_cell"] == Computed(payload)
    assert isinstance(payload, VotesPerCell)
    assert payload.n_cells == len(result.cells) == 18
    assert payload.n_votes == sum(c.n_votes for c in result.cells)
    assert data["votes_per_cell"]["payload"]["n_votes"] == payload.n_votes
    assert payload.primary == result.provenance.primary_judge

    assert pd.read_csv(out / "votes_per_cell.csv").to_dict("records") == payload.to_frame().to_dict("records")
    assert f"Votes per cell: {payload.votes_per_cell:.1f} over 18 cells" in printed
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<section id="votes-per-cell">' in html and "Votes per cell: the toy section" in html
    toy = [c for c in result.checks if c.name == "toy.votes_per_cell"]
    assert [c.status for c in toy] == [Status.PASS]
    assert "toy.votes_per_cell" in (out / "checks.csv").read_text(encoding="utf-8")
    assert "toy.votes_per_cell" in (out / "junit.xml").read_text(encoding="utf-8")

    # without the entry: none of it, and every other output as it was
    printed_without = _audit(tmp_path / "without", monkeypatch, capsys)
    bare = tmp_path / "without" / "out"
    without = json.loads((bare / "result.json").read_text(encoding="utf-8"))
    assert "votes_per_cell" not in without
    assert not (bare / "votes_per_cell.csv").exists()
    assert "Votes per cell" not in printed_without
    assert "votes-per-cell" not in (bare / "report.html").read_text(encoding="utf-8")
    assert "toy.votes_per_cell" not in (bare / "checks.csv").read_text(encoding="utf-8")
    data.pop("votes_per_cell")
    data["checks"] = [c for c in data["checks"] if c["name"] != "toy.votes_per_cell"]
    assert data == without
    written = {p.name for p in out.iterdir()} - {"votes_per_cell.csv", "checks.csv", "result.json", "report.html"}
    assert {p.name for p in bare.iterdir()} - {"checks.csv", "result.json", "report.html"} == written
    for name in sorted(written - {"timings.json", "junit.xml", ".judge-audit-manifest.json"}):
        assert (out / name).read_bytes() == (bare / name).read_bytes(), name


def test_the_table_refuses_a_second_section_of_the_same_name_or_seed_slot():
    from dataclasses import replace

    from judge_transfer_audit.sections.registry import names, register

    with registered(ENTRY):
        assert names()[-1] == "votes_per_cell"
        with pytest.raises(ValueError, match="already registered"):
            register(ENTRY)
        with pytest.raises(ValueError, match=r"overlaps the slot of votes_per_cell; take a free one, e\.g\. \(10,\)"):
            register(replace(ENTRY, name="other"))
        with pytest.raises(ValueError, match="overlaps the slot of judge_agreement"):
            register(replace(ENTRY, name="other", seed=(6,)))
        with pytest.raises(ValueError, match="reads"):
            register(replace(ENTRY, name="other", seed=None, step=Step(compute, reads=("votes",))))
    assert "votes_per_cell" not in names()


def test_a_result_made_before_a_section_was_registered_holds_it_as_skipped():
    from judge_transfer_audit.sections.registry import entries

    assert "votes_per_cell" not in [e.name for e in entries()]
    with pytest.raises(TypeError, match="unknown section"):
        _bare_result(votes_per_cell=Computed(VotesPerCell("j", 1, 1, 0)))
    result = _bare_result()
    with registered(ENTRY):
        assert result.votes_per_cell.status is Status.SKIPPED
    with pytest.raises(AttributeError):
        result.votes_per_cell  # noqa: B018


def _bare_result(**sections):
    from judge_transfer_audit.results.result import AuditResult
    from tests.reports.synthetic import make_result

    base = make_result()
    return AuditResult(
        **{k: getattr(base, k) for k in ("schema_version", "status", "verdict", "cells", "counts", "agreement")},
        reader_baseline=base.reader_baseline,
        checks=base.checks,
        provenance=base.provenance,
        judge_pairs=base.judge_pairs,
        **sections,
    )
