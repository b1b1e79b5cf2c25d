"""A rubric judge over stories.csv -> judge.csv, with a mixture of personas.

Each request shows one story (never its system) and asks for one score per criterion as a
JSON object. With ``persona_mode = "all"`` every persona scores every story (``samples``
times each); the ``sample`` column of judge.csv numbers the (persona, sample) requests, so
averaging over samples is the mixture-of-personas score. An answer that is not a JSON object,
or a criterion whose value is missing, non-numeric, non-integer (when ``integer = true``) or
outside the scale, gives an EMPTY score: counted, never imputed. Raw answers are kept in a
JSONL journal, which also makes scoring resumable.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import tomllib

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.generation.journal import Journal, read_journal
from judge_transfer_audit.generation.protocol import merge_tables, non_finite
from judge_transfer_audit.generation.providers.base import ChatMessage, Provider, build_provider
from judge_transfer_audit.generation.tables import prepare_output, write_csv
from judge_transfer_audit.inputs.formats import read_frame
from judge_transfer_audit.inputs.layout import CONTROL

DEFAULT_RUBRIC_PATH = Path(__file__).parent / "templates" / "rubric.toml"
_KEYS = {
    "judge_id",
    "scale_min",
    "scale_max",
    "integer",
    "samples",
    "persona_mode",
    "concurrency",
    "reasoning_pattern",
    "system_prompt",
    "user_template",
    "sampling",
    "criteria",
    "personas",
    "judge",
}
_INT_RANGES = {"samples": (1, 1000), "concurrency": (1, 256)}
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass(frozen=True)
class Criterion:
    name: str
    rubric: str


@dataclass(frozen=True)
class Persona:
    name: str
    description: str


@dataclass(frozen=True)
class RubricConfig:
    """The rubric judge's configuration (keys and defaults in docs/generation.md)."""

    judge_id: str
    criteria: tuple[Criterion, ...]
    personas: tuple[Persona, ...]
    scale_min: float
    scale_max: float
    integer: bool
    samples: int
    persona_mode: str
    concurrency: int
    reasoning_pattern: str
    system_prompt: str
    user_template: str
    sampling: dict[str, Any]
    provider: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def requests_for_story(self) -> list[tuple[int, Persona]]:
        """(sample index, persona) for every request made about one story."""
        if self.persona_mode == "all":
            plan = [(p, s) for p in self.personas for s in range(self.samples)]
            return [(i, persona) for i, (persona, _) in enumerate(plan)]
        return [(s, self.personas[s % len(self.personas)]) for s in range(self.samples)]

    def messages(self, story: str, persona: Persona) -> tuple[ChatMessage, ...]:
        rubric = "\n".join(f"- {c.name}: {c.rubric}" for c in self.criteria)
        example = json.dumps({c.name: int(self.scale_min + self.scale_max) // 2 for c in self.criteria})
        system = self.system_prompt.format(persona_name=persona.name, persona_description=persona.description)
        user = self.user_template.format(
            story=story,
            rubric=rubric,
            json_example=example,
            scale_min=_fmt(self.scale_min),
            scale_max=_fmt(self.scale_max),
        )
        return (ChatMessage("system", system), ChatMessage("user", user))


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def load_rubric(path: str | Path | None = None, *, overrides: Mapping[str, Any] | None = None) -> RubricConfig:
    """Read a rubric TOML laid over the packaged default (``generation/templates/rubric.toml``).

    Parameters
    ----------
    path : str or Path, optional
        The user's rubric file; None uses the default alone (which has no judge provider).
    overrides : mapping, optional
        Top-level keys that win over both files (e.g. ``{"samples": 3}`` from the CLI).

    Returns
    -------
    RubricConfig

    Raises
    ------
    InputError
        A missing or unreadable file, an unknown key, a template without ``{story}``, an
        empty scale, ``samples < 1``...
    """
    with open(DEFAULT_RUBRIC_PATH, "rb") as fh:
        raw = tomllib.load(fh)
    source = str(path) if path is not None else str(DEFAULT_RUBRIC_PATH)
    if path is not None:
        try:
            with open(path, "rb") as fh:
                user = tomllib.load(fh)
        except FileNotFoundError:
            raise InputError(InputProblem(str(path), "rubric file not found", fix="check the path")) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(InputProblem(str(path), f"not valid TOML: {exc}", fix="fix the TOML syntax")) from None
        raw = merge_tables(raw, user)
    if overrides:
        raw = merge_tables(raw, {k: v for k, v in overrides.items() if v is not None})
    problems: list[InputProblem] = []

    def bad(key: str, message: str, value: Any = None, fix: str = "") -> None:
        problems.append(InputProblem(source, message, column=key, value=None if value is None else str(value), fix=fix))

    for key in sorted(set(raw) - _KEYS):
        bad(key, "unknown key", fix=f"use one of: {', '.join(sorted(_KEYS))}")
    lo, hi = raw.get("scale_min"), raw.get("scale_max")
    if (
        not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) <= 1e6
            for v in (lo, hi)
        )
        or not lo < hi
    ):
        bad(
            "scale_min",
            "scale_min and scale_max must be numbers in [-1e6, 1e6] with scale_min < scale_max",
            value=f"{lo}..{hi}",
        )
    for key, (low, high) in _INT_RANGES.items():
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            bad(
                key,
                f"must be an integer in [{low}, {high}]",
                value=value,
                fix=f"set {key} to a whole number from {low} to {high}",
            )
    for key, value in non_finite(raw.get("sampling") if isinstance(raw.get("sampling"), Mapping) else {}):
        bad(
            f"sampling.{key}",
            "NaN or infinity cannot be sent to a server (JSON has no such numbers)",
            value=value,
            fix="give a finite number",
        )
    if raw.get("persona_mode") not in ("all", "cycle"):
        bad("persona_mode", 'must be "all" or "cycle"', value=raw.get("persona_mode"))
    criteria = [Criterion(str(c.get("name", "")).strip(), str(c.get("rubric", ""))) for c in raw.get("criteria") or []]
    if not criteria or any(not c.name for c in criteria):
        bad("criteria", "every [[criteria]] needs a name (and at least one is needed)")
    names = [c.name for c in criteria]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        bad("criteria", "criterion listed twice", value=dup)
    personas = [Persona(str(p.get("name", "")), str(p.get("description", ""))) for p in raw.get("personas") or []]
    if not personas:
        personas = [Persona("an expert reader", "you judge fiction for a living.")]
    try:
        re.compile(raw.get("reasoning_pattern", ""))
    except re.error as exc:
        bad("reasoning_pattern", f"not a valid regular expression: {exc}")
    for key, fields in (("user_template", ("story",)), ("system_prompt", ())):
        text = raw.get(key)
        if not isinstance(text, str):
            bad(key, "must be a string")
            continue
        for f in fields:
            if "{" + f + "}" not in text:
                bad(key, f"has no {{{f}}} placeholder")
    if problems:
        raise InputError(problems)
    return RubricConfig(
        judge_id=str(raw.get("judge_id", "rubric")),
        criteria=tuple(criteria),
        personas=tuple(personas),
        scale_min=float(lo),
        scale_max=float(hi),
        integer=bool(raw.get("integer", True)),
        samples=int(raw["samples"]),
        persona_mode=str(raw["persona_mode"]),
        concurrency=int(raw["concurrency"]),
        reasoning_pattern=str(raw.get("reasoning_pattern", "")),
        system_prompt=raw["system_prompt"],
        user_template=raw["user_template"],
        sampling=dict(raw.get("sampling") or {}),
        provider=dict((raw.get("judge") or {}).get("provider") or {}),
        source=source,
    )


