"""A key in a URL or an option never lands in an output file or on the terminal (audit/core/redact.py)."""

from __future__ import annotations

import contextlib
import io
import json
import socket

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.redact import redact_argv, redact_text, redact_url
from tests.hostile.conftest import fast_args
from tests.hostile.study import digest, run_args, write_study

KEY = "sk-live1234567890abcdef"
PASSWORD = "hunter2pass"
TOKEN = "tok3n-5ecret-value"


@pytest.mark.parametrize(
    "url, expected",
    [
        (f"http://h:8000/v1?api_key={KEY}&mode=x", "http://h:8000/v1?api_key=REDACTED&mode=x"),
        (f"https://alice:{PASSWORD}@host/v1", "https://REDACTED@host/v1"),
        (f"https://host/v1?access_token={TOKEN}", "https://host/v1?access_token=REDACTED"),
        (f"https://host/v1?X-Amz-Signature={TOKEN}&page=2", "https://host/v1?X-Amz-Signature=REDACTED&page=2"),
        (f"https://host/cb#id_token={TOKEN}", "https://host/cb#id_token=REDACTED"),
        ("http://host:8000/v1?model=gpt&page=2", "http://host:8000/v1?model=gpt&page=2"),  # nothing secret: unchanged
        (f"http://[::1/x?password={PASSWORD}", "http://[::1/x?password=REDACTED"),  # unparseable: still redacted
    ],
)
def test_redact_url(url, expected):
    assert redact_url(url) == expected


def test_redact_argv_options_values_and_key_shaped_strings():
    argv = [
        "audit",
        "run",
        "--perplexity-url",
        f"http://u:{PASSWORD}@h/?key={KEY}",
        "--x-api-key",
        TOKEN,
        f"--auth-token={TOKEN}",
        "--perplexity-api-key-env",
        "MY_KEY_VAR",
        "--password",
        PASSWORD,
        KEY,
    ]
    shown = " ".join(redact_argv(argv))
    assert KEY not in shown and PASSWORD not in shown and TOKEN not in shown
    assert "--perplexity-api-key-env MY_KEY_VAR" in shown  # a variable's name is not a secret
    assert shown.count("REDACTED") == 6


def test_redact_text_keeps_the_sentence():
    text = f"cannot reach http://h/v1?api_key={KEY}: refused (Bearer {TOKEN})."
    assert redact_text(text) == "cannot reach http://h/v1?api_key=REDACTED: refused (Bearer REDACTED)."


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _assert_no_secret_anywhere(out, *texts):
    files = sorted(p for p in out.iterdir() if p.is_file())
    assert {p.name for p in files} >= {
        "result.json",
        "report.html",
        "junit.xml",
        "cells.csv",
        "checks.csv",
        "timings.json",
        ".judge-audit-manifest.json",
    }
    for path in files:
        content = path.read_text(encoding="utf-8")
        for secret in (KEY, PASSWORD, TOKEN, KEY[3:]):
            assert secret not in content, f"{secret} in {path.name}"
    for text in texts:
        for secret in (KEY, PASSWORD, TOKEN, KEY[3:]):
            assert secret not in text


@pytest.fixture(scope="module")
def failed_perplexity_run(tmp_path_factory):
    """A full run (surface features) whose perplexity server is down; its URL carries a key."""
    root = tmp_path_factory.mktemp("secret")
    files = write_study(root / "in")
    url = f"http://127.0.0.1:{_dead_port()}/v1?api_key={KEY}&mode=x"
    before = digest(files.values())
    err = io.StringIO()  # capsys is function-scoped; this fixture is shared by two tests
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        status = main(
            run_args(
                files,
                root / "out",
                "--no-uncertainty",
                "--no-readers",
                "--perplexity-url",
                url,
                "--perplexity-server-model",
                "m",
            )
        )
    assert digest(files.values()) == before
    return status, root / "out", err.getvalue() + out.getvalue()


def test_a_key_in_the_perplexity_url_is_in_no_output_file(failed_perplexity_run):
    status, out, printed = failed_perplexity_run
    _assert_no_secret_anywhere(out, printed)
    command = json.loads((out / "result.json").read_text(encoding="utf-8"))["provenance"]["command"]
    assert "api_key=REDACTED" in command and "--perplexity-url" in command
    assert "api_key=REDACTED" in (out / "report.html").read_text(encoding="utf-8")


def test_a_failed_requested_detector_is_an_error_check_and_exit_6(failed_perplexity_run):
    status, out, printed = failed_perplexity_run
    assert status == 6
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    errors = [c for c in result["checks"] if c["status"] == "ERROR"]
    assert [(c["name"], c["scope"]) for c in errors] == [("surface.detector", "perplexity")]
    assert "connection" in errors[0]["reason"].lower() or "refused" in errors[0]["reason"].lower()
    assert '<error type="ERROR"' in (out / "junit.xml").read_text(encoding="utf-8")
    assert "surface.detector" in printed and "error:" in printed
    # the other features were computed and reported: the run did its work and said what is missing
    assert result["surface"]["status"] == "PASS"


def test_user_info_and_token_options_are_redacted_from_every_output(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    url = f"https://alice:{PASSWORD}@llm.example/v1?token={TOKEN}"
    status = main(fast_args(files, tmp_path / "out", "--perplexity-url", url, "--perplexity-server-model", KEY))
    printed = capsys.readouterr()
    assert status == 0
    _assert_no_secret_anywhere(tmp_path / "out", printed.out, printed.err)
    command = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))["provenance"]["command"]
    assert "https://REDACTED@llm.example/v1?token=REDACTED" in command and "sk-REDACTED" in command
