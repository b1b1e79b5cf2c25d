"""promptfoo ``results.json`` (``promptfoo eval -o results.json``).

The file holds ``results.results[]`` (``results[]`` in version 2 files): one record per
test case x prompt x provider, with ``testIdx``, ``promptIdx``, ``provider`` (``{id,
label}`` or a string), ``prompt.label``, ``response.output`` and ``gradingResult``, whose
``componentResults[]`` hold one result per assertion: ``pass``, ``score``, ``reason`` and
``assertion`` (``type``, ``metric``). A rating given by hand in promptfoo's viewer is a
component result with ``assertion.type == "human"``.

Mapping (scalar): an output is ``item_id`` = ``t<testIdx>:p<promptIdx>:<provider>``; its
system is the provider (with `` | <prompt label>`` when the file has several prompts); the
test case is the ``group_id`` (outputs of one test case are compared with each other). Each
non-human assertion is a judge configuration (``judge`` = its type, criterion = its
``metric`` or ``--criterion``) with its ``score`` (1/0 from ``pass`` when it has none); each
human rating is a rating of reader ``human`` on ``--criterion``.
"""

from __future__ import annotations

from pathlib import Path

from judge_transfer_audit.importers import Rows
from judge_transfer_audit.importers._base import ImportOptions, Problems, load_json, number, type_name

PRODUCER = "promptfoo (promptfoo eval -o results.json)"
_FIX = "give the results.json that promptfoo eval -o wrote, unedited"


def _results(data, path, problems):
    inner = data.get("results") if isinstance(data, dict) else None
    if isinstance(inner, dict):
        inner = inner.get("results")
    if not isinstance(inner, list):
        problems.add(
            str(path),
            "not a promptfoo results file (no results.results list)"
            + (f": top-level fields {', '.join(sorted(data)[:8])}" if isinstance(data, dict) else ""),
            "give the results.json written by `promptfoo eval -o results.json`; for another tool's file use its "
            "format (audit import --help lists them)",
        )
        return None
    return inner


def _provider(rec) -> str | None:
    p = rec.get("provider")
    if isinstance(p, dict):
        p = p.get("label") or p.get("id")
    return p if isinstance(p, str) and p else None


def _score(comp: dict) -> float | None | str:
    s = comp.get("score")
    if s is not None:
        v = number(s)
        return "bad" if v is None else v
    p = comp.get("pass")
    if isinstance(p, bool):
        return 1.0 if p else 0.0
    return None


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = Rows("item_id")
    seen: dict[tuple, str] = {}
    for path in paths:
        data = load_json(path, PRODUCER)
        results = _results(data, path, problems)
        t = rows.tally(str(path))
        if results is None:
            continue
        rows.tallies[t].read = len(results)
        prompts = {r.get("promptIdx") for r in results if isinstance(r, dict)}
        for n, rec in enumerate(results):
            where = f"{path}, results[{n}]"
            if not isinstance(rec, dict):
                problems.add(where, f"a result must be an object, found {type_name(rec)}", _FIX)
                continue
            _result(rows, (t, n), where, rec, problems, seen, options, several_prompts=len(prompts) > 1)
    return rows


def _result(rows, rec_id, where, rec, problems, seen, options, several_prompts) -> None:
    n_before = len(problems.items)
    ids = {}
    for key in ("testIdx", "promptIdx"):
        v = rec.get(key)
        if v is None:
            problems.add(where, f"the result has no '{key}'", _FIX + f" (every result needs its '{key}')", field=key)
        elif isinstance(v, bool) or not isinstance(v, int):
            problems.add(where, f"'{key}' must be a whole number, found {type_name(v)}", _FIX, field=key, value=v)
        else:
            ids[key] = v
    provider = _provider(rec)
    if provider is None:
        problems.add(where, "the result names no provider (provider.id or provider.label)", _FIX, field="provider")
    grading = rec.get("gradingResult")
    comps = []
    if grading is not None:
        if not isinstance(grading, dict):
            problems.add(
                where, f"'gradingResult' must be an object, found {type_name(grading)}", _FIX, field="gradingResult"
            )
        else:
            comps = grading.get("componentResults") or []
            if not isinstance(comps, list) or not all(isinstance(c, dict) for c in comps):
                problems.add(
                    where,
                    "'gradingResult.componentResults' must be a list of objects",
                    _FIX,
                    field="gradingResult.componentResults",
                )
                comps = []
            if not comps and ("score" in grading or "pass" in grading):
                comps = [{**grading, "assertion": {"type": "grading"}}]
    entries = []
    for k, c in enumerate(comps):
        a = c.get("assertion") if isinstance(c.get("assertion"), dict) else {}
        kind = a.get("type") if isinstance(a.get("type"), str) and a.get("type") else "assertion"
        s = _score(c)
        if s == "bad":
            problems.add(
                where,
                f"componentResults[{k}].score must be a number, found {type_name(c.get('score'))}",
                _FIX,
                field=f"componentResults[{k}].score",
                value=c.get("score"),
            )
            continue
        metric = a.get("metric") if isinstance(a.get("metric"), str) and a.get("metric").strip() else options.criterion
        entries.append((kind, metric.strip().lower(), s))
    if len(problems.items) > n_before or provider is None or len(ids) < 2:
        return
    prompt = rec.get("prompt") if isinstance(rec.get("prompt"), dict) else {}
    label = prompt.get("label") if isinstance(prompt.get("label"), str) else f"prompt {ids['promptIdx']}"
    system = f"{provider} | {label}" if several_prompts else provider
    item = f"t{ids['testIdx']}:p{ids['promptIdx']}:{provider}"
    key = (ids["testIdx"], ids["promptIdx"], provider)
    if key in seen:
        problems.add(
            where,
            f"duplicate result: the same test, prompt and provider as {seen[key]}",
            "keep one result per test case, prompt and provider (run promptfoo eval once per output)",
            field="testIdx",
            value=item,
        )
        return
    seen[key] = where
    if not entries:
        rows.tallies[rec_id[0]].exclude("result with no assertion score and no human rating")
        return
    counts: dict[tuple, int] = {}
    for kind, criterion, s in entries:
        if kind == "human":
            if s is None:
                continue
            rows.humans.append(
                {
                    "item_id": item,
                    "reader_id": "human",
                    "criterion": criterion,
                    "rating": s,
                    "group_id": f"test{ids['testIdx']}",
                    "_rec": rec_id,
                }
            )
            continue
        counts[(kind, criterion)] = counts.get((kind, criterion), 0) + 1
        name = kind if counts[(kind, criterion)] == 1 else f"{kind}#{counts[(kind, criterion)]}"
        rows.judge.append(
            {
                "item_id": item,
                "system": system,
                "criterion": criterion,
                "judge": name,
                "score": "" if s is None else s,
                "_rec": rec_id,
            }
        )
    response = rec.get("response") if isinstance(rec.get("response"), dict) else {}
    if isinstance(response.get("output"), str) and response["output"].strip():
        rows.stories.setdefault((item, system), response["output"])
