"""The blind study on a Label Studio server: push tasks, pull annotations (label-studio-sdk).

``pip install 'judge-transfer-audit[labelstudio]'``; the SDK is imported only when a server is used.

**Per-reader order.** Label Studio's community edition gives every annotator of a project
the same tasks and cannot assign tasks to people, so a presentation order per reader needs
a project per reader. ``push`` with ``readers`` creates one project per reader ("TITLE ·
READER"), each with that reader's own seeded task order and sides (within each matchup,
half of the pairs show the focal system first), imported in that order with Label Studio's
*sequential* sampling, so each reader sees the order recorded. Without readers it creates
one shared project with pairs.csv's sides and order (``overlap`` annotations per task).

**The manifest** (JSON, beside pairs.csv by default) records the server URL (without any
query string), the seed, and per project its id, reader, and per task the pair, the task
id, the position and the system shown first. It never holds the token. A second ``push``
with the same manifest updates the projects (labelling config, settings) and adds only the
pairs that are not there yet; a task already shown is never changed.

**Pull** exports every project of the manifest as Label Studio's full JSON (one request per
project) and reads it with :func:`judge_transfer_audit.generation.labelstudio.annotations.import_export`: one
row per annotator x pair x question, ``seconds`` from ``lead_time``, the comment, and
``shown_first`` from the task itself. Annotator ids become the users' emails.

The token is read from the environment variable named by ``token_env`` (default
``LABEL_STUDIO_API_KEY``), sent only to the server, and never written or printed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.core.optional import import_optional
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.generation.labelstudio.annotations import HumansImport, import_export, parse_export
from judge_transfer_audit.generation.labelstudio.config import labelling_config
from judge_transfer_audit.generation.labelstudio.tasks import (
    DEFAULT_CRITERIA,
    build_tasks,
    pairs_columns_ok,
    presentation_order,
)
from judge_transfer_audit.generation.providers.http_client import public_url
from judge_transfer_audit.generation.tables import prepare_output, write_text_file

MANIFEST_VERSION = 1
DEFAULT_TOKEN_ENV = "LABEL_STUDIO_API_KEY"
DEFAULT_TITLE = "judge-audit study"
INSTRUCTIONS = (
    "<p>Read the premise and both stories, then answer every question. The stories are shown in an order "
    "chosen for you; nothing tells you who wrote them. Take the time you need; add a comment if you wish.</p>"
)


@dataclass(frozen=True)
class PushedTask:
    """One task as pushed: its pair, its Label Studio id, its place in the reader's order and
    the system whose story is on the left (shown first)."""

    pair_id: str
    task_id: int
    position: int
    shown_first: str
    story_left_id: str


@dataclass(frozen=True)
class StudyProject:
    """A Label Studio project of the study: one per reader, or one shared (``reader`` None)."""

    reader: str | None
    project_id: int
    title: str
    tasks: tuple[PushedTask, ...] = ()


@dataclass(frozen=True)
class StudyManifest:
    """What was pushed where (never the token). Written as JSON by :func:`push_study`."""

    url: str
    title: str
    seed: int
    allow_tie: bool
    criteria: tuple[str, ...]
    projects: tuple[StudyProject, ...]
    version: int = MANIFEST_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"

    def to_frame(self) -> pd.DataFrame:
        """One row per pushed task: reader, project_id, pair_id, task_id, position, shown_first."""
        rows = [
            {"reader": p.reader or "", "project_id": p.project_id, **asdict(t)} for p in self.projects for t in p.tasks
        ]
        return pd.DataFrame(
            rows, columns=["reader", "project_id", "pair_id", "task_id", "position", "shown_first", "story_left_id"]
        )

    @classmethod
    def read(cls, path: str | Path) -> "StudyManifest":
        path = Path(path)
        fix = "give the manifest written by `audit labelstudio push` (or push again)"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(InputProblem(str(path), "manifest not found", fix=fix)) from None
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise InputError(InputProblem(str(path), f"not a readable manifest: {exc}", fix=fix)) from None
        try:
            if raw.get("version") != MANIFEST_VERSION:
                raise ValueError(f"version {raw.get('version')!r}, expected {MANIFEST_VERSION}")
            projects = tuple(
                StudyProject(
                    p["reader"],
                    int(p["project_id"]),
                    str(p["title"]),
                    tuple(
                        PushedTask(
                            str(t["pair_id"]),
                            int(t["task_id"]),
                            int(t["position"]),
                            str(t["shown_first"]),
                            str(t["story_left_id"]),
                        )
                        for t in p["tasks"]
                    ),
                )
                for p in raw["projects"]
            )
            return cls(
                str(raw["url"]),
                str(raw["title"]),
                int(raw["seed"]),
                bool(raw["allow_tie"]),
                tuple(str(c) for c in raw["criteria"]),
                projects,
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(
                InputProblem(str(path), f"not a study manifest ({type(exc).__name__}: {exc})", fix=fix)
            ) from None


@dataclass(frozen=True)
class PushResult:
    """Result of :func:`push_study`.

    Attributes
    ----------
    manifest : StudyManifest
    manifest_path : str
    n_projects_created, n_projects_updated : int
    n_tasks_imported : int
        Tasks added in this push.
    n_tasks_kept : int
        Tasks already on the server (from an earlier push), left as they were.
    """

    manifest: StudyManifest
    manifest_path: str
    n_projects_created: int
    n_projects_updated: int
    n_tasks_imported: int
    n_tasks_kept: int

    def to_frame(self) -> pd.DataFrame:
        return self.manifest.to_frame()

    def __str__(self) -> str:
        projects = ", ".join(
            f"{p.project_id} ({p.reader})" if p.reader else str(p.project_id) for p in self.manifest.projects
        )
        return (
            f"Label Studio at {self.manifest.url}: {self.n_projects_created} project(s) created, "
            f"{self.n_projects_updated} updated "
            f"[{projects}]; {self.n_tasks_imported} task(s) imported, {self.n_tasks_kept} already there; "
            f"manifest -> {self.manifest_path}"
        )


def reader_plan(pairs: pd.DataFrame, reader: str | None, seed: int) -> tuple[list[str], set[str]]:
    """(pair_ids in the reader's order, pair_ids whose ``system_b`` story goes on the left).

    ``reader`` None: pairs.csv's presentation order and sides. Otherwise, within each
    matchup, half of the pairs show the focal system first (the odd one random), assigned
    by a shuffle seeded by (seed, reader, matchup); the order of all pairs is a permutation
    seeded by (seed, reader). Deterministic: the same seed and reader give the same plan.
    """
    pairs = presentation_order(pairs_columns_ok(pairs, "pairs"))
    if reader is None:
        return list(pairs["pair_id"]), set()
    focal = pairs["focal"].astype(str) if "focal" in pairs.columns else pairs["system_a"]
    matchup = pairs["matchup"].astype(str) if "matchup" in pairs.columns else pd.Series("", index=pairs.index)
    flipped: set[str] = set()
    for name in dict.fromkeys(matchup):
        rows = pairs[matchup == name]
        rng = _rng(seed, reader, "sides", name)
        n = len(rows)
        focal_first = np.array([i < math.ceil(n / 2) for i in range(n)])
        if n % 2 == 1 and rng.random() < 0.5:
            focal_first = ~focal_first
        focal_first = rng.permutation(focal_first)
        for (_, row), first in zip(rows.iterrows(), focal_first):
            a_is_focal = row["system_a"] == focal[row.name]
            if bool(first) != bool(a_is_focal):
                flipped.add(row["pair_id"])
    order = list(pairs["pair_id"].to_numpy()[_rng(seed, reader, "order").permutation(len(pairs))])
    return order, flipped


def _rng(seed: int, *parts: str) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join([str(seed), *parts]).encode()).hexdigest()
    return np.random.default_rng(int(digest[:16], 16))


# -- the server ---------------------------------------------------------------------------
class Server:
    """A connection to one Label Studio server through label-studio-sdk, with our errors.

    Every SDK failure becomes an :class:`InputError` when the user can fix it (a token the
    server refuses, a project id it does not know) or a :class:`ProviderError` (unreachable,
    5xx); the token is never part of a message.
    """

    def __init__(self, url: str, token_env: str = DEFAULT_TOKEN_ENV, *, timeout_s: float = 60.0):
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InputError(
                InputProblem(
                    "--url",
                    "the Label Studio URL must start with http:// or https://",
                    value=str(url),
                    fix="e.g. --url http://localhost:8080 (or set LABEL_STUDIO_URL)",
                )
            )
        token = os.environ.get(token_env or "")
        if not token:
            raise InputError(
                InputProblem(
                    "--token-env",
                    f"the environment variable {token_env} is not set",
                    value=token_env,
                    fix=f"export {token_env}=<your Label Studio access token> (Account & Settings)",
                )
            )
        self.url = url.rstrip("/")
        self.public_url = public_url(self.url)
        self.token_env = token_env
        self._token = token
        sdk = import_optional("label_studio_sdk", "running the human study on a Label Studio server")
        self._api_error = import_optional("label_studio_sdk.core.api_error").ApiError
        self._httpx = import_optional("httpx", "talking to the Label Studio server")
        with self.errors("connecting"):
            self.client = sdk.LabelStudio(base_url=self.url, api_key=token, timeout=timeout_s)

    def redact(self, text: str) -> str:
        return text.replace(self._token, "[REDACTED]") if self._token else text

    @contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except self._api_error as exc:
            status = getattr(exc, "status_code", None)
            body = self.redact(str(getattr(exc, "body", "")))[:300]
            if status in (401, 403):
                raise InputError(
                    InputProblem(
                        self.public_url,
                        f"{doing}: the server refused the token (HTTP {status})",
                        column=self.token_env,
                        fix=f"check the token in {self.token_env} (Account & Settings -> "
                        "Access Token) and that legacy or personal tokens are enabled for your organization",
                    )
                ) from None
            if status == 404:
                raise InputError(
                    InputProblem(
                        self.public_url,
                        f"{doing}: not found on this server (HTTP 404): {body}",
                        fix="check --url and the manifest (was the project deleted?)",
                    )
                ) from None
            if status is not None and 400 <= status < 500:
                raise InputError(
                    InputProblem(
                        self.public_url,
                        f"{doing}: the server refused the request (HTTP {status}): {body}",
                        fix="see the server's message",
                    )
                ) from None
            raise ProviderError(f"Label Studio at {self.public_url}: {doing} failed (HTTP {status}): {body}") from None
        except self._httpx.HTTPError as exc:
            raise ProviderError(
                f"Label Studio at {self.public_url}: {doing} failed: {self.redact(str(exc)) or type(exc).__name__}. "
                "Check that the server is running and --url is right."
            ) from None

    # -- the few calls we need ------------------------------------------------------------
    def whoami(self) -> Any:
        with self.errors("checking the token"):
            return self.client.users.whoami()

    def create_project(self, **settings: Any) -> int:
        with self.errors("creating a project"):
            return int(self.client.projects.create(**settings).id)

    def update_project(self, project_id: int, **settings: Any) -> None:
        with self.errors(f"updating project {project_id}"):
            self.client.projects.update(project_id, **settings)

    def get_project(self, project_id: int) -> Any:
        with self.errors(f"reading project {project_id}"):
            return self.client.projects.get(project_id)

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> None:
        if not tasks:
            return
        with self.errors(f"importing {len(tasks)} task(s) into project {project_id}"):
            self.client.projects.import_tasks(project_id, request=tasks, return_task_ids=True)

    def task_ids(self, project_id: int) -> dict[str, tuple[int, str]]:
        """pair_id -> (task id, story_left_id) of the project's tasks."""
        out: dict[str, tuple[int, str]] = {}
        with self.errors(f"listing the tasks of project {project_id}"):
            for task in self.client.tasks.list(project=project_id, fields="all"):
                data = task.data or {}
                pair_id = str(data.get("pair_id", ""))
                if pair_id:
                    out.setdefault(pair_id, (int(task.id), str(data.get("story_left_id", ""))))
        return out

    def export(self, project_id: int) -> list[dict[str, Any]]:
        """The project's full JSON export (all tasks, with annotations)."""
        with self.errors(f"exporting project {project_id}"):
            raw = b"".join(
                self.client.projects.exports.download_sync(project_id, export_type="JSON", download_all_tasks=True)
            )
        return parse_export(raw, f"{self.public_url} project {project_id} export")

    def user_names(self) -> dict[str, str]:
        """User id -> email (else username) of the organization's users."""
        with self.errors("listing users"):
            users = self.client.users.list()
        return {str(u.id): str(u.email or u.username or u.id) for u in users}


# -- push -------------------------------------------------------------------------------------
def push_study(
    pairs: pd.DataFrame,
    stories: pd.DataFrame,
    server: Server,
    manifest_path: str | Path,
    *,
    title: str | None = None,
    readers: Sequence[str] = (),
    seed: int | None = None,
    criteria: Sequence[str] = DEFAULT_CRITERIA,
    definitions: dict[str, str] | None = None,
    allow_tie: bool = False,
    overlap: int | None = None,
    inputs: Iterable[str | Path | None] = (),
) -> PushResult:
    """Create (or update) the study's project(s) on ``server`` and write the manifest.

    Parameters
    ----------
    pairs, stories : pandas.DataFrame
        pairs.csv and stories.csv of ``audit generate``.
    server : Server
    manifest_path : str or Path
        The manifest to write (read first when it exists: a second push updates).
    title : str, optional
        Project title (a reader's project is "TITLE · READER"); default the manifest's,
        else "judge-audit study".
    readers : sequence of str
        One project per reader, each with its own seeded order and sides. Empty: one shared
        project with pairs.csv's order and sides.
    seed : int, optional
        Seeds the per-reader orders; default the manifest's, else drawn and recorded.
    criteria, definitions, allow_tie
        The labelling config (see :func:`judge_transfer_audit.generation.labelstudio.config.labelling_config`).
    overlap : int, optional
        Annotations per task in a shared project (required without readers; readers'
        projects take 1).
    inputs : paths
        Input files (pairs, stories, rubric) the manifest may not replace.

    Raises
    ------
    InputError
        A manifest from another server, URL or study mode, a seed different from the one
        recorded, a shared project without ``overlap``, a duplicated reader, missing stories.
    ProviderError
        The server failed.
    """
    manifest_path = Path(manifest_path)
    inputs = list(inputs)
    prepare_output(manifest_path, "manifest", inputs=inputs)
    readers = [str(r).strip() for r in readers]
    problems = []
    if any(not r for r in readers):
        problems.append(
            InputProblem("--reader", "a reader name is empty", fix="give each --reader a name (e.g. an email)")
        )
    for dup in sorted({r for r in readers if readers.count(r) > 1}):
        problems.append(InputProblem("--reader", "the same reader twice", value=dup, fix="name each reader once"))
    if not readers and overlap is None:
        problems.append(
            InputProblem(
                "--overlap",
                "a shared project needs the number of annotations per task",
                fix="give --overlap N (readers per pair), or one --reader per person for per-reader orders",
            )
        )
    if overlap is not None and (isinstance(overlap, bool) or not isinstance(overlap, int) or not 1 <= overlap <= 1000):
        problems.append(InputProblem("--overlap", "must be an integer in [1, 1000]", value=str(overlap)))
    if problems:
        raise InputError(problems)
    previous = StudyManifest.read(manifest_path) if manifest_path.exists() else None
    if previous is not None:
        problems = []
        if previous.url != server.public_url:
            problems.append(
                InputProblem(
                    str(manifest_path),
                    f"this manifest is for the server at {previous.url}, not {server.public_url}",
                    fix="push with the same --url, or write a new --manifest",
                )
            )
        shared_before = any(p.reader is None for p in previous.projects)
        if previous.projects and shared_before != (not readers):
            problems.append(
                InputProblem(
                    str(manifest_path),
                    "this manifest holds a " + ("shared project" if shared_before else "per-reader study"),
                    fix="push the same way as before, or write a new --manifest",
                )
            )
        if seed is not None and seed != previous.seed:
            problems.append(
                InputProblem(
                    str(manifest_path),
                    f"the study was pushed with seed {previous.seed}, not {seed}",
                    fix="push without --seed (or with the recorded one), or write a new --manifest",
                )
            )
        if problems:
            raise InputError(problems)
        seed = previous.seed
    title = title or (previous.title if previous is not None else DEFAULT_TITLE)
    if seed is None:
        seed = int(resolve_rng(None)[0].integers(0, 2**32))
    server.whoami()  # a refused token fails here, before anything is created
    pairs = pairs_columns_ok(pairs, "pairs")
    by_pair = pairs.set_index("pair_id")
    config = labelling_config(list(criteria), definitions=definitions, allow_tie=allow_tie)
    known = {p.reader: p for p in (previous.projects if previous else ())}
    projects: list[StudyProject] = [
        p for p in (previous.projects if previous else ()) if p.reader not in readers and readers
    ]
    n_created = n_updated = n_imported = n_kept = 0
    for reader in readers or [None]:
        order, flipped = reader_plan(pairs, reader, seed)
        tasks = build_tasks(pairs, stories, flipped=flipped, order=order)
        project_title = f"{title} · {reader}" if reader else title
        settings = dict(
            title=project_title[:50],
            label_config=config,
            description=f"judge-audit blind pairwise study ({len(tasks)} pairs)",
            expert_instruction=INSTRUCTIONS,
            show_instruction=True,
            sampling="Sequential sampling",
            maximum_annotations=1 if reader else int(overlap),
            show_skip_button=True,
            enable_empty_annotation=False,
        )
        if reader in known:
            project_id = known[reader].project_id
            server.get_project(project_id)
            server.update_project(project_id, **settings)
            n_updated += 1
        else:
            project_id = server.create_project(**settings)
            n_created += 1
        present = server.task_ids(project_id)
        new = [t for t in tasks if t["data"]["pair_id"] not in present]
        n_kept += len(tasks) - len(new)
        server.import_tasks(project_id, new)
        n_imported += len(new)
        on_server = server.task_ids(project_id)
        recorded = []
        for position, task in enumerate(sorted(on_server.items(), key=lambda kv: kv[1][0]), start=1):
            pair_id, (task_id, left_id) = task
            if pair_id not in by_pair.index:
                continue  # a task of a pair no longer in pairs.csv: left on the server, not recorded
            row = by_pair.loc[pair_id]
            left = (
                row["system_b"] if "story_b_id" in row.index and left_id == str(row["story_b_id"]) else row["system_a"]
            )
            recorded.append(PushedTask(pair_id, task_id, position, str(left), left_id))
        projects.append(StudyProject(reader, project_id, project_title, tuple(recorded)))
    manifest = StudyManifest(server.public_url, title, int(seed), bool(allow_tie), tuple(criteria), tuple(projects))
    write_text_file(manifest_path, manifest.to_json(), inputs=inputs)
    return PushResult(manifest, str(manifest_path), n_created, n_updated, n_imported, n_kept)


# -- pull -------------------------------------------------------------------------------------
def pull_study(
    manifest_path: str | Path,
    pairs: pd.DataFrame,
    server: Server,
    out_path: str | Path | None = None,
    *,
    anonymise_readers: bool = False,
    inputs: Iterable[str | Path | None] = (),
) -> HumansImport:
    """Export every project of the manifest and turn the annotations into humans.csv rows.

    Parameters
    ----------
    manifest_path : str or Path
        Written by :func:`push_study`.
    pairs : pandas.DataFrame
        The pairs.csv that was pushed.
    server : Server
    out_path : str or Path, optional
        humans.csv to write.
    anonymise_readers : bool
        Annotators become ``reader-01``, ``reader-02``... (else their emails).
    inputs : paths
        Input files humans.csv may not replace (the manifest is always one).

    Raises
    ------
    InputError
        A manifest from another server; a task whose left story differs from the one
        recorded (the project was edited); anything :func:`import_export` refuses.
    """
    manifest = StudyManifest.read(manifest_path)
    if manifest.url != server.public_url:
        raise InputError(
            InputProblem(
                str(manifest_path),
                f"this manifest is for the server at {manifest.url}, not {server.public_url}",
                fix="pull with the URL the study was pushed to",
            )
        )
    tasks: list[dict[str, Any]] = []
    problems = []
    for project in manifest.projects:
        recorded = {t.task_id: t for t in project.tasks}
        for task in server.export(project.project_id):
            data = task.get("data") if isinstance(task.get("data"), dict) else {}
            mine = recorded.get(task.get("id"))
            if mine is not None and str(data.get("story_left_id", "")) != mine.story_left_id:
                problems.append(
                    InputProblem(
                        str(manifest_path),
                        f"project {project.project_id}, task {mine.task_id}: the left story is not the one pushed",
                        column="story_left_id",
                        value=str(data.get("story_left_id")),
                        fix="the task was edited in Label Studio; its annotations cannot be mapped to systems safely",
                    )
                )
            tasks.append(task)
    if problems:
        raise InputError(problems)
    return import_export(
        tasks,
        pairs,
        out_path,
        anonymise_readers=anonymise_readers,
        readers=server.user_names(),
        file=f"{server.public_url} (manifest {manifest_path})",
        inputs=[*inputs, manifest_path],
    )


__all__ = [
    "PushResult",
    "PushedTask",
    "Server",
    "StudyManifest",
    "StudyProject",
    "pull_study",
    "push_study",
    "reader_plan",
]
