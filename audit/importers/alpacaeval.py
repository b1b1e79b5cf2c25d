"""AlpacaEval ``annotations.json`` (the judge) and human cross-annotations (the readers).

An annotation record holds ``instruction``, ``output_1``, ``generator_1``, ``output_2``,
``generator_2``, ``annotator`` (the judge configuration) and ``preference``: 1 = output_1
preferred, 2 = output_2, a value between (weighted annotators) leaning to the nearer one,
1.5 (or 0, a draw) a tie, null an unparsable judge answer. AlpacaEval randomises the order
shown to the judge and maps the preference back, without recording the order: no
``shown_first``.

Human cross-annotation records (AlpacaFarm) hold ``instruction``, ``output_1``, ``output_2``,
``preference`` (1 or 2) and ``annotator_index`` (the reader); a file is read as human
labels when its records have ``annotator_index`` or it is given with ``--humans``. Their
generators are ``generator_1`` / ``generator_2`` when present, else found by matching the
output's text against the annotations read in the same command.
"""

from __future__ import annotations

import hashlib
import math
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
    number,
    pair_key,
    refuse_format,
    text_field,
    type_name,
)
from judge_transfer_audit.importers.mtbench import _duplicate, _pair

PRODUCER = "AlpacaEval"
_FIX = "give the annotations as AlpacaEval wrote them (instruction, output_1/2, generator_1/2, preference)"


def prompt_id(instruction: str) -> str:
    """The id of a prompt: ``ae-`` and the first 12 hex digits of the sha256 of its instruction."""
    return "ae-" + hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:12]


def _side(pref: float | None) -> str | None:
    """1 / 2 / tie / invalid from a preference (None when out of range)."""
    if pref is None or math.isnan(pref):
        return INVALID
    if pref == 0 or pref == 1.5:
        return TIE
    if 1 <= pref < 1.5:
        return "1"
    if 1.5 < pref <= 2:
        return "2"
    return None


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    rows = Rows("pair_id")
    human_paths = {Path(p).resolve() for p in options.humans}
    files = []
    for path in [*paths, *options.humans]:
        recs = load_records(path, PRODUCER)
        t = rows.tally(str(path))
        rows.tallies[t].read = len(recs)
        first = first_record(recs)
        if first is None or "instruction" not in first or "preference" not in first:
            refuse_format(
                recs,
                first,
                problems,
                "not an AlpacaEval annotations file (records need 'instruction' and 'preference')",
                "give AlpacaEval's annotations.json or the human cross-annotations",
            )
            continue
        human = Path(path).resolve() in human_paths or "annotator_index" in first
        files.append((t, recs, human))
    # output text -> generator, for human files that do not name the generators
    text_of: dict[tuple[str, str], str] = {}
    for _, recs, human in files:
        if not human:
            for _, rec, _ in recs:
                if isinstance(rec, dict) and isinstance(rec.get("instruction"), str):
                    for k in ("1", "2"):
                        o, g = rec.get(f"output_{k}"), rec.get(f"generator_{k}")
                        if isinstance(o, str) and isinstance(g, str):
                            text_of[(rec["instruction"].strip(), o)] = g
    seen: dict[tuple, str] = {}
    for t, recs, human in files:
        for n, (where, rec, line) in enumerate(recs):
            if check_record(where, rec, line, problems, PRODUCER):
                _record(rows, (t, n), where, rec, line, problems, seen, options, human, text_of)
    return rows


def _record(rows, rec_id, where, rec, line, problems, seen, options, human, text_of) -> None:
    n_before = len(problems.items)
    instruction = text_field(
        rec, "instruction", where, line, problems, _FIX + " (the instruction identifies the prompt)"
    )
    gens = []
    for k in ("1", "2"):
        g = rec.get(f"generator_{k}")
        if g is None and human and instruction is not None and isinstance(rec.get(f"output_{k}"), str):
            g = text_of.get((instruction, rec[f"output_{k}"]))
            if g is None:
                problems.add(
                    where,
                    f"output_{k} matches no output of the annotations read, and the record has no generator_{k}",
                    "give the AlpacaEval annotations of the same outputs in the same command, or add generator_1 / "
                    "generator_2 (the model names) to the human records",
                    field=f"generator_{k}",
                    line=line,
                )
                continue
        gens.append(text_field({"g": g}, "g", where, line, problems, _FIX) if g is not None else None)
        if g is None and not human:
            problems.add(where, f"the record has no 'generator_{k}'", _FIX, field=f"generator_{k}", line=line)
    raw = rec.get("preference")
    pref = number(raw) if raw is not None else None
    if raw is not None and pref is None:
        problems.add(
            where,
            f"'preference' must be a number (1 = output_1, 2 = output_2), found {type_name(raw)}",
            "write the preference as a number between 1 and 2 (1.5 or 0 for a tie), or null for no answer",
            field="preference",
            value=raw,
            line=line,
        )
    side = _side(pref)
    if side is None:
        problems.add(
            where,
            "'preference' is outside 1..2 (and not 0, a draw)",
            "write the preference as a number between 1 and 2 (1.5 or 0 for a tie), or null for no answer",
            field="preference",
            value=raw,
            line=line,
        )
    if human and side == INVALID:
        if len(problems.items) == n_before:
            rows.tallies[rec_id[0]].exclude("human record with no preference")
        return
    reader = None
    if human:
        reader = text_field(
            rec,
            "annotator_index" if "annotator_index" in rec else "annotator",
            where,
            line,
            problems,
            "every human record needs its annotator_index (the reader)",
            allow_number=True,
        )
    if (
        len(problems.items) > n_before
        or instruction is None
        or None in gens
        or len(gens) < 2
        or (human and reader is None)
    ):
        return
    g1, g2 = gens
    if g1 == g2:
        rows.tallies[rec_id[0]].exclude("comparison of a generator with itself")
        return
    qid = prompt_id(instruction)
    pid = pair_key(qid, g1, g2)
    judge = rec.get("annotator") if isinstance(rec.get("annotator"), str) and rec.get("annotator") else "judge"
    who = reader if human else judge
    if _duplicate(
        seen,
        ("human" if human else "judge", pid, who),
        where,
        line,
        problems,
        "annotator_index" if human else "annotator",
        "keep one annotation per instruction, pair of generators and annotator",
    ):
        return
    rows.pairs.setdefault(pid, _pair(pid, g1, g2, qid))
    choice = {"1": g1, "2": g2}.get(side, side)
    if human:
        rows.humans.append(
            {
                "pair_id": pid,
                "reader_id": reader,
                "criterion": options.criterion,
                "choice": choice,
                "shown_first": "",
                "_rec": rec_id,
            }
        )
    else:
        rows.judge.append(
            {
                "pair_id": pid,
                "criterion": options.criterion,
                "judge": judge,
                "sample": 0,
                "choice": choice,
                "shown_first": "",
                "_rec": rec_id,
            }
        )
    for k, g in (("1", g1), ("2", g2)):
        o = rec.get(f"output_{k}")
        if isinstance(o, str) and o.strip():
            rows.stories.setdefault((pid, g), o)
