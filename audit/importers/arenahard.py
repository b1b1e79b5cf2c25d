"""arena-hard-auto judgments (``model_judgment/<judge>/<model>.jsonl``), plus arena votes.

A judgment record holds ``uid`` (v2; ``question_id`` in v0.1), ``model``, ``judge``,
``baseline`` (v2; else ``--baseline``) and ``games``: two games, each with a ``score`` of
``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A`` (or null when the judge's answer held no
verdict). Game 1 shows the baseline as assistant A and the model as B; game 2 swaps them.
Each game is one verdict row (strong and weak preferences are both a win: the audit reads
verdicts, not margins) with ``shown_first`` = the model shown as A.

Vote records (``model_a``, ``model_b``, ``winner``, ``judge``: Chatbot Arena) in the same
command are human votes on the same prompts (keyed by ``question_id`` or ``uid``).
"""

from __future__ import annotations

from pathlib import Path

from judge_transfer_audit.importers import Rows
from judge_transfer_audit.importers._base import (
    INVALID,
    TIE,
    ImportOptions,
    Problems,
    check_record,
    first_record,
    load_records,
    pair_key,
    refuse_format,
    text_field,
    type_name,
)
from judge_transfer_audit.importers.mtbench import _duplicate, _pair, _vote, unknown_models

PRODUCER = "arena-hard-auto (gen_judgment.py)"
_FIX = "give the judgment file as gen_judgment.py wrote it (uid, model, judge, baseline, games)"
#: score -> winner side ("A", "B" or tie)
SCORES = {"A>>B": "A", "A>B": "A", "A=B": TIE, "B>A": "B", "B>>A": "B"}


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = Rows("pair_id")
    judged_models: set[str] = set()
    seen: dict[tuple, str] = {}
    for path in paths:
        recs = load_records(path, PRODUCER)
        t = rows.tally(str(path))
        rows.tallies[t].read = len(recs)
        first = first_record(recs)
        if first is None or not ("games" in first or "winner" in first):
            refuse_format(
                recs,
                first,
                problems,
                "not an arena-hard judgment file (no 'games') nor a votes file (no 'winner')",
                "give arena-hard-auto's model_judgment/<judge>/<model>.jsonl",
            )
            continue
        for n, (where, rec, line) in enumerate(recs):
            if not check_record(where, rec, line, problems, PRODUCER):
                continue
            if "winner" in rec and "games" not in rec:
                _vote(
                    rows, (t, n), where, rec, line, problems, seen, options, turn=False, id_keys=("uid", "question_id")
                )
            else:
                _judgment(rows, (t, n), where, rec, line, problems, seen, options, judged_models)
    unknown_models(rows, judged_models, problems)
    return rows


def _judgment(rows, rec_id, where, rec, line, problems, seen, options, judged_models) -> None:
    n_before = len(problems.items)
    key = "question_id" if "question_id" in rec and "uid" not in rec else "uid"
    qid = text_field(rec, key, where, line, problems, _FIX + " (every record needs its 'uid')", allow_number=True)
    model = text_field(rec, "model", where, line, problems, _FIX)
    judge = text_field(rec, "judge", where, line, problems, _FIX, required=False) or "judge"
    baseline = rec.get("baseline", options.baseline)
    if baseline is None:
        problems.add(
            where,
            "the record names no baseline model",
            "give --baseline NAME (arena-hard v0.1 files do not record it; the default there was gpt-4-0314)",
            field="baseline",
            line=line,
        )
    elif not isinstance(baseline, str) or not baseline:
        problems.add(
            where,
            f"'baseline' must be text, found {type_name(baseline)}",
            _FIX,
            field="baseline",
            value=baseline,
            line=line,
        )
        baseline = None
    games = rec.get("games")
    if not isinstance(games, list) or not 1 <= len(games) <= 2 or not all(isinstance(g, dict) for g in games):
        problems.add(
            where,
            "'games' must be a list of one or two games (objects with a 'score'), found "
            + (f"{len(games)} item(s)" if isinstance(games, list) else type_name(games)),
            _FIX,
            field="games",
            line=line,
        )
        return
    sides = []
    for i, g in enumerate(games):
        s = g.get("score")
        if s is not None and (not isinstance(s, str) or s not in SCORES):
            problems.add(
                where,
                f"games[{i}].score must be one of A>>B, A>B, A=B, B>A, B>>A (or null), found "
                + (repr(s) if isinstance(s, str) else type_name(s)),
                "give the judgment file as gen_judgment.py wrote it",
                field=f"games[{i}].score",
                line=line,
            )
        sides.append(SCORES.get(s) if isinstance(s, str) else None)
    if len(problems.items) > n_before or None in (qid, model, baseline):
        return
    if model == baseline:
        rows.tallies[rec_id[0]].exclude("judgment of the baseline against itself")
        return
    judged_models.update((model, baseline))
    pid = pair_key(qid, baseline, model)
    if _duplicate(
        seen, ("judgment", pid, judge), where, line, problems, "judge", "keep one judgment per uid, model and judge"
    ):
        return
    rows.pairs.setdefault(pid, _pair(pid, baseline, model, qid))
    # game 1: A = baseline, B = model; game 2: A = model, B = baseline
    for shown_a, shown_b, side in zip((baseline, model), (model, baseline), sides):
        choice = INVALID if side is None else TIE if side == TIE else (shown_a if side == "A" else shown_b)
        rows.judge.append(
            {
                "pair_id": pid,
                "criterion": options.criterion,
                "judge": judge,
                "sample": 0,
                "choice": choice,
                "shown_first": shown_a,
                "_rec": rec_id,
            }
        )
