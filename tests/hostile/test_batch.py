"""A batch of hostile cases through ``judge_transfer_audit.cli.main``: never exit 70, never a traceback, no input
changed.

Each case builds its files in a fresh folder and names the exit statuses it may end with;
:func:`tests.hostile.conftest.run_cli` asserts the rest (not 70, no traceback, the input
files byte-identical afterwards) and this module adds: no raw escape character printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.conftest import FAST, fast_args, run_cli
from tests.hostile.study import write_study

ESC = "\x1b]0;owned\x07\x1b[31m"


def _policy(text: bytes):
    def case(root: Path, files: dict) -> list[str]:
        path = root / "policy.toml"
        path.write_bytes(text)
        files["policy"] = path
        return fast_args(files, root / "out", "--policy", str(path))

    return case


def _replace(role: str, content: bytes):
    def case(root: Path, files: dict) -> list[str]:
        files[role].write_bytes(content)
        return fast_args(files, root / "out")

    return case


def _header_escape(root, files):
    files["humans"].write_text(
        files["humans"].read_text(encoding="utf-8").replace("choice", "choice" + ESC, 1), encoding="utf-8"
    )
    return fast_args(files, root / "out")


def _out_is_the_input_folder(root, files):
    files["judge"] = files["judge"].rename(files["judge"].with_name("judge_pairs.csv"))
    files["pairs"] = files["pairs"].rename(files["pairs"].with_name("dev.csv"))
    return fast_args(files, files["judge"].parent)


def _symlinked_result(root, files):
    (root / "out").mkdir()
    os.symlink(files["humans"], root / "out" / "result.json")
    return fast_args(files, root / "out")


def _out_is_a_file(root, files):
    return fast_args(files, files["humans"])


def _policy_is_a_folder(root, files):
    return fast_args(files, root / "out", "--policy", str(root))


def _humans_is_a_folder(root, files):
    return ["run", str(files["judge"]), str(root), "--out", str(root / "out"), *FAST]


def _key_in_url(root, files):
    return fast_args(
        files,
        root / "out",
        "--perplexity-url",
        "http://u:p@h/?api_key=sk-abcdefgh12345",
        "--perplexity-server-model",
        "m",
    )


def _huge_n_boot(root, files):
    return fast_args(files, root / "out", "--n-boot", "1000000000")


def _gate_on(content: bytes):
    def case(root, files):
        path = root / "result.json"
        path.write_bytes(content)
        files["result"] = path
        return ["gate", str(path)]

    return case


def _report_onto_itself(root, files):
    path = root / "result.json"
    path.write_text('{"schema_version": "1.0"}')
    files["result"] = path
    return ["report", str(path), "-o", str(path)]


def _features_onto_stories(root, files):
    return ["features", str(files["stories"]), "-o", str(files["stories"]), "-q"]


def _formula_names(root, files):
    for role in ("judge", "humans", "pairs"):
        text = files[role].read_text(encoding="utf-8").replace("sysA", "=1+1").replace("sysB", "@SUM(A1)")
        files[role].write_text(text, encoding="utf-8")
    return fast_args(files, root / "out")


def _control_characters_in_names(root, files):
    for role in ("judge", "humans", "pairs", "stories"):
        text = files[role].read_text(encoding="utf-8").replace("sysA", "sys\x00A" + ESC)
        files[role].write_text(text, encoding="utf-8")
    return fast_args(files, root / "out")


CASES = {
    "policy: transfer = 5": (_policy(b"transfer = 5\n"), {2}),
    "policy: agreement = 'x'": (_policy(b"agreement = 'x'\n"), {2}),
    "policy: not UTF-8": (_policy(b"[transfer]\nlevel = 0.9 # \xff\xfe\n"), {2}),
    "policy: nested 5000 deep": (_policy(b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n"), {2}),
    "policy: n_boot = 1e9": (_policy(b"[uncertainty]\nn_boot = 1000000000\n"), {2}),
    "policy: level = nan": (_policy(b"[transfer]\nlevel = nan\n"), {2}),
    "policy: a folder": (_policy_is_a_folder, {2, 3}),
    "--n-boot 1e9": (_huge_n_boot, {3}),
    "judge.csv empty": (_replace("judge", b""), {2}),
    "judge.csv binary": (_replace("judge", bytes(range(256)) * 4), {2}),
    "humans.csv a folder": (_humans_is_a_folder, {2, 3}),
    "humans.csv header with escapes": (_header_escape, {2}),
    "--out is the inputs' folder": (_out_is_the_input_folder, {2}),
    "--out/result.json -> humans.csv": (_symlinked_result, {2}),
    "--out is a file": (_out_is_a_file, {2, 3}),
    "key in --perplexity-url": (_key_in_url, {0}),
    "formula-shaped system names": (_formula_names, {0}),
    "gate: nested JSON": (_gate_on(b"[" * 100_000), {2}),
    "gate: binary": (_gate_on(bytes(range(256))), {2}),
    "gate: FAIL with no checks": (_gate_on(b'{"schema_version": "1.0", "status": "FAIL", "checks": []}'), {2}),
    "report -o onto its result": (_report_onto_itself, {2}),
    "features -o onto the stories": (_features_onto_stories, {2}),
    # names with control characters are an input error up front (tests/audit/inputs/test_hostile.py)
    "NUL and escapes in system names": (_control_characters_in_names, {2}),
}


@pytest.mark.parametrize("case, statuses", list(CASES.values()), ids=list(CASES))
def test_hostile_case(tmp_path, capsys, case, statuses):
    files = write_study(tmp_path / "in")
    argv = case(tmp_path, files)
    protect = [p for p in files.values() if p.is_file() and not p.is_symlink()]
    status, out, err = run_cli(argv, capsys, protect=protect)
    assert status in statuses, err
    assert "\x1b" not in out + err and "\x07" not in out + err and "\x00" not in out + err
