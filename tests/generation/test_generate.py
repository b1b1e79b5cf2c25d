"""Generation protocol, retries, reasoning stripping, blinding and resume."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError, ProviderError
from judge_transfer_audit.generation.generate import choose_attempt, count_words, generate_stories, strip_reasoning
from judge_transfer_audit.generation.protocol import load_protocol
from judge_transfer_audit.generation.providers import OpenAICompatProvider
from tests.generation.conftest import FAST, protocol_toml
from tests.support.openai_server import Hang, Reply, Status, story


def protocol_for(server, tmp_path, **kw):
    path = tmp_path / "protocol.toml"
    path.write_text(protocol_toml(server.url, **kw))
    return load_protocol(path)


def test_count_words_and_strip():
    assert count_words("One two -- three *** four's well-known.") == 4 + 1
    pattern = re.compile(load_protocol().reasoning_pattern)
    assert strip_reasoning("<think>long\nplan</think>\n\nThe story.", pattern) == "The story."
    assert strip_reasoning("<THINK>a</THINK>x<think>b</think>y", pattern) == "xy"
    assert strip_reasoning("reasoning without opening tag</think> Story", pattern) == "Story"
    assert strip_reasoning("No reasoning here.", pattern) == "No reasoning here."
    # an answer cut by max_tokens while still reasoning has no story in it
    assert strip_reasoning("<think>plan plan plan, never closed", pattern) == ""
    assert strip_reasoning("<think>a</think>Story.<think>cut", pattern) == "Story."


def test_choose_attempt():
    assert choose_attempt([100, 450, 520], 400, 600, 500) == 1  # first in window, not closest
    assert choose_attempt([100, 300, 700, 380], 400, 600, 500) == 3
    assert choose_attempt([300, 700], 400, 600, 500) == 0  # tie -> earliest


def test_short_stories_force_retries_and_closest_is_kept(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path, max_attempts=4)
    # alpha on the first premise: never in the window -> all 4 attempts, keep the 380-word one.
    server.push(
        "alpha",
        Reply(story(100, "one")),
        Reply(story(300, "two")),
        Reply(story(700, "three")),
        Reply(story(380, "four")),
    )
    # beta on the first premise: two short answers then one in the window -> 3 attempts.
    server.push("beta", Reply(story(50)), Reply(story(399)), Reply(story(401, "kept")))
    result = generate_stories(premises.iloc[:1], protocol, tmp_path / "out", rng=3)
    log = result.story_log.set_index("system")
    assert log.loc["alpha", "n_attempts"] == 4 and log.loc["alpha", "kept_attempt"] == 4
    assert log.loc["alpha", "words"] == 380 and not log.loc["alpha", "in_window"]
    assert log.loc["beta", "n_attempts"] == 3 and log.loc["beta", "words"] == 401
    assert result.n_out_of_window == 1 and result.n_attempts_now == 7
    texts = result.stories.set_index("system")["text"]
    assert texts["alpha"].startswith("Four") and texts["beta"].startswith("Kept")
    attempts = [json.loads(line) for line in (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()]
    assert sum(r["type"] == "attempt" for r in attempts) == 7  # every attempt recorded
    assert len(server.chat_requests()) == 7


def test_reasoning_block_is_stripped_before_counting(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path, max_attempts=2)
    thinking = "<think>" + story(900, "plan") + "</think>\n\n"
    server.push("alpha", Reply(thinking + story(450, "tale")))
    result = generate_stories(premises.iloc[:1], protocol, tmp_path / "out", rng=0)
    alpha = result.stories.set_index("system").loc["alpha", "text"]
    assert "<think>" not in alpha and "Plan" not in alpha and count_words(alpha) == 450
    record = next(
        json.loads(x)
        for x in (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()
        if '"alpha"' in x and '"attempt"' in x
    )
    assert record["raw"].startswith("<think>") and record["words"] == 450  # raw kept, stripped counted


def test_reasoning_cut_by_max_tokens_is_a_retried_attempt(server, tmp_path, premises):
    """A reply that never closes its <think> block must not reach readers as a story."""
    protocol = protocol_for(server, tmp_path, max_attempts=3)
    server.push("alpha", Reply("<think>" + story(500, "plan"), finish_reason="length"), Reply(story(480, "tale")))
    result = generate_stories(premises.iloc[:1], protocol, tmp_path / "out", rng=0)
    log = result.story_log.set_index("system")
    assert log.loc["alpha", "n_attempts"] == 2 and log.loc["alpha", "kept_attempt"] == 2
    alpha = result.stories.set_index("system").loc["alpha", "text"]
    assert "Plan" not in alpha and "think" not in alpha


def test_prompts_follow_protocol(server, tmp_path, premises):
    protocol = protocol_for(
        server, tmp_path, extra='[templates]\nstandard = "Story {phrasing}: {premise} ({word_min}-{word_max})"'
    )
    generate_stories(premises, protocol, tmp_path / "out", rng=0)
    users = {r.body["messages"][1]["content"] for r in server.chat_requests()}
    assert "Story following this instruction: Write about a reunion at a train station. (400-600)" in users
    assert "Story on: The last bookshop on Mars. (400-600)" in users
    systems = {r.body["messages"][0]["content"] for r in server.chat_requests()}
    assert systems == {protocol.system_prompt}
    assert all(r.body["temperature"] == 1.0 for r in server.chat_requests())


def test_blinding(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path)
    result = generate_stories(pd.concat([premises] * 1), protocol, tmp_path / "a", rng=11)
    pairs = result.pairs
    for column in ("pair_id", "story_a_id", "story_b_id"):
        assert not pairs[column].str.contains("alpha|beta|w1|r1").any()
    # sides balanced within the matchup (4 pairs -> 2 and 2), shown_first == system_a
    assert (pairs["system_a"] == "alpha").sum() == 2
    assert (pairs["shown_first"] == pairs["system_a"]).all()
    assert list(pairs["position"]) == [1, 2, 3, 4]
    # same seed -> same ids, sides and order (no new request: resumed); other seed -> other ids
    again = generate_stories(premises, protocol, tmp_path / "a", rng=11)
    pd.testing.assert_frame_equal(again.pairs, pairs)
    other = generate_stories(premises, protocol, tmp_path / "b", rng=12)
    assert set(other.pairs["pair_id"]).isdisjoint(pairs["pair_id"])
    # stories.csv: one row per pair and system, texts of the kept stories
    assert len(result.stories) == 8 and set(result.stories.columns) == {"pair_id", "system", "story_id", "text"}


def test_seed_sides_differ_across_seeds(server, tmp_path):
    premises = pd.DataFrame(
        {"premise_id": [f"q{i}" for i in range(12)], "premise": [f"premise {i}" for i in range(12)]}
    )
    protocol = protocol_for(server, tmp_path)
    sides = {
        tuple(
            generate_stories(premises, protocol, tmp_path / f"s{seed}", rng=seed).pairs.sort_values("group_id")[
                "system_a"
            ]
        )
        for seed in range(4)
    }
    assert len(sides) > 1
    assert all(sum(s == "alpha" for s in side) == 6 for side in sides)


def test_stories_shared_across_matchups(server, tmp_path, premises):
    extra = '[[matchups]]\nfocal = "gamma"\nother = "beta"\n'
    path = tmp_path / "p.toml"
    path.write_text(protocol_toml(server.url, systems=("alpha", "beta", "gamma")) + extra)
    result = generate_stories(premises, load_protocol(path), tmp_path / "out", rng=1)
    assert result.n_stories == 12  # beta written once per premise, used by both matchups
    assert len(result.pairs) == 8 and len(server.chat_requests()) == 12
    beta = result.stories[result.stories["system"] == "beta"]
    assert beta["story_id"].nunique() == 4 and len(beta) == 8
    # a matchup's sides depend on the seed and that matchup only
    alone = generate_stories(
        premises, load_protocol(path), tmp_path / "alone", rng=1, matchups=load_protocol(path).matchups[:1]
    )
    first = result.pairs[result.pairs["matchup"] == "alpha vs beta"].set_index("pair_id")["system_a"].sort_index()
    pd.testing.assert_series_equal(alone.pairs.set_index("pair_id")["system_a"].sort_index(), first)


class Killer:
    """Wraps a provider and raises (as a kill would stop the process) after ``k`` answers."""

    def __init__(self, inner, k):
        self.inner, self.k, self.calls = inner, k, 0
        self.name, self.max_concurrency = inner.name, inner.max_concurrency

    def chat(self, messages, **sampling):
        if self.calls >= self.k:
            raise KeyboardInterrupt("simulated kill")
        self.calls += 1
        return self.inner.chat(messages, **sampling)

    def describe(self):
        return self.inner.describe()


def test_resume_after_kill_never_repeats_finished_stories(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path)
    out = tmp_path / "out"
    server.push("alpha", Reply(story(120)))  # alpha's first story needs a second attempt
    shared = {
        "alpha": OpenAICompatProvider(model="alpha", base_url=server.url, **FAST),
        "beta": OpenAICompatProvider(model="beta", base_url=server.url, **FAST),
    }
    killer = Killer(shared["alpha"], 2)
    with pytest.raises(KeyboardInterrupt):
        generate_stories(premises, protocol, out, providers={"alpha": killer, "beta": shared["beta"]}, rng=5)
    first_run = [(r.model, r.user_text) for r in server.chat_requests()]
    journal = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    finished = {(r["system"], r["premise_id"]) for r in journal if r["type"] == "final"}
    assert finished and len(finished) < 8
    # a kill may also cut the journal's last line mid-write
    with open(out / "attempts.jsonl", "a") as fh:
        fh.write('{"type": "attempt", "story_id": "s-cut')
    server.requests.clear()
    result = generate_stories(premises, protocol, out, rng=None)  # seed read back from run.json
    assert result.seed == 5 and result.n_resumed == len(finished) and result.n_incomplete_lines == 1
    premise_of = dict(zip(premises["premise"], premises["premise_id"]))
    second_run = [
        (r.model, next(pid for text, pid in premise_of.items() if text in r.user_text)) for r in server.chat_requests()
    ]
    assert not ({(m, p) for m, p in second_run} & finished)
    assert len(result.stories) == 8 and result.n_requested_now == 8 - len(finished)
    assert len(first_run) + len(second_run) == 9  # 8 stories + 1 retry, nothing asked twice


def test_provider_error_keeps_finished_stories(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path)
    server.push("beta", Status(400, message="model not found"))
    with pytest.raises(ProviderError, match="rerun the same command to resume"):
        generate_stories(premises.iloc[:1], protocol, tmp_path / "out", rng=0)
    result = generate_stories(premises.iloc[:1], protocol, tmp_path / "out")
    assert result.n_resumed == 1 and result.n_requested_now == 1


def test_timeout_exhausted_is_provider_error(server, tmp_path, premises):
    protocol = protocol_for(server, tmp_path)
    server.push("alpha", *[Hang(3)] * 4)
    fast = {
        name: OpenAICompatProvider(model=name, base_url=server.url, **{**FAST, "timeout_s": 0.1})
        for name in ("alpha", "beta")
    }
    with pytest.raises(ProviderError, match="gave up after 4"):
        generate_stories(premises.iloc[:1], protocol, tmp_path / "out", providers=fast, rng=0)


def test_changed_protocol_or_seed_is_refused(server, tmp_path, premises):
    generate_stories(premises.iloc[:1], protocol_for(server, tmp_path), tmp_path / "out", rng=0)
    changed = protocol_for(server, tmp_path, extra="word_target = 450")
    with pytest.raises(InputError, match="different protocol"):
        generate_stories(premises.iloc[:1], changed, tmp_path / "out", rng=0)
    with pytest.raises(InputError, match="blinding seed 0, not 9"):
        generate_stories(premises.iloc[:1], protocol_for(server, tmp_path), tmp_path / "out", rng=9)
    fresh = generate_stories(premises.iloc[:1], changed, tmp_path / "out", rng=9, fresh=True)
    assert fresh.n_resumed == 0


def test_bad_inputs(server, tmp_path):
    protocol = protocol_for(server, tmp_path)
    bad = pd.DataFrame({"premise_id": ["a", "a", ""], "premise": ["x", "y", " "]})
    with pytest.raises(InputError) as info:
        generate_stories(bad, protocol, tmp_path / "o", rng=0)
    messages = " ".join(p.message for p in info.value.problems)
    assert "duplicate premise_id" in messages and "empty premise" in messages and "empty premise_id" in messages
    with pytest.raises(InputError, match="names no template"):
        (tmp_path / "x.toml").write_text(
            '[systems.a]\ntemplate = "nope"\n[systems.a.provider]\nprovider = "openai"\nmodel = "m"\n'
        )
        load_protocol(tmp_path / "x.toml")
    (tmp_path / "y.toml").write_text('word_target = 700\nbogus = 1\n[templates]\nstandard = "no premise {here}"\n')
    with pytest.raises(InputError) as info:
        load_protocol(tmp_path / "y.toml")
    text = str(info.value)
    assert "bogus" in text and "word_target" in text and "{'here'}" not in text and "['here']" in text


def test_cli_generate(server, tmp_path, premises, capsys):
    (tmp_path / "p.toml").write_text(protocol_toml(server.url))
    premises.to_csv(tmp_path / "premises.csv", index=False)
    args = [
        "generate",
        str(tmp_path / "premises.csv"),
        "--protocol",
        str(tmp_path / "p.toml"),
        "--out",
        str(tmp_path / "o"),
        "--seed",
        "4",
    ]
    assert main(args) == 0
    assert "8 stories (0 resumed" in capsys.readouterr().out
    pairs = pd.read_csv(tmp_path / "o" / "pairs.csv")
    assert len(pairs) == 4 and set(pairs["focal"]) == {"alpha"}
    assert main(args + ["--matchup", "beta:alpha", "-q"]) == 0  # other matchup: stories reused
    out = capsys.readouterr().out
    assert "8 resumed" in out
    assert main(args[:-1] + ["5"]) == 2  # seed differs from the recorded one
    assert main(args + ["--matchup", "alpha"]) == 2
