"""FastChat MT-Bench: pairwise judgments (``gpt-4_pair.jsonl``) and human / arena votes.

A judgment record (``gen_judgment.py --mode pairwise-all`` or ``pairwise-baseline``) holds
``question_id``, ``model_1``, ``model_2``, ``g1_winner`` (game 1: ``model_1`` shown as
assistant A), ``g2_winner`` (game 2, the swap: ``model_2`` shown as A), each already mapped
back to ``model_1`` / ``model_2`` / ``tie`` / ``error``, ``judge`` (``[model, prompt name]``)
and ``turn``. It gives two verdict rows, one per game, with ``shown_first`` = the model shown
as A, so the audit's position section sees both orders.

A vote record (the MT-Bench human judgments, Chatbot Arena conversations) holds
``question_id``, ``model_a``, ``model_b``, ``winner`` (``model_a``, ``model_b``, ``tie`` or
``tie (bothbad)``), ``judge`` (the voter) and ``turn``, optionally ``conversation_a`` /
``conversation_b`` (the texts). Votes whose ``judge`` is listed with ``--as-judge``
(e.g. ``gpt4_pair``) are judge verdicts instead.
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

PRODUCER = "FastChat (llm_judge)"
_FIX = "give the judgment file as gen_judgment.py wrote it (question_id, model_1, model_2, g1_winner, g2_winner)"
_VOTE_FIX = "give the votes as released (question_id, model_a, model_b, winner, judge, turn)"
JUDGMENT_WINNERS = {"model_1", "model_2", "tie", "error"}
VOTE_WINNERS = {"model_a": "a", "model_b": "b", "tie": TIE, "tie (bothbad)": TIE}


def kind_of(rec: dict) -> str | None:
    if "g1_winner" in rec or "g2_winner" in rec:
        return "judgment"
    if "winner" in rec:
        return "vote"
    return None


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = Rows("pair_id")
    records = []
    for path in paths:
        recs = load_records(path, PRODUCER)
        t = rows.tally(str(path))
        rows.tallies[t].read = len(recs)
        first = first_record(recs)
        if first is None or kind_of(first) is None:
            refuse_format(
                recs,
                first,
                problems,
                "not an MT-Bench pairwise judgment (g1_winner, g2_winner) or vote (winner) file",
                "give FastChat's pairwise judgments (model_judgment/gpt-4_pair.jsonl) or the human/arena votes",
            )
            continue
        records.append((t, recs))
    judged_models: set[str] = set()
    seen: dict[tuple, str] = {}
    for t, recs in records:
        for n, (where, rec, line) in enumerate(recs):
            if not check_record(where, rec, line, problems, PRODUCER):
                continue
            kind = kind_of(rec)
            if kind == "judgment":
                _judgment(rows, (t, n), where, rec, line, problems, seen, options, judged_models)
            elif kind == "vote":
                _vote(rows, (t, n), where, rec, line, problems, seen, options, turn=True)
            else:
                problems.add(
                    where,
                    "the record has neither 'g1_winner' (a judgment) nor 'winner' (a vote)",
                    _FIX,
                    field="winner",
                    line=line,
                )
    unknown_models(rows, judged_models, problems)
    return rows


def unknown_models(rows: Rows, judged_models: set[str], problems: Problems) -> None:
    """A model named in a votes file that no judgment file names (a misspelt model) is a problem."""
    if not judged_models:
        return
    for r in rows.humans:
        for m in (r["_a"], r["_b"]):
            if m not in judged_models:
                problems.add(
                    r["_where"],
                    f"model {m!r} of this vote is named in no judgment file",
                    "check the spelling of the model name (the judgment files name "
                    + ", ".join(sorted(judged_models)[:6])
                    + ("..." if len(judged_models) > 6 else "")
                    + "), or leave out the votes of models that were not judged",
                    field="model_a" if m == r["_a"] else "model_b",
                    value=m,
                    line=r["_line"],
                )


def _qid(rec, where, line, problems, fix, key="question_id"):
    return text_field(rec, key, where, line, problems, fix + f" (every record needs its '{key}')", allow_number=True)


def _turn(rec, where, line, problems) -> str | None:
    turn = rec.get("turn", 1)
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        problems.add(
            where,
            f"'turn' must be a whole number >= 1, found {type_name(turn)}",
            "write the turn as 1 or 2",
            field="turn",
            value=turn,
            line=line,
        )
        return None
    return str(turn)


def _judge_name(rec, where, line, problems) -> str | None:
    judge = rec.get("judge")
    if isinstance(judge, list) and judge and isinstance(judge[0], str) and judge[0]:
        return judge[0]
    if isinstance(judge, str) and judge:
        return judge
    problems.add(
        where,
        "the record has no 'judge' (expected [judge model, prompt name])"
        if judge in (None, "", [])
        else f"'judge' must be [judge model, prompt name], found {type_name(judge)}",
        "give the judgment file as gen_judgment.py wrote it",
        field="judge",
        value=None if judge in (None, "", []) else judge,
        line=line,
    )
    return None


def _duplicate(seen, key, where, line, problems, field, fix) -> bool:
    if key in seen:
        problems.add(
            where,
            f"duplicate record: the same pair and {field} as {seen[key]}",
            fix,
            field=field,
            value=key[-1],
            line=line,
        )
        return True
    seen[key] = where + (f", line {line}" if line else "")
    return False


def _judgment(rows, rec_id, where, rec, line, problems, seen, options, judged_models) -> None:
    n_before = len(problems.items)
    qid = _qid(rec, where, line, problems, _FIX)
    m1 = text_field(rec, "model_1", where, line, problems, _FIX)
    m2 = text_field(rec, "model_2", where, line, problems, _FIX)
    turn = _turn(rec, where, line, problems)
    judge = _judge_name(rec, where, line, problems)
    winners = {}
    for g in ("g1_winner", "g2_winner"):
        w = rec.get(g)
        if w is None and g == "g2_winner":
            continue  # a judgment without the swapped game: one verdict
        if not isinstance(w, str) or w not in JUDGMENT_WINNERS:
            problems.add(
                where,
                f"'{g}' must be one of model_1, model_2, tie, error, found "
                + (repr(w) if isinstance(w, str) else type_name(w)),
                "give the judgment file as gen_judgment.py wrote it (winners mapped back to model_1/model_2)",
                field=g,
                value=w if not isinstance(w, str) else None,
                line=line,
            )
            continue
        winners[g] = w
    if len(problems.items) > n_before or None in (qid, m1, m2, turn, judge):
        return
    if m1 == m2:
        rows.tallies[rec_id[0]].exclude("judgment of a model against itself")
        return
    judged_models.update((m1, m2))
    pid = pair_key(qid, m1, m2, turn)
    if _duplicate(
        seen, ("judgment", pid, judge), where, line, problems, "judge", "keep one judgment per pair, turn and judge"
    ):
        return
    rows.pairs.setdefault(pid, _pair(pid, m1, m2, qid))
    names = {"model_1": m1, "model_2": m2, "tie": TIE, "error": INVALID}
    for g, shown in (("g1_winner", m1), ("g2_winner", m2)):
        if g in winners:
            rows.judge.append(
                {
                    "pair_id": pid,
                    "criterion": options.criterion,
                    "judge": judge,
                    "sample": 0,
                    "choice": names[winners[g]],
                    "shown_first": shown,
                    "_rec": rec_id,
                }
            )


def _pair(pid, a, b, group):
    lo, hi = sorted((a, b))
    return {"pair_id": pid, "system_a": lo, "system_b": hi, "group_id": group}


def _answer(conv, turn: int):
    """The model's answer at ``turn`` (its ``turn``-th assistant message), or None."""
    if not isinstance(conv, list):
        return None
    said = [m.get("content") for m in conv if isinstance(m, dict) and m.get("role") in ("assistant", "gpt")]
    if len(said) >= turn and isinstance(said[turn - 1], str):
        return said[turn - 1]
    return None


