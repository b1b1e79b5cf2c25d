"""Label Studio: pairs -> tasks + labelling config; a Label Studio JSON export -> humans.csv.

Tasks carry the premise and the two texts as ``story_left``/``story_right`` (left = the
pair's ``system_a``, the system shown first) and never a system name, so the study stays
blind; the import maps each side back to its system through pairs.csv.

The import reads Label Studio's full JSON export (a list of tasks, each with
``annotations[].result[]`` entries of ``type`` "choices" -- ``from_name`` is the criterion,
``value.choices[0]`` the side -- and "textarea" for the comment, plus ``completed_by`` and
``lead_time``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from xml.sax.saxutils import escape, quoteattr

import pandas as pd

from audit.errors import InputError, InputProblem
from generation.tables import write_csv

OVERALL = "overall"
COMMENT = "comment"
LEFT_VALUES = frozenset({"left", "a", "story a", "story_a", "1"})
RIGHT_VALUES = frozenset({"right", "b", "story b", "story_b", "2"})
TIE_VALUES = frozenset({"tie", "equal", "same"})


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def labelling_config(
    criteria: Sequence[str],
    *,
    definitions: dict[str, str] | None = None,
    include_overall: bool = True,
    allow_tie: bool = False,
    instructions: str = "Read the premise and both stories, then say which story is better on each criterion.",
) -> str:
    """Label Studio labelling-config XML: premise, two stories side by side, one forced
    choice per criterion (plus ``overall``), an optional comment.

    Choice values shown are "Story A"/"Story B"; their ``alias`` (what the export records)
    is ``left``/``right``.

    Parameters
    ----------
    criteria : sequence of str
        Criterion names, in the order asked; each becomes a ``<Choices name=...>``.
    definitions : dict of str to str, optional
        Criterion -> definition shown above the stories (the rubric's wording).
    include_overall : bool
        Add the ``overall`` question after the criteria.
    allow_tie : bool
        Add a "No difference" choice (alias ``tie``); off by default (forced choice).
    instructions : str
        Header shown first.

    Returns
    -------
    str
        The XML, to paste under *Labeling Interface -> Code*.
    """
    definitions = definitions or {}
    lines = ["<View>", f"  <Header value={quoteattr(instructions)} size=\"4\"/>"]
    if definitions:
        lines.append("  <View style=\"padding: 0.5em; background: #f6f6f6; border-radius: 4px;\">")
        for name in criteria:
            if name in definitions:
                lines.append(f"    <Header value={quoteattr(_title(name) + ': ' + ' '.join(definitions[name].split()))} size=\"6\"/>")
        lines.append("  </View>")
    lines += [
        "  <Header value=\"Premise\" size=\"5\"/>",
        "  <Text name=\"premise\" value=\"$premise\"/>",
        "  <View style=\"display: flex; gap: 1.5em;\">",
        "    <View style=\"flex: 50%;\">",
        "      <Header value=\"Story A\" size=\"5\"/>",
        "      <Text name=\"story_left\" value=\"$story_left\"/>",
        "    </View>",
        "    <View style=\"flex: 50%;\">",
        "      <Header value=\"Story B\" size=\"5\"/>",
        "      <Text name=\"story_right\" value=\"$story_right\"/>",
        "    </View>",
        "  </View>",
    ]
    questions = list(criteria) + ([OVERALL] if include_overall and OVERALL not in criteria else [])
    for name in questions:
        label = "Overall, which story do you prefer?" if name == OVERALL else f"{_title(name)}: which story is better?"
        lines += [
            f"  <Header value={quoteattr(label)} size=\"5\"/>",
            f"  <Choices name={quoteattr(name)} toName=\"premise\" choice=\"single-radio\" required=\"true\" showInline=\"true\">",
            "    <Choice value=\"Story A\" alias=\"left\"/>",
            "    <Choice value=\"Story B\" alias=\"right\"/>",
        ]
        if allow_tie:
            lines.append("    <Choice value=\"No difference\" alias=\"tie\"/>")
        lines.append("  </Choices>")
    lines += [
        "  <Header value=\"Comment (optional): why?\" size=\"5\"/>",
        f"  <TextArea name=\"{COMMENT}\" toName=\"premise\" rows=\"3\" maxSubmissions=\"1\" editable=\"true\" required=\"false\"/>",
        "</View>",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class TaskExport:
    """Result of :func:`export_tasks`: the tasks and the files written.

    Attributes
    ----------
    tasks : tuple of dict
        The Label Studio tasks, in presentation order, each ``{"data": {pair_id, premise,
        story_left, story_right, story_left_id, story_right_id}}``.
    tasks_path, config_path : str
        Files written.
    n_tasks : int
    """

    tasks: tuple[dict[str, Any], ...]
    tasks_path: str
    config_path: str
    n_tasks: int

    def to_frame(self) -> pd.DataFrame:
        """One row per task: the task's ``data`` fields."""
        return pd.DataFrame([t["data"] for t in self.tasks])

    def __str__(self) -> str:
        return f"{self.n_tasks} Label Studio tasks -> {self.tasks_path}; labelling config -> {self.config_path}"


def _pairs_columns_ok(pairs: pd.DataFrame, file: str) -> pd.DataFrame:
    pairs = pairs.copy()
    pairs.columns = [str(c).lower() for c in pairs.columns]
    missing = [c for c in ("pair_id", "system_a", "system_b") if c not in pairs.columns]
    if missing:
        raise InputError([InputProblem(file, "required column missing", column=c, fix="use the pairs.csv written by `audit generate`") for c in missing])
    for column in ("pair_id", "system_a", "system_b"):
        pairs[column] = pairs[column].astype(str)
    return pairs


def export_tasks(
    pairs: pd.DataFrame,
    stories: pd.DataFrame,
    tasks_path: str | Path,
    config_path: str | Path,
    *,
    criteria: Sequence[str] = ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity"),
    definitions: dict[str, str] | None = None,
    allow_tie: bool = False,
) -> TaskExport:
    """Write Label Studio tasks (JSON list of ``{"data": ...}``) and the labelling config.

    Tasks follow the pairs' ``position`` column when present (the seeded presentation
    order of ``audit generate``), else the file order. ``story_left`` is ``system_a``.
    No task field names a system.

    Parameters
    ----------
    pairs : pandas.DataFrame
        pairs.csv of ``audit generate``: pair_id, system_a, system_b, story_a_id,
        story_b_id, premise (and position).
    stories : pandas.DataFrame
        stories.csv: pair_id, system, story_id, text.
    tasks_path, config_path : str or Path
        Where to write the tasks JSON and the labelling-config XML.
    criteria : sequence of str
        The per-criterion questions (``overall`` is always added).
    definitions : dict of str to str, optional
        Criterion definitions shown to annotators (e.g. from the rubric file).
    allow_tie : bool
        Offer "No difference" (off: forced choice, as in the motivating study).

    Returns
    -------
    TaskExport

    Raises
    ------
    InputError
        A pair whose two stories are not both in stories.csv.
    """
    pairs = _pairs_columns_ok(pairs, "pairs")
    if "position" in pairs.columns:
        pairs = pairs.assign(_pos=pd.to_numeric(pairs["position"], errors="coerce")).sort_values("_pos", kind="stable")
    stories = stories.copy()
    stories.columns = [str(c).lower() for c in stories.columns]
    if "pair_id" not in stories.columns and "item_id" in stories.columns:
        stories = stories.rename(columns={"item_id": "pair_id"})
    lookup = {(str(r.pair_id), str(r.system)): r for r in stories.itertuples(index=False)}
    problems = []
    tasks = []
    for row in pairs.itertuples(index=False):
        sides = []
        for system in (row.system_a, row.system_b):
            story = lookup.get((row.pair_id, system))
            if story is None:
                problems.append(InputProblem("stories", f"no story for pair {row.pair_id}, system {system}", fix="use the stories.csv written with this pairs.csv"))
            sides.append(story)
        if None in sides:
            continue
        tasks.append(
            {
                "data": {
                    "pair_id": row.pair_id,
                    "premise": str(getattr(row, "premise", "") or ""),
                    "story_left": str(sides[0].text),
                    "story_right": str(sides[1].text),
                    "story_left_id": str(getattr(sides[0], "story_id", "") or ""),
                    "story_right_id": str(getattr(sides[1], "story_id", "") or ""),
                }
            }
        )
    if problems:
        raise InputError(problems)
    tasks_path, config_path = Path(tasks_path), Path(config_path)
    tasks_path.parent.mkdir(parents=True, exist_ok=True)
    tasks_path.write_text(json.dumps(tasks, indent=2, ensure_ascii=False), encoding="utf-8")
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(labelling_config(criteria, definitions=definitions, allow_tie=allow_tie), encoding="utf-8")
    return TaskExport(tuple(tasks), str(tasks_path), str(config_path), len(tasks))


@dataclass(frozen=True)
class HumansImport:
    """Result of :func:`import_export`.

    Attributes
    ----------
    humans : DataFrame
        humans.csv rows: pair_id, reader_id, criterion, choice (a system name or "tie"),
        seconds, comment (on the ``overall`` row, else the first row of the annotation),
        shown_first.
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
            f"({self.n_annotations} annotations; {self.n_cancelled} cancelled, {self.n_replaced} replaced by a later one, "
            f"{self.n_unanswered} unanswered questions, {self.n_tasks_without_annotation} tasks never annotated)"
        )


def _reader(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("email", "id", "username"):
            if value.get(key) not in (None, ""):
                return str(value[key])
        return ""
    return "" if value is None else str(value)


def read_export(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(InputProblem(str(path), "export file not found", fix="check the path")) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(InputProblem(str(path), f"not a JSON file: {exc}", fix="export the project from Label Studio as JSON")) from None
    if not isinstance(data, list) or (data and not all(isinstance(t, dict) for t in data)):
        raise InputError(InputProblem(str(path), "expected a JSON list of tasks", fix="use Label Studio's JSON export (not JSON-MIN, CSV or TSV)"))
    if data and not any("annotations" in t for t in data):
        raise InputError(InputProblem(str(path), "no task has an 'annotations' field", fix="use Label Studio's full JSON export (JSON-MIN drops it)"))
    return data


def import_export(
    export: str | Path | list[dict[str, Any]],
    pairs: pd.DataFrame,
    out_path: str | Path | None = None,
    *,
    anonymise_readers: bool = False,
) -> HumansImport:
    """Turn a Label Studio JSON export into humans.csv rows.

    ``completed_by`` (a user id, or a user object: its email, else id) -> ``reader_id``;
    ``lead_time`` -> ``seconds``; the chosen side -> the system through pairs.csv
    (left = ``system_a``); ``shown_first`` = ``system_a``. With ``anonymise_readers``
    readers become ``reader-01``, ``reader-02``... in order of first appearance.

    Parameters
    ----------
    export : str, Path or list of dict
        A Label Studio *Export -> JSON* file (the full export; JSON-MIN is refused), or its
        parsed list of tasks.
    pairs : pandas.DataFrame
        The pairs.csv the tasks were exported from (maps left/right to systems).
    out_path : str or Path, optional
        Where to write humans.csv; None writes nothing.
    anonymise_readers : bool
        Replace annotator ids by ``reader-NN``.

    Returns
    -------
    HumansImport
        The rows and the counts of everything left out (cancelled, replaced, unanswered,
        never annotated).

    Raises
    ------
    InputError
        Unknown pair ids, a task whose left story is not the pair's ``system_a`` story
        (pairs.csv from another run), unknown choice values.
    """
    file = str(export) if not isinstance(export, list) else "export"
    tasks = read_export(export) if not isinstance(export, list) else export
    pairs = _pairs_columns_ok(pairs, "pairs").set_index("pair_id", drop=False)
    problems: list[InputProblem] = []
    latest: dict[tuple[str, str], tuple[tuple, dict[str, Any], str]] = {}
    n_cancelled = n_replaced = n_annotations = n_without = 0
    for t_index, task in enumerate(tasks):
        data = task.get("data") or {}
        pair_id = str(data.get("pair_id", ""))
        where = f"task {task.get('id', t_index)}"
        if pair_id not in pairs.index:
            problems.append(InputProblem(file, f"{where}: pair_id not in pairs.csv", column="data.pair_id", value=pair_id, fix="import with the pairs.csv the tasks were exported from"))
            continue
        pair = pairs.loc[pair_id]
        expected_left = str(pair["story_a_id"]) if "story_a_id" in pairs.columns else ""
        if expected_left and data.get("story_left_id") and str(data["story_left_id"]) != expected_left:
            problems.append(InputProblem(file, f"{where}: the left story is not the pair's system_a story", column="data.story_left_id", value=str(data["story_left_id"]), fix="use the pairs.csv of the same `audit generate` run"))
            continue
        annotations = task.get("annotations") or []
        if not [a for a in annotations if not a.get("was_cancelled")]:
            n_without += 1
        for annotation in annotations:
            if annotation.get("was_cancelled"):
                n_cancelled += 1
                continue
            n_annotations += 1
            reader = _reader(annotation.get("completed_by"))
            if not reader:
                problems.append(InputProblem(file, f"{where}: annotation {annotation.get('id', '?')} has no completed_by", column="completed_by", fix="export from Label Studio with annotator ids (the full JSON export)"))
                continue
            stamp = (str(annotation.get("updated_at") or annotation.get("created_at") or ""), str(annotation.get("id", "")))
            key = (pair_id, reader)
            if key in latest:
                n_replaced += 1
                if latest[key][0] >= stamp:
                    continue
            latest[key] = (stamp, annotation, where)
    rows: list[dict[str, Any]] = []
    answered: list[set[str]] = []
    criteria_seen: list[str] = []
    for (pair_id, reader), (_, annotation, where) in latest.items():
        pair = pairs.loc[pair_id]
        left, right = str(pair["system_a"]), str(pair["system_b"])
        comment = ""
        answers: dict[str, str] = {}
        for result in annotation.get("result") or []:
            kind = result.get("type")
            name = str(result.get("from_name", ""))
            value = result.get("value") or {}
            if kind == "textarea":
                comment = "\n".join(str(x) for x in value.get("text") or []).strip()
            elif kind == "choices":
                picked = value.get("choices") or []
                if not picked:
                    continue
                raw = str(picked[0]).strip()
                low = raw.lower()
                if low in LEFT_VALUES:
                    answers[name] = left
                elif low in RIGHT_VALUES:
                    answers[name] = right
                elif low in TIE_VALUES:
                    answers[name] = "tie"
                else:
                    problems.append(InputProblem(file, f"{where}: unknown choice for '{name}'", value=raw, fix="choices must be left/right (the aliases of the exported config), A/B, or tie"))
                if name not in criteria_seen:
                    criteria_seen.append(name)
        seconds = annotation.get("lead_time")
        for name, choice in answers.items():
            rows.append({"pair_id": pair_id, "reader_id": reader, "criterion": name, "choice": choice, "seconds": float(seconds) if seconds is not None else float("nan"), "comment": "", "shown_first": left})
        if comment and answers:
            target = next((r for r in rows[::-1] if r["pair_id"] == pair_id and r["reader_id"] == reader and r["criterion"] == OVERALL), None)
            target = target or next(r for r in rows if r["pair_id"] == pair_id and r["reader_id"] == reader)
            target["comment"] = comment
        answered.append(set(answers))
    # A question is unanswered when some other annotation answered it and this one did not.
    n_unanswered = sum(len(set(criteria_seen) - keys) for keys in answered)
    if problems:
        raise InputError(problems)
    humans = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "choice", "seconds", "comment", "shown_first"])
    if anonymise_readers and not humans.empty:
        mapping = {r: f"reader-{i + 1:02d}" for i, r in enumerate(dict.fromkeys(humans["reader_id"]))}
        humans["reader_id"] = humans["reader_id"].map(mapping)
    if out_path is not None:
        write_csv(humans, out_path)
    return HumansImport(humans, len(tasks), n_annotations, n_cancelled, n_replaced, n_unanswered, n_without)
