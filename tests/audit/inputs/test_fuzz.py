"""Fuzzing the input loaders through the command line.

Random bytes, random CSV-like text and random JSONL as the judge file or the human file
(the other file valid): ``audit run`` must exit 0 or 2 (never 70, the "bug" status), must
never raise, and must never change an input file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from tests.audit.inputs.helpers import HUMANS, JUDGE, PAIRS

FAST = ["-q", "--no-uncertainty", "--no-readers", "--no-surface", "--no-html"]
ALLOWED = {ExitStatus.OK, ExitStatus.INPUT_ERROR}
#: a few examples in the default run; JUDGE_AUDIT_FUZZ_EXAMPLES=500 for a campaign
SETTINGS = settings(
    max_examples=int(os.environ.get("JUDGE_AUDIT_FUZZ_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_ALPHABET = st.sampled_from(
    list(',,,,"\n\n\r\t ;abAB01239.-_e')
    + [
        "tie",
        "Tie",
        "alpha",
        "beta",
        "p1",
        "p2",
        "r1",
        "empathy",
        "nan",
        "\x00",
        "\x1b[2J",
        "é",
        "\u2028",
        "\ufeff",
        "\ud7ff",
    ]
)
_csv_body = st.lists(_ALPHABET, max_size=120).map("".join)
_json_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["alpha", "beta", "tie", "p1", "p2", "r1", "empathy", "A", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
_KEYS = ["pair_id", "reader_id", "criterion", "choice", "system", "score", "judge", "sample", "Score", "comment"]
_json_line = st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=4), _json_value, max_size=6).map(
    lambda d: json.dumps(d, allow_nan=True, ensure_ascii=False)
)
_jsonl = st.lists(_json_line | st.text(max_size=20), min_size=0, max_size=8).map("\n".join)


def _digest(paths) -> dict[str, str]:
    return {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


def _check(role: str, name: str, content: bytes, pairs: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = {"judge": tmp / "judge.csv", "humans": tmp / "humans.csv"}
        files["judge"].write_text(JUDGE, encoding="utf-8")
        files["humans"].write_text(HUMANS, encoding="utf-8")
        files[role] = tmp / name
        files[role].write_bytes(content)
        inputs = [files["judge"], files["humans"]]
        args = ["run", str(files["judge"]), str(files["humans"]), "--out", str(tmp / "out"), *FAST]
        if pairs:
            (tmp / "pairs.csv").write_text(PAIRS, encoding="utf-8")
            inputs.append(tmp / "pairs.csv")
            args += ["--pairs", str(tmp / "pairs.csv")]
        before = _digest(inputs)
        try:  # the library raises nothing but InputError on any input
            load_audit_data(files["judge"], files["humans"], pairs=tmp / "pairs.csv" if pairs else None)
        except InputError:
            pass
        status = main(args)
        assert status in ALLOWED, status
        assert _digest(inputs) == before


@SETTINGS
@given(role=st.sampled_from(["judge", "humans"]), content=st.binary(max_size=300), pairs=st.booleans())
def test_random_bytes(role, content, pairs):
    _check(role, f"{role}.csv", content, pairs)


@SETTINGS
@given(role=st.sampled_from(["judge", "humans"]), body=_csv_body, pairs=st.booleans(), keep_rows=st.booleans())
def test_random_csv_like_text(role, body, pairs, keep_rows):
    valid = JUDGE if role == "judge" else HUMANS
    lines = valid.splitlines()
    text = "\n".join(lines if keep_rows else lines[:1]) + "\n" + body
    _check(role, f"{role}.csv", text.encode("utf-8", "surrogatepass"), pairs)


@SETTINGS
@given(role=st.sampled_from(["judge", "humans"]), text=_jsonl, pairs=st.booleans())
@pytest.mark.slow
def test_random_jsonl(role, text, pairs):
    _check(role, f"{role}.jsonl", text.encode("utf-8", "surrogatepass"), pairs)


@SETTINGS
@given(role=st.sampled_from(["judge", "humans"]), text=_jsonl, pairs=st.booleans())
@pytest.mark.slow
def test_random_jsonl_appended_to_valid_rows(role, text, pairs):
    valid = JUDGE if role == "judge" else HUMANS
    lines = valid.splitlines()
    rows = [json.dumps(dict(zip(lines[0].split(","), line.split(",")))) for line in lines[1:]]
    _check(role, f"{role}.jsonl", ("\n".join(rows) + "\n" + text).encode("utf-8", "surrogatepass"), pairs)
