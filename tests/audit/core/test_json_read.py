"""judge_transfer_audit.core.json_read reads json_text's indented text as json.loads does, its long tables handed
over a block of rows at a time, whatever the chunks the file is read in."""

from __future__ import annotations

import io
import json

import pytest

from judge_transfer_audit.core import json_read
from judge_transfer_audit.core.json_text import dumps_indented


def _table(n: int, width: int = 3) -> dict:
    rows = [[f"r{i}", i * 0.5, i % 2 == 0, None][:width] for i in range(n)]
    return {
        "columns": ["id", "x", "even", "none"][:width],
        "dtypes": ["str", "float64", "bool", "object"][:width],
        "data": rows,
    }


DATA = {
    "n": 1,
    "long": _table(10),
    "nested": {"deeper": [{"frame": _table(7, 4), "after": "text"}], "short": _table(2)},
    "not a table": {"columns": ["a", "b"], "other": [1]},
    "columns first": {"columns": ["a"], "dtypes": ["str"], "rows": [["x"]]},
    "empty": {"columns": [], "dtypes": [], "data": []},
    "text": 'a "columns": [\n line',
}


def _as_written(columns, dtypes, blocks):
    """The table's object again, with how many blocks its rows came in."""
    blocks = list(blocks)
    return {
        "columns": columns,
        "dtypes": dtypes,
        "data": [row for block in blocks for row in block],
        "blocks": len(blocks),
    }


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 22])
def test_long_tables_go_to_read_table_and_the_rest_is_parsed_as_json_loads_does(monkeypatch, chunk):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    monkeypatch.setattr(json_read, "CHUNK_BYTES", chunk)
    text = dumps_indented(DATA, end="\n")
    data, tables = json_read.load_with_tables(io.BytesIO(text.encode()), _as_written)
    assert [len(t["data"]) for t in tables] == [10, 7]  # the short table (2 rows) is read with the rest
    assert all(t.pop("blocks") >= 1 for t in tables)
    assert data == json.loads(text)
    if chunk == 64:
        assert data["long"] is tables[0]


def test_a_small_chunk_gives_several_blocks(monkeypatch):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    monkeypatch.setattr(json_read, "CHUNK_BYTES", 64)
    _, tables = json_read.load_with_tables(io.BytesIO(dumps_indented({"t": _table(50)}).encode()), _as_written)
    assert tables[0]["blocks"] > 5


def test_rows_read_table_leaves_are_skipped(monkeypatch):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    monkeypatch.setattr(json_read, "CHUNK_BYTES", 64)
    text = dumps_indented({"t": _table(50), "after": [1, 2]})
    data, _ = json_read.load_with_tables(io.BytesIO(text.encode()), lambda columns, dtypes, blocks: "first")
    assert data == {"t": "first", "after": [1, 2]}


def test_another_indentation_is_read_alike(monkeypatch):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    text = json.dumps(DATA, indent=2)
    data, tables = json_read.load_with_tables(io.BytesIO(text.encode()), _as_written)
    assert [t.pop("blocks") for t in tables] == [1, 1]
    assert data == json.loads(text)


def test_compact_text_is_json_loads_of_it(monkeypatch):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    text = json.dumps(DATA)
    assert json_read.load_with_tables(io.BytesIO(text.encode()), _as_written) == (json.loads(text), [])


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_text_cut_short_is_a_value_error(monkeypatch, cut):
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 3)
    monkeypatch.setattr(json_read, "CHUNK_BYTES", 64)
    text = dumps_indented(DATA).encode()
    with pytest.raises(ValueError):
        json_read.load_with_tables(io.BytesIO(text[: int(len(text) * cut)]), _as_written)