def parse_scores(answer: str, config: RubricConfig) -> tuple[dict[str, float], dict[str, str]]:
    """Parse one judge answer into ``({criterion: score}, {criterion: why_invalid})``.

    Every criterion ends in exactly one of the two dicts. Nothing is guessed: a criterion
    that is missing, not a number, not an integer (when required) or off the scale is
    invalid.

    Parameters
    ----------
    answer : str
        The judge's raw answer (reasoning blocks and code fences are removed first).
    config : RubricConfig
        Criteria, scale and ``integer`` rule.

    Returns
    -------
    scores : dict of str to float
        Valid scores.
    invalid : dict of str to str
        Criterion -> why it is invalid (all criteria when no JSON object is found).
    """
    text = re.sub(config.reasoning_pattern, "", answer).strip() if config.reasoning_pattern else answer.strip()
    text = _FENCE.sub("", text).strip()
    start, end = text.find("{"), text.rfind("}")
    parsed: Any = None
    if start != -1 and end > start:
        try:
            parsed = json.loads(text[start : end + 1])
        except (ValueError, RecursionError):  # not JSON, an integer of > 4300 digits, nesting
            parsed = None
    if not isinstance(parsed, dict):
        return {}, {c.name: "answer is not a JSON object" for c in config.criteria}
    lowered = {str(k).strip().lower(): v for k, v in parsed.items()}
    scores: dict[str, float] = {}
    invalid: dict[str, str] = {}
    for criterion in config.criteria:
        value = lowered.get(criterion.name.lower())
        verdict = _score_value(value, config)
        if isinstance(verdict, str):
            invalid[criterion.name] = verdict
        else:
            scores[criterion.name] = verdict
    return scores, invalid


