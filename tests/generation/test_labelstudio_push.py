"""push/pull logic without a server: per-reader plans, the manifest, updates, refusals.

An in-memory stand-in answers the few calls :class:`judge_transfer_audit.generation.labelstudio.server.Server`
makes (the real server is exercised by test_labelstudio_server.py, marker ``server``).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.generation.labelstudio.server import StudyManifest, pull_study, push_study, reader_plan

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"


class MemoryServer:
    """What push/pull ask of a Label Studio server, kept in dicts."""

    def __init__(self, url: str = "http://ls.example:8080"):
        self.public_url = url
        self.projects: dict[int, dict] = {}
        self.tasks: dict[int, list[dict]] = {}
        self._next_task = 100
        self.calls: list[str] = []

    def whoami(self):
        self.calls.append("whoami")

    def create_project(self, **settings):
        project_id = len(self.projects) + 1
        self.projects[project_id] = dict(settings)
        self.tasks[project_id] = []
        self.calls.append(f"create {project_id}")
        return project_id

    def update_project(self, project_id, **settings):
        self.projects[project_id].update(settings)
        self.calls.append(f"update {project_id}")

    def get_project(self, project_id):
        if project_id not in self.projects:
            raise InputError("project not found")
        return self.projects[project_id]

    def import_tasks(self, project_id, tasks):
        for task in tasks:
            self._next_task += 1
            self.tasks[project_id].append(
                {"id": self._next_task, "data": copy.deepcopy(task["data"]), "annotations": []}
            )
        self.calls.append(f"import {project_id} {len(tasks)}")

    def task_ids(self, project_id):
        return {t["data"]["pair_id"]: (t["id"], t["data"]["story_left_id"]) for t in self.tasks[project_id]}

    def export(self, project_id):
        return copy.deepcopy(self.tasks[project_id])

    def user_names(self):
        return {"7": "ann@example.org"}


@pytest.fixture
def study():
    return pd.read_csv(FIXTURE / "out" / "pairs.csv", dtype=str), pd.read_csv(
        FIXTURE / "out" / "stories.csv", dtype=str
    )


def test_reader_plans_are_seeded_balanced_and_personal(study):
    pairs, _ = study
    plans = {r: reader_plan(pairs, r, 3) for r in ("ann", "bob", "cy")}
    assert reader_plan(pairs, "ann", 3) == plans["ann"]  # deterministic
    assert reader_plan(pairs, "ann", 4) != plans["ann"]
    assert len({tuple(order) for order, _ in plans.values()}) == 3
    by_pair = pairs.set_index("pair_id")
    for order, flipped in plans.values():
        assert sorted(order) == sorted(pairs["pair_id"])
        focal_first = sum(
            (by_pair.loc[p, "system_b"] if p in flipped else by_pair.loc[p, "system_a"]) == by_pair.loc[p, "focal"]
            for p in order
        )
        assert focal_first == len(pairs) // 2
    order, flipped = reader_plan(pairs, None, 3)  # shared: pairs.csv as it is
    assert order == list(pairs.sort_values("position", key=lambda s: s.astype(int))["pair_id"]) and flipped == set()


def test_push_records_each_reader_order_and_pull_maps_it_back(study, tmp_path):
    pairs, stories = study
    server = MemoryServer()
    result = push_study(pairs, stories, server, tmp_path / "m.json", readers=["ann", "bob"], seed=9)
    assert (result.n_projects_created, result.n_tasks_imported) == (2, 2 * len(pairs))
    manifest = StudyManifest.read(tmp_path / "m.json")
    assert manifest == result.manifest and manifest.seed == 9 and manifest.url == server.public_url
    for project in manifest.projects:
        settings = server.projects[project.project_id]
        assert settings["sampling"] == "Sequential sampling" and settings["maximum_annotations"] == 1
        assert "reasoner" not in settings["label_config"]
        order, flipped = reader_plan(pairs, project.reader, 9)
        assert [t.pair_id for t in project.tasks] == order and [t.position for t in project.tasks] == list(
            range(1, len(order) + 1)
        )
        for task, on_server in zip(project.tasks, server.tasks[project.project_id]):
            assert task.task_id == on_server["id"] and task.story_left_id == on_server["data"]["story_left_id"]
            pair = pairs.set_index("pair_id").loc[task.pair_id]
            assert task.shown_first == (pair["system_b"] if task.pair_id in flipped else pair["system_a"])
    # ann (user 7) picks "left" everywhere in her project: pull maps each click to the system she saw on the left
    ann = manifest.projects[0]
    for task in server.tasks[ann.project_id]:
        task["annotations"] = [
            {
                "id": task["id"],
                "completed_by": 7,
                "lead_time": 30.5,
                "was_cancelled": False,
                "result": [{"type": "choices", "from_name": "overall", "value": {"choices": ["left"]}}],
            }
        ]
    humans = pull_study(tmp_path / "m.json", pairs, server, tmp_path / "humans.csv").humans
    shown = {t.pair_id: t.shown_first for t in ann.tasks}
    assert set(humans["reader_id"]) == {"ann@example.org"} and len(humans) == len(pairs)
    assert (humans["choice"] == humans["pair_id"].map(shown)).all() and (
        humans["shown_first"] == humans["choice"]
    ).all()
    assert "m.json" not in humans.to_csv()  # nothing but votes


def test_a_second_push_updates_and_adds_only_new_pairs(study, tmp_path):
    pairs, stories = study
    server = MemoryServer()
    push_study(pairs.iloc[:4], stories, server, tmp_path / "m.json", readers=["ann"], seed=1, title="First")
    first = StudyManifest.read(tmp_path / "m.json")
    again = push_study(pairs, stories, server, tmp_path / "m.json", readers=["ann", "bob"])
    assert (again.n_projects_created, again.n_projects_updated, again.n_tasks_kept) == (1, 1, 4)
    assert again.n_tasks_imported == (len(pairs) - 4) + len(pairs)
    ann = again.manifest.projects[0]
    assert ann.tasks[:4] == first.projects[0].tasks  # what ann may have seen is unchanged
    assert [p.title for p in again.manifest.projects] == ["First · ann", "First · bob"]  # title kept from the manifest
    assert again.manifest.seed == 1


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(seed=2), "pushed with seed 1, not 2"),
        (dict(readers=[]), "holds a per-reader study"),
        (dict(url="http://other:8080"), "is for the server at http://ls.example:8080"),
    ],
)
def test_a_push_that_would_mix_studies_is_refused(study, tmp_path, change, message):
    pairs, stories = study
    push_study(pairs, stories, MemoryServer(), tmp_path / "m.json", readers=["ann"], seed=1)
    before = (tmp_path / "m.json").read_text()
    server = MemoryServer(change.pop("url", "http://ls.example:8080"))
    options = {"readers": ["ann"], "overlap": 3, **change}
    with pytest.raises(InputError, match=message):
        push_study(pairs, stories, server, tmp_path / "m.json", **options)
    assert server.calls == [] and (tmp_path / "m.json").read_text() == before


def test_shared_project_needs_overlap_and_readers_are_checked(study, tmp_path):
    pairs, stories = study
    with pytest.raises(InputError, match="--overlap"):
        push_study(pairs, stories, MemoryServer(), tmp_path / "m.json")
    with pytest.raises(InputError, match="the same reader twice"):
        push_study(pairs, stories, MemoryServer(), tmp_path / "m.json", readers=["ann", "ann"])
    server = MemoryServer()
    result = push_study(pairs, stories, server, tmp_path / "m.json", overlap=3)
    assert server.projects[1]["maximum_annotations"] == 3 and result.manifest.projects[0].reader is None
    assert [t.shown_first for t in result.manifest.projects[0].tasks] == list(
        pairs.sort_values("position", key=lambda s: s.astype(int))["system_a"]
    )


def test_pull_refuses_a_task_whose_left_story_changed(study, tmp_path):
    pairs, stories = study
    server = MemoryServer()
    push_study(pairs, stories, server, tmp_path / "m.json", readers=["ann"], seed=1)
    task = server.tasks[1][0]["data"]
    task["story_left_id"], task["story_right_id"] = task["story_right_id"], task["story_left_id"]
    with pytest.raises(InputError, match="the left story is not the one pushed"):
        pull_study(tmp_path / "m.json", pairs, server)


def test_manifest_never_holds_the_token_and_bad_manifests_are_input_errors(study, tmp_path):
    pairs, stories = study
    push_study(pairs, stories, MemoryServer("http://ls.example:8080"), tmp_path / "m.json", readers=["ann"], seed=1)
    text = (tmp_path / "m.json").read_text()
    assert "token" not in text.lower()
    (tmp_path / "bad.json").write_text(json.dumps({"version": 99}))
    with pytest.raises(InputError, match="not a study manifest"):
        StudyManifest.read(tmp_path / "bad.json")
    with pytest.raises(InputError, match="manifest not found"):
        StudyManifest.read(tmp_path / "missing.json")


def test_cli_without_token_sdk_or_url(tmp_path, monkeypatch, capsys):
    pairs, stories = str(FIXTURE / "out" / "pairs.csv"), str(FIXTURE / "out" / "stories.csv")
    manifest = ["--manifest", str(tmp_path / "m.json")]
    monkeypatch.delenv("JA_NO_TOKEN", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    assert (
        main(
            [
                "labelstudio",
                "push",
                pairs,
                stories,
                "--url",
                "http://127.0.0.1:9",
                "--token-env",
                "JA_NO_TOKEN",
                *manifest,
            ]
        )
        == 2
    )
    assert "JA_NO_TOKEN is not set" in capsys.readouterr().err
    monkeypatch.setenv("JA_NO_TOKEN", "secret-token-value-123")
    assert main(["labelstudio", "push", pairs, stories, "--token-env", "JA_NO_TOKEN", *manifest]) == 2
    assert "no Label Studio server given" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "label_studio_sdk", None)
    assert (
        main(
            [
                "labelstudio",
                "push",
                pairs,
                stories,
                "--url",
                "http://127.0.0.1:9",
                "--token-env",
                "JA_NO_TOKEN",
                *manifest,
            ]
        )
        == 4
    )
    err = capsys.readouterr().err
    assert "judge-transfer-audit[labelstudio]" in err and "secret-token-value-123" not in err
    assert not (tmp_path / "m.json").exists()
