"""A Label Studio JSON export (a file, or pulled from a server) -> humans.csv.

The export is a list of tasks, each with ``data`` (the task as pushed or exported) and
``annotations[]``: ``completed_by`` (a user id or a user object), ``lead_time`` (seconds),
``was_cancelled``, timestamps and ``result[]`` entries of ``type`` ``"choices"``
(``from_name`` = the criterion, ``value.choices`` = the side), ``"pairwise"``
(``value.selected``) and ``"textarea"`` (the comment). Each side maps back to a system
through pairs.csv and the task's ``story_left_id`` (the left story may be either system's:
a per-reader order flips some).

Everything the export holds that does not fit (a value of the wrong type, a duration that
is not a number, two different answers to one question in one annotation) is an input
error naming the task, the annotation and the key; nothing is guessed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.generation.labelstudio.config import LEFT_VALUES, OVERALL, RIGHT_VALUES, TIE_VALUES
from judge_transfer_audit.generation.labelstudio.tasks import pairs_columns_ok
from judge_transfer_audit.generation.tables import write_csv
from judge_transfer_audit.inputs.layout import CONTROL

HUMANS_COLUMNS = ["pair_id", "reader_id", "criterion", "choice", "seconds", "comment", "shown_first"]
_EXPORT_FIX = "use Label Studio's full JSON export (Export -> JSON), unedited"


@dataclass(frozen=True)
class HumansImport:
    """Result of :func:`import_export`.

    Attributes
    ----------
    humans : DataFrame
        humans.csv rows: pair_id, reader_id, criterion, choice (a system name or "tie"),
        seconds, comment (on the ``overall`` row, else the first row of the annotation),
        shown_first (the system whose story was on the left in that reader's task).
    n_tasks, n_annotations : int
        Tasks in the export; annotations read (cancelled ones excluded).
    n_cancelled : int
        Annotations marked ``was_cancelled`` (skipped by the annotator): no rows.
    n_replaced : int
        Older annotations of the same task by the same reader, replaced by the latest.
    n_unanswered : int
        (annotation, question) pairs with no choice: no row, counted.
    n_tasks_without_annotation : int
    """

    humans: pd.DataFrame
    n_tasks: int
    n_annotations: int
    n_cancelled: int
    n_replaced: int
    n_unanswered: int
    n_tasks_without_annotation: int

    def to_frame(self) -> pd.DataFrame:
        """The humans.csv rows (a copy)."""
        return self.humans.copy()

    def __str__(self) -> str:
        return (
            f"{len(self.humans)} votes from {self.humans['reader_id'].nunique()} readers on {self.n_tasks} tasks "
            f"({self.n_annotations} annotations; {self.n_cancelled} cancelled, {self.n_replaced} replaced by a later "
            "one, "
            f"{self.n_unanswered} unanswered questions, {self.n_tasks_without_annotation} tasks never annotated)"
        )


def parse_export(raw: bytes | str, file: str) -> list[dict[str, Any]]:
    """Parse the text of a JSON export into its list of tasks (shape checked, not content)."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            InputProblem(file, f"not a JSON file: {exc}", fix="export the project from Label Studio as JSON")
        ) from None
    except RecursionError:
        raise InputError(
            InputProblem(file, "the JSON is nested too deeply to be a Label Studio export", fix=_EXPORT_FIX)
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise InputError(InputProblem(file, f"not a readable JSON file: {exc}", fix=_EXPORT_FIX)) from None
    if not isinstance(data, list) or (data and not all(isinstance(t, dict) for t in data)):
        raise InputError(
            InputProblem(
                file, "expected a JSON list of tasks", fix="use Label Studio's JSON export (not JSON-MIN, CSV or TSV)"
            )
        )
    if data and not any("annotations" in t for t in data):
        raise InputError(
            InputProblem(
                file,
                "no task has an 'annotations' field",
                fix="use Label Studio's full JSON export (JSON-MIN drops it)",
            )
        )
    return data


def read_export(path: str | Path) -> list[dict[str, Any]]:
    """Read a Label Studio JSON export file (see :func:`parse_export`)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(InputProblem(str(path), "export file not found", fix="check the path")) from None
    return parse_export(raw, str(path))


def _reader(value: Any) -> str | None:
    """The reader id of ``completed_by``: a user id, or a user object's email/id/username.
    None when it is missing or of a type no export writes."""
    if isinstance(value, dict):
        for key in ("email", "id", "username"):
            if (
                isinstance(value.get(key), (str, int))
                and not isinstance(value.get(key), bool)
                and str(value[key]) != ""
            ):
                return str(value[key])
        return None
    if isinstance(value, bool) or value is None or not isinstance(value, (str, int)):
        return None
    return str(value) or None


def _seconds(value: Any) -> float | None:
    """``lead_time`` in seconds (a number or a numeric string); None when it is not one."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and number >= 0 else None


class _Problems:
    """Collects problems about one export, each naming the task and annotation."""

    def __init__(self, file: str):
        self.file = file
        self.items: list[InputProblem] = []

    def add(self, where: str, message: str, *, key: str, value: Any = None, fix: str = _EXPORT_FIX) -> None:
        shown = None if value is None else (value if isinstance(value, str) else json.dumps(value, default=str)[:80])
        self.items.append(InputProblem(self.file, f"{where}: {message}", column=key, value=shown, fix=fix))


def _side(raw: str) -> str | None:
    low = raw.strip().lower()
    if low in LEFT_VALUES:
        return "left"
    if low in RIGHT_VALUES:
        return "right"
    if low in TIE_VALUES:
        return "tie"
    return None


def _answers(annotation: dict[str, Any], where: str, problems: _Problems) -> tuple[dict[str, str], str]:
    """({question: "left"/"right"/"tie"}, comment) of one annotation; problems recorded."""
    results = annotation.get("result")
    if results is None:
        results = []
    if not isinstance(results, list):
        problems.add(where, "'result' is not a list", key="result", value=results)
        return {}, ""
    answers: dict[str, str] = {}
    comments: list[str] = []
    for k, item in enumerate(results):
        key = f"result[{k}]"
        if not isinstance(item, dict):
            problems.add(where, "a result item is not an object", key=key, value=item)
            continue
        kind = item.get("type")
        name = item.get("from_name")
        value = item.get("value")
        if kind not in ("choices", "pairwise", "textarea"):
            continue  # other controls (ratings, labels...) are not part of the study
        if not isinstance(name, str) or not name:
            problems.add(where, "a result item has no from_name (the question)", key=f"{key}.from_name", value=name)
            continue
        if not isinstance(value, dict):
            problems.add(where, f"the value of '{name}' is not an object", key=f"{key}.value", value=value)
            continue
        if kind == "textarea":
            text = value.get("text")
            parts = [text] if isinstance(text, str) else text
            if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
                problems.add(
                    where, f"the text of '{name}' is not a list of strings", key=f"{key}.value.text", value=text
                )
                continue
            comments.extend(parts)
            continue
        if kind == "pairwise":
            picked = value.get("selected")
            picked = [picked] if isinstance(picked, str) else picked
            field = "selected"
        else:
            picked = value.get("choices")
            field = "choices"
        if picked is None or picked == []:
            continue  # left unanswered: counted by the caller
        if not isinstance(picked, list) or not all(isinstance(p, str) for p in picked):
            problems.add(
                where, f"'{name}': value.{field} is not a list of strings", key=f"{key}.value.{field}", value=picked
            )
            continue
        if len(picked) > 1:
            problems.add(
                where,
                f"'{name}': more than one choice",
                key=f"{key}.value.{field}",
                value=picked,
                fix="use the exported config (single choice per question) and correct the annotation in Label Studio",
            )
            continue
        side = _side(picked[0])
        if side is None:
            problems.add(
                where,
                f"unknown choice for '{name}'",
                key=f"{key}.value.{field}",
                value=picked[0],
                fix="choices must be left/right (the aliases of the exported config), A/B, or tie",
            )
            continue
        if name in answers and answers[name] != side:
            problems.add(
                where,
                f"two different answers to '{name}' in one annotation ({answers[name]} and {side})",
                key=f"{key}.value.{field}",
                value=picked[0],
                fix="keep one answer per question: correct the annotation in Label Studio and export again",
            )
            continue
        answers[name] = side
    return answers, "\n".join(comments).strip()


def import_export(
    export: str | Path | list[dict[str, Any]],
    pairs: pd.DataFrame,
    out_path: str | Path | None = None,
    *,
    anonymise_readers: bool = False,
    readers: dict[str, str] | None = None,
    file: str | None = None,
    inputs: Iterable[str | Path | None] = (),
) -> HumansImport:
    """Turn a Label Studio JSON export into humans.csv rows.

    ``completed_by`` (a user id, or a user object: its email, else id) -> ``reader_id``;
    ``lead_time`` -> ``seconds``; the chosen side -> the system through pairs.csv and the
    task's ``story_left_id``; ``shown_first`` = the system shown on the left. With
    ``anonymise_readers`` readers become ``reader-01``, ``reader-02``... in order of first
    appearance.

    Parameters
    ----------
    export : str, Path or list of dict
        A Label Studio *Export -> JSON* file (the full export; JSON-MIN is refused), or its
        parsed list of tasks.
    pairs : pandas.DataFrame
        The pairs.csv the tasks were made from (maps left/right to systems).
    out_path : str or Path, optional
        Where to write humans.csv; None writes nothing.
    anonymise_readers : bool
        Replace annotator ids by ``reader-NN``.
    readers : dict of str to str, optional
        User id -> the name to record (e.g. ids to emails, from the server's user list).
    file : str, optional
        How messages name the export (default: its path, or "export").
    inputs : paths
        Input files humans.csv may not replace (the export file itself is always one).

    Returns
    -------
    HumansImport
        The rows and the counts of everything left out (cancelled, replaced, unanswered,
        never annotated).

    Raises
    ------
    InputError
        Unknown pair ids, a task whose left story is neither story of the pair (pairs.csv
        from another run), unknown choice values, values of the wrong type, a ``lead_time``
        that is not a number of seconds, two different answers to one question in one
        annotation. Every problem names the task, the annotation and the key.
    """
    file = file or (str(export) if not isinstance(export, list) else "export")
    tasks = read_export(export) if not isinstance(export, list) else export
    pairs = pairs_columns_ok(pairs, "pairs").set_index("pair_id", drop=False)
    readers = readers or {}
    problems = _Problems(file)
    latest: dict[tuple[str, str], tuple[tuple, dict[str, Any], str, str]] = {}
    n_cancelled = n_replaced = n_annotations = n_without = 0
    for t_index, task in enumerate(tasks):
        where = f"task {task.get('id', t_index) if isinstance(task, dict) else t_index}"
        if not isinstance(task, dict):
            problems.add(where, "a task is not an object", key=f"[{t_index}]", value=task)
            continue
        data = task.get("data")
        if not isinstance(data, dict):
            problems.add(where, "'data' is not an object", key="data", value=data)
            continue
        pair_id = str(data.get("pair_id", ""))
        if pair_id not in pairs.index:
            problems.add(
                where,
                "pair_id not in pairs.csv",
                key="data.pair_id",
                value=pair_id,
                fix="import with the pairs.csv the tasks were made from",
            )
            continue
        left = _left_system(pairs.loc[pair_id], data)
        if left is None:
            problems.add(
                where,
                "the left story is neither story of the pair",
                key="data.story_left_id",
                value=str(data.get("story_left_id")),
                fix="use the pairs.csv of the same `audit generate` run",
            )
            continue
        annotations = task.get("annotations")
        if annotations is None:
            annotations = []
        if not isinstance(annotations, list):
            problems.add(where, "'annotations' is not a list", key="annotations", value=annotations)
            continue
        live = 0
        for a_index, annotation in enumerate(annotations):
            if not isinstance(annotation, dict):
                problems.add(
                    where, f"annotation {a_index} is not an object", key=f"annotations[{a_index}]", value=annotation
                )
                continue
            a_where = f"{where}, annotation {annotation.get('id', a_index)}"
            if annotation.get("was_cancelled"):
                n_cancelled += 1
                continue
            live += 1
            n_annotations += 1
            reader = _reader(annotation.get("completed_by"))
            if reader is None:
                problems.add(
                    a_where,
                    "no completed_by (the annotator)",
                    key="completed_by",
                    value=annotation.get("completed_by"),
                    fix="export from Label Studio with annotator ids (the full JSON export)",
                )
                continue
            reader = readers.get(reader, reader)
            if not anonymise_readers and CONTROL.search(reader):
                problems.add(
                    a_where,
                    "the annotator's name holds a control character (humans.csv would carry it as reader_id, "
                    "and `audit run` refuses it)",
                    key="completed_by",
                    value=reader,
                    fix="correct the annotator's e-mail in Label Studio, or import with --anonymise-readers",
                )
                continue
            stamp = (
                str(annotation.get("updated_at") or annotation.get("created_at") or ""),
                str(annotation.get("id", "")),
            )
            key = (pair_id, reader)
            if key in latest:
                n_replaced += 1
                if latest[key][0] >= stamp:
                    continue
            latest[key] = (stamp, annotation, a_where, left)
        if not live:
            n_without += 1
    rows: list[dict[str, Any]] = []
    answered: list[set[str]] = []
    criteria_seen: dict[str, None] = {}
    for (pair_id, reader), (_, annotation, where, left) in latest.items():
        pair = pairs.loc[pair_id]
        right = str(pair["system_b"]) if left == str(pair["system_a"]) else str(pair["system_a"])
        seconds = _seconds(annotation.get("lead_time"))
        if seconds is None:
            problems.add(
                where,
                "lead_time is not a number of seconds",
                key="lead_time",
                value=annotation.get("lead_time"),
                fix="Label Studio records lead_time in seconds (a number >= 0): correct or remove the value",
            )
            continue
        answers, comment = _answers(annotation, where, problems)
        system_of = {"left": left, "right": right, "tie": "tie"}
        mine = []
        for name, side in answers.items():
            mine.append(
                {
                    "pair_id": pair_id,
                    "reader_id": reader,
                    "criterion": name,
                    "choice": system_of[side],
                    "seconds": seconds,
                    "comment": "",
                    "shown_first": left,
                }
            )
            criteria_seen.setdefault(name)
        if comment and mine:
            target = next((r for r in mine if r["criterion"] == OVERALL), mine[0])
            target["comment"] = comment
        rows.extend(mine)
        answered.append(set(answers))
    # A question is unanswered when some other annotation answered it and this one did not.
    n_unanswered = sum(len(set(criteria_seen) - keys) for keys in answered)
    if problems.items:
        raise InputError(problems.items[:100])
    humans = pd.DataFrame(rows, columns=HUMANS_COLUMNS)
    if anonymise_readers and not humans.empty:
        mapping = {r: f"reader-{i + 1:02d}" for i, r in enumerate(dict.fromkeys(humans["reader_id"]))}
        humans["reader_id"] = humans["reader_id"].map(mapping)
    if out_path is not None:
        write_csv(humans, out_path, inputs=[*inputs, export if isinstance(export, (str, Path)) else None])
    return HumansImport(humans, len(tasks), n_annotations, n_cancelled, n_replaced, n_unanswered, n_without)


def _left_system(pair: pd.Series, data: dict[str, Any]) -> str | None:
    """The system whose story the task shows on the left: ``system_a`` unless the task's
    ``story_left_id`` is the pair's ``story_b_id`` (a flipped, per-reader order). None when
    the id is neither story of the pair."""
    left_id = data.get("story_left_id")
    story_a = str(pair["story_a_id"]) if "story_a_id" in pair.index else ""
    story_b = str(pair["story_b_id"]) if "story_b_id" in pair.index else ""
    if not left_id or not story_a:
        return str(pair["system_a"])
    if str(left_id) == story_a:
        return str(pair["system_a"])
    if story_b and str(left_id) == story_b:
        return str(pair["system_b"])
    return None
