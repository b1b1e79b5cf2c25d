"""Label Studio: labelling config, blind task export, export -> annotation -> import round trip."""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.generation.labelstudio import import_export, labelling_config

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
CRITERIA = ["authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity"]


@pytest.fixture(scope="module")
def maker():
    spec = importlib.util.spec_from_file_location("make_sample_export", FIXTURE / "make_sample_export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def study(maker, tmp_path_factory):
    """A fresh run of the fixture script in a temporary directory."""
    out = tmp_path_factory.mktemp("ls")
    maker.main(out)
    return out


def test_labelling_config_structure():
    root = ET.fromstring(
        labelling_config(CRITERIA, definitions={"empathy": 'Feel "with" <them> & more'}, allow_tie=True)
    )
    choices = {c.get("name"): c for c in root.iter("Choices")}
    assert list(choices) == CRITERIA + ["overall"]
    for element in choices.values():
        assert element.get("choice") == "single-radio" and element.get("required") == "true"
        assert [c.get("alias") for c in element.iter("Choice")] == ["left", "right", "tie"]
    texts = {t.get("name"): t.get("value") for t in root.iter("Text")}
    assert texts == {"premise": "$premise", "story_left": "$story_left", "story_right": "$story_right"}
    assert [t.get("name") for t in root.iter("TextArea")] == ["comment"]
    assert any('Feel "with" <them> & more' in (h.get("value") or "") for h in root.iter("Header"))
    forced = ET.fromstring(labelling_config(CRITERIA))
    assert all(len(list(c.iter("Choice"))) == 2 for c in forced.iter("Choices"))


def test_fixture_is_what_the_script_makes(study):
    for name in ("sample_export.json", "tasks.json", "config.xml", "out/pairs.csv", "out/stories.csv"):
        assert (study / name).read_bytes() == (FIXTURE / name).read_bytes(), name


def test_tasks_are_blind_and_in_presentation_order(study):
    tasks = json.loads((study / "tasks.json").read_text())
    pairs = pd.read_csv(study / "out" / "pairs.csv")
    stories = pd.read_csv(study / "out" / "stories.csv").set_index(["pair_id", "system"])
    assert [t["data"]["pair_id"] for t in tasks] == list(pairs.sort_values("position")["pair_id"])
    text = json.dumps(tasks)
    assert "reasoner" not in text and "baseline" not in text
    for task, pair in zip(tasks, pairs.sort_values("position").itertuples()):
        assert task["data"]["story_left"] == stories.loc[(pair.pair_id, pair.system_a), "text"]
        assert task["data"]["story_right"] == stories.loc[(pair.pair_id, pair.system_b), "text"]
        assert task["data"]["premise"] == pair.premise


def test_round_trip_maps_sides_to_systems(study, maker):
    """Readers who always pick the focal (or the other) system, wherever it is shown."""
    tasks = json.loads((study / "tasks.json").read_text())
    pairs = pd.read_csv(study / "out" / "pairs.csv", dtype=str)
    export = maker.simulate_export(tasks, pairs, CRITERIA, seed=1, readers={21: 1.0, 22: 0.0})
    result = import_export(export, pairs)
    humans = result.humans
    by_pair = pairs.set_index("pair_id")
    other = {p: (r.system_b if r.system_a == r.focal else r.system_a) for p, r in by_pair.iterrows()}
    fan = humans[humans["reader_id"] == "21"]
    critic = humans[humans["reader_id"] == "22"]
    assert (fan["choice"] == fan["pair_id"].map(by_pair["focal"])).all()
    assert (critic["choice"] == critic["pair_id"].map(other)).all()
    assert (humans["shown_first"] == humans["pair_id"].map(by_pair["system_a"])).all()
    assert set(humans["criterion"]) == set(CRITERIA) | {"overall"}
    # the fixed-up tasks: reader 22 skipped task 1, reader 21 redid task 2 choosing "left" everywhere
    assert result.n_cancelled == 1 and result.n_replaced == 1
    redo = humans[(humans["pair_id"] == tasks[1]["data"]["pair_id"]) & (humans["reader_id"] == "21")]
    assert (redo["choice"] == by_pair.loc[tasks[1]["data"]["pair_id"], "system_a"]).all()
    assert len(humans) == (2 * len(tasks) - 1) * 6
    lead = {
        (str(a["completed_by"]), t["data"]["pair_id"]): a["lead_time"]
        for t in export
        for a in t["annotations"]
        if not a["was_cancelled"]
    }
    assert all(row.seconds == lead[(row.reader_id, row.pair_id)] for row in humans.itertuples())


def test_import_sample_export_cli(tmp_path, capsys):
    code = main(
        [
            "labelstudio",
            "import",
            str(FIXTURE / "sample_export.json"),
            "--pairs",
            str(FIXTURE / "out" / "pairs.csv"),
            "-o",
            str(tmp_path / "humans.csv"),
            "--anonymise-readers",
        ]
    )
    assert code == 0
    humans = pd.read_csv(tmp_path / "humans.csv", keep_default_na=False)
    assert list(humans.columns) == ["pair_id", "reader_id", "criterion", "choice", "seconds", "comment", "shown_first"]
    assert set(humans["reader_id"]) == {"reader-01", "reader-02", "reader-03"}
    assert len(humans) == (18 - 1 - 0) * 6  # 18 annotations, one cancelled, the redo replaces one
    assert set(humans["choice"]) == {"reasoner", "baseline"}
    comments = humans[humans["comment"] != ""]
    assert len(comments) > 0 and set(comments["criterion"]) == {"overall"}
    assert "1 cancelled, 1 replaced" in capsys.readouterr().out


def test_export_cli(tmp_path):
    code = main(
        [
            "labelstudio",
            "export",
            str(FIXTURE / "out" / "pairs.csv"),
            str(FIXTURE / "out" / "stories.csv"),
            "-o",
            str(tmp_path / "t.json"),
        ]
    )
    assert code == 0
    assert json.loads((tmp_path / "t.json").read_text()) == json.loads((FIXTURE / "tasks.json").read_text())
    assert (tmp_path / "t_config.xml").read_text() == (FIXTURE / "config.xml").read_text()


def test_import_errors(tmp_path):
    pairs = pd.read_csv(FIXTURE / "out" / "pairs.csv", dtype=str)
    export = json.loads((FIXTURE / "sample_export.json").read_text())
    export[0]["data"]["pair_id"] = "p-unknown"
    export[2]["data"]["story_left_id"] = "s-other"
    export[3]["annotations"][0]["result"][0]["value"]["choices"] = ["maybe"]
    with pytest.raises(InputError) as info:
        import_export(export, pairs)
    text = str(info.value)
    assert "p-unknown" in text and "s-other" in text and "'maybe'" in text
    (tmp_path / "min.json").write_text(json.dumps([{"pair_id": "x", "overall": "left"}]))
    with pytest.raises(InputError, match="JSON-MIN"):
        import_export(tmp_path / "min.json", pairs)
    (tmp_path / "bad.json").write_text("{")
    assert (
        main(
            [
                "labelstudio",
                "import",
                str(tmp_path / "bad.json"),
                "--pairs",
                str(FIXTURE / "out" / "pairs.csv"),
                "-o",
                str(tmp_path / "h.csv"),
            ]
        )
        == 2
    )


def test_completed_by_object_and_unanswered(tmp_path):
    pairs = pd.read_csv(FIXTURE / "out" / "pairs.csv", dtype=str)
    export = json.loads((FIXTURE / "sample_export.json").read_text())[:1]
    annotation = export[0]["annotations"][0]
    annotation["completed_by"] = {"id": 5, "email": "ann@example.org"}
    annotation["result"] = [r for r in annotation["result"] if r["from_name"] != "empathy"]
    result = import_export(export, pairs)
    assert "ann@example.org" in set(result.humans["reader_id"])
    assert result.n_unanswered == 1
    annotation["completed_by"] = None
    with pytest.raises(InputError, match="no completed_by"):
        import_export(export, pairs)
