"""`audit run`, `audit report` and `audit gate`, in-process through main(argv)."""

import json
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.results.result import result_from_json, result_to_json

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "fixtures" / "deployment"
FAST = ["--no-uncertainty", "--no-readers", "--no-surface"]


def _run_args(out, *extra):
    return [
        "run",
        str(DEPLOY / "judge.csv"),
        str(DEPLOY / "humans.csv"),
        "--pairs",
        str(DEPLOY / "pairs.csv"),
        "--out",
        str(out),
        *extra,
    ]


def _failing_study(folder: Path, judge_p: float = 0.95) -> Path:
    """A small seeded study whose judge prefers the focal system on ``judge_p`` of pairs (95%: it
    fails) while 7 readers give it ~30%."""
    import numpy as np

    rng = np.random.default_rng(12)
    folder.mkdir(parents=True, exist_ok=True)
    pairs, votes, scores = (
        ["pair_id,system_a,system_b,focal,matchup"],
        ["pair_id,reader_id,criterion,choice"],
        ["pair_id,system,criterion,score"],
    )
    for i in range(40):
        pid = f"p{i:02d}"
        pairs.append(f"{pid},x,y,x,x vs y")
        for r in range(7):
            votes.append(f"{pid},r{r},empathy,{'x' if rng.random() < 0.3 else 'y'}")
        better = rng.random() < judge_p
        scores += [f"{pid},x,empathy,{4 if better else 3}", f"{pid},y,empathy,{3 if better else 4}"]
    for name, lines in (("pairs.csv", pairs), ("humans.csv", votes), ("judge.csv", scores)):
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _failing_args(folder, out, *extra):
    return [
        "run",
        str(folder / "judge.csv"),
        str(folder / "humans.csv"),
        "--pairs",
        str(folder / "pairs.csv"),
        "--out",
        str(out),
        *FAST,
        "-q",
        "--no-html",
        *extra,
    ]


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    folder = _failing_study(tmp_path_factory.mktemp("failing"))
    out = folder / "out"
    return main(_failing_args(folder, out)), folder, out


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    status = main(_run_args(out, *FAST, "-q"))
    return status, out


def test_run_writes_every_output(fast_run):
    status, out = fast_run
    assert status == ExitStatus.OK  # no --gate: a failing audit still exits 0
    for name in (
        "result.json",
        "report.html",
        "junit.xml",
        "cells.csv",
        "checks.csv",
        "agreement.csv",
        "judge_pairs.csv",
    ):
        assert (out / name).stat().st_size > 0, name


@pytest.mark.slow
def test_cli_result_equals_api_result(fast_run):
    _, out = fast_run
    data = load_audit_data(DEPLOY / "judge.csv", DEPLOY / "humans.csv", pairs=DEPLOY / "pairs.csv")
    saved = result_from_json((out / "result.json").read_text(encoding="utf-8"))
    api = run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False, command=saved.provenance.command))
    # Input paths differ only in how they were spelled; compare everything else.
    assert result_to_json(api) == result_to_json(saved)


def test_gate_turns_a_failing_audit_into_status_1(failing_run, tmp_path):
    status, folder, out = failing_run
    assert status == ExitStatus.OK  # without --gate
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["status"] == "FAIL" and result["counts"]["FAIL"] == 1
    assert main(_failing_args(folder, tmp_path, "--gate")) == ExitStatus.GATE_FAILED


def test_lenient_policy_passes_the_gate(failing_run, tmp_path):
    policy = tmp_path / "lenient.toml"
    # the judge also FAILs the agreement decision: both decisions gate by default
    policy.write_text('[severity]\n"transfer.decision" = "WARN"\n"agreement.decision" = "WARN"\n')
    assert main(_failing_args(failing_run[1], tmp_path, "--gate", "--policy", str(policy))) == ExitStatus.OK


def test_the_fixture_fails_on_r1_vs_v3_and_the_gate_exits_1(fast_run, tmp_path):
    """README line 1's story: the judge that ignores the readers FAILs where they lean the other way."""
    out = fast_run[1]
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["status"] == "FAIL" and result["counts"]["FAIL"] >= 2
    failed = [c for c in result["cells"] if c["transfer"]["status"] == "FAIL"]
    assert {c["matchup"] for c in failed} == {"r1 vs v3"}
    assert all(c["transfer"]["difference"]["ci_low"] > c["transfer"]["margin"] for c in failed)
    assert main(["gate", str(out / "result.json")]) == ExitStatus.GATE_FAILED


