"""judge_transfer_audit.core.output_files: texts are hashed and written slice by slice, the same bytes."""

from __future__ import annotations

import hashlib
import json

import pytest

from judge_transfer_audit.core import output_files
from judge_transfer_audit.core.output_files import MANIFEST, _content_sha256, _utf8_slices, write_folder

# non-ASCII characters of 2, 3 and 4 UTF-8 bytes, so that slices end inside multi-byte sequences' text
_TEXT = "ab\u00e9\u20ac\U0001f600\n" * 37 + "z"


@pytest.mark.parametrize("size", [1, 5, 7, 64, 10_000])
def test_slices_join_to_the_whole_encoding(monkeypatch, size):
    monkeypatch.setattr(output_files, "_TEXT_SLICE", size)
    slices = list(_utf8_slices(_TEXT))
    assert b"".join(slices) == _TEXT.encode("utf-8")
    assert len(slices) == -(-len(_TEXT) // size)
    assert _content_sha256(_TEXT) == hashlib.sha256(_TEXT.encode("utf-8")).hexdigest()
    assert list(_utf8_slices(b"\x00raw")) == [b"\x00raw"]
    assert _content_sha256("") == hashlib.sha256(b"").hexdigest()


def test_a_folder_written_in_slices_holds_the_texts_and_their_digests(tmp_path, monkeypatch):
    monkeypatch.setattr(output_files, "_TEXT_SLICE", 7)
    files = {"result.json": _TEXT, "cells.csv": "a,b\n1,\u00e9\n", "empty.csv": ""}
    write_folder(tmp_path, files, command="run")
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    for name, text in files.items():
        data = (tmp_path / name).read_bytes()
        assert data == text.encode("utf-8")
        assert hashlib.sha256(data).hexdigest() in json.dumps(manifest)
