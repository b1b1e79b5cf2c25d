"""The rubric judge: parsing, invalid answers counted (never imputed), personas, resume, CLI."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.generation.providers import OpenAICompatProvider
from judge_transfer_audit.generation.score import load_rubric, parse_scores, score_stories
from tests.generation.conftest import FAST
from tests.support.openai_server import Reply

CRITERIA = ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity")


@pytest.fixture
def config():
    return load_rubric()


def test_default_rubric(config):
    assert tuple(c.name for c in config.criteria) == CRITERIA
    assert (config.scale_min, config.scale_max, config.integer) == (1.0, 5.0, True)
    assert len(config.personas) == 3 and len(config.requests_for_story()) == 3
    system, user = config.messages("THE STORY", config.personas[0])
    assert config.personas[0].name in system.content
    assert "THE STORY" in user.content and all(name in user.content for name in CRITERIA)


def test_parse_scores(config):
    good = json.dumps(
        {"authenticity": 4, "empathy": 5, "engagement": "3", "emotion_provocation": 1, "narrative_complexity": 2}
    )
    scores, invalid = parse_scores(good, config)
    assert (
        scores
        == {"authenticity": 4, "empathy": 5, "engagement": 3, "emotion_provocation": 1, "narrative_complexity": 2}
        and not invalid
    )
    fenced = "<think>I think 2 is right {not json}</think>\n```json\n" + good + "\n```"
    assert parse_scores(fenced, config)[0] == scores
    partial = json.dumps({"Authenticity": 3.5, "empathy": 7, "engagement": "high", "emotion_provocation": True})
    scores, invalid = parse_scores(partial, config)
    assert scores == {}
    assert invalid == {
        "authenticity": "not an integer",
        "empathy": "outside the scale",
        "engagement": "not a number",
        "emotion_provocation": "not a number",
        "narrative_complexity": "missing",
    }
    scores, invalid = parse_scores('{"authenticity": 4, "empathy": ', config)
    assert scores == {} and set(invalid.values()) == {"answer is not a JSON object"} and len(invalid) == 5
    assert parse_scores("I would give it a 4.", config)[0] == {}


def _judge_answer(body):
    story = body["messages"][1]["content"]
    if "BROKEN" in story:
        return Reply("{authenticity: 4, empathy: 3")  # malformed JSON
    if "THINKER" in story:
        return Reply(
            "<think>" + json.dumps({c: 1 for c in CRITERIA}) + "</think>" + json.dumps({c: 5 for c in CRITERIA})
        )
    return Reply(json.dumps({c: 3 for c in CRITERIA} | {"empathy": 9}))


@pytest.fixture
def stories():
    return pd.DataFrame(
        {
            "pair_id": ["p1", "p1", "p2", "p2"],
            "system": ["model-x", "model-y", "model-x", "model-z"],
            "story_id": ["s1", "s2", "s1", "s3"],  # s1 is shared by two pairs: scored once
            "text": ["plain story", "BROKEN story", "plain story", "THINKER story"],
        }
    )


def test_score_stories(server, tmp_path, config, stories):
    server.responder = _judge_answer
    provider = OpenAICompatProvider(model="judge", base_url=server.url, **FAST)
    result = score_stories(stories, config, tmp_path / "judge.csv", provider=provider)
    assert result.n_stories == 3 and result.n_requests_now == 9  # 3 stories x 3 personas
    assert len(server.chat_requests()) == 9
    judge = pd.read_csv(tmp_path / "judge.csv")
    assert list(judge.columns) == ["pair_id", "system", "criterion", "score", "judge", "sample", "persona"]
    assert len(judge) == 4 * 3 * 5 and set(judge["sample"]) == {0, 1, 2}
    broken = judge[judge["system"] == "model-y"]
    assert broken["score"].isna().all()  # unparsable -> empty, never imputed
    thinker = judge[judge["system"] == "model-z"]
    assert (thinker["score"] == 5).all()  # the reasoning block's scores are ignored
    plain = judge[judge["system"] == "model-x"].set_index("criterion")["score"]
    assert plain["empathy"].isna().all() and (plain.drop("empathy") == 3).all()
    assert result.n_unparsable_answers == 3
    assert result.invalid_by_criterion["empathy"] == 3 + 3  # broken + off-scale, per distinct story
    assert result.invalid_by_criterion["authenticity"] == 3
    assert "3 unparsable answer(s)" in str(result)
    raw = [json.loads(x) for x in (tmp_path / "judge_raw.jsonl").read_text().splitlines()]
    assert sum(r["type"] == "answer" for r in raw) == 9
    assert any(r["raw"].startswith("{authenticity: 4") for r in raw if r["type"] == "answer")
    # systems never reach the judge
    sent = json.dumps([r.body for r in server.chat_requests()])
    assert "model-" not in sent and "p1" not in sent
    # resume: nothing asked again
    server.requests.clear()
    again = score_stories(stories, config, tmp_path / "judge.csv", provider=provider)
    assert again.n_requests_now == 0 and again.n_resumed == 9 and not server.chat_requests()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "judge.csv"), judge)


def test_cycle_personas_and_samples(server, tmp_path, stories):
    server.responder = _judge_answer
    config = load_rubric(overrides={"persona_mode": "cycle", "samples": 4})
    assert [p.name for _, p in config.requests_for_story()] == [p.name for p in config.personas] + [
        config.personas[0].name
    ]
    provider = OpenAICompatProvider(model="judge", base_url=server.url, **FAST)
    result = score_stories(stories, config, tmp_path / "j.csv", provider=provider)
    assert result.n_requests_now == 12


def test_bad_rubric(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(
        'scale_min = 5\nscale_max = 1\nsamples = 0\npersona_mode = "some"\nextra = 1\n[[criteria]]\nname = '
        '"x"\n[[criteria]]\nname = "x"\n'
    )
    with pytest.raises(InputError) as info:
        load_rubric(path)
    text = str(info.value)
    for word in ("scale_min", "samples", "persona_mode", "extra", "criterion listed twice"):
        assert word in text
    with pytest.raises(InputError, match="no judge model configured"):
        score_stories(
            pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["t"]}), load_rubric(), tmp_path / "j.csv"
        )


def test_cli_score(server, tmp_path, stories, capsys):
    server.responder = _judge_answer
    stories.to_csv(tmp_path / "stories.csv", index=False)
    rubric = tmp_path / "rubric.toml"
    options = "\n".join(f"{k} = {json.dumps(v)}" for k, v in FAST.items())
    rubric.write_text(
        f'judge_id = "mine"\n[judge.provider]\nprovider = "openai"\nmodel = "j"\nbase_url = "{server.url}"\n{options}\n'
    )
    code = main(
        [
            "score",
            str(tmp_path / "stories.csv"),
            "--rubric",
            str(rubric),
            "-o",
            str(tmp_path / "judge.csv"),
            "--samples",
            "2",
        ]
    )
    assert code == 0
    judge = pd.read_csv(tmp_path / "judge.csv")
    assert set(judge["judge"]) == {"mine"} and judge["sample"].max() == 5  # 3 personas x 2 samples
    assert "unparsable" in capsys.readouterr().out
    assert not math.isnan(judge["score"].max())


def test_empty_or_duplicate_stories_are_refused_before_any_request(server, tmp_path, capsys):
    """An empty story would be sent to the judge and scored: refuse it, and a duplicate row."""
    rubric = tmp_path / "r.toml"
    rubric.write_text(f'[judge.provider]\nprovider = "openai"\nmodel = "j"\nbase_url = "{server.url}"\n')
    for body, needle in (
        ("p1,a,\np1,b,hello\n", "line 2, column 'text': empty text"),
        ("p1,a,x\np1,a,y\n", "line 3, column 'pair_id': the same pair_id and system twice"),
    ):
        path = tmp_path / "s.csv"
        path.write_text("pair_id,system,text\n" + body)
        assert main(["score", str(path), "--rubric", str(rubric), "-o", str(tmp_path / "j.csv")]) == 2
        assert needle in capsys.readouterr().err
    assert server.chat_requests() == []