def _score_value(value: Any, config: RubricConfig) -> float | str:
    """The score as a float, or why it is invalid. Integers are compared exactly (a
    400-digit integer is off the scale, not an overflow); ``inf`` is off the scale."""
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "not a number"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return "not a number"
    if isinstance(value, int):
        if not config.scale_min <= value <= config.scale_max:
            return "outside the scale"
        return float(value)
    if not isinstance(value, float) or math.isnan(value):
        return "not a number"
    if math.isinf(value):
        return "outside the scale"
    if config.integer and not value.is_integer():
        return "not an integer"
    if not config.scale_min <= value <= config.scale_max:
        return "outside the scale"
    return value


@dataclass(frozen=True)
class ScoreResult:
    """What :func:`score_stories` produced.

    Attributes
    ----------
    scores : DataFrame
        judge.csv rows: pair_id, system, criterion, score (NaN = invalid), judge, sample, persona.
    judge_id : str
    n_stories : int
        Distinct stories scored.
    n_requests_now, n_resumed : int
        Requests made in this run; answers reused from the journal.
    n_unparsable_answers : int
        Answers with no usable JSON object (every criterion invalid).
    n_invalid_scores : int
        Empty scores in judge.csv rows (counted per distinct story, not per pair row).
    invalid_by_criterion : dict[str, int]
    """

    scores: pd.DataFrame
    judge_id: str
    n_stories: int
    n_requests_now: int
    n_resumed: int
    n_unparsable_answers: int
    n_invalid_scores: int
    invalid_by_criterion: dict[str, int]

    def to_frame(self) -> pd.DataFrame:
        return self.scores.copy()

    def __str__(self) -> str:
        per = ", ".join(f"{k}: {v}" for k, v in self.invalid_by_criterion.items() if v)
        return (
            f"judge '{self.judge_id}': {self.n_stories} stories, {self.n_requests_now} requests now, "
            f"{self.n_resumed} answers resumed; {self.n_unparsable_answers} unparsable answer(s), "
            f"{self.n_invalid_scores} invalid score(s) left empty" + (f" ({per})" if per else "")
        )


def load_stories(path: str | Path) -> pd.DataFrame:
    frame = read_frame(path, "stories", required=("system", "text"))
    if "pair_id" not in frame.columns:
        if "item_id" not in frame.columns:
            raise InputError(
                InputProblem(
                    str(path),
                    "required column missing",
                    column="pair_id",
                    fix="stories need pair_id (or item_id), system, text",
                )
            )
        frame = frame.rename(columns={"item_id": "pair_id"})
    validate_stories(frame, str(path))
    return frame


