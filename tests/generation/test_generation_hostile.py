"""`audit generate` and `audit score` on hostile inputs and answers: never exit 70.

Regression cases of the hardening issue: each runs the command in-process and checks the
exit status and the message (file, key, range, fix).
"""

from __future__ import annotations

import json
import math
import sys

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.generation.score import load_rubric, parse_scores
from tests.generation.conftest import FAST, protocol_toml
from tests.support.openai_server import Message, Reply, story

CRITERIA = ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity")


def _generate(tmp_path, premises, protocol: str, *extra: str) -> int:
    (tmp_path / "p.toml").write_text(protocol)
    if isinstance(premises, pd.DataFrame):
        premises.to_csv(tmp_path / "premises.csv", index=False)
        path = tmp_path / "premises.csv"
    else:
        path = premises
    return main(["generate", str(path), "--protocol", str(tmp_path / "p.toml"), "--out", str(tmp_path / "out"), *extra])


def _protocol_with(url: str, **options) -> str:
    """A two-system protocol whose alpha provider gets ``options`` (TOML literals) over FAST."""
    lines = ["max_attempts = 2", "concurrency = 1"]
    for name in ("alpha", "beta"):
        values = dict(FAST)
        if name == "alpha":
            values.update(options)
        lines += [
            f"[systems.{name}]",
            f"[systems.{name}.provider]",
            'provider = "openai"',
            f'model = "{name}"',
            f'base_url = "{url}"',
        ]
        lines += [f"{k} = {v}" for k, v in values.items()]
    lines += ["[[matchups]]", 'focal = "alpha"', 'other = "beta"']
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "key, literal, shown",
    [
        ("timeout_s", "nan", "nan"),
        ("backoff_base_s", "nan", "nan"),
        ("max_backoff_s", "inf", "inf"),
        ("deadline_s", "-inf", "-inf"),
        ("max_response_mb", "1e9", "1000000000.0"),
        ("max_retries", "1000000", "1000000"),
    ],
)
def test_non_finite_or_unbounded_provider_keys_exit_2(server, tmp_path, premises, capsys, key, literal, shown):
    code = _generate(tmp_path, premises, _protocol_with(server.url, **{key: literal}), "-q")
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"p.toml [systems.alpha.provider], column '{key}'" in err
    assert "must be a" in err and ("in (" in err or "in [" in err) and f"(found '{shown}')" in err and "Fix:" in err
    assert server.chat_requests() == []  # refused before any request


@pytest.mark.parametrize(
    "extra, key",
    [
        ("word_max = 1000000000000", "word_max"),
        ("max_attempts = 0", "max_attempts"),
        ("concurrency = 100000", "concurrency"),
        ("seed = -1", "seed"),
        ("[sampling]\ntemperature = nan", "sampling.temperature"),
    ],
)
def test_unbounded_protocol_keys_exit_2(server, tmp_path, premises, capsys, extra, key):
    protocol = protocol_toml(server.url).replace("max_attempts = 10\n", "").replace("concurrency = 1\n", "")
    protocol = (
        (extra + "\n" + protocol)
        if not extra.startswith("[")
        else protocol.replace("[systems.alpha]", extra + "\n[systems.alpha]", 1)
    )
    code = _generate(tmp_path, premises, protocol, "-q")
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"column '{key}'" in err and "Internal error" not in err


def test_seed_option_out_of_range_is_a_usage_error(server, tmp_path, premises, capsys):
    assert _generate(tmp_path, premises, protocol_toml(server.url), "--seed", "-1", "-q") == 3


