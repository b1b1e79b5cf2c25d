"""HANNA (Chhun et al. 2022; ../shared/datasets/hanna) into the data contract, into a folder given.

``hanna_metric_scores_llm.csv`` holds one row per system with lists of 96 values per column:
three human ratings per story (rater *slots*, not identities) on six criteria and LLM judges'
scores per prompt (value -1 or below 1 = unparsable, left empty here). Used by the external
tests and benchmarks/verdict_real_data.py; nothing is written in the repository.
"""

from __future__ import annotations

import ast
from pathlib import Path

HANNA_CRITERIA = {
    "RE": "relevance",
    "CH": "coherence",
    "EM": "empathy",
    "SU": "surprise",
    "EG": "engagement",
    "CX": "complexity",
}
HANNA_SYSTEMS = ("Human", "GPT-2", "BertGeneration", "CTRL", "XLNet")  # 10 matchups: keeps the test in minutes


def convert_hanna(csv_path: Path, out: Path) -> Path:
    """HANNA's per-system lists of 96 values into scalar ratings and scores (judge -1 = unparsable)."""
    import pandas as pd

    frame = pd.read_csv(csv_path)
    frame = frame[frame["Model"].isin(HANNA_SYSTEMS)]
    humans, judges = [], []
    llms = sorted(
        {
            c.rsplit(" ", 2)[0]
            for c in frame.columns
            if c.split()[-1] in "1234"
            and not c.startswith("Human")
            and len(c.split()) >= 3
            and c.split()[-2] in HANNA_CRITERIA
        }
    )
    for _, row in frame.iterrows():
        system = row["Model"]
        for code, criterion in HANNA_CRITERIA.items():
            for slot in (1, 2, 3):
                for prompt, rating in enumerate(ast.literal_eval(row[f"Human {slot} {code}"])):
                    humans.append((f"{system}__{prompt}", f"slot{slot}", criterion, rating, f"prompt{prompt}"))
            for llm in llms:
                column = f"{llm} {code} 1"
                if column not in frame.columns:
                    continue
                for prompt, score in enumerate(ast.literal_eval(row[column])):
                    judges.append((f"{system}__{prompt}", system, criterion, score if score >= 1 else "", llm))
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(humans, columns=["item_id", "reader_id", "criterion", "rating", "group_id"]).to_csv(
        out / "humans.csv", index=False
    )
    pd.DataFrame(judges, columns=["item_id", "system", "criterion", "score", "judge"]).to_csv(
        out / "judge.csv", index=False
    )
    return out
