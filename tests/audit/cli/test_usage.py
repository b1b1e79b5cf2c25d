"""Usage messages: whole command descriptions, the run command's columns, near-miss names."""

from __future__ import annotations

import re

import pytest

from judge_transfer_audit.cli import cli, main


def _help(argv, capsys) -> str:
    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["labelstudio"]])
def test_command_lists_give_each_first_sentence_whole(argv, capsys):
    text = _help(argv, capsys)
    listing = text.split("Commands:")[1]
    assert "..." not in listing
    group = cli if not argv else cli.commands[argv[0]]
    for name, command in group.commands.items():
        first = command.get_short_help_str(limit=10_000)
        assert first.endswith(".") and not first.endswith("...")
        # the description wraps over lines: compare without the layout
        assert " ".join(first.split()) in " ".join(listing.split()), name


def test_run_help_lists_the_columns_of_both_files_and_points_to_the_contract(capsys):
    text = _help(["run"], capsys)
    assert "docs/data-contract.md" in text
    judge = re.search(r"JUDGE +scores: +pair_id, system, criterion, score", text)
    humans = re.search(r"HUMANS +votes: +pair_id, reader_id, criterion, choice", text)
    assert judge and humans


def test_misspelled_choice_names_the_near_one(capsys):
    assert main(["run", "j.csv", "h.csv", "--tie-rule", "even_split"]) == 3
    assert "Did you mean 'even-split'?" in capsys.readouterr().err


def test_misspelled_choice_far_from_every_name_gets_no_guess(capsys):
    assert main(["run", "j.csv", "h.csv", "--tie-rule", "zzz"]) == 3
    assert "Did you mean" not in capsys.readouterr().err


def test_misspelled_column_names_the_near_one(tmp_path, capsys):
    humans = tmp_path / "humans.csv"
    text = open("fixtures/deployment/humans.csv", encoding="utf-8").read()
    humans.write_text(text.replace("reader_id", "Reader-ID ", 1).replace("choice", "choise", 1), encoding="utf-8")
    status = main(["run", "fixtures/deployment/judge.csv", str(humans), "-q", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2
    assert "choice (did you mean 'choise'?)" in err
    assert "rename 'choise' to 'choice'" in err


def test_misspelled_option_names_the_near_one(capsys):
    assert main(["run", "j.csv", "h.csv", "--pair", "p.csv"]) == 3
    err = capsys.readouterr().err
    assert "No such option '--pair'" in err and "Did you mean" in err and "'--pairs'" in err
