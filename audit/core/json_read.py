"""Reading back the indented JSON text that :mod:`judge_transfer_audit.core.json_text` writes, its long tables'
rows a block at a time, so that a file of a gigabyte is never held whole, as text or as Python lists.

A table is a frame's JSON data, ``{"columns": [...], "dtypes": [...], "data": [[...], ...]}``. In indented
text its keys, the closing bracket of each of its lists and each row's brackets stand on lines of their own,
at known indentations, and a JSON string never holds a newline: so the lines of ``"columns": [``,
``"dtypes": [`` and ``"data": [`` at one indentation, and the line of a ``]`` at that indentation, find a
table's rows without parsing the text around them. :func:`load_with_tables` reads the file a chunk at a
time; a table of more than :data:`BLOCK_ROWS` rows is handed to ``read_table`` as its columns, its dtypes and
its rows, a block of rows at a time (each block parsed by ``json.loads``), and whatever ``read_table`` makes
of it takes the table's place in the data; the rest of the text (a few percent of a large result) is parsed
at the end by ``json.loads``. Text laid out otherwise (compact JSON, say) is the rest of the text: the data
is then ``json.loads`` of the whole file's text.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Callable, Iterator

from judge_transfer_audit.core.json_text import BLOCK_ITEMS

#: a table of more rows than this is read a block of rows at a time (as :mod:`json_text` writes one)
BLOCK_ROWS = BLOCK_ITEMS
#: bytes read from the file at a time (a block of rows is at most about this long)
CHUNK_BYTES = 1 << 22

_COLUMNS_KEY = b'"columns": [\n'
#: the text put in a long table's ``data`` while the rest of the text is parsed (a string no table holds)
_TOKEN = "\x00table "

#: what :meth:`_Scan._head` finds where a "columns" key does not start a table
_NOT_A_TABLE = object()

ReadTable = Callable[[list, list, Iterator[list]], Any]


class _Chunks:
    """The file's bytes read a chunk at a time into ``text``; :meth:`more` drops the part already handled."""

    __slots__ = ("stream", "text", "ended")

    def __init__(self, stream: BinaryIO):
        self.stream, self.text, self.ended = stream, b"", False

    def more(self, keep: int) -> bool:
        """Drop ``text[:keep]`` and read the next chunk onto the rest; False at the end of the file (nothing
        dropped then). Positions in ``text`` move back by ``keep`` when True."""
        chunk = b"" if self.ended else self.stream.read(CHUNK_BYTES)
        if not chunk:
            self.ended = True
            return False
        self.text = self.text[keep:] + chunk
        return True


def _rows(text: bytes) -> list:
    """Rows written one after the other (``[...],\\n [...]``) as the list ``json.loads`` reads."""
    return json.loads("[" + text.decode("utf-8") + "]")


