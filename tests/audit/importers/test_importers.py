"""Each importer on a file we write in its tool's layout: what it reads, what it writes, and
that every record is counted (read = used + excluded)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.importers import IMPORTERS, ImportOptions, import_files, write_imported
from judge_transfer_audit.inputs import load_audit_data
from tests.audit.importers import formats

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "labelstudio"


def _accounting_holds(imported):
    for c in imported.counts:
        assert c["read"] == c["used"] + sum(c["excluded_by_reason"].values()), c
        assert c["read"] > 0


def _load(imported, paths, out):
    w = write_imported(imported, out, paths).paths
    return load_audit_data(w["judge.csv"], w["humans.csv"], pairs=w.get("pairs.csv"), stories=w.get("stories.csv")), w


def test_every_format_is_registered_once_with_a_module():
    import importlib

    for name, imp in IMPORTERS.items():
        assert callable(importlib.import_module(f"judge_transfer_audit.importers.{imp.module}").read), name


def test_mtbench_keeps_both_orders_as_position_information(files, study, tmp_path):
    paths = files["mtbench"]
    imported = import_files("mtbench", paths)
    _accounting_holds(imported)
    judge = imported.tables["judge.csv"]
    voted = {p for (p, _r) in study.votes}
    assert len(judge) == 2 * len(voted)  # two games per judged pair that readers voted on
    for q, a, b in voted:
        pid = "__".join((str(q), *sorted((a, b)), "1"))
        rows = judge[judge["pair_id"] == pid].set_index("shown_first")["choice"]
        name = {"model_1": a, "model_2": b, "tie": "tie", "error": "invalid"}
        assert rows[a] == name[study.g1[(q, a, b)]]  # game 1: model_1 shown first
        assert rows[b] == name[study.g2[(q, a, b)]]  # game 2: the swap
    humans = imported.tables["humans.csv"]
    assert len(humans) == len(study.votes)
    for ((q, a, b), reader), w in study.votes.items():
        pid = "__".join((str(q), *sorted((a, b)), "1"))
        got = humans[(humans["pair_id"] == pid) & (humans["reader_id"] == reader)]["choice"].item()
        assert got == {"model_a": a, "model_b": b}.get(w, "tie")
    # the one judgment with no vote is counted, not dropped silently
    assert imported.counts[0]["excluded_by_reason"] == {"pair with no human label in the files read": 1}
    data, _ = _load(imported, paths, tmp_path / "out")
    assert len(data.votes) == len(study.votes)
    verdicts = data.judge_verdicts
    assert (verdicts.groupby("pair_id")["shown_first"].nunique() == 2).all()  # both orders reach the audit
    assert len(data.stories) == 2 * len(voted)


def test_mtbench_as_judge_votes_go_to_the_judge_file(tmp_path, study):
    _, votes = formats.write_mtbench(tmp_path, study)
    imported = import_files("mtbench", [votes], ImportOptions(as_judge=("expert_1",)))
    assert set(imported.tables["judge.csv"]["judge"]) == {"expert_1"}
    assert "expert_1" not in set(imported.tables["humans.csv"]["reader_id"])
    _accounting_holds(imported)


def test_arena_hard_games_map_to_orders(files, study):
    imported = import_files("arena-hard", files["arena-hard"])
    _accounting_holds(imported)
    judge = imported.tables["judge.csv"]
    base = formats.MODELS[0]
    for q, a, b in study.pairs:
        if a != base:
            continue
        rows = judge[judge["pair_id"] == "__".join((f"u{q:04d}", *sorted((a, b))))].set_index("shown_first")["choice"]
        name = {"model_1": a, "model_2": b, "tie": "tie", "error": "invalid"}
        assert rows[base] == name[study.g1[(q, a, b)]]  # game 1: baseline as A
        assert rows[b] == name[study.g2[(q, a, b)]]  # game 2: the model as A
    assert "humans.csv" not in imported.tables  # judgments only


def test_alpacaeval_preferences_and_text_matched_humans(files, study, tmp_path):
    paths = files["alpacaeval"]
    imported = import_files("alpacaeval", paths)
    _accounting_holds(imported)
    judge = imported.tables["judge.csv"]
    from judge_transfer_audit.importers.alpacaeval import prompt_id

    for q, a, b in study.pairs:
        pid = "__".join((prompt_id(f"Instruction number {q}"), *sorted((a, b))))
        got = judge[judge["pair_id"] == pid]["choice"]
        if len(got):
            assert got.item() == {"model_1": a, "model_2": b, "tie": "tie", "error": "invalid"}[study.g1[(q, a, b)]]
    humans = imported.tables["humans.csv"]
    forced = {k: w for k, w in study.votes.items() if not w.startswith("tie")}
    assert len(humans) == len(forced)
    assert set(humans["reader_id"]) <= {"0", "1", "2"}
    data, _ = _load(imported, paths, tmp_path / "out")
    assert len(data.votes) == len(forced)


def test_promptfoo_assertions_are_the_judge_and_human_ratings_the_readers(files, study, tmp_path):
    paths = files["promptfoo"]
    imported = import_files("promptfoo", paths)
    _accounting_holds(imported)
    humans, judge = imported.tables["humans.csv"], imported.tables["judge.csv"]
    rated = [(q, m) for q in study.prompts for m in formats.MODELS if q % 3]
    assert len(humans) == len(rated)
    for q, m in rated:
        ti = study.prompts.index(q)
        item = f"t{ti}:p0:{m}"
        assert humans.set_index("item_id").loc[item, "rating"] == pytest.approx(
            study.ratings[(q, m, formats.READERS[0])] / 5
        )
        assert judge.set_index("item_id").loc[item, "score"] == pytest.approx(study.scores[(q, m)] / 5)
    assert set(judge["judge"]) == {"llm-rubric"}
    unrated = sum(1 for q in study.prompts if not q % 3) * len(formats.MODELS)
    assert imported.counts[0]["excluded_by_reason"] == {"output with no human label in the files read": unrated}
    data, _ = _load(imported, paths, tmp_path / "out")
    assert data.human_shape == "scalar"


def test_inspect_original_score_is_the_judge_and_edits_the_readers(files, study, tmp_path):
    paths = files["inspect"]
    imported = import_files("inspect", paths)
    _accounting_holds(imported)
    judge, humans = imported.tables["judge.csv"], imported.tables["humans.csv"]
    value = {"C": 1.0, "I": 0.0, "P": 0.5}
    for q in study.prompts:
        for m in formats.MODELS:
            item = f"q{q}:openai/{m}"
            if q % 2:
                assert judge.set_index("item_id").loc[item, "score"] == value[formats.LETTER[study.scores[(q, m)]]]
                mine = humans[humans["item_id"] == item].set_index("reader_id")["rating"]
                for r in formats.READERS[:2]:
                    assert mine[r] == value[formats.LETTER[study.ratings[(q, m, r)]]]
            else:
                assert item not in set(judge["item_id"])
    data, _ = _load(imported, paths, tmp_path / "out")
    assert data.human_shape == "scalar"


def test_inspect_eval_log_reads_as_its_json_log(files, tmp_path):
    """A .eval log (read by inspect_ai's own reader) gives the same tables as the .json log."""
    log_module = pytest.importorskip("inspect_ai.log", reason="inspect_ai (the 'inspect' extra) is not installed")
    evals = []
    for path in files["inspect"]:
        log = log_module.read_eval_log(str(path))
        target = tmp_path / (path.stem + ".eval")
        log_module.write_eval_log(log, str(target), format="eval")
        evals.append(target)
    from_json, from_eval = import_files("inspect", files["inspect"]), import_files("inspect", evals)
    for name, table in from_json.tables.items():
        pd.testing.assert_frame_equal(table, from_eval.tables[name])


def test_inspect_eval_without_the_extra_says_how_to_install(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    assert main(["import", "inspect", str(log), "--out", str(tmp_path / "out")]) == 4
    assert "judge-transfer-audit[inspect]" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_argilla_pairwise_and_scalar(files, study, tmp_path):
    imported = import_files("argilla", files["argilla"])
    _accounting_holds(imported)
    assert set(imported.tables["judge.csv"]["judge"]) == {"gpt-4o"}
    assert len(imported.tables["humans.csv"]) == len(study.votes)
    _load(imported, files["argilla"], tmp_path / "p")
    scalar = formats.write_argilla_scalar(tmp_path, study)
    imported = import_files("argilla", [scalar])
    assert len(imported.tables["humans.csv"]) == len(study.ratings)
    assert imported.tables["judge.csv"]["score"].tolist() == [
        study.scores[(q, m)] for q in study.prompts for m in formats.MODELS
    ]
    data, _ = _load(imported, [scalar], tmp_path / "s")
    assert data.human_shape == "scalar"


def test_labelstudio_export_through_our_reader(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "import",
            "labelstudio",
            str(FIXTURE / "sample_export.json"),
            "--import-pairs",
            str(FIXTURE / "out" / "pairs.csv"),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "import-report.json").read_text())
    (c,) = report["files"]
    assert c["read"] == c["used"] + sum(c["excluded_by_reason"].values())
    humans = pd.read_csv(out / "humans.csv", keep_default_na=False)
    assert len(humans) == c["used"] * 6  # six questions per used annotation
    assert "annotations read" in capsys.readouterr().out


def test_labelstudio_needs_the_pairs_file(tmp_path, capsys):
    code = main(["import", "labelstudio", str(FIXTURE / "sample_export.json"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "--import-pairs" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_import_prints_and_writes_the_same_counts(files, tmp_path, capsys):
    out = tmp_path / "study"
    assert main(["import", "mtbench", *map(str, files["mtbench"]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "import-report.json").read_text())
    for c in report["files"]:
        assert f"{c['file']}: {c['read']:,} records read, {c['used']:,} used" in printed
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "humans.csv",
        "import-report.json",
        "judge.csv",
        "pairs.csv",
        "stories.csv",
    ]


def test_import_never_writes_over_an_input_or_a_foreign_file(files, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "judge.csv").write_text("mine\n")
    assert main(["import", "mtbench", *map(str, files["mtbench"]), "--out", str(out)]) == 2
    assert (out / "judge.csv").read_text() == "mine\n"
    assert "did not write" in capsys.readouterr().err


def test_unknown_format_lists_the_known_ones(files, tmp_path, capsys):
    assert main(["import", "mt-bench", *map(str, files["mtbench"]), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "unknown format 'mt-bench'" in err and "mtbench" in err and "argilla" in err
