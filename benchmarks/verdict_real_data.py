"""The verdict on the public datasets beside the repository (../shared/datasets), per dataset.

usage: python benchmarks/verdict_real_data.py [--datasets mtbench,pds,summeval,hanna] [--no-pool]

Converts the datasets into a temporary folder (../shared/datasets/convert.py; HANNA with
tests/support/hanna.py), runs the audit without its uncertainty, reader and surface sections,
with the default policy (the hierarchical closed test that pools the criteria of a matchup;
``--no-pool``: Holm over the cells, policy ``transfer.pool_criteria = false``) and prints, per
dataset: the judge configuration decided, the run's status, the compared pairs a cell (assessed
cells and the others) and the readers a cell, the cells per status, the GLMM fits flagged
degenerate, the largest gap between a shown human figure and its raw share, the FAIL cells, the
study's and the matchups' transfer decisions (the matchups by name per status, up to ``--list``
each), the other judge configurations' cells per status and, where it ran, the agreement decision
per level (the matchups that FAIL and PASS by name). Nothing is written in the repository.
docs/audit.md records the output.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_transfer_audit.engine.pipeline import run_audit  # noqa: E402
from judge_transfer_audit.inputs import load_audit_data  # noqa: E402
from judge_transfer_audit.model.policy import Policy  # noqa: E402
from judge_transfer_audit.model.spec import AuditSpec  # noqa: E402

SHARED = Path(os.environ.get("JUDGE_AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")


STATUSES = ("PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR")


def _per_status(statuses) -> str:
    """``3 PASS, 1 FAIL`` from a list of statuses or a mapping status -> count."""
    counts = statuses if isinstance(statuses, dict) else Counter(statuses)
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))


def _p(value: float | None) -> str:
    return "none" if value is None or not math.isfinite(value) else f"{value:.2g}"


def _named(label: str, names: list[str], limit: int) -> str:
    shown = ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")
    return f"\n          {label}: {shown}" if names else ""


def _summary(name: str, result, seconds: float, limit: int) -> str:
    gaps = []
    for c in result.cells:
        h, g = c.human, c.human.glmm
        if math.isfinite(g.estimate) and math.isfinite(h.rate):
            gaps.append((abs(g.estimate - h.rate), g.degenerate))
    worst_plain = max((gap for gap, flagged in gaps if not flagged), default=0.0)
    n_deg = sum(c.human.glmm.degenerate for c in result.cells)
    counts = ", ".join(f"{n} {s}" for s, n in result.counts.items())
    pairs: dict[str, list[int]] = {}
    for c in result.cells:
        assessed = c.transfer.status.value in ("PASS", "FAIL", "INCONCLUSIVE")
        pairs.setdefault("assessed" if assessed else "other", []).append(c.n_pairs)
    ranges = "; ".join(f"{label} {min(n)}-{max(n)}" for label, n in sorted(pairs.items()))
    readers = [c.n_readers for c in result.cells]
    fails = [
        f"{c.matchup}/{c.criterion} (judge {100 * c.transfer.judge_rate.estimate:.1f}% for {c.focal}, band "
        f"[{100 * c.transfer.band_low:.1f}%, {100 * c.transfer.band_high:.1f}%])"
        for c in result.cells
        if c.transfer.status.value == "FAIL"
    ]
    lines = [
        f"{name:<9} judge {result.provenance.primary_judge}; status {result.status.value}; compared pairs a cell: "
        f"{ranges}; readers {min(readers, default=0)}-{max(readers, default=0)}\n"
        f"          cells {len(result.cells):>4}: {counts}; degenerate GLMM "
        f"{n_deg}; largest unflagged |expit(b0) - raw| {100 * worst_plain:.1f} points; {seconds:.0f} s"
        + _named("FAIL cells", fails, limit)
    ]
    study, matchups = result.study_transfer, result.matchup_transfers
    if study is not None:
        lines.append(
            f"          rate, study: {study.status.value} (p_study {_p(study.p_study)}); matchups "
            f"{len(matchups)}: {_per_status([m.status.value for m in matchups])}"
            + "".join(
                _named(
                    f"{status} matchups (cells PASS, FAIL of assessed)",
                    [
                        f"{m.matchup} ({m.n_pass}, {m.n_fail} of {m.n_assessed})"
                        for m in matchups
                        if m.status.value == status
                    ],
                    limit,
                )
                for status in STATUSES
            )
        )
    configurations = result.sections.get("judge_configurations")
    if configurations is not None and configurations.payload is not None:
        others = [r for r in configurations.payload.rows if r.judge != result.provenance.primary_judge]
        for r in others:
            lines.append(f"          configuration {r.judge}: cells {_per_status(r.decisions)}")
    section = result.sections.get("agreement_decision")
    decision = section.payload if section is not None else None
    if decision is not None:
        parts = [f"{lv} {_per_status([r.status for r in decision.level(lv)])}" for lv in ("study", "matchup", "cell")]
        for row in decision.level("study"):
            parts[0] += (
                f" (the judge agrees with the other readers on {100 * row.judge_agreement:.1f}% of their votes, "
                f"a reader on {100 * row.reader_agreement:.1f}%; ties: {decision.ties})"
            )
        matchups = decision.level("matchup")
        lines.append(
            "          agreement: "
            + "; ".join(parts)
            + "".join(
                _named(
                    f"agreement {status} matchups (judge, reader agreement)",
                    [
                        f"{r.matchup} ({100 * r.judge_agreement:.1f}%, {100 * r.reader_agreement:.1f}%)"
                        for r in matchups
                        if r.status == status
                    ],
                    limit,
                )
                for status in ("FAIL", "PASS")
            )
        )
    elif section is not None:
        lines.append(f"          agreement: {section.status.value} ({section.reason})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="mtbench,pds,summeval,hanna")
    parser.add_argument(
        "--no-pool", action="store_true", help="Holm over the cells (policy transfer.pool_criteria false)"
    )
    parser.add_argument("--list", type=int, default=12, help="matchups and cells named per status (default 12)")
    args = parser.parse_args(argv)
    if not (SHARED / "convert.py").exists():
        print(f"{SHARED} is absent", file=sys.stderr)
        return 2
    wanted = args.datasets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        subprocess.run([sys.executable, str(SHARED / "convert.py"), str(out)], check=True, capture_output=True)
        policy = Policy()
        if args.no_pool:
            policy = dataclasses.replace(policy, transfer=dataclasses.replace(policy.transfer, pool_criteria=False))
        print(f"transfer.pool_criteria = {str(policy.transfer.pool_criteria).lower()}", flush=True)
        core = {"uncertainty": False, "readers": False, "surface": False, "policy": policy}
        runs = {
            "mtbench": lambda: load_audit_data(
                out / "mtbench/judge.csv", out / "mtbench/humans.csv", pairs=out / "mtbench/pairs.csv"
            ),
            "pds": lambda: load_audit_data(out / "pds/judge.csv", out / "pds/humans.csv", scale=(1, 5)),
            "summeval": lambda: load_audit_data(out / "summeval/judge.csv", out / "summeval/humans.csv"),
        }
        judges = {"pds": "gpt-4o", "hanna": "ChatGPT"}
        if "hanna" in wanted:
            from tests.support.hanna import convert_hanna  # noqa: PLC0415

            hanna = convert_hanna(SHARED / "hanna" / "hanna_metric_scores_llm.csv", out / "hanna")
            runs["hanna"] = lambda: load_audit_data(hanna / "judge.csv", hanna / "humans.csv")
        for name in wanted:
            started = time.perf_counter()
            data = runs[name]()
            result = run_audit(data, AuditSpec(**core, judge=judges.get(name)))
            print(_summary(name, result, time.perf_counter() - started, args.list), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
