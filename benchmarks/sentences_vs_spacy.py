"""Our sentence splitter against spaCy's ``sentencizer`` on ``spacy.blank("en")``, text by text.

    python benchmarks/sentences_vs_spacy.py                 # fixture stories + seeded hard cases
    python benchmarks/sentences_vs_spacy.py --datasets ../shared/datasets   # + PDS, MT-Bench texts

For every text it compares the words-per-sentence arrays of
:func:`judge_transfer_audit.detectors.sentences.sentence_lengths`
with those spaCy's pipeline gives under the same word rule, and prints per corpus the number of texts,
how many agree exactly, the sentence counts of both, and the first disagreements (text excerpt, both
arrays). Also the time of each (spaCy's import and pipeline build counted separately).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_transfer_audit.detectors.sentences import sentence_lengths, spacy_sentence_lengths  # noqa: E402
from tests.support.sentence_pieces import PIECES  # noqa: E402


def hard_cases(n: int, seed: int) -> list[str]:
    """Seeded texts made of tricky pieces glued by spaces or newlines."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 8))
        seps = rng.choice([" ", " ", "\n", "\n\n", ""], size=k)
        out.append("".join(str(PIECES[i]) + str(s) for i, s in zip(rng.integers(0, len(PIECES), k), seps)))
    return out


def corpora(datasets: Path | None) -> dict[str, list[str]]:
    out = {
        "fixture stories": pd.read_csv(ROOT / "fixtures" / "deployment" / "stories.csv")["text"].astype(str).tolist()
    }
    out["seeded hard cases"] = hard_cases(2000, seed=0)
    if datasets is not None:
        judge = datasets / "pds" / "gpt-4o-2024-05-13_no_mop_annotations.csv"
        frame = pd.read_csv(judge, encoding="latin-1")
        out["PDS stories"] = frame["text"].dropna().astype(str).tolist()
        out["PDS judge explanations"] = [
            str(x) for c in frame.columns if c.endswith("_explanation") for x in frame[c].dropna()
        ]
        prompts = json.loads((datasets / "mtbench_alttest" / "prompts.json").read_text())
        texts = []
        for row in prompts.values():
            for side in ("conversation_a", "conversation_b"):
                texts += [str(t["content"]) for t in ast.literal_eval(row[side])]
        out["MT-Bench turns"] = texts
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=None, help="../shared/datasets, for the real texts")
    parser.add_argument("--show", type=int, default=5, help="disagreements printed per corpus")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    import spacy

    spacy.blank("en").add_pipe("sentencizer")
    print(f"spaCy {spacy.__version__}: import + blank pipeline {time.perf_counter() - t0:.2f} s")
    print(f"{'corpus':24} {'texts':>6} {'agree':>6} {'ours s':>7} {'spaCy s':>8} {'sent ours':>10} {'sent spaCy':>10}")
    for name, texts in corpora(args.datasets).items():
        t0 = time.perf_counter()
        ours = sentence_lengths(texts)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = spacy_sentence_lengths(texts)
        t_ref = time.perf_counter() - t0
        same = [a.tolist() == b.tolist() for a, b in zip(ours, ref)]
        print(
            f"{name:24} {len(texts):6d} {sum(same):6d} {t_ours:7.2f} {t_ref:8.2f} "
            f"{sum(len(a) for a in ours):10d} {sum(len(b) for b in ref):10d}"
        )
        for text, a, b, _ok in [x for x in zip(texts, ours, ref, same) if not x[3]][: args.show]:
            cut = next((i for i, (p, q) in enumerate(zip(np.cumsum(a), np.cumsum(b))) if p != q), 0)
            print(f"    ours {a.tolist()[:12]} spaCy {b.tolist()[:12]} (first split differs at sentence {cut})")
            print(f"    {text[:160]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
