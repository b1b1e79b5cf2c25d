"""judge_transfer_audit.core.output_files: texts are hashed and written slice by slice, the same bytes; a text
given as a writer of pieces is encoded straight into its temporary file, and a failure midway replaces nothing."""

from __future__ import annotations

import hashlib
import json

import pytest

from judge_transfer_audit.core import output_files
from judge_transfer_audit.core.output_files import MANIFEST, _utf8_slices, write_folder

# non-ASCII characters of 2, 3 and 4 UTF-8 bytes, so that slices end inside multi-byte sequences' text
_TEXT = "ab\u00e9\u20ac\U0001f600\n" * 37 + "z"


@pytest.mark.parametrize("size", [1, 5, 7, 64, 10_000])
def test_slices_join_to_the_whole_encoding(monkeypatch, size):
    monkeypatch.setattr(output_files, "_TEXT_SLICE", size)
    slices = list(_utf8_slices(_TEXT))
    assert b"".join(slices) == _TEXT.encode("utf-8")
    assert len(slices) == -(-len(_TEXT) // size)
    assert list(_utf8_slices(b"\x00raw")) == [b"\x00raw"]


def test_a_folder_written_in_slices_holds_the_texts_and_their_digests(tmp_path, monkeypatch):
    monkeypatch.setattr(output_files, "_TEXT_SLICE", 7)
    files = {"result.json": _TEXT, "cells.csv": "a,b\n1,\u00e9\n", "empty.csv": ""}
    write_folder(tmp_path, files, command="run")
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    for name, text in files.items():
        data = (tmp_path / name).read_bytes()
        assert data == text.encode("utf-8")
        assert hashlib.sha256(data).hexdigest() in json.dumps(manifest)


def _pieces_of(text: str, size: int = 5):
    """A text writer handing ``text`` to ``write`` ``size`` characters at a time."""

    def write_text(write):
        for start in range(0, len(text), size):
            write(text[start : start + size])

    return write_text


def _folder_state(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_text_written_in_pieces_is_the_file_and_its_digest(tmp_path):
    files = {"result.json": _pieces_of(_TEXT), "cells.csv": "a,b\n"}
    written = write_folder(tmp_path, files, command="run")
    data = (tmp_path / "result.json").read_bytes()
    assert data == _TEXT.encode("utf-8")
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["files"]["result.json"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert sorted(written.paths) == ["cells.csv", "result.json"]


def test_a_text_writer_failing_midway_leaves_the_previous_files_in_place(tmp_path):
    """An error while a file is encoded (after some of it reached its temporary file) replaces nothing:
    the previous run's files and manifest stay as they were, and no temporary file is left."""
    write_folder(tmp_path, {"result.json": _pieces_of('{"run": 1}\n'), "cells.csv": "a\n1\n"}, command="run")
    before = _folder_state(tmp_path)

    def failing(write):
        write('{"run": 2, "half": "')
        raise ValueError("cannot encode NaN")

    with pytest.raises(ValueError, match="cannot encode NaN"):
        write_folder(tmp_path, {"cells.csv": "a\n2\n", "result.json": failing}, command="run")
    assert _folder_state(tmp_path) == before
    assert not list(tmp_path.glob(f"{output_files.TEMP_PREFIX}*"))


def test_files_added_one_by_one_are_renamed_only_on_commit(tmp_path):
    write_folder(tmp_path, {"a.csv": "old\n"}, command="run")
    before = _folder_state(tmp_path)
    with pytest.raises(RuntimeError, match="rendering failed"):
        with output_files.OutputFolder(tmp_path, command="run", may_write=["a.csv", "b.csv"]) as folder:
            folder.add("a.csv", "new\n")
            assert (tmp_path / "a.csv").read_text() == "old\n"  # only its temporary file is written so far
            raise RuntimeError("rendering failed")
    assert _folder_state(tmp_path) == before
    with output_files.OutputFolder(tmp_path, command="run", may_write=["a.csv", "b.csv"]) as folder:
        folder.add("a.csv", "new\n")
        folder.add("b.csv", _pieces_of("b\n"))
        written = folder.commit()
    assert written.paths == {"a.csv": tmp_path / "a.csv", "b.csv": tmp_path / "b.csv"}
    assert (tmp_path / "a.csv").read_text() == "new\n" and (tmp_path / "b.csv").read_text() == "b\n"
    assert not list(tmp_path.glob(f"{output_files.TEMP_PREFIX}*"))
