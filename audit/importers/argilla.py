"""Argilla v2 records (``dataset.records.to_json(...)`` / ``to_list(flatten=False)``, JSON or JSONL).

A record holds ``id``, ``fields`` (the texts shown), ``metadata``, ``suggestions``
(question -> ``{value, score, agent}``: the judge's answer) and ``responses`` (question ->
``[{value, user_id, status}]``: one answer per annotator). Each question is a criterion;
only ``submitted`` responses are read (drafts and discarded ones are counted and left out).

Two shapes, told apart by the metadata (or fields):

- **pairwise**: ``model_a`` / ``model_b`` (or ``system_a`` / ``system_b``) name the two systems;
  an answer is a system name, ``A``/``B``, ``model_a``/``model_b`` or ``tie``. The record id is
  the ``pair_id``; texts from fields ``response_a`` / ``response_b``.
- **scalar**: ``model`` (or ``system``) names the system and ``group_id`` (or ``prompt_id``)
  the prompt; an answer is a number (a RatingQuestion). The record id is the ``item_id``;
  the text from field ``response`` (or ``text``, ``output``).

The judge configuration is the suggestion's ``agent`` (``suggestion`` when empty).
"""

from __future__ import annotations

from pathlib import Path

from judge_transfer_audit.importers import Rows
from judge_transfer_audit.importers._base import (
    INVALID,
    TIE,
    ImportOptions,
    Problems,
    first_record,
    load_records,
    number,
    refuse_format,
    type_name,
)
from judge_transfer_audit.importers.mtbench import _pair

PRODUCER = "Argilla (dataset.records.to_json)"
_FIX = "give the records as Argilla exported them (id, fields, metadata, suggestions, responses)"


def _meta(rec, *keys):
    for where in ("metadata", "fields"):
        d = rec.get(where)
        if isinstance(d, dict):
            for k in keys:
                if isinstance(d.get(k), str) and d[k].strip():
                    return d[k].strip()
    return None


def _shape(rec) -> str | None:
    if _meta(rec, "model_a", "system_a") and _meta(rec, "model_b", "system_b"):
        return "pairwise"
    if _meta(rec, "model", "system"):
        return "scalar"
    return None


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = None
    seen: dict[tuple, str] = {}
    for path in paths:
        recs = load_records(path, PRODUCER, list_key="records")
        first = first_record(recs)
        if first is None or not ("responses" in first or "suggestions" in first):
            refuse_format(
                recs,
                first,
                problems,
                "not an Argilla records file (records need 'responses' or 'suggestions')",
                "export the records with dataset.records.to_json(path) (or to_list(flatten=False))",
            )
            continue
        shape = _shape(first)
        if shape is None:
            problems.add(
                recs[0][0],
                "the record names no system: metadata needs model_a and model_b (pairwise) or model (scalar)",
                "add the model names to each record's metadata before exporting",
                field="metadata",
                line=recs[0][2],
            )
            continue
        if rows is None:
            rows = Rows("pair_id" if shape == "pairwise" else "item_id")
        t = rows.tally(str(path))
        rows.tallies[t].read = len(recs)
        for n, (where, rec, line) in enumerate(recs):
            if not isinstance(rec, dict):
                problems.add(where, f"a record must be an object, found {type_name(rec)}", _FIX, line=line)
                continue
            _record(rows, (t, n), where, rec, line, problems, seen, shape)
    return rows or Rows("pair_id")


def _answer(value, shape, a, b):
    """A pairwise answer as a system or tie, a scalar one as a float; None when unreadable."""
    if shape == "scalar":
        v = number(value)
        if v is None and isinstance(value, str):
            try:
                v = float(value)
            except ValueError:
                return None
        return v
    if not isinstance(value, str):
        return None
    w = value.strip()
    table = {"a": a, "b": b, "model_a": a, "model_b": b, "tie": TIE}
    if w in (a, b):
        return w
    return table.get(w.lower())


