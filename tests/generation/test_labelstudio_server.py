"""The study on a real Label Studio server started by the test (marker ``server``).

Needs ``LABEL_STUDIO_BIN`` (the ``label-studio`` executable of its own virtual environment,
set by .ci/run) and ``label-studio-sdk`` importable; skips with the reason otherwise.

The test starts Label Studio on 127.0.0.1 with a fresh SQLite database in a temporary
folder and an admin user and legacy token it makes up; pushes the fixture's study with
three readers (one project each); creates three annotator users and posts their
annotations through the API; pulls; checks humans.csv against what was clicked; runs
`audit run` on the pulled votes; and greps every file written and everything printed for
the token. The server is stopped at the end, also when the test fails. Starting has a
deadline, every SDK call the SDK's 60 s timeout; the timings are printed (``pytest -rP``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from tests.generation.conftest import FAST
from tests.support.openai_server import Reply, ScriptedServer

pytestmark = pytest.mark.server

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
CRITERIA = ["authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity"]
READERS = {"ann@example.org": 0.8, "bob@example.org": 0.5, "cy@example.org": 0.2}  # P(prefers the focal system)
START_DEADLINE_S = 420  # a fresh database runs Label Studio's migrations (about 2 minutes here)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _binary() -> str:
    binary = os.environ.get("LABEL_STUDIO_BIN", "")
    if not binary or not Path(binary).is_file():
        pytest.skip(
            "LABEL_STUDIO_BIN is not set to a label-studio executable (.ci/run installs Label Studio in its own venv)"
        )
    return binary


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    """A Label Studio server on 127.0.0.1 with a made-up admin and token; stopped afterwards."""
    binary = _binary()
    pytest.importorskip(
        "label_studio_sdk", reason="label-studio-sdk is not installed (pip install 'judge-transfer-audit[labelstudio]')"
    )
    data = tmp_path_factory.mktemp("label-studio-data")
    port = _free_port()
    token = secrets.token_hex(20)
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data),
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "DJANGO_DB": "sqlite",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    log = open(data / "server.log", "wb")
    start = time.monotonic()
    process = subprocess.Popen(
        [
            binary,
            "start",
            "--data-dir",
            str(data),
            "--port",
            str(port),
            "--internal-host",
            "127.0.0.1",
            "--no-browser",
            "--username",
            "admin@example.org",
            "--password",
            secrets.token_hex(8),
            "--user-token",
            token,
            "--enable-legacy-api-token",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"Label Studio exited with {process.returncode}:\n{(data / 'server.log').read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - start > START_DEADLINE_S:
                pytest.fail(
                    f"Label Studio not up after {START_DEADLINE_S}s:\n{(data / 'server.log').read_text()[-3000:]}"
                )
            time.sleep(1)
        started_s = time.monotonic() - start
        yield {"url": url, "token": token, "started_s": started_s, "log": data / "server.log"}
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        log.close()


def _annotate(client, project_id: int, user_id: int, reader: str, p_focal: float, pairs: pd.DataFrame, rng) -> dict:
    """Post one annotation per task of the project as ``user_id``; return what was clicked."""
    by_pair = pairs.set_index("pair_id")
    clicked = {}
    tasks = sorted(client.tasks.list(project=project_id, fields="all"), key=lambda t: t.id)
    for k, task in enumerate(tasks):
        pair = by_pair.loc[task.data["pair_id"]]
        left_is_focal = (task.data["story_left_id"] == pair["story_a_id"]) == (pair["system_a"] == pair["focal"])
        if reader == "cy@example.org" and k == 0:  # cy skips the first task
            client.annotations.create(id=task.id, result=[], was_cancelled=True, completed_by=user_id, lead_time=3.0)
            continue
        result, sides = [], {}
        for name in CRITERIA + ["overall"]:
            focal = rng.random() < p_focal
            side = "left" if focal == left_is_focal else "right"
            sides[name] = side
            result.append({"from_name": name, "to_name": "premise", "type": "choices", "value": {"choices": [side]}})
        comment = f"{reader} on task {k}" if k % 2 == 0 else ""
        if comment:
            result.append(
                {"from_name": "comment", "to_name": "premise", "type": "textarea", "value": {"text": [comment]}}
            )
        lead_time = float(np.round(rng.uniform(30, 300), 3))
        client.annotations.create(id=task.id, result=result, lead_time=lead_time, completed_by=user_id)
        clicked[task.data["pair_id"]] = {
            "sides": sides,
            "seconds": lead_time,
            "comment": comment,
            "left_story": task.data["story_left_id"],
        }
    return clicked


def test_push_annotate_pull_audit_on_a_real_server(label_studio, tmp_path, monkeypatch, capsys):
    from label_studio_sdk import LabelStudio

    timings = {"server start": label_studio["started_s"]}
    token = label_studio["token"]
    monkeypatch.setenv("JA_LS_TOKEN", token)
    study = tmp_path / "study"
    study.mkdir()
    for name in ("pairs.csv", "stories.csv"):
        shutil.copy(FIXTURE / "out" / name, study / name)
    pairs = pd.read_csv(study / "pairs.csv", dtype=str)
    url = label_studio["url"]
    common = ["--url", url, "--token-env", "JA_LS_TOKEN"]

    t = time.monotonic()
    readers = [x for r in READERS for x in ("--reader", r)]
    assert (
        main(
            [
                "labelstudio",
                "push",
                str(study / "pairs.csv"),
                str(study / "stories.csv"),
                *common,
                *readers,
                "--seed",
                "11",
                "--title",
                "Stories",
            ]
        )
        == 0
    )
    timings["push"] = time.monotonic() - t
    manifest = json.loads((study / "labelstudio.json").read_text())
    assert [p["reader"] for p in manifest["projects"]] == list(READERS)
    orders = [[t["pair_id"] for t in p["tasks"]] for p in manifest["projects"]]
    assert all(sorted(o) == sorted(pairs["pair_id"]) for o in orders)
    assert len({tuple(o) for o in orders}) == 3  # each reader has an order of their own
    for project in manifest["projects"]:  # sides balanced per reader: half the pairs show the focal system first
        firsts = pd.Series({t["pair_id"]: t["shown_first"] for t in project["tasks"]})
        assert (firsts == pairs.set_index("pair_id")["focal"].reindex(firsts.index)).sum() == len(pairs) // 2
    assert main(["labelstudio", "push", str(study / "pairs.csv"), str(study / "stories.csv"), *common, *readers]) == 0
    assert "0 task(s) imported, 18 already there" in capsys.readouterr().out  # a second push updates, adds nothing
    assert json.loads((study / "labelstudio.json").read_text()) == manifest

    t = time.monotonic()
    client = LabelStudio(base_url=url, api_key=token)
    rng = np.random.default_rng(5)
    clicked = {}
    for project, (reader, p_focal) in zip(manifest["projects"], READERS.items()):
        user = client.users.create(username=reader.split("@")[0], email=reader)
        clicked[reader] = _annotate(client, project["project_id"], user.id, reader, p_focal, pairs, rng)
        config = client.projects.get(project["project_id"]).label_config
        assert "reasoner" not in config and "baseline" not in config
    timings["annotate (3 readers)"] = time.monotonic() - t

    t = time.monotonic()
    assert (
        main(["labelstudio", "pull", "--pairs", str(study / "pairs.csv"), "-o", str(study / "humans.csv"), *common])
        == 0
    )
    timings["pull"] = time.monotonic() - t
    pulled = capsys.readouterr().out
    assert "1 cancelled" in pulled and "17 annotations" in pulled
    humans = pd.read_csv(study / "humans.csv", keep_default_na=False)
    assert set(humans["reader_id"]) == set(READERS)
    assert len(humans) == 17 * 6
    by_pair = pairs.set_index("pair_id")
    for row in humans.itertuples():
        mine = clicked[row.reader_id][row.pair_id]
        pair = by_pair.loc[row.pair_id]
        left = pair["system_a"] if mine["left_story"] == pair["story_a_id"] else pair["system_b"]
        right = pair["system_b"] if left == pair["system_a"] else pair["system_a"]
        assert row.shown_first == left
        assert row.choice == (left if mine["sides"][row.criterion] == "left" else right)
        assert row.seconds == mine["seconds"]
        assert row.comment == (mine["comment"] if row.criterion == "overall" else "")
    recorded = {(p["reader"], t["pair_id"]): t["shown_first"] for p in manifest["projects"] for t in p["tasks"]}
    assert all(recorded[(r.reader_id, r.pair_id)] == r.shown_first for r in humans.itertuples())

    # a judge for the same stories (scripted), then the audit on the pulled votes
    with ScriptedServer(lifetime_s=120) as judge_server:
        judge_server.responder = lambda body: Reply(
            json.dumps({c: 2 + len(body["messages"][1]["content"]) % 3 for c in CRITERIA})
        )
        options = "\n".join(f"{k} = {json.dumps(v)}" for k, v in FAST.items())
        (tmp_path / "rubric.toml").write_text(
            f'[judge.provider]\nprovider = "openai"\nmodel = "judge"\nbase_url = "{judge_server.url}"\n{options}\n'
        )
        assert (
            main(
                [
                    "score",
                    str(study / "stories.csv"),
                    "--rubric",
                    str(tmp_path / "rubric.toml"),
                    "-o",
                    str(study / "judge.csv"),
                ]
            )
            == 0
        )
    t = time.monotonic()
    code = main(
        [
            "run",
            str(study / "judge.csv"),
            str(study / "humans.csv"),
            "--pairs",
            str(study / "pairs.csv"),
            "--out",
            str(tmp_path / "audit-out"),
            "--no-uncertainty",
            "-q",
        ]
    )
    timings["audit run"] = time.monotonic() - t
    assert code == 0
    result = json.loads((tmp_path / "audit-out" / "result.json").read_text())
    assert result["status"] in (
        "PASS",
        "WARN",
        "FAIL",
        "INCONCLUSIVE",
        "INSUFFICIENT",
        "ERROR",
    )  # any decision: the point is the round trip

    # the token is nowhere but in the requests
    printed = capsys.readouterr()
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert token not in path.read_text(encoding="utf-8", errors="replace"), path
    assert token not in printed.out and token not in printed.err
    # shown by `pytest -rP` (as .ci/run runs it)
    print("Label Studio server test timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))


def test_a_refused_token_is_an_input_error(label_studio, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JA_LS_BAD", "not-the-token-" + "0" * 26)
    code = main(
        [
            "labelstudio",
            "push",
            str(FIXTURE / "out" / "pairs.csv"),
            str(FIXTURE / "out" / "stories.csv"),
            "--url",
            label_studio["url"],
            "--token-env",
            "JA_LS_BAD",
            "--reader",
            "x",
            "--manifest",
            str(tmp_path / "m.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "refused the token" in err and "JA_LS_BAD" in err and "not-the-token" not in err
    assert not (tmp_path / "m.json").exists()
