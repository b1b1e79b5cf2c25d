"""judge_transfer_audit.reports.outputs writes result.json as it encodes it: the file is result_to_json's text byte
for byte (the fixture study with every section, and with none), reaching the file in bounded pieces, its whole text
never made, with one process or with the forked child rendering the other files."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import judge_transfer_audit.reports.outputs as outputs
from judge_transfer_audit.core import json_text
from judge_transfer_audit.results.result import result_to_json, write_result_json
from judge_transfer_audit.results.tables import JudgePairs

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


@pytest.mark.slow  # tracemalloc over 47M characters of text: ~10 s
def test_a_long_table_is_written_holding_a_small_part_of_its_text(bare_result):
    """300,000 judge pairs (47M characters of text): writing result.json allocates less than a quarter of the
    text's length at its peak (a block of rows and a piece of text at a time, about 6 MB; the whole text
    would be twice its length)."""
    n = 300_000
    rng = np.random.default_rng(0)
    pairs = pd.DataFrame(
        {
            "pair_id": pd.Series([f"p{k}" for k in range(n)], dtype="str"),
            "matchup": pd.Series(["A vs B"] * n, dtype="str"),
            "focal": pd.Series(["A"] * n, dtype="str"),
            "other": pd.Series(["B"] * n, dtype="str"),
            "criterion": pd.Series(["overall"] * n, dtype="str"),
            "judge": pd.Series(["j"] * n, dtype="str"),
            "focal_score": rng.random(n),
            "other_score": rng.random(n),
            "outcome": pd.Series(rng.choice(["win", "loss", "tie"], n), dtype="str"),
            "credit": rng.choice([0.0, 0.5, 1.0], n),
        }
    )
    big = replace(bare_result, judge_pairs=JudgePairs(pairs))
    length = 0

    def count(text):
        nonlocal length
        length += len(text)

    tracemalloc.start()
    try:
        write_result_json(big, count, end="\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert length > 45_000_000
    assert peak < length / 4
