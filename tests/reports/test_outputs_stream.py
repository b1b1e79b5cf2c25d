"""judge_transfer_audit.reports.outputs writes result.json as it encodes it: the file is result_to_json's text byte
for byte (the fixture study with every section, and with none), reaching the file in bounded pieces, its whole text
never made, with one process or with the forked child rendering the other files."""

from __future__ import annotations

import pytest

import judge_transfer_audit.reports.outputs as outputs
from judge_transfer_audit.core import json_text
from judge_transfer_audit.results.result import result_to_json

SPILL = 4096  #: characters gathered before they are written, in these tests
PIECES = 64  #: small pieces (keys, separators, scalars) gathered before they are written, in these tests
BLOCK = 8  #: rows of a table (items of a list) encoded at a time, in these tests


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("study", ["result", "bare_result"])
def test_result_json_is_written_in_pieces_as_the_text_of_result_to_json(request, study, jobs, tmp_path, monkeypatch):
    result = request.getfixturevalue(study)
    expected = result_to_json(result, end="\n")
    monkeypatch.setattr(json_text, "SPILL_CHARS", SPILL)
    monkeypatch.setattr(json_text, "BLOCK_ITEMS", BLOCK)
    monkeypatch.setattr(json_text, "_SPILL_PIECES", PIECES)
    pieces: list[str] = []
    streamed = outputs.write_result_json

    def recorded(result, write, *, end=""):
        def both(text):
            pieces.append(text)
            write(text)

        streamed(result, both, end=end)

    def whole_text(*args, **kwargs):
        raise AssertionError("result.json's whole text was made")

    monkeypatch.setattr(outputs, "write_result_json", recorded)
    monkeypatch.setattr(outputs, "result_to_json", whole_text)
    paths = outputs.write_outputs(result, tmp_path / "out", html=False, jobs=jobs)
    assert paths["result"].read_bytes() == expected.encode("utf-8")
    assert "".join(pieces) == expected
    # a piece is what was gathered until SPILL characters of blocks or PIECES small pieces: at most SPILL plus
    # one block, or PIECES small pieces (the fixture's are short: keys, numbers, padding, a sentence or two)
    longest_block = max(len(json_text.dumps_indented(rows[:BLOCK], 1)) for rows in _tables(result))
    assert len(pieces) > len(expected) // (2 * SPILL)
    assert max(map(len, pieces)) <= 2 * SPILL + longest_block


def _tables(result):
    """Every table's rows in the result's JSON data (lists of lists), and one empty list."""
    found: list[list] = [[]]

    def visit(data):
        if isinstance(data, dict):
            for value in data.values():
                visit(value)
        elif isinstance(data, list):
            if data and all(isinstance(row, list) for row in data):
                found.append(data)
            for value in data:
                visit(value)

    for _, make in result.jsonable_items():
        visit(make())
    return found
