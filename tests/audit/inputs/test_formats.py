"""judge_transfer_audit.inputs.formats: every format read as text, with source line numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.inputs.formats import file_format, read_table
from judge_transfer_audit.inputs.problems import MAX_ROWS_PER_KIND, ProblemLog


def test_file_format_by_extension():
    assert [file_format(p) for p in ("a.CSV", "b.tsv", "c.jsonl", "d.ndjson", "e.parquet", "f.xlsx")] == [
        "csv",
        "tsv",
        "jsonl",
        "jsonl",
        "parquet",
        None,
    ]


def test_csv_lines_with_multiline_quoted_fields_and_blank_lines(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text('id,text\na,"one\ntwo\n\nthree"\n\nb,plain\nc,"x, y"\n', encoding="utf-8")
    t = read_table(p, "stories", ProblemLog())
    assert t.frame["id"].tolist() == ["a", "b", "c"]
    assert t.lines.tolist() == [2, 7, 8]
    assert t.frame["text"].iloc[0] == "one\ntwo\n\nthree"


def test_header_case_whitespace_and_bom(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes("\ufeff Pair_ID ,Choice\n p1 , alpha \n".encode("utf-8"))
    t = read_table(p, "humans", ProblemLog())
    assert t.columns == ["pair_id", "choice"] and t.frame.iloc[0].tolist() == ["p1", "alpha"]
    assert t.original_columns["pair_id"] == " Pair_ID "


def test_values_are_text_and_empty_cells_are_empty_strings(tmp_path):
    p = tmp_path / "j.csv"
    p.write_text("id,score\na,NA\nb,\nc,007\n", encoding="utf-8")
    t = read_table(p, "judge", ProblemLog())
    assert t.frame["score"].tolist() == ["NA", "", "007"]  # no silent NA conversion


def test_jsonl_lines_and_values(tmp_path):
    p = tmp_path / "j.jsonl"
    rows = [{"id": "a", "score": 4, "x": None}, {"id": "b", "score": 2.5, "x": [1, 2]}]
    p.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", encoding="utf-8")
    t = read_table(p, "judge", ProblemLog())
    assert t.lines.tolist() == [1, 3]
    assert t.frame.values.tolist() == [["a", "4", ""], ["b", "2.5", "[1, 2]"]]


def test_jsonl_line_that_is_not_an_object(tmp_path):
    p = tmp_path / "j.jsonl"
    p.write_text('{"id": "a"}\n[1, 2]\n', encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "judge", log) is None
    assert log.problems[0].line == 2 and "JSON object" in log.problems[0].message


def test_parquet_rows_numbered_from_one(tmp_path):
    p = tmp_path / "j.parquet"
    pd.DataFrame({"ID": ["a", "b"], "score": [4.0, np.nan], "n": [1, 2]}).to_parquet(p)
    t = read_table(p, "judge", ProblemLog())
    assert t.columns == ["id", "score", "n"] and t.lines.tolist() == [1, 2]
    assert t.frame.values.tolist() == [["a", "4.0", "1"], ["b", "", "2"]]


def test_missing_file_and_sha256(tmp_path):
    log = ProblemLog()
    assert read_table(tmp_path / "nope.csv", "judge", log) is None
    assert "cannot read the judge file" in log.problems[0].message
    p = tmp_path / "a.csv"
    p.write_text("x\n1\n", encoding="utf-8")
    import hashlib

    assert read_table(p, "judge", ProblemLog()).sha256 == hashlib.sha256(b"x\n1\n").hexdigest()


def test_row_problems_are_capped_per_kind_but_counted_exactly():
    log = ProblemLog()
    n = MAX_ROWS_PER_KIND + 7
    log.rows(
        "f.csv", "judge", np.ones(n, bool), np.arange(2, n + 2), ["v"] * n, "score", "bad score", "fix it", "bad score"
    )
    assert len(log.problems) == MAX_ROWS_PER_KIND + 1
    assert log.problems[-1].message == "bad score: and 7 more rows of the same kind (values found: 'v')"


def test_drop_invalid_counts_instead_of_reporting():
    log = ProblemLog(drop_invalid=True)
    mask = log.rows(
        "f.csv", "judge", np.array([True, False, True]), np.arange(3), None, "score", "bad", "", "bad score"
    )
    assert mask.tolist() == [True, False, True] and log.problems == []
    assert dict(log.exclusions) == {("judge", "bad score"): 2}


@pytest.mark.parametrize("text", ["\n\n", "   "])
def test_whitespace_only_file_is_empty(tmp_path, text):
    p = tmp_path / "e.csv"
    p.write_text(text, encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None and "empty" in log.problems[0].message


def test_parquet_without_pyarrow_says_how_to_install(tmp_path, monkeypatch):
    import judge_transfer_audit.core.optional
    from judge_transfer_audit.core.errors import MissingDependencyError

    def missing(name, purpose=None):
        raise MissingDependencyError(f"{name} is needed for {purpose}: pip install 'judge-transfer-audit[parquet]'")

    monkeypatch.setattr(judge_transfer_audit.core.optional, "import_optional", missing)
    p = tmp_path / "j.parquet"
    p.write_bytes(b"PAR1")
    with pytest.raises(MissingDependencyError, match="parquet"):
        read_table(p, "judge", ProblemLog())


def test_problems_are_ordered_by_file_then_line_with_summaries_last():
    from judge_transfer_audit.core.errors import InputError

    log = ProblemLog()
    n = MAX_ROWS_PER_KIND + 2
    log.add("b.csv", "late", line=9)
    log.rows("a.csv", "judge", np.ones(n, bool), np.arange(2, n + 2), None, "score", "bad", "", "bad")
    log.add("b.csv", "early", line=2)
    with pytest.raises(InputError) as exc:
        log.raise_if_any()
    probs = exc.value.problems
    assert [p.file for p in probs[:1]] == ["b.csv"] and [p.message for p in probs[:2]] == ["early", "late"]
    assert probs[-1].file == "a.csv" and probs[-1].message == "bad: and 2 more rows of the same kind"
    assert [p.line for p in probs[2:-1]] == list(range(2, MAX_ROWS_PER_KIND + 2))


def test_long_row_after_the_first_data_row_names_its_line(tmp_path):
    # pandas raises (not warns) when a later row is too long; its message counts rows its own way
    p = tmp_path / "h.csv"
    p.write_text("id,choice\na,x\nb,y\nc,z,extra\n", encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    [prob] = log.problems
    assert prob.line == 4 and prob.value == "c,z,extra" and "4 fields" not in prob.message
    assert prob.message == "this row has 3 fields but the header names 2 columns" and prob.fix


def test_unclosed_quote_names_the_line_it_opens_on(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text('id,choice\na,x\nb,"y\nc,z\n', encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    [prob] = log.problems
    assert prob.line == 3 and prob.value == 'b,"y' and "never closed" in prob.message and prob.fix
    assert "tokenizing" not in str(prob)


def test_long_row_and_unclosed_quote_are_both_reported(tmp_path):
    p = tmp_path / "h.tsv"
    p.write_text('id\tchoice\na\tx\textra\nb\t"y\nc\tz\n', encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    assert [q.line for q in log.problems] == [2, 3]


def test_empty_nameless_column_is_dropped_not_made_a_criterion(tmp_path):
    # a trailing comma on every line (spreadsheet export): pandas would call it 'Unnamed: 3'
    p = tmp_path / "w.csv"
    p.write_text("pair_id,reader_id,empathy,\np1,r1,alpha,\np1,r2,beta,\n", encoding="utf-8")
    log = ProblemLog()
    t = read_table(p, "humans", log)
    assert not log.problems and t.columns == ["pair_id", "reader_id", "empathy"]


def test_nameless_column_with_values_is_a_problem(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("pair_id,reader_id,empathy,\np1,r1,alpha,\np1,r2,beta,gamma\n", encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    [prob] = log.problems
    assert prob.line == 1 and prob.column == "column 4" and prob.value == "gamma" and "no name" in prob.message


def test_not_utf8_names_the_line_and_shows_it(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes("id,comment\na,fine\nb,caf\xe9 latin-1\n".encode("latin-1"))
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    [prob] = log.problems
    assert prob.line == 3 and prob.value == "b,caf\ufffd latin-1" and "UTF-8" in prob.fix


@pytest.mark.parametrize(
    "name, text, holding",
    [
        ("h.csv", "pair_id;reader_id;choice\np1;r1;a\n", "semicolons"),
        ("h.csv", "pair_id\treader_id\tchoice\np1\tr1\ta\n", "tabs"),
        ("h.tsv", "pair_id,reader_id,choice\np1,r1,a\n", "commas"),
    ],
)
def test_wrong_delimiter_is_named(tmp_path, name, text, holding):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    log = ProblemLog()
    assert read_table(p, "humans", log) is None
    [prob] = log.problems
    assert prob.line == 1 and holding in prob.message and prob.value == text.splitlines()[0]


def test_parquet_nulls_of_nullable_columns_are_empty_cells(tmp_path):
    pytest.importorskip("pyarrow")
    p = tmp_path / "j.parquet"
    pd.DataFrame(
        {
            "id": pd.array(["a", None, "c"], dtype="string"),
            "score": pd.array([1, None, 3], dtype="Int64"),
            "when": pd.to_datetime(["2024-01-01", None, "2024-01-03"]),
        }
    ).to_parquet(p)
    log = ProblemLog()
    t = read_table(p, "judge", log)
    assert not log.problems
    assert t.frame["id"].tolist() == ["a", "", "c"] and t.frame["score"].tolist() == ["1", "", "3"]
    assert t.frame["when"].iloc[1] == ""


def _records_line_by_line(text: str, sep: str) -> tuple[list[int], list[int]]:
    """The rule the array scan implements, written as the plain loop it replaced."""
    starts, counts = [], []
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip() or sep in line:
            starts.append(i)
            counts.append(line.count(sep) + 1)
    return starts, counts


@pytest.mark.slow
def test_unquoted_record_scan_matches_the_line_by_line_rule():
    """Blank lines as pandas skips them (str.strip whitespace, incl. non-ASCII spaces and the
    information separators), field counts per line, on seeded random texts and delimiters."""
    from judge_transfer_audit.inputs.formats import _unquoted_records

    rng = np.random.default_rng(15)
    alphabet = [
        "a",
        "b",
        ",",
        "\t",
        ";",
        " ",
        "\n",
        "\n",
        "\xa0",
        "\u2003",
        "é",
        "\x1c",
        "\x0b",
        "\x0c",
        "\u3000",
        "\x85",
    ]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 30))))
        for sep in (",", "\t", ";", "é"):
            starts, counts = _unquoted_records(text, sep)
            assert (starts.tolist(), counts.tolist()) == _records_line_by_line(text, sep), (text, sep)


def test_csv_with_blank_lines_keeps_source_lines(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("id,x\n\na,1\n\nb,2\n\n,\nc,3\n", encoding="utf-8")
    t = read_table(p, "humans", ProblemLog())
    assert t.frame["id"].tolist() == ["a", "b", "", "c"]
    assert t.lines.tolist() == [3, 5, 7, 8]


def test_values_are_stripped_exactly_when_some_may_hold_padding(tmp_path):
    """Random CSV texts read with and without the padding test give the same frames."""
    import judge_transfer_audit.inputs.formats as formats

    rng = np.random.default_rng(16)
    alphabet = ["a", "b", "1", ",", " ", "\t", "\n", "\xa0", "\x1c", "\x0b", "é", '"', "~"]
    tried = 0
    for _ in range(400):
        body = "".join(rng.choice(alphabet, size=int(rng.integers(1, 40))))
        p = tmp_path / "t.csv"
        p.write_text("x,y\n" + body + "\n", encoding="utf-8")
        fast = read_table(p, "humans", ProblemLog())
        formats._may_hold_padding, kept = (lambda text: True), formats._may_hold_padding
        try:
            slow = read_table(p, "humans", ProblemLog())
        finally:
            formats._may_hold_padding = kept
        assert (fast is None) == (slow is None), body
        if fast is not None:
            pd.testing.assert_frame_equal(fast.frame, slow.frame)
            tried += 1
    assert tried > 20
    assert not formats._may_hold_padding("x,y\np1,alpha\n") and formats._may_hold_padding("x,y\np1, alpha\n")