def _record(rows, rec_id, where, rec, line, problems, seen, shape) -> None:
    n_before = len(problems.items)
    rid = rec.get("id")
    if rid is None or rid == "":
        problems.add(where, "the record has no 'id'", _FIX + " (every record needs its id)", field="id", line=line)
    elif isinstance(rid, bool) or not isinstance(rid, (str, int)):
        problems.add(where, f"'id' must be text, found {type_name(rid)}", _FIX, field="id", value=rid, line=line)
    if _shape(rec) != shape:
        problems.add(
            where,
            f"this record is not {shape} like the first record of the file (metadata model_a/model_b vs model)",
            "give pairwise and scalar records in separate imports",
            field="metadata",
            line=line,
        )
        return
    a = b = system = group = None
    if shape == "pairwise":
        a, b = _meta(rec, "model_a", "system_a"), _meta(rec, "model_b", "system_b")
    else:
        system = _meta(rec, "model", "system")
        group = _meta(rec, "group_id", "prompt_id")
        if group is None:
            problems.add(
                where,
                "the record has no metadata group_id (or prompt_id)",
                "give each record the id of its prompt in metadata.group_id: outputs of one prompt are "
                "compared with each other",
                field="metadata.group_id",
                line=line,
            )
    answers = []  # (question, who, value, is_judge)
    sugg = rec.get("suggestions") or {}
    resp = rec.get("responses") or {}
    for name, d in (("suggestions", sugg), ("responses", resp)):
        if not isinstance(d, dict):
            problems.add(
                where,
                f"'{name}' must be an object (question -> answers), found {type_name(d)}",
                _FIX,
                field=name,
                line=line,
            )
    if len(problems.items) > n_before:
        return
    for q, s in sugg.items():
        if not isinstance(s, dict) or "value" not in s:
            problems.add(
                where, f"suggestions.{q} must be an object with a 'value'", _FIX, field=f"suggestions.{q}", line=line
            )
            continue
        agent = s.get("agent") if isinstance(s.get("agent"), str) and s.get("agent") else "suggestion"
        answers.append((q, agent, s["value"], True))
    n_draft = 0
    for q, lst in resp.items():
        if not isinstance(lst, list) or not all(isinstance(r, dict) for r in lst):
            problems.add(where, f"responses.{q} must be a list of answers", _FIX, field=f"responses.{q}", line=line)
            continue
        for r in lst:
            if r.get("status", "submitted") != "submitted":
                n_draft += 1
                continue
            who = r.get("user_id")
            if who is None or who == "" or not isinstance(who, (str, int)):
                problems.add(where, f"an answer to {q} has no user_id", _FIX, field=f"responses.{q}.user_id", line=line)
                continue
            answers.append((q, str(who), r.get("value"), False))
    if len(problems.items) > n_before:
        return
    rid = str(rid)
    if rid in seen:
        problems.add(
            where,
            f"duplicate record: the same id as {seen[rid]}",
            "give each record once",
            field="id",
            value=rid,
            line=line,
        )
        return
    seen[rid] = where
    if n_draft:
        rows.notes.append(f"{where}: {n_draft} draft or discarded response(s) left out")
    if shape == "pairwise" and a == b:
        rows.tallies[rec_id[0]].exclude("record comparing a model with itself")
        return
    out = 0
    for q, who, value, is_judge in answers:
        v = _answer(value, shape, a, b)
        if v is None:
            if is_judge and value is None:
                v = INVALID if shape == "pairwise" else ""
            elif shape == "pairwise":
                problems.add(
                    where,
                    f"unknown model name {value!r} in the answer to {q}",
                    f"answer with {a}, {b}, A, B or tie",
                    field=f"{'suggestions' if is_judge else 'responses'}.{q}",
                    line=line,
                )
                continue
            else:
                problems.add(
                    where,
                    f"the answer to {q} is not a number, found {type_name(value)}",
                    "use a rating question (numbers)",
                    field=f"{'suggestions' if is_judge else 'responses'}.{q}",
                    value=value,
                    line=line,
                )
                continue
        crit = q.strip().lower()
        out += 1
        if shape == "pairwise":
            row = {"pair_id": rid, "criterion": crit, "choice": v, "shown_first": "", "_rec": rec_id}
            if is_judge:
                rows.judge.append({**row, "judge": who, "sample": 0})
            else:
                rows.humans.append({**row, "reader_id": who})
        elif is_judge:
            rows.judge.append(
                {"item_id": rid, "system": system, "criterion": crit, "judge": who, "score": v, "_rec": rec_id}
            )
        else:
            rows.humans.append(
                {"item_id": rid, "reader_id": who, "criterion": crit, "rating": v, "group_id": group, "_rec": rec_id}
            )
    if len(problems.items) > n_before:
        return
    if not out:
        rows.tallies[rec_id[0]].exclude("record with no suggestion and no submitted response")
        return
    fields = rec.get("fields") if isinstance(rec.get("fields"), dict) else {}
    if shape == "pairwise":
        rows.pairs.setdefault(rid, _pair(rid, a, b, _meta(rec, "group_id", "prompt_id") or ""))
        for m, k in ((a, "response_a"), (b, "response_b")):
            if isinstance(fields.get(k), str) and fields[k].strip():
                rows.stories.setdefault((rid, m), fields[k])
    else:
        for k in ("response", "text", "output"):
            if isinstance(fields.get(k), str) and fields[k].strip():
                rows.stories.setdefault((rid, system), fields[k])
                break