def _vote(rows, rec_id, where, rec, line, problems, seen, options, *, turn: bool, id_keys=("question_id",)) -> None:
    n_before = len(problems.items)
    key = next((k for k in id_keys if k in rec), id_keys[0])
    qid = _qid(rec, where, line, problems, _VOTE_FIX, key)
    a = text_field(rec, "model_a", where, line, problems, _VOTE_FIX)
    b = text_field(rec, "model_b", where, line, problems, _VOTE_FIX)
    t = _turn(rec, where, line, problems) if turn else None
    voter = text_field(
        rec, "judge", where, line, problems, _VOTE_FIX + " (the voter is the 'judge' field)", allow_number=True
    )
    w = rec.get("winner")
    if isinstance(w, str) and w not in VOTE_WINNERS and w not in (a, b):
        problems.add(
            where,
            f"unknown model name {w!r} in 'winner' (it must be model_a, model_b, tie or 'tie (bothbad)')",
            "write the winner as model_a / model_b / tie / tie (bothbad), or the exact name of one of the two models",
            field="winner",
            line=line,
        )
    elif not isinstance(w, str):
        problems.add(
            where,
            f"'winner' must be text, found {type_name(w)}",
            "write the winner as model_a / model_b / tie / tie (bothbad)",
            field="winner",
            value=w,
            line=line,
        )
    if len(problems.items) > n_before or None in (qid, a, b, voter) or (turn and t is None):
        return
    if a == b:
        rows.tallies[rec_id[0]].exclude("vote between a model and itself")
        return
    pid = pair_key(qid, a, b, *([t] if turn else []))
    as_judge = voter in options.as_judge
    role = "judge" if as_judge else "voter"
    if _duplicate(seen, (role, pid, voter), where, line, problems, "judge", f"keep one vote per pair and {role}"):
        return
    choice = {"a": a, "b": b}.get(VOTE_WINNERS.get(w, ""), TIE if VOTE_WINNERS.get(w) == TIE else w)
    rows.pairs.setdefault(pid, _pair(pid, a, b, qid))
    if as_judge:
        rows.judge.append(
            {
                "pair_id": pid,
                "criterion": options.criterion,
                "judge": voter,
                "sample": 0,
                "choice": choice,
                "shown_first": "",
                "_rec": rec_id,
            }
        )
    else:
        rows.humans.append(
            {
                "pair_id": pid,
                "reader_id": voter,
                "criterion": options.criterion,
                "choice": choice,
                "shown_first": a,
                "_rec": rec_id,
                "_a": a,
                "_b": b,
                "_where": where,
                "_line": line,
            }
        )
    n = int(t) if t else 1
    for model, conv in ((a, rec.get("conversation_a")), (b, rec.get("conversation_b"))):
        text = _answer(conv, n)
        if text:
            rows.stories.setdefault((pid, model), text)
