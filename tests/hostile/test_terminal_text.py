"""Escape sequences from inputs never reach the terminal raw (audit/core/terminal_text.py)."""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.core.terminal_text import printable
from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study

OSC_TITLE = "\x1b]0;owned\x07"
CSI_RED = "\x1b[31m"
OSC8_LINK = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"


@pytest.mark.parametrize(
    "raw, shown",
    [
        (OSC_TITLE, "\\x1b]0;owned\\x07"),
        (CSI_RED + "red", "\\x1b[31mred"),
        ("a\rb", "a\\x0db"),
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),  # right-to-left override
        ("caf\u00e9 \u2603 \U0001f600", "caf\u00e9 \u2603 \U0001f600"),  # printable text is left alone
    ],
)
def test_printable_escapes_control_and_direction_characters(raw, shown):
    assert printable(raw) == shown


def test_printable_keeps_newlines_only_when_asked():
    assert printable("a\nb") == "a\\x0ab"
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"


def test_column_name_with_escape_sequences_in_an_input_error(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    text = files["humans"].read_text(encoding="utf-8").replace("choice", f"choice{OSC_TITLE}{CSI_RED}", 1)
    files["humans"].write_text(text, encoding="utf-8")
    status, out, err = run_cli(fast_args(files, tmp_path / "out"), capsys, protect=files.values())
    assert status == 2
    assert "humans.csv" in err and "choice" in err and "Fix:" in err
    assert "\x1b" not in err + out and "\x07" not in err + out
    assert "\\x1b]0;owned\\x07" in err  # shown escaped: the user sees what the file holds


def test_system_names_with_escapes_in_the_summary_and_the_gate(tmp_path, capsys):
    files = write_study(tmp_path / "in", systems=(f"sys{CSI_RED}A{OSC_TITLE}", f"sys{OSC8_LINK}B"))
    out = tmp_path / "out"
    # --no-html: the SVG figures' handling of control characters in names is the input
    # loaders' rule (validate names up front); once they refuse such names this
    # run exits 2, and the message must be just as free of raw escapes.
    args = [a for a in fast_args(files, out, "--no-html") if a != "-q"]
    status, stdout, stderr = run_cli(args, capsys, protect=files.values())
    assert status in (0, 2)
    assert "\x1b" not in stdout + stderr and "\x07" not in stdout + stderr
    if status == 2:
        assert "\\x1b" in stderr
        return
    assert "judge-audit:" in stdout
    # --fail-on-warn lists the per-cell checks, whose scope holds the system names
    status, stdout, stderr = run_cli(["gate", "--fail-on-warn", str(out / "result.json")], capsys)
    assert status == 1 and "gate: FAILED" in stdout
    assert "\x1b" not in stdout + stderr and "sys\\x1b[31mA\\x1b]0;owned\\x07" in stdout
    # the raw names stay raw in the result (JSON escapes them; nothing is lost)
    matchups = {c["matchup"] for c in json.loads((out / "result.json").read_text(encoding="utf-8"))["cells"]}
    assert any(CSI_RED in m for m in matchups)


def test_usage_error_value_with_escapes(capsys):
    status, out, err = run_cli(["run", "a.csv", "b.csv", "--tie-rule", f"coin{CSI_RED}"], capsys)
    assert status == 3 and "\x1b" not in err and "tie-rule" in err


def test_error_message_of_a_missing_file_named_with_escapes(tmp_path, capsys):
    status, out, err = run_cli(["gate", str(tmp_path / f"res{OSC_TITLE}.json")], capsys)
    assert status == 2 and "\x1b" not in err and "not found" in err


def test_a_direction_override_in_a_system_name_is_escaped_in_every_summary_line(tmp_path, capsys):
    """U+202E is no control character to the loaders (a name may hold it) but reverses what a terminal
    shows: every summary line (agreement, configurations, position, budget...) prints it escaped."""
    files = write_study(tmp_path / "in", systems=("sys\u202eA", "sysB"))
    args = [a for a in fast_args(files, tmp_path / "out", "--no-html") if a != "-q"]
    status, stdout, stderr = run_cli(args, capsys, protect=files.values())
    assert status == 0, stderr
    assert "\u202e" not in stdout + stderr
    assert any(line.startswith("Label budget") and "sys\\u202eA" in line for line in stdout.splitlines()), stdout


def test_peer_summary_names_are_printable():
    from judge_transfer_audit.sections.leaderboard.render import printable

    assert printable("a\u202eb\x1bc") == "a\\u202eb\\x1bc"
