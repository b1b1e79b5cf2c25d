"""Blind Label Studio tasks from pairs.csv + stories.csv (written to a file, or pushed).

A task carries the premise and the two texts as ``story_left`` / ``story_right`` with their
story ids, and never a system name. By default the left story is the pair's ``system_a``
(the side ``audit generate`` balanced); :func:`build_tasks` can flip sides and reorder
tasks, which is how a per-reader order is made (see :mod:`judge_transfer_audit.generation.labelstudio.server`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Iterable, Sequence

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.generation.labelstudio.config import labelling_config
from judge_transfer_audit.generation.tables import prepare_output, write_text_file

DEFAULT_CRITERIA = ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity")


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


def pairs_columns_ok(pairs: pd.DataFrame, file: str) -> pd.DataFrame:
    """pairs.csv with lower-case columns and pair_id/system_a/system_b as text (checked present)."""
    pairs = pairs.copy()
    pairs.columns = [str(c).lower() for c in pairs.columns]
    missing = [c for c in ("pair_id", "system_a", "system_b") if c not in pairs.columns]
    if missing:
        raise InputError(
            [
                InputProblem(
                    file, "required column missing", column=c, fix="use the pairs.csv written by `audit generate`"
                )
                for c in missing
            ]
        )
    for column in ("pair_id", "system_a", "system_b"):
        pairs[column] = pairs[column].astype(str)
    return pairs


def presentation_order(pairs: pd.DataFrame) -> pd.DataFrame:
    """Pairs sorted by their ``position`` column when present (stable), else as given."""
    if "position" in pairs.columns:
        return (
            pairs.assign(_pos=pd.to_numeric(pairs["position"], errors="coerce"))
            .sort_values("_pos", kind="stable")
            .drop(columns="_pos")
        )
    return pairs


def build_tasks(
    pairs: pd.DataFrame,
    stories: pd.DataFrame,
    *,
    flipped: Collection[str] = (),
    order: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The Label Studio tasks of ``pairs`` (``{"data": {...}}`` each).

    Parameters
    ----------
    pairs, stories : pandas.DataFrame
        pairs.csv and stories.csv of ``audit generate``.
    flipped : collection of str
        pair_ids whose ``system_b`` story is shown on the left.
    order : sequence of str, optional
        pair_ids in the order of the tasks; default the pairs' presentation order.

    Raises
    ------
    InputError
        A pair whose two stories are not both in stories.csv.
    """
    pairs = presentation_order(pairs_columns_ok(pairs, "pairs"))
    stories = stories.copy()
    stories.columns = [str(c).lower() for c in stories.columns]
    if "pair_id" not in stories.columns and "item_id" in stories.columns:
        stories = stories.rename(columns={"item_id": "pair_id"})
    lookup = {(str(r.pair_id), str(r.system)): r for r in stories.itertuples(index=False)}
    flipped = set(flipped)
    problems = []
    by_pair: dict[str, dict[str, Any]] = {}
    for row in pairs.itertuples(index=False):
        sides = []
        for system in (row.system_a, row.system_b):
            story = lookup.get((row.pair_id, system))
            if story is None:
                problems.append(
                    InputProblem(
                        "stories",
                        f"no story for pair {row.pair_id}, system {system}",
                        fix="use the stories.csv written with this pairs.csv",
                    )
                )
            sides.append(story)
        if None in sides:
            continue
        if row.pair_id in flipped:
            sides.reverse()
        by_pair[row.pair_id] = {
            "data": {
                "pair_id": row.pair_id,
                "premise": str(getattr(row, "premise", "") or ""),
                "story_left": str(sides[0].text),
                "story_right": str(sides[1].text),
                "story_left_id": str(getattr(sides[0], "story_id", "") or ""),
                "story_right_id": str(getattr(sides[1], "story_id", "") or ""),
            }
        }
    if problems:
        raise InputError(problems)
    keys = list(by_pair) if order is None else [p for p in order if p in by_pair]
    return [by_pair[p] for p in keys]


def export_tasks(
    pairs: pd.DataFrame,
    stories: pd.DataFrame,
    tasks_path: str | Path,
    config_path: str | Path,
    *,
    criteria: Sequence[str] = DEFAULT_CRITERIA,
    definitions: dict[str, str] | None = None,
    allow_tie: bool = False,
    inputs: Iterable[str | Path | None] = (),
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
    inputs : paths
        The input files (pairs, stories, rubric): neither output may be one of them, nor the
        other output, nor a symbolic link.

    Returns
    -------
    TaskExport

    Raises
    ------
    InputError
        A pair whose two stories are not both in stories.csv.
    """
    tasks = build_tasks(pairs, stories)
    tasks_path, config_path = Path(tasks_path), Path(config_path)
    inputs = list(inputs)
    prepare_output(tasks_path, "tasks file", inputs=[*inputs, config_path])
    prepare_output(config_path, "labelling config", inputs=[*inputs, tasks_path])
    config = labelling_config(criteria, definitions=definitions, allow_tie=allow_tie)
    write_text_file(tasks_path, json.dumps(tasks, indent=2, ensure_ascii=False), inputs=[*inputs, config_path])
    write_text_file(config_path, config, inputs=[*inputs, tasks_path])
    return TaskExport(tuple(tasks), str(tasks_path), str(config_path), len(tasks))