def test_a_lone_surrogate_in_an_answer_is_replaced_and_recorded(server, tmp_path, premises, capsys):
    text = story(480) + " \ud800"
    server.responder = lambda body: Message({"role": "assistant", "content": text})
    assert _generate(tmp_path, premises, protocol_toml(server.url), "--seed", "1", "-q") == 0
    stories = pd.read_csv(tmp_path / "out" / "stories.csv")
    assert stories["text"].str.endswith(" \ufffd").all()
    attempts = [
        json.loads(line) for line in (tmp_path / "out" / "attempts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert {a["n_replaced_characters"] for a in attempts if a["type"] == "attempt"} == {1}


def test_a_lone_surrogate_in_the_premises_is_an_input_error(server, tmp_path, capsys):
    path = tmp_path / "premises.jsonl"
    path.write_text(
        '{"premise_id": "w1", "premise": "A lighthouse"}\n{"premise_id": "w2", "premise": "broken \\ud800 here"}\n'
    )
    assert _generate(tmp_path, path, protocol_toml(server.url), "-q") == 2
    err = capsys.readouterr().err
    assert "premises.jsonl, line 2, column 'premise'" in err and "lone UTF-16 surrogate" in err and "\\ud800" in err


ESCAPES = "w1\x1b]0;pwned\x07\x1b[31m"


def test_a_premise_id_with_escape_codes_is_refused_and_shown_escaped(server, tmp_path, premises, capsys, monkeypatch):
    """Escape sequences in a premise id would be written raw into pairs.csv and story_log.csv, which every
    reader refuses: an input error before any request, the value shown escaped on a terminal."""
    premises.loc[0, "premise_id"] = ESCAPES
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert _generate(tmp_path, premises, protocol_toml(server.url), "--seed", "1") == 2
    err = capsys.readouterr().err
    assert "\x1b]" not in err and "\x1b[31m" not in err and "\x07" not in err
    assert "premise_id holds a control character" in err and "line 2" in err
    assert "w1\\x1b]0;pwned\\x07\\x1b[31m" in err
    assert not server.chat_requests() and not (tmp_path / "out" / "pairs.csv").exists()


def test_no_progress_output_when_stderr_is_not_a_terminal_or_quiet(server, tmp_path, premises, capsys, monkeypatch):
    assert _generate(tmp_path, premises, protocol_toml(server.url), "--seed", "1") == 0
    assert capsys.readouterr().err == ""  # pytest's capture is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert (
        main(
            [
                "generate",
                str(tmp_path / "premises.csv"),
                "--protocol",
                str(tmp_path / "p.toml"),
                "--out",
                str(tmp_path / "o2"),
                "-q",
            ]
        )
        == 0
    )
    assert capsys.readouterr().err == ""


def _score_cli(server, tmp_path, answer: str, capsys) -> tuple[int, pd.DataFrame, str]:
    server.responder = lambda body: Reply(answer)
    stories = pd.DataFrame({"pair_id": ["p1", "p1"], "system": ["a", "b"], "text": ["one story", "another"]})
    stories.to_csv(tmp_path / "stories.csv", index=False)
    options = "\n".join(f"{k} = {v}" for k, v in FAST.items())
    (tmp_path / "r.toml").write_text(
        f'[[personas]]\nname = "editor"\ndescription = "edits"\n'
        f'[judge.provider]\nprovider = "openai"\nmodel = "judge"\nbase_url = "{server.url}"\n{options}\n'
    )
    code = main(
        [
            "score",
            str(tmp_path / "stories.csv"),
            "--rubric",
            str(tmp_path / "r.toml"),
            "-o",
            str(tmp_path / "judge.csv"),
        ]
    )
    out = capsys.readouterr().out
    judge = pd.read_csv(tmp_path / "judge.csv") if code == 0 else pd.DataFrame()
    return code, judge, out


def test_a_400_digit_score_is_off_the_scale(server, tmp_path, capsys):
    answer = json.dumps({c: 4 for c in CRITERIA})[:-1] + ', "empathy": ' + "9" * 400 + "}"
    code, judge, out = _score_cli(server, tmp_path, answer, capsys)
    assert code == 0
    assert judge[judge["criterion"] == "empathy"]["score"].isna().all()
    assert judge[judge["criterion"] != "empathy"]["score"].eq(4).all()
    assert "2 invalid score(s) left empty (empathy: 2)" in out


def test_a_5000_digit_score_makes_the_answer_unparsable(server, tmp_path, capsys):
    code, judge, out = _score_cli(server, tmp_path, '{"empathy": ' + "9" * 5000 + "}", capsys)
    assert code == 0 and judge["score"].isna().all() and "2 unparsable answer(s)" in out


def test_parse_scores_extremes():
    config = load_rubric()
    scores, invalid = parse_scores(
        json.dumps(
            {
                "authenticity": 10**400,
                "empathy": -(10**400),
                "engagement": "1e400",
                "emotion_provocation": "nan",
                "narrative_complexity": 3,
            }
        ),
        config,
    )
    assert scores == {"narrative_complexity": 3.0}
    assert invalid == {
        "authenticity": "outside the scale",
        "empathy": "outside the scale",
        "engagement": "outside the scale",
        "emotion_provocation": "not a number",
    }
    assert math.isinf(json.loads("1e400"))


@pytest.mark.parametrize(
    "extra, key",
    [
        ("samples = 1000000000", "samples"),
        ("scale_max = inf", "scale_min"),
        ("concurrency = 0", "concurrency"),
        ("[sampling]\ntemperature = nan", "sampling.temperature"),
    ],
)
def test_unbounded_rubric_keys_exit_2(tmp_path, capsys, extra, key):
    (tmp_path / "stories.csv").write_text("pair_id,system,text\np1,a,one\n")
    (tmp_path / "r.toml").write_text(extra + "\n")
    assert (
        main(
            [
                "score",
                str(tmp_path / "stories.csv"),
                "--rubric",
                str(tmp_path / "r.toml"),
                "-o",
                str(tmp_path / "j.csv"),
            ]
        )
        == 2
    )
    assert f"column '{key}'" in capsys.readouterr().err