def validate_stories(frame: pd.DataFrame, file: str = "stories") -> None:
    """Refuse stories the judge cannot score meaningfully (one problem per row, at most 50).

    Raises
    ------
    InputError
        An empty pair_id, system or text (an empty story would be sent to the judge and
        scored), or the same (pair_id, system) twice.
    """
    problems: list[InputProblem] = []
    for i, row in enumerate(frame[["pair_id", "system", "text"]].itertuples(index=False)):
        for column, value in zip(("pair_id", "system", "text"), row):
            if not str(value).strip() or str(value).lower() == "nan":
                problems.append(
                    InputProblem(
                        file,
                        f"empty {column}",
                        line=i + 2,
                        column=column,
                        fix="give every story its pair_id, system and text, or remove the row",
                    )
                )
            elif column != "text" and CONTROL.search(str(value)):
                problems.append(
                    InputProblem(
                        file,
                        f"{column} holds a control character (judge.csv would carry it and `audit run` refuses it)",
                        line=i + 2,
                        column=column,
                        value=str(value),
                        fix=f"remove the control character from the {column}",
                    )
                )
    dup = frame.duplicated(["pair_id", "system"], keep="first").to_numpy()
    for i in dup.nonzero()[0]:
        problems.append(
            InputProblem(
                file,
                "the same pair_id and system twice",
                line=int(i) + 2,
                column="pair_id",
                value=f"{frame['pair_id'].iloc[i]}/{frame['system'].iloc[i]}",
                fix="keep one story per pair_id and system",
            )
        )
    if problems:
        raise InputError(problems[:50])


class _Stopped(Exception):
    """A job not sent because an earlier request failed."""


def _story_key(row: Any) -> str:
    story_id = getattr(row, "story_id", "")
    if story_id:
        return str(story_id)
    return "t" + hashlib.sha256(f"{row.system}\x1f{row.text}".encode()).hexdigest()[:12]


