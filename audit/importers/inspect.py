"""inspect_ai eval logs: ``.json`` read directly, ``.eval`` through inspect_ai's own log reader.

A log holds ``eval.model`` (the system) and ``samples[]``: ``id``, ``epoch``, ``output``
(the answer) and ``scores`` (scorer name -> ``value``, ``history``). A score edited by
hand keeps its edit history: ``history[0]`` is the scorer's original value (no
``provenance``), each later entry an edit whose ``provenance.author`` is the person.

Mapping (scalar): an output is ``item_id`` = ``<sample id>:<model>`` (``<id>:e<epoch>:<model>``
for epochs after the first), its ``group_id`` the sample id (every model answered the same
sample); each scorer is a judge configuration and a criterion (a dict value gives one
criterion per key, ``scorer/key``); the scorer's original value is the judge's score and each
author's last edit is that reader's rating. Values are read as inspect_ai reads them:
numbers and booleans as numbers, ``C``/``I``/``P``/``N`` as 1/0/0.5/0, ``yes``/``no``/``true``/
``false`` as 1/0.
"""

from __future__ import annotations

import math
from pathlib import Path

from judge_transfer_audit.importers import Rows
from judge_transfer_audit.importers._base import ImportOptions, Problems, load_json, number, type_name

PRODUCER = "inspect_ai"
_FIX = "give the eval log as inspect_ai wrote it (inspect eval --log-format json), unedited"
_WORDS = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
UNCHANGED = "UNCHANGED"


def _eval_log(path: Path) -> dict:
    """A ``.eval`` log as the JSON a ``.json`` log holds, through inspect_ai's reader."""
    from judge_transfer_audit.core.optional import import_optional

    log = import_optional("inspect_ai.log", "reading inspect_ai .eval logs").read_eval_log(str(path))
    return log.model_dump(mode="json")