class _Scan:
    """One pass over the text: ``pieces`` gathers the text outside long tables, ``tables`` what ``read_table``
    made of each long table, in order."""

    def __init__(self, stream: BinaryIO, read_table: ReadTable):
        self.chunks = _Chunks(stream)
        self.read_table = read_table
        self.pieces: list[bytes] = []
        self.tables: list[Any] = []
        self.pos = 0  #: the text before ``pos`` is in ``pieces``

    def more(self) -> bool:
        """Read on, keeping the text from ``pos``; False at the end of the file."""
        keep = self.pos
        if not self.chunks.more(keep):
            return False
        self.pos -= keep
        return True

    def run(self) -> None:
        while True:
            text = self.chunks.text
            found = text.find(_COLUMNS_KEY, self.pos)
            handled = None if found < 0 else self._table(found)
            if handled is not None:
                self.pos = handled
                continue
            if found < 0:
                # a key line cut by the chunk's end starts after its last newline: keep that line
                last = text.rfind(b"\n", self.pos)
                if last > self.pos:
                    self.pieces.append(text[self.pos : last])
                    self.pos = last
            if not self.more():  # the text ends (a table cut short is left to json.loads to report)
                self.pieces.append(self.chunks.text[self.pos :])
                return

    def _table(self, found: int) -> int | None:
        """Handle the text from ``pos`` through the object whose ``"columns"`` key is at ``found``: a long
        table's rows go to ``read_table``, anything else to ``pieces``. Returns where the text handled ends (a
        newline, or the end of the table's rows), or None when the chunk ends too soon to know."""
        text = self.chunks.text
        line = text.rfind(b"\n", 0, found) + 1
        pad = text[line:found]
        after_key = found + len(_COLUMNS_KEY) - 1  # the newline ending the key's line
        head = self._head(found, pad) if line > self.pos and not pad.strip(b" ") else _NOT_A_TABLE
        if head is None:
            return None
        if head is _NOT_A_TABLE:  # another object with a "columns" key, or another layout: left to json.loads
            self.pieces.append(text[self.pos : after_key])
            return after_key
        columns_end, dtypes_end, rows_start, row_pad = head
        close = b"\n" + pad + b"]"
        row_end = b"\n" + row_pad + b"],\n"
        end = text.find(close, rows_start)
        n_rows = text.count(row_end, rows_start, end if end >= 0 else len(text)) + (end >= 0)
        if n_rows <= BLOCK_ROWS:
            if end < 0:
                return None
            self.pieces.append(text[self.pos : end])  # a short table: parsed with the rest
            return end
        columns = json.loads(text[after_key - 1 : columns_end].decode("utf-8"))
        dtypes = json.loads(text[text.index(b"[", columns_end) : dtypes_end].decode("utf-8"))
        self.pieces.append(text[self.pos : rows_start - 2])  # through '"data": '
        self.pieces.append(json.dumps(_TOKEN + str(len(self.tables))).encode())
        self.pos = rows_start
        blocks = self._blocks(close, row_end)
        self.tables.append(self.read_table(columns, dtypes, blocks))
        for _ in blocks:  # rows read_table left unread
            pass
        return self.pos

    def _head(self, found: int, pad: bytes) -> tuple[int, int, int, bytes] | object | None:
        """Where the ``columns`` and ``dtypes`` lists of the object whose ``"columns"`` key is at ``found`` end
        (after their closing brackets), where its rows start and the indentation of their brackets;
        :data:`_NOT_A_TABLE`, or None when the chunk ends too soon to know."""
        text = self.chunks.text
        close = b"\n" + pad + b"]"
        ends = []
        at = found
        for next_key in (b'"dtypes": [\n', b'"data": [\n'):
            key = b",\n" + pad + next_key
            end = text.find(close, at)
            if end < 0 or len(text) < end + len(close) + len(key):
                return None
            if not text.startswith(key, end + len(close)):
                return _NOT_A_TABLE
            ends.append(end + len(close))
            at = end + len(close) + len(key)
        line_end = text.find(b"\n", at)
        if line_end < 0:
            return None
        row_pad = text[at : line_end - 1]
        if text[line_end - 1 : line_end] != b"[" or row_pad.strip(b" ") or len(row_pad) <= len(pad):
            return _NOT_A_TABLE
        return ends[0], ends[1], at, row_pad

    def _blocks(self, close: bytes, row_end: bytes) -> Iterator[list]:
        """The table's rows from ``pos``, a block at a time; ``pos`` ends after the table's closing bracket."""
        row_close = len(row_end) - 2  # the row's closing line, without the comma and newline after it
        while True:
            text = self.chunks.text
            end = text.find(close, self.pos)
            if end >= 0:
                block, self.pos = text[self.pos : end], end + len(close)
                yield _rows(block)
                return
            last = text.rfind(row_end, self.pos)
            if last >= 0:
                block, self.pos = text[self.pos : last + row_close], last + row_close + 1
                yield _rows(block)
            if not self.more():
                raise ValueError("the text ends inside a table")


def load_with_tables(stream: BinaryIO, read_table: ReadTable) -> tuple[Any, list]:
    """The JSON data of the text in ``stream`` (as ``json.loads`` of it), each table of more than
    :data:`BLOCK_ROWS` rows replaced by ``read_table(columns, dtypes, blocks)``.

    ``blocks`` yields the table's rows, a list of them at a time, while the file is read; it is read to its
    end after ``read_table`` returns. Returns the data and the list of what ``read_table`` returned, in the
    order of the tables in the text. Text that is not JSON raises ``ValueError`` (``json.JSONDecodeError``,
    ``UnicodeDecodeError``).

    Examples
    --------
    >>> import io
    >>> from judge_transfer_audit.core.json_text import dumps_indented
    >>> table = {"columns": ["x"], "dtypes": ["int64"], "data": [[i] for i in range(BLOCK_ROWS + 1)]}
    >>> text = dumps_indented({"n": 1, "table": table})
    >>> def column_sums(columns, dtypes, blocks):
    ...     return sum(row[0] for block in blocks for row in block)
    >>> load_with_tables(io.BytesIO(text.encode()), column_sums)
    ({'n': 1, 'table': 8390656}, [8390656])
    """
    scan = _Scan(stream, read_table)
    scan.run()
    tables = scan.tables
    text = b"".join(scan.pieces).decode("utf-8")
    del scan

    def table_in_place(obj: dict) -> Any:
        marker = obj.get("data")
        if type(marker) is str and marker.startswith(_TOKEN) and list(obj) == ["columns", "dtypes", "data"]:
            return tables[int(marker[len(_TOKEN) :])]
        return obj

    return json.loads(text, object_hook=table_in_place if tables else None), tables


__all__ = ["BLOCK_ROWS", "CHUNK_BYTES", "load_with_tables"]