def score_stories(
    stories: pd.DataFrame,
    config: RubricConfig,
    out_path: str | Path,
    *,
    raw_path: str | Path | None = None,
    provider: Provider | None = None,
    fresh: bool = False,
    inputs: Iterable[str | Path | None] = (),
) -> ScoreResult:
    """Score every distinct story with the rubric judge; write judge.csv and the raw journal.

    Parameters
    ----------
    stories : DataFrame
        pair_id, system, text (optional story_id: stories sharing it are scored once).
    config : RubricConfig
    out_path : path
        judge.csv to write.
    raw_path : path, optional
        Raw-answer journal (JSONL); default ``<out_path stem>_raw.jsonl`` beside it. A rerun
        with the same journal resumes (answers whose request is unchanged are reused).
    provider : Provider, optional
        Defaults to the provider built from the rubric's ``[judge.provider]``.
    fresh : bool
        Discard the journal first.
    inputs : paths
        The command's input files (stories, rubric): neither judge.csv nor the journal may be
        one of them (also through a link), nor a symbolic link.

    Raises
    ------
    ProviderError
        A request failed after retries; answers so far are kept and a rerun resumes.
    """
    out_path = Path(out_path)
    raw_path = Path(raw_path) if raw_path is not None else out_path.with_name(out_path.stem + "_raw.jsonl")
    inputs = list(inputs)
    prepare_output(out_path, "judge.csv", inputs=[*inputs, raw_path])
    prepare_output(raw_path, "raw-answer journal", inputs=[*inputs, out_path])
    if fresh:
        raw_path.unlink(missing_ok=True)
    if provider is None:
        if not config.provider:
            raise InputError(
                InputProblem(
                    config.source,
                    "no judge model configured",
                    fix="add a [judge.provider] table (provider, model, base_url, api_key_env)",
                )
            )
        provider = build_provider(config.provider, where=f"{config.source} [judge.provider]")
    validate_stories(stories)
    stories = stories.copy()
    stories["story_key_"] = [_story_key(row) for row in stories.itertuples(index=False)]
    distinct = stories.drop_duplicates("story_key_")
    conflicting = stories.groupby("story_key_")["text"].nunique()
    if (conflicting > 1).any():
        raise InputError(
            InputProblem(
                "stories",
                "one story_id carries different texts",
                value=str(conflicting[conflicting > 1].index[0]),
                fix="give each distinct text its own story_id",
            )
        )
    jobs = []
    for row in distinct.itertuples(index=False):
        for sample, persona in config.requests_for_story():
            messages = config.messages(row.text, persona)
            fingerprint = hashlib.sha256(
                json.dumps(
                    [[m.as_dict() for m in messages], config.sampling, provider.describe().get("model")], sort_keys=True
                ).encode()
            ).hexdigest()[:16]
            jobs.append((row.story_key_, sample, persona, messages, fingerprint))
    records, _ = read_journal(raw_path)
    done = {(r["story_key"], r["sample"], r["fingerprint"]): r for r in records if r.get("type") == "answer"}
    journal = Journal(raw_path)
    journal.write(
        {
            "type": "run",
            "time": datetime.now(timezone.utc).isoformat(),
            "judge_id": config.judge_id,
            "provider": provider.describe(),
        }
    )
    answers: dict[tuple[str, int], dict[str, Any]] = {}
    todo = []
    for key, sample, persona, messages, fingerprint in jobs:
        previous = done.get((key, sample, fingerprint))
        if previous is not None:
            answers[(key, sample)] = previous
        else:
            todo.append((key, sample, persona, messages, fingerprint))
    n_resumed = len(answers)

    # Set by the request that fails, before its worker can take another job: no request is
    # sent after a failure (the ones already in flight finish and are kept).
    stop = threading.Event()

    def ask(job: tuple) -> dict[str, Any]:
        key, sample, persona, messages, fingerprint = job
        if stop.is_set():
            raise _Stopped()
        try:
            completion = provider.chat(messages, **config.sampling)
        except ProviderError:
            stop.set()
            raise
        scores, invalid = parse_scores(completion.text, config)
        record = {
            "type": "answer",
            "story_key": key,
            "sample": sample,
            "persona": persona.name,
            "fingerprint": fingerprint,
            "raw": completion.text,
            "reasoning": completion.reasoning,
            "scores": scores,
            "invalid": invalid,
            "finish_reason": completion.finish_reason,
            "n_http_attempts": completion.n_http_attempts,
            "n_replaced_characters": int(completion.extra.get("n_replaced_characters", 0)),
            "time": datetime.now(timezone.utc).isoformat(),
        }
        journal.write(record)
        return record

    failures = []
    with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        futures = {pool.submit(ask, job): job for job in todo}
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    answers[(job[0], job[1])] = future.result()
                except (CancelledError, _Stopped):
                    continue  # not sent: another request had failed
                except ProviderError as exc:
                    failures.append(exc)
                    for other in futures:
                        other.cancel()
        except BaseException:
            for other in futures:
                other.cancel()
            raise
    if failures:
        raise ProviderError(
            f"{len(failures)} judge request(s) failed: {failures[0]} {len(answers)} answers are kept in {raw_path}; "
            "rerun to resume."
        )
    rows = []
    per_story: list[dict[str, Any]] = []
    for row in stories.itertuples(index=False):
        for sample, persona in config.requests_for_story():
            answer = answers[(row.story_key_, sample)]
            for criterion in config.criteria:
                rows.append(
                    {
                        "pair_id": row.pair_id,
                        "system": row.system,
                        "criterion": criterion.name,
                        "score": answer["scores"].get(criterion.name, math.nan),
                        "judge": config.judge_id,
                        "sample": sample,
                        "persona": persona.name,
                    }
                )
    for (_key, _sample), answer in answers.items():
        per_story.append(answer)
    scores = pd.DataFrame(rows, columns=["pair_id", "system", "criterion", "score", "judge", "sample", "persona"])
    write_csv(scores, out_path, inputs=[*inputs, raw_path])
    invalid_by = {c.name: sum(1 for a in per_story if c.name in a["invalid"]) for c in config.criteria}
    return ScoreResult(
        scores=scores,
        judge_id=config.judge_id,
        n_stories=len(distinct),
        n_requests_now=len(todo),
        n_resumed=n_resumed,
        n_unparsable_answers=sum(
            1
            for a in per_story
            if not a["scores"]
            and len(a["invalid"]) == len(config.criteria)
            and all(v == "answer is not a JSON object" for v in a["invalid"].values())
        ),
        n_invalid_scores=sum(invalid_by.values()),
        invalid_by_criterion=invalid_by,
    )