def to_float(value) -> float | None:
    """inspect_ai's value_to_float for one scalar value; None for a value it cannot read."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    v = number(value)
    if v is not None:
        return v
    if isinstance(value, str):
        w = value.strip().lower()
        if w in _WORDS:
            return _WORDS[w]
        try:
            return float(w)
        except ValueError:
            return None
    return None


def _values(value) -> dict[str, object]:
    """Sub-criterion ('' for a scalar) -> raw value."""
    if isinstance(value, dict):
        return {f"/{k}": v for k, v in value.items()}
    return {"": value}


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = Rows("item_id")
    seen: dict[tuple, str] = {}
    for path in paths:
        data = _eval_log(path) if path.suffix.lower() == ".eval" else load_json(path, PRODUCER)
        t = rows.tally(str(path), "samples")
        spec = data.get("eval") if isinstance(data, dict) else None
        samples = data.get("samples") if isinstance(data, dict) else None
        if not isinstance(spec, dict) or not isinstance(samples, list):
            problems.add(
                str(path),
                "not an inspect_ai eval log (needs 'eval' and a 'samples' list)"
                + (f": top-level fields {', '.join(sorted(data)[:8])}" if isinstance(data, dict) else ""),
                "give a log written by `inspect eval` with its samples (not a header-only log); for another tool's "
                "file use its format (audit import --help lists them)",
            )
            continue
        model = spec.get("model")
        if not isinstance(model, str) or not model:
            problems.add(str(path), "the log names no model (eval.model)", _FIX, field="eval.model", value=model)
            continue
        rows.tallies[t].read = len(samples)
        for n, s in enumerate(samples):
            where = f"{path}, samples[{n}]"
            if not isinstance(s, dict):
                problems.add(where, f"a sample must be an object, found {type_name(s)}", _FIX)
                continue
            _sample(rows, (t, n), where, s, model, problems, seen)
    return rows


def _sample(rows, rec_id, where, s, model, problems, seen) -> None:
    n_before = len(problems.items)
    sid = s.get("id")
    if sid is None or sid == "":
        problems.add(where, "the sample has no 'id'", _FIX + " (every sample needs its id)", field="id")
    elif isinstance(sid, bool) or not isinstance(sid, (str, int)):
        problems.add(where, f"'id' must be text or a whole number, found {type_name(sid)}", _FIX, field="id", value=sid)
    epoch = s.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        problems.add(
            where, f"'epoch' must be a whole number, found {type_name(epoch)}", _FIX, field="epoch", value=epoch
        )
    scores = s.get("scores") or {}
    if not isinstance(scores, dict):
        problems.add(where, f"'scores' must be an object, found {type_name(scores)}", _FIX, field="scores")
        scores = {}
    judge_rows, human_rows = [], {}
    for name, sc in scores.items():
        if not isinstance(sc, dict) or "value" not in sc:
            problems.add(where, f"scores.{name} must be an object with a 'value'", _FIX, field=f"scores.{name}")
            continue
        history = sc.get("history") or []
        if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
            problems.add(where, f"scores.{name}.history must be a list of edits", _FIX, field=f"scores.{name}.history")
            continue
        if not history:
            original = sc["value"]
        elif history[0].get("provenance") is None:
            original = history[0].get("value", sc["value"])
        else:
            original = None  # a score created by hand: no judge value
        edits = [h for h in history if isinstance(h.get("provenance"), dict) and h.get("value", UNCHANGED) != UNCHANGED]
        for raw, who in [(original, None)] + [(h["value"], h["provenance"].get("author")) for h in edits]:
            if raw is None and who is None:
                continue
            if who is not None and (not isinstance(who, str) or not who):
                problems.add(
                    where, f"an edit of scores.{name} has no provenance.author", _FIX, field=f"scores.{name}.history"
                )
                continue
            if isinstance(raw, list):
                problems.add(
                    where,
                    f"scores.{name} holds a list of values, which has no single score",
                    "score each sample with one value (or a dict of named values)",
                    field=f"scores.{name}.value",
                )
                continue
            for sub, v in _values(raw).items():
                f = to_float(v) if v is not None else math.nan
                if f is None:
                    problems.add(
                        where,
                        f"scores.{name}{sub} is not a value inspect_ai reads as a number",
                        "use numbers, booleans, C/I/P/N or yes/no",
                        field=f"scores.{name}.value",
                        value=v,
                    )
                    continue
                criterion = (name + sub).strip().lower()
                if who is None:
                    judge_rows.append((name, criterion, f))
                else:
                    human_rows[(who, criterion)] = f  # an author's last edit is their rating
    if len(problems.items) > n_before:
        return
    sid = str(sid)
    item = f"{sid}:{model}" if epoch == 1 else f"{sid}:e{epoch}:{model}"
    if item in seen:
        problems.add(
            where,
            f"duplicate sample: the same id, epoch and model as {seen[item]}",
            "give each sample once (one log per model, or distinct ids)",
            field="id",
            value=sid,
        )
        return
    seen[item] = where
    if not judge_rows and not human_rows:
        rows.tallies[rec_id[0]].exclude("sample with no score")
        return
    for name, criterion, f in judge_rows:
        rows.judge.append(
            {
                "item_id": item,
                "system": model,
                "criterion": criterion,
                "judge": name,
                "score": "" if math.isnan(f) else f,
                "_rec": rec_id,
            }
        )
    for (who, criterion), f in human_rows.items():
        if not math.isnan(f):
            rows.humans.append(
                {
                    "item_id": item,
                    "reader_id": who,
                    "criterion": criterion,
                    "rating": f,
                    "group_id": sid,
                    "_rec": rec_id,
                }
            )
    text = _answer(s.get("output"))
    if text:
        rows.stories.setdefault((item, model), text)


def _answer(output) -> str | None:
    if not isinstance(output, dict):
        return None
    if isinstance(output.get("completion"), str) and output["completion"].strip():
        return output["completion"]
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        content = (choices[0].get("message") or {}).get("content")
        if isinstance(content, str):
            return content or None
        if isinstance(content, list):
            text = "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
            return text or None
    return None