def _gpt5_only(folder: Path) -> Path:
    """The fixture's two GPT-5 matchups alone: a judge near the readers' possible majority rate."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    pairs = pd.read_csv(DEPLOY / "pairs.csv")
    keep = set(pairs.loc[pairs["matchup"] != "r1 vs v3", "pair_id"])
    for name in ("pairs.csv", "humans.csv", "judge.csv"):
        frame = pd.read_csv(DEPLOY / name, keep_default_na=False)
        frame[frame["pair_id"].isin(keep)].to_csv(folder / name, index=False)
    return folder


@pytest.mark.slow
def test_inconclusive_fails_the_gate_only_when_asked(tmp_path):
    folder = _gpt5_only(tmp_path / "gpt5")
    args = [
        "run",
        str(folder / "judge.csv"),
        str(folder / "humans.csv"),
        "--pairs",
        str(folder / "pairs.csv"),
        *FAST,
        "-q",
    ]
    out = tmp_path / "out"
    assert main([*args, "--out", str(out), "--no-html"]) == ExitStatus.OK
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["status"] == "INCONCLUSIVE" and result["counts"]["FAIL"] == 0
    assert main(["gate", str(out / "result.json")]) == ExitStatus.OK
    assert main(["gate", str(out / "result.json"), "--fail-on", "inconclusive"]) == ExitStatus.GATE_FAILED
    assert main([*args, "--out", str(tmp_path / "o2"), "--no-html", "--gate"]) == ExitStatus.OK
    assert (
        main([*args, "--out", str(tmp_path / "o3"), "--no-html", "--gate", "--fail-on", "inconclusive"])
        == ExitStatus.GATE_FAILED
    )
    assert 'type="INCONCLUSIVE"' in (tmp_path / "o3" / "junit.xml").read_text(encoding="utf-8")


def test_saved_result_gate_and_report(failing_run, fast_run, tmp_path, capsys):
    assert main(["gate", str(failing_run[2] / "result.json")]) == ExitStatus.GATE_FAILED
    assert "gate: FAILED" in capsys.readouterr().out
    _, out = fast_run
    target = tmp_path / "again.html"
    assert main(["report", str(out / "result.json"), "-o", str(target), "--junit", str(tmp_path / "j.xml")]) == 0
    assert target.read_text(encoding="utf-8") == (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_same_seed_same_bytes(tmp_path):
    # Same command (the output path is part of the recorded command), run twice.
    runs = []
    for _ in range(2):
        assert main(_run_args(tmp_path, *FAST, "-q", "--no-html", "--seed", "3", "--tie-rule", "random")) == 0
        runs.append((tmp_path / "result.json").read_bytes())
    assert runs[0] == runs[1]


def test_provenance_records_command_seed_and_hashes(fast_run):
    _, out = fast_run
    prov = json.loads((out / "result.json").read_text(encoding="utf-8"))["provenance"]
    assert prov["command"].startswith("audit run ") and "--no-surface" in prov["command"]
    assert prov["seed"] == 0 and prov["tie_rule"] == "even-split" and prov["glmm_backend"] == "native"
    assert {s["role"] for s in prov["sources"]} >= {"judge", "humans", "pairs"}
    assert all(len(s["sha256"]) == 64 for s in prov["sources"])


def test_bad_input_exits_2_with_one_message_per_problem(tmp_path, capsys):
    humans = tmp_path / "humans.csv"
    humans.write_text("pair_id,reader_id,criterion,choice\np1,r1,empathy,nobody\np1,r1,empathy,nobody\n")
    status = main(["run", str(DEPLOY / "judge.csv"), str(humans), "--out", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    assert status == ExitStatus.INPUT_ERROR
    assert "Traceback" not in err and "humans.csv" in err and "line" in err


@pytest.mark.parametrize(
    "argv, status",
    [
        (["run", "missing-judge.csv", "missing-humans.csv"], ExitStatus.INPUT_ERROR),
        (["run"], ExitStatus.USAGE_ERROR),
        (["run", "a.csv", "b.csv", "--tie-rule", "coin"], ExitStatus.USAGE_ERROR),
        (["run", "a.csv", "b.csv", "--dev-judge", "x.csv"], ExitStatus.INPUT_ERROR),
        (["report", "no-such-result.json"], ExitStatus.INPUT_ERROR),
        (["--version"], ExitStatus.OK),
    ],
)
def test_statuses(argv, status, capsys):
    assert main(argv) == status
    assert "Traceback" not in capsys.readouterr().err


def test_policy_error_is_an_input_error(tmp_path, capsys):
    policy = tmp_path / "p.toml"
    policy.write_text("[transfer]\nmargn = 0.1\n")
    assert main(_run_args(tmp_path, *FAST, "-q", "--policy", str(policy))) == ExitStatus.INPUT_ERROR
    assert "margin" in capsys.readouterr().err


def test_report_rejects_a_non_result(tmp_path, capsys):
    bogus = tmp_path / "r.json"
    bogus.write_text('{"schema_version": "9.0"}')
    assert main(["report", str(bogus)]) == ExitStatus.INPUT_ERROR
    assert "schema" in capsys.readouterr().err


def test_help_of_every_subcommand(capsys):
    from judge_transfer_audit.cli import cli

    for name in cli.commands:
        assert main([name, "--help"]) == 0
    assert "audit run" in capsys.readouterr().out


@pytest.mark.slow
def test_linkage_option_reaches_the_reader_clustering(tmp_path):
    args = _run_args(tmp_path, "--no-uncertainty", "--no-surface", "--no-html", "-q", "--linkage", "complete")
    assert main(args) == ExitStatus.OK
    result = result_from_json((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert result.readers.payload.linkage == "complete"


@pytest.mark.slow
def test_dev_check_gates_on_the_out_of_fold_estimate(tmp_path):
    dev = DEPLOY.parent / "dev"
    args = _run_args(
        tmp_path,
        *FAST,
        "--no-html",
        "-q",
        "--dev-judge",
        str(dev / "judge.csv"),
        "--dev-humans",
        str(dev / "humans.csv"),
    )
    assert main(args) == ExitStatus.OK
    result = result_from_json((tmp_path / "result.json").read_text(encoding="utf-8"))
    check = next(c for c in result.checks if c.name == "dev.spearman")
    assert check.value == result.dev.payload.oof_pooled
    assert check.value < result.dev.payload.routed_in_sample_pooled


@pytest.mark.slow
def test_unwritable_output_is_an_input_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    status = main(_run_args(blocker / "out", *FAST, "-q"))
    err = capsys.readouterr().err
    assert status == ExitStatus.INPUT_ERROR and "Traceback" not in err and "out" in err


@pytest.mark.parametrize(
    "content, words",
    [
        ("[1, 2]", "a JSON list"),
        ('{"schema_version": "2.0"}', "complete"),
        ('{"schema_version": "1.0", "cells": []}', "re-run `audit run`"),
        ("{not json", "not valid JSON"),
    ],
)
def test_gate_and_report_reject_what_is_not_a_result(tmp_path, capsys, content, words):
    bogus = tmp_path / "mine.json"
    bogus.write_text(content)
    for command in ("gate", "report"):
        assert main([command, str(bogus)]) == ExitStatus.INPUT_ERROR
        err = capsys.readouterr().err
        assert words in err and "mine.json" in err and "Internal error" not in err


@pytest.mark.slow
def test_a_rerun_leaves_no_stale_outputs(tmp_path):
    assert main(_run_args(tmp_path, "--no-uncertainty", "--no-surface", "-q")) == 0
    assert (tmp_path / "readers.csv").exists() and (tmp_path / "report.html").exists()
    (tmp_path / "notes.txt").write_text("the user's own file")
    assert main(_run_args(tmp_path, *FAST, "-q", "--no-html")) == 0
    assert not (tmp_path / "readers.csv").exists() and not (tmp_path / "report.html").exists()
    assert (tmp_path / "notes.txt").exists() and (tmp_path / "result.json").exists()
