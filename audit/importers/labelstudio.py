"""A Label Studio JSON export of our own blind study (``audit labelstudio export``'s tasks).

Read by the same code as ``audit labelstudio import`` (generation/labelstudio): the export
names sides (left/right), so ``--import-pairs`` (the study's pairs.csv) is needed to know
which system each side is. Only human votes: the judge file comes from elsewhere.
Records are annotations: cancelled ones and ones replaced by the same reader's later
annotation are excluded, counted.
"""

from __future__ import annotations

from pathlib import Path

from judge_transfer_audit.importers import Rows
from judge_transfer_audit.importers._base import ImportOptions, Problems


def read(paths: list[Path], options: ImportOptions, problems: Problems) -> Rows:
    from judge_transfer_audit.generation.labelstudio import import_export
    from judge_transfer_audit.inputs.formats import read_frame

    rows = Rows("pair_id")
    if options.pairs is None:
        problems.add(
            ", ".join(map(str, paths)),
            "a Label Studio export names sides, not systems: the study's pairs file is needed",
            "give --import-pairs pairs.csv (the file the tasks were made from)",
        )
        return rows
    pairs = read_frame(str(options.pairs), "pairs")
    for path in paths:
        result = import_export(path, pairs)
        t = rows.tally(str(path), "annotations")
        tally = rows.tallies[t]
        tally.read = result.n_annotations + result.n_cancelled
        tally.exclude("annotation cancelled (skipped) by the annotator", result.n_cancelled)
        tally.exclude("annotation replaced by the same reader's later one", result.n_replaced)
        tally.fixed_used = result.n_annotations - result.n_replaced
        if result.n_unanswered:
            rows.notes.append(f"{path}: {result.n_unanswered} question(s) left unanswered in used annotations")
        if result.n_tasks_without_annotation:
            rows.notes.append(f"{path}: {result.n_tasks_without_annotation} task(s) never annotated")
        for k, r in enumerate(result.humans.to_dict("records")):
            rows.humans.append({**r, "_rec": (t, k)})
    known = {r["pair_id"] for r in rows.humans}
    for p in pairs.to_dict("records"):
        pid = str(p.get("pair_id", "")).strip()
        if pid in known:
            rows.pairs[pid] = {
                "pair_id": pid,
                "system_a": p.get("system_a", ""),
                "system_b": p.get("system_b", ""),
                "group_id": p.get("group_id", "") or "",
            }
    return rows
