"""The alternative annotator test as the AltTest reference code runs it (github nitaytech/AltTest,
``alt_test_example.ipynb`` at 18428b1): written out here from that procedure, independently of
audit/verdict/agreement_decision.py, and run on the seeded inputs (python make_reference.py ->
outputs.json). tests/audit/verdict/test_agreement_decision.py compares
``judge_transfer_audit.verdict.agreement_decision.alt_test``
with outputs.json; the external test runs :func:`reference_alt_test` on AltTest's own shipped data.

The procedure (the reference's defaults: q = 0.05, at least 2 annotators per instance, 30
instances per annotator): drop instances with fewer than two annotators or no judge label; for
each annotator h with enough instances, per instance score the judge's and h's label against the
other annotators' labels (accuracy: share equal; neg_rmse: minus the root mean squared
difference), indicators llm = [judge >= h], human = [h >= judge]; p-value of the one-sided
one-sample t test of (human - llm) against epsilon, alternative "less"; Benjamini-Yekutieli over
the annotators' p-values at q; winning rate = rejected / annotators tested; advantage probability
= mean over annotators of mean(llm); passed when the winning rate is at least 0.5.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import ttest_1samp

HERE = Path(__file__).parent


def _score(scoring: str, pred, others: list) -> float:
    if scoring == "accuracy":
        return sum(1.0 for o in others if o == pred) / len(others)
    return -math.sqrt(sum((pred - o) ** 2 for o in others) / len(others))


def _benjamini_yekutieli(p: list[float], q: float) -> list[int]:
    m = len(p)
    if m == 0:
        return []
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    ranked = sorted(range(m), key=lambda k: p[k])
    last = -1
    for rank, k in enumerate(ranked, start=1):
        if p[k] <= rank * q / (m * harmonic):
            last = rank
    return ranked[:last] if last > 0 else []


def reference_alt_test(judge: dict, humans: dict, scoring: str, epsilon: float, q: float = 0.05) -> dict:
    annotators_of: dict = {}
    for h, labels in humans.items():
        for i in labels:
            annotators_of.setdefault(i, []).append(h)
    kept = {i for i, hs in annotators_of.items() if len(hs) >= 2 and i in judge}
    tested, p_values, rhos = [], [], []
    for h in humans:
        items = [i for i in humans[h] if i in kept]
        if len(items) < 30:
            continue
        llm, human = [], []
        for i in items:
            others = [humans[g][i] for g in annotators_of[i] if g != h]
            s_h = _score(scoring, humans[h][i], others)
            s_j = _score(scoring, judge[i], others)
            llm.append(1 if s_j >= s_h else 0)
            human.append(1 if s_h >= s_j else 0)
        diffs = [a - b for a, b in zip(human, llm)]
        p_values.append(float(ttest_1samp(diffs, epsilon, alternative="less").pvalue))
        rhos.append(sum(llm) / len(llm))
        tested.append(h)
    rejected = _benjamini_yekutieli(p_values, q)
    rate = len(rejected) / len(tested) if tested else float("nan")
    return {
        "winning_rate": rate,
        "advantage_probability": float(np.mean(rhos)) if rhos else float("nan"),
        "passed": bool(tested) and rate >= 0.5,
        "readers": tested,
        "p_values": p_values,
        "rejected": sorted(tested[k] for k in rejected),
    }


def run_directory(folder: Path, scoring: str, epsilon: float) -> dict:
    """Every judge of an AltTest-format folder (human_annotations.json, llm_annotations.json)."""
    humans = json.loads((folder / "human_annotations.json").read_text())
    judges = json.loads((folder / "llm_annotations.json").read_text())
    return {name: reference_alt_test(labels, humans, scoring, epsilon) for name, labels in judges.items()}


def main() -> None:
    cases = json.loads((HERE / "inputs.json").read_text())
    out = {
        name: {
            judge: reference_alt_test(labels, case["humans"], case["scoring"], case["epsilon"])
            for judge, labels in case["judges"].items()
        }
        for name, case in cases.items()
    }
    (HERE / "outputs.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    (HERE / "session.txt").write_text(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}\n"
    )


if __name__ == "__main__":
    main()
