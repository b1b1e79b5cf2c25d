"""Premises x matchups -> stories.csv + pairs.csv, under a generation protocol.

Each story (one premise, one system) is requested until an attempt's word count falls in
``[word_min, word_max]`` or ``max_attempts`` is reached; the kept attempt is the first one
in the window, else the one closest to ``word_target`` (earliest on ties). Reasoning
blocks matching ``reasoning_pattern`` are removed before counting.

Every attempt is appended to ``attempts.jsonl`` before it is used, and a ``final`` record
marks a finished story. A rerun in the same output directory reads that journal: finished
stories are never requested again, unfinished ones continue from their next attempt.

Blinding: story and pair ids are hashes of (seed, premise, system/matchup), so they reveal
neither; the side each system is shown on is balanced within each matchup and assigned by
a seeded shuffle, and the presentation order of pairs is a seeded permutation.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.core.output_files import MANIFEST, csv_text, write_folder
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.generation.journal import Journal, read_journal
from judge_transfer_audit.generation.protocol import GenerationProtocol, Matchup
from judge_transfer_audit.generation.providers.base import ChatMessage, Provider, build_provider
from judge_transfer_audit.generation.tables import check_writable_names, prepare_output
from judge_transfer_audit.inputs.formats import read_frame
from judge_transfer_audit.inputs.layout import CONTROL

_WORD = re.compile(r"\S+")
_ALNUM = re.compile(r"[^\W_]")


def count_words(text: str) -> int:
    """Whitespace-separated tokens that contain at least one letter or digit.

    Punctuation standing alone (a dash, ``***`` scene breaks) is not a word.
    """
    return sum(1 for token in _WORD.findall(text) if _ALNUM.search(token))


def strip_reasoning(text: str, pattern: re.Pattern[str]) -> str:
    """Remove reasoning blocks and surrounding whitespace."""
    return pattern.sub("", text).strip()


def choose_attempt(word_counts: list[int], word_min: int, word_max: int, target: int) -> int:
    """Index of the kept attempt: the first in the window, else the closest to target."""
    for i, n in enumerate(word_counts):
        if word_min <= n <= word_max:
            return i
    return min(range(len(word_counts)), key=lambda i: (abs(word_counts[i] - target), i))


@dataclass(frozen=True)
class StoryJob:
    story_id: str
    premise_id: str
    system: str
    matchup: str  # "" when stories are shared across matchups
    messages: tuple[ChatMessage, ...]
    fingerprint: str


@dataclass(frozen=True)
class GenerationResult:
    """What :func:`generate_stories` produced.

    Attributes
    ----------
    stories : DataFrame
        stories.csv rows: pair_id, system, story_id, text.
    pairs : DataFrame
        pairs.csv rows in presentation order (see module docstring).
    story_log : DataFrame
        One row per story: story_id, premise_id, system, matchup, words, n_attempts,
        kept_attempt, in_window.
    seed : int
        Blinding seed used (ids, sides, order).
    n_stories, n_requested_now, n_resumed : int
        Stories in total, finished in this run, and taken from the journal unchanged.
    n_attempts_now : int
        Requests made in this run.
    n_out_of_window : int
        Kept stories whose word count is outside the window (kept, flagged, never dropped).
    n_incomplete_lines : int
        Journal lines cut by a kill and skipped.
    """

    stories: pd.DataFrame
    pairs: pd.DataFrame
    story_log: pd.DataFrame
    seed: int
    n_stories: int
    n_requested_now: int
    n_resumed: int
    n_attempts_now: int
    n_out_of_window: int
    n_incomplete_lines: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.story_log.copy()

    def __str__(self) -> str:
        return (
            f"{self.n_stories} stories ({self.n_resumed} resumed, {self.n_requested_now} generated now "
            f"with {self.n_attempts_now} requests), {len(self.pairs)} pairs; "
            f"{self.n_out_of_window} kept story(ies) outside the word window; blinding seed {self.seed}"
        )


def load_premises(path: str | Path) -> pd.DataFrame:
    """Read a premises file: columns ``premise_id``, ``premise``, optional ``kind``."""
    frame = read_frame(path, "premises", required=("premise_id", "premise"))
    return validate_premises(frame, str(path))


def validate_premises(frame: pd.DataFrame, file: str = "premises") -> pd.DataFrame:
    frame = frame.copy()
    frame.columns = [str(c).lower() for c in frame.columns]
    if "kind" not in frame.columns:
        frame["kind"] = ""
    problems = []
    for column in ("premise_id", "premise"):
        if column not in frame.columns:
            problems.append(InputProblem(file, "required column missing", column=column))
    if problems:
        raise InputError(problems)
    frame["premise_id"] = frame["premise_id"].astype(str).str.strip()
    frame["premise"] = frame["premise"].astype(str)
    frame["kind"] = frame["kind"].astype(str).str.strip()
    for i, row in enumerate(frame.itertuples(index=False), start=2):
        if not row.premise_id:
            problems.append(InputProblem(file, "empty premise_id", line=i, column="premise_id"))
        elif CONTROL.search(row.premise_id):
            problems.append(
                InputProblem(
                    file,
                    "premise_id holds a control character (pairs.csv and story_log.csv would carry it, and "
                    "every command reading them refuses it)",
                    line=i,
                    column="premise_id",
                    value=row.premise_id,
                    fix="remove the control character from the premise_id",
                )
            )
        if not row.premise.strip():
            problems.append(
                InputProblem(file, "empty premise", line=i, column="premise", fix="remove the row or write the premise")
            )
    for dup in sorted(frame.loc[frame["premise_id"].duplicated(), "premise_id"].unique()):
        problems.append(
            InputProblem(
                file, "duplicate premise_id", column="premise_id", value=dup, fix="make every premise_id unique"
            )
        )
    if frame.empty:
        problems.append(InputProblem(file, "no premises", fix="add at least one row"))
    if problems:
        raise InputError(problems)
    return frame[["premise_id", "premise", "kind"]].reset_index(drop=True)


def _hash_id(prefix: str, seed: int, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join([str(seed), prefix, *parts]).encode()).hexdigest()
    return f"{prefix}{digest[:10]}"


#: The files `audit generate` writes in its output directory (the journal is appended to, the others replaced).
JOURNAL = "attempts.jsonl"
OUTPUT_FILES = ("run.json", "stories.csv", "pairs.csv", "story_log.csv")


def own_files(out_dir: str | Path) -> tuple[str, ...]:
    """The files of ``out_dir`` that an earlier `audit generate` wrote, beyond what its manifest lists.

    The journal is recognised by its content (a readable journal starting with a ``run``
    record); the other outputs only in a folder without a manifest whose ``run.json`` is a
    generation seed record (written before output manifests existed).
    """
    out = Path(out_dir)
    found: list[str] = []
    journal = out / JOURNAL
    if journal.is_file() and not journal.is_symlink():
        try:
            records, _ = read_journal(journal)
        except InputError:
            records = []
        if not journal.stat().st_size or (records and records[0].get("type") == "run"):
            found.append(JOURNAL)
    run = out / "run.json"
    if (out / MANIFEST).exists() or run.is_symlink() or not run.is_file():
        return tuple(found)
    try:
        recorded = json.loads(run.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return tuple(found)
    if isinstance(recorded, dict) and "seed" in recorded and "protocol" in recorded:
        found += [name for name in OUTPUT_FILES if (out / name).is_file() and not (out / name).is_symlink()]
    return tuple(found)


def check_output_dir(out_dir: str | Path, inputs: Iterable[str | os.PathLike | None] = ()) -> Path:
    """Refuse, before any request, an output directory where generating would replace an input,
    write through a link or overwrite a file judge-audit did not write; create it."""
    names = (JOURNAL, *OUTPUT_FILES)
    adopt = own_files(out_dir)
    return prepare_output(out_dir, "output directory", directory=True, inputs=inputs, names=names, adopt=adopt)


def _resolve_seed(protocol: GenerationProtocol, out: Path, rng: Any) -> int:
    manifest = out / "run.json"
    recorded = json.loads(manifest.read_text())["seed"] if manifest.exists() else None
    if rng is None and protocol.seed is not None:
        rng = protocol.seed
    if rng is None and recorded is not None:
        return int(recorded)
    _, seed = resolve_rng(rng)
    if seed is None:  # a Generator was given: draw a recordable seed from it
        seed = int(rng.integers(0, 2**32))
    if recorded is not None and int(recorded) != seed:
        raise InputError(
            InputProblem(
                str(manifest),
                f"this directory was generated with blinding seed {recorded}, not {seed}",
                fix="rerun without --seed (or with the recorded one), or use a new output directory / --fresh",
            )
        )
    return seed


def plan_jobs(
    premises: pd.DataFrame, protocol: GenerationProtocol, matchups: tuple[Matchup, ...], seed: int
) -> list[StoryJob]:
    """The stories needed, in a deterministic order (premise, then matchup, then system)."""
    jobs: dict[str, StoryJob] = {}
    for row in premises.itertuples(index=False):
        for matchup in matchups:
            for system in (matchup.focal, matchup.other):
                scope = "" if protocol.reuse_stories else matchup.name
                story_id = _hash_id("s", seed, row.premise_id, system, scope)
                if story_id in jobs:
                    continue
                messages = (
                    ChatMessage("system", protocol.system_prompt),
                    ChatMessage("user", protocol.user_prompt(system, row.premise, row.kind)),
                )
                jobs[story_id] = StoryJob(
                    story_id,
                    row.premise_id,
                    system,
                    scope,
                    messages,
                    protocol.request_fingerprint(system, row.premise, row.kind),
                )
    return list(jobs.values())


def _run_story(
    job: StoryJob,
    previous: list[dict[str, Any]],
    provider: Provider,
    protocol: GenerationProtocol,
    journal: Journal,
    stop: Callable[[], bool],
) -> dict[str, Any]:
    regex = protocol.reasoning_regex
    attempts = sorted(previous, key=lambda r: r["attempt"])
    words = [int(r["words"]) for r in attempts]
    sampling = protocol.sampling_for(job.system)
    while not any(protocol.word_min <= n <= protocol.word_max for n in words) and len(words) < protocol.max_attempts:
        if stop():
            raise _Stopped()
        completion = provider.chat(job.messages, **sampling)
        text = strip_reasoning(completion.text, regex)
        n = count_words(text)
        journal.write(
            {
                "type": "attempt",
                "story_id": job.story_id,
                "premise_id": job.premise_id,
                "system": job.system,
                "matchup": job.matchup,
                "fingerprint": job.fingerprint,
                "attempt": len(words) + 1,
                "words": n,
                "in_window": protocol.word_min <= n <= protocol.word_max,
                "text": text,
                "raw": completion.text,
                "reasoning": completion.reasoning,
                "finish_reason": completion.finish_reason,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "n_http_attempts": completion.n_http_attempts,
                # lone UTF-16 surrogates in the server's JSON, replaced by U+FFFD
                "n_replaced_characters": int(completion.extra.get("n_replaced_characters", 0)),
                "elapsed_s": completion.elapsed_s,
                "time": datetime.now(timezone.utc).isoformat(),
            }
        )
        attempts.append(
            {"attempt": len(words) + 1, "words": n, "text": text, "finish_reason": completion.finish_reason}
        )
        words.append(n)
    # An attempt without a word (``content: null``, an empty answer, everything in the reasoning) is no
    # story: it is recorded in the journal, never kept; a story whose every attempt is empty fails.
    spoken = [i for i, n in enumerate(words) if n > 0]
    if not spoken:
        raise ProviderError(
            f"the server answered no text in all {len(words)} attempt(s) (content null or empty"
            + (f", finish_reason {attempts[-1].get('finish_reason')!r}" if attempts[-1].get("finish_reason") else "")
            + "); an empty story would be written and then refused by every command reading stories.csv. "
            "Check the model and its settings (a reasoning model may put its whole answer in reasoning_content, "
            "or max_tokens may be too small), or raise max_attempts"
        )
    window = (protocol.word_min, protocol.word_max, protocol.word_target)
    kept = spoken[choose_attempt([words[i] for i in spoken], *window)]
    final = {
        "type": "final",
        "story_id": job.story_id,
        "premise_id": job.premise_id,
        "system": job.system,
        "matchup": job.matchup,
        "fingerprint": job.fingerprint,
        "kept_attempt": int(attempts[kept]["attempt"]),
        "n_attempts": len(words),
        "words": words[kept],
        "in_window": protocol.word_min <= words[kept] <= protocol.word_max,
        "text": attempts[kept]["text"],
    }
    journal.write(final)
    return final


class _Stopped(Exception):
    pass


def generate_stories(
    premises: pd.DataFrame,
    protocol: GenerationProtocol,
    out_dir: str | Path,
    *,
    matchups: tuple[Matchup, ...] | None = None,
    providers: Mapping[str, Provider] | None = None,
    rng: int | np.random.Generator | None = None,
    fresh: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
    inputs: Iterable[str | os.PathLike | None] = (),
) -> GenerationResult:
    """Generate (or resume) the deployment set; write stories.csv, pairs.csv, story_log.csv.

    Parameters
    ----------
    premises : DataFrame
        premise_id, premise, optional kind (selects ``[phrasing]``).
    protocol : GenerationProtocol
    out_dir : path
        Receives attempts.jsonl (the journal), run.json (seed), stories.csv, pairs.csv and
        story_log.csv. Rerunning in the same directory resumes.
    matchups : tuple of Matchup, optional
        Defaults to the protocol's ``[[matchups]]``.
    providers : mapping system -> Provider, optional
        Defaults to providers built from each ``[systems.NAME.provider]`` table.
    rng : int | Generator | None
        Blinding seed; falls back to the protocol's ``seed``, then to the seed recorded in
        ``run.json``, then to a fresh recorded seed.
    fresh : bool
        Discard the journal and start over.
    progress : callable, optional
        Called with the run's ``"run"`` record (``n_stories``, ``n_todo``) once the plan is
        known, then with each story's ``"final"`` record as it finishes.

    Raises
    ------
    ProviderError
        A story could not be generated (after the provider's retries); finished stories are
        kept in the journal and a rerun resumes.
    InputError
        Bad premises/matchups, a journal written under a different protocol for some story,
        or a seed different from the one recorded.
    """
    out = check_output_dir(out_dir, inputs)
    premises = validate_premises(premises)
    matchups = tuple(matchups if matchups is not None else protocol.matchups)
    if not matchups:
        raise InputError(
            InputProblem(
                protocol.source, "no matchups", fix="add [[matchups]] to the protocol or pass --matchup FOCAL:OTHER"
            )
        )
    named = sorted({name for m in matchups for name in (m.focal, m.other, m.name) if CONTROL.search(name)})
    if named:
        raise InputError(
            InputProblem(
                protocol.source,
                "a system name holds a control character (pairs.csv would carry it, and every command reading it "
                "refuses it)",
                value=named[0],
                fix="rename the system without control characters",
            )
        )
    journal_path = out / JOURNAL
    if fresh:  # only files judge-audit wrote, none an input (check_output_dir)
        for name in (JOURNAL, *OUTPUT_FILES):
            (out / name).unlink(missing_ok=True)
    seed = _resolve_seed(protocol, out, rng)
    run_json = json.dumps({"seed": seed, "protocol": protocol.source}, indent=2)
    write_folder(out, {"run.json": run_json}, command="generate", inputs=inputs, adopt=own_files(out), clean=False)
    jobs = plan_jobs(premises, protocol, matchups, seed)
    records, n_incomplete = read_journal(journal_path)
    finals: dict[str, dict[str, Any]] = {}
    partial: dict[str, list[dict[str, Any]]] = {}
    expected = {job.story_id: job for job in jobs}
    stale = set()
    for record in records:
        job = expected.get(record.get("story_id", ""))
        if job is None or record.get("type") not in ("attempt", "final"):
            continue
        if record.get("fingerprint") != job.fingerprint:
            stale.add(job.story_id)
            continue
        if record["type"] == "final":
            finals[job.story_id] = record
        else:
            partial.setdefault(job.story_id, []).append(record)
    if stale:
        raise InputError(
            InputProblem(
                str(journal_path),
                f"{len(stale)} story(ies) in the journal were generated under a different protocol (prompt, model, "
                "sampling or word window changed)",
                fix="use a new output directory, or --fresh to discard the journal",
            )
        )
    n_resumed = len(finals)
    todo = [job for job in jobs if job.story_id not in finals]
    if providers is None:
        needed = sorted({job.system for job in todo})
        providers = {
            name: build_provider(protocol.systems[name].provider, where=f"{protocol.source} [systems.{name}.provider]")
            for name in needed
        }
    missing = sorted({job.system for job in todo} - set(providers))
    if missing:
        raise InputError(
            InputProblem(protocol.source, f"no provider for system(s) {missing}", fix="define [systems.NAME.provider]")
        )
    journal = Journal(journal_path)
    run_record = {
        "type": "run",
        "time": datetime.now(timezone.utc).isoformat(),
        "seed": seed,
        "protocol": protocol.source,
        "n_stories": len(jobs),
        "n_todo": len(todo),
        "providers": {name: providers[name].describe() for name in sorted({j.system for j in todo})},
    }
    journal.write(run_record)
    if progress is not None:
        progress(run_record)
    failures: list[tuple[StoryJob, BaseException]] = []
    stopping = False
    with ThreadPoolExecutor(max_workers=max(1, protocol.concurrency)) as pool:
        futures = {
            pool.submit(
                _run_story,
                job,
                partial.get(job.story_id, []),
                providers[job.system],
                protocol,
                journal,
                lambda: stopping,
            ): job
            for job in todo
        }
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    finals[job.story_id] = future.result()
                except _Stopped:
                    continue
                except ProviderError as exc:
                    failures.append((job, exc))
                    stopping = True
                    continue
                if progress is not None:
                    progress(finals[job.story_id])
        except BaseException:
            stopping = True
            for future in futures:
                future.cancel()
            raise
    n_attempts_now = sum(
        int(finals[j.story_id]["n_attempts"]) - len(partial.get(j.story_id, [])) for j in todo if j.story_id in finals
    )
    if failures:
        job, exc = failures[0]
        raise ProviderError(
            f"{len(failures)} story(ies) failed (first: premise {job.premise_id}, system {job.system}): "
            f"{str(exc).rstrip('.')}. {len(finals)} of {len(jobs)} stories are finished and kept in {journal_path}; "
            "rerun the same command to resume."
        )
    return _write_outputs(
        premises,
        protocol,
        matchups,
        jobs,
        finals,
        seed,
        out,
        n_resumed,
        n_attempts_now,
        n_incomplete,
        run_json,
        inputs,
    )


def _write_outputs(
    premises, protocol, matchups, jobs, finals, seed, out, n_resumed, n_attempts_now, n_incomplete, run_json, inputs
) -> GenerationResult:
    gen, _ = resolve_rng(seed)  # presentation order of all pairs
    by_key = {(job.premise_id, job.system, job.matchup): finals[job.story_id] for job in jobs}
    premise_text = dict(zip(premises["premise_id"], premises["premise"]))
    pair_rows = []
    for matchup in matchups:
        n = len(premises)
        # Sides depend only on (seed, matchup), so adding a matchup later changes no side.
        sides = np.random.default_rng(int(_hash_id("", seed, "sides", matchup.name), 16))
        # Balanced sides within a matchup: half the pairs show the focal system first.
        focal_first = np.array([i < math.ceil(n / 2) for i in range(n)])
        if n % 2 == 1 and sides.random() < 0.5:
            focal_first = ~focal_first  # the odd pair's side is itself random
        focal_first = sides.permutation(focal_first)
        for p_index, premise_id in enumerate(premises["premise_id"]):
            scope = "" if protocol.reuse_stories else matchup.name
            focal_story = by_key[(premise_id, matchup.focal, scope)]
            other_story = by_key[(premise_id, matchup.other, scope)]
            first, second = (focal_story, other_story) if focal_first[p_index] else (other_story, focal_story)
            pair_rows.append(
                {
                    "pair_id": _hash_id("p", seed, premise_id, matchup.name),
                    "system_a": first["system"],
                    "system_b": second["system"],
                    "focal": matchup.focal,
                    "matchup": matchup.name,
                    "group_id": premise_id,
                    "shown_first": first["system"],
                    "story_a_id": first["story_id"],
                    "story_b_id": second["story_id"],
                    "premise": premise_text[premise_id],
                }
            )
    order = gen.permutation(len(pair_rows))
    pairs = pd.DataFrame([pair_rows[i] for i in order])
    pairs.insert(pairs.columns.get_loc("premise"), "position", np.arange(1, len(pairs) + 1))
    story_rows = []
    for row in pairs.itertuples(index=False):
        for system, story_id in ((row.system_a, row.story_a_id), (row.system_b, row.story_b_id)):
            story_rows.append(
                {"pair_id": row.pair_id, "system": system, "story_id": story_id, "text": finals[story_id]["text"]}
            )
    stories = pd.DataFrame(story_rows, columns=["pair_id", "system", "story_id", "text"])
    log = pd.DataFrame(
        [
            {
                "story_id": job.story_id,
                "premise_id": job.premise_id,
                "system": job.system,
                "matchup": job.matchup,
                "words": int(finals[job.story_id]["words"]),
                "n_attempts": int(finals[job.story_id]["n_attempts"]),
                "kept_attempt": int(finals[job.story_id]["kept_attempt"]),
                "in_window": bool(finals[job.story_id]["in_window"]),
            }
            for job in jobs
        ]
    )
    tables = {"stories.csv": stories, "pairs.csv": pairs, "story_log.csv": log}
    for name, table in tables.items():
        check_writable_names(table, out / name)
    write_folder(
        out,
        {"run.json": run_json, **{name: csv_text(table) for name, table in tables.items()}},
        command="generate",
        inputs=inputs,
        adopt=own_files(out),
        clean=False,
    )
    return GenerationResult(
        stories=stories,
        pairs=pairs,
        story_log=log,
        seed=seed,
        n_stories=len(jobs),
        n_requested_now=len(jobs) - n_resumed,
        n_resumed=n_resumed,
        n_attempts_now=n_attempts_now,
        n_out_of_window=int((~log["in_window"]).sum()),
        n_incomplete_lines=n_incomplete,
    )
