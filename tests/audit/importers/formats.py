"""Seeded writers of small files in each imported tool's own layout (our own script; the
field layouts follow the producers' public source and docs, nothing is copied from them).

``study(seed)`` draws one small comparison study (prompts x model pairs, a judge's verdicts in
both orders, readers' votes and ratings); each ``write_<format>(folder, study)`` writes it as
that tool would and returns the paths. Tests compare what the importer reads with the study.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

MODELS = ("alpha-7b", "beta-13b", "gamma-70b")
READERS = ("expert_1", "expert_2", "author_3")


@dataclass(frozen=True)
class Study:
    prompts: tuple[int, ...]
    pairs: tuple[tuple[int, str, str], ...]  #: (prompt, model_1, model_2)
    g1: dict  #: pair -> model_1 / model_2 / tie / error (model_1 shown first)
    g2: dict  #: pair -> the same after the swap (model_2 shown first)
    votes: dict  #: (pair, reader) -> model_a / model_b / tie / tie (bothbad)
    ratings: dict  #: (prompt, model, reader) -> 1..5
    scores: dict  #: (prompt, model) -> 1..5 (a scalar judge)


def study(seed: int = 7, n_prompts: int = 6) -> Study:
    rng = np.random.default_rng(seed)
    prompts = tuple(81 + i for i in range(n_prompts))
    pairs = tuple((q, a, b) for q in prompts for a, b in combinations(MODELS, 2))
    words = np.array(["model_1", "model_2", "tie", "error"])
    g1 = {p: str(rng.choice(words, p=[0.5, 0.35, 0.1, 0.05])) for p in pairs}
    g2 = {p: str(rng.choice(words, p=[0.35, 0.5, 0.1, 0.05])) for p in pairs}
    outcomes = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    votes = {
        (p, r): str(rng.choice(outcomes, p=[0.45, 0.4, 0.1, 0.05]))
        for p in pairs
        for r in READERS
        if rng.random() < 0.8
    }
    ratings = {(q, m, r): int(rng.integers(1, 6)) for q in prompts for m in MODELS for r in READERS}
    scores = {(q, m): int(rng.integers(1, 6)) for q in prompts for m in MODELS}
    return Study(prompts, pairs, g1, g2, votes, ratings, scores)


def answer(q: int, model: str) -> str:
    return f"Answer of {model} to question {q}: " + " ".join(["word"] * (5 + q % 7))


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- MT-Bench
def write_mtbench(folder: Path, s: Study) -> tuple[Path, Path]:
    judgments = [
        {
            "question_id": q,
            "model_1": a,
            "model_2": b,
            "g1_winner": s.g1[(q, a, b)],
            "g2_winner": s.g2[(q, a, b)],
            "judge": ["gpt-4", "pair-v2"],
            "g1_user_prompt": "...",
            "g1_judgment": "[[A]]",
            "g2_user_prompt": "...",
            "g2_judgment": "[[B]]",
            "turn": 1,
            "tstamp": 1687221890.0 + i,
        }
        for i, (q, a, b) in enumerate(s.pairs)
    ]
    votes = []
    for ((q, a, b), reader), w in s.votes.items():
        # the votes file may list the two models in the other order
        flip = (q + len(reader)) % 2 == 1
        ma, mb = (b, a) if flip else (a, b)
        ww = {"model_a": "model_b", "model_b": "model_a"}.get(w, w) if flip else w
        votes.append(
            {
                "question_id": q,
                "model_a": ma,
                "model_b": mb,
                "winner": ww,
                "judge": reader,
                "turn": 1,
                "conversation_a": [
                    {"role": "user", "content": f"q{q}"},
                    {"role": "assistant", "content": answer(q, ma)},
                ],
                "conversation_b": [
                    {"role": "user", "content": f"q{q}"},
                    {"role": "assistant", "content": answer(q, mb)},
                ],
            }
        )
    return _jsonl(folder / "gpt-4_pair.jsonl", judgments), _jsonl(folder / "human_judgments.jsonl", votes)


# --------------------------------------------------------------------------- arena-hard
SCORE_OF = {"model_1": "A>B", "model_2": "B>>A", "tie": "A=B", "error": None}


def write_arenahard(folder: Path, s: Study) -> Path:
    """Judgments of MODELS[1:] against the baseline MODELS[0] (v2 layout, with ``baseline``)."""
    base = MODELS[0]
    records = []
    for q, a, b in s.pairs:
        if a != base:
            continue
        # game 1: A = baseline (model_1), B = model; game 2: A = model, B = baseline
        g1 = SCORE_OF[s.g1[(q, a, b)]]
        w2 = s.g2[(q, a, b)]  # model_1 = baseline, model_2 = model; in game 2 the model is A
        g2 = {"model_1": "B>A", "model_2": "A>>B", "tie": "A=B", "error": None}[w2]
        records.append(
            {
                "uid": f"u{q:04d}",
                "category": "hard_prompt",
                "judge": "gpt-4.1",
                "model": b,
                "baseline": base,
                "games": [{"score": g1, "judgment": {"answer": "..."}}, {"score": g2, "judgment": {"answer": "..."}}],
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    return _jsonl(folder / "judgments.jsonl", records)


# --------------------------------------------------------------------------- AlpacaEval
PREF = {"model_1": 1.2, "model_2": 1.9, "tie": 1.5, "error": None}


def write_alpacaeval(folder: Path, s: Study) -> tuple[Path, Path]:
    annotations = [
        {
            "instruction": f"Instruction number {q}",
            "output_1": answer(q, a),
            "generator_1": a,
            "dataset": "helpful_base",
            "output_2": answer(q, b),
            "generator_2": b,
            "annotator": "weighted_alpaca_eval_gpt4_turbo",
            "preference": PREF[s.g1[(q, a, b)]],
            "time_per_example": 0.5,
            "price_per_example": 0.01,
            "raw_completion": "m",
        }
        for q, a, b in s.pairs
    ]
    human = []
    for ((q, a, b), reader), w in s.votes.items():
        if w.startswith("tie"):
            continue  # AlpacaFarm's cross-annotations are forced choices
        human.append(
            {
                "instruction": f"Instruction number {q}",
                "input": "",
                "output_1": answer(q, a),
                "output_2": answer(q, b),
                "preference": 1 if w == "model_a" else 2,
                "annotator_index": READERS.index(reader),
                "dataset": "helpful_base",
                "datasplit": "eval",
            }
        )
    return _json(folder / "annotations.json", annotations), _json(
        folder / "alpaca_farm_human_crossannotations.json", human
    )


# --------------------------------------------------------------------------- promptfoo
def write_promptfoo(folder: Path, s: Study) -> Path:
    results = []
    for ti, q in enumerate(s.prompts):
        for m in MODELS:
            comps = [
                {
                    "pass": s.scores[(q, m)] >= 3,
                    "score": s.scores[(q, m)] / 5,
                    "reason": "rubric",
                    "assertion": {"type": "llm-rubric", "value": "Is it helpful?"},
                }
            ]
            rating = s.ratings[(q, m, READERS[0])]
            if q % 3:  # some outputs were rated by hand in the viewer
                comps.append(
                    {
                        "pass": rating >= 3,
                        "score": rating / 5,
                        "reason": "Manual result (overrides all other grading results)",
                        "assertion": {"type": "human"},
                    }
                )
            results.append(
                {
                    "id": f"r{ti}-{m}",
                    "promptIdx": 0,
                    "testIdx": ti,
                    "testCase": {"vars": {"question": f"q{q}"}},
                    "prompt": {"raw": "Answer: {{question}}", "label": "Answer: {{question}}"},
                    "provider": {"id": f"openai:{m}", "label": m},
                    "response": {"output": answer(q, m)},
                    "success": True,
                    "score": s.scores[(q, m)] / 5,
                    "namedScores": {},
                    "gradingResult": {"pass": True, "score": 1, "reason": "", "componentResults": comps},
                    "vars": {"question": f"q{q}"},
                }
            )
    data = {
        "evalId": "eval-abc-2026",
        "results": {"version": 3, "timestamp": "2026-01-01T00:00:00Z", "prompts": [], "results": results, "stats": {}},
        "config": {},
    }
    return _json(folder / "results.json", data)


# --------------------------------------------------------------------------- inspect_ai
LETTER = {1: "I", 2: "I", 3: "P", 4: "C", 5: "C"}


def write_inspect(folder: Path, s: Study) -> list[Path]:
    paths = []
    for m in MODELS:
        samples = []
        for q in s.prompts:
            value = LETTER[s.scores[(q, m)]]
            history = []
            if q % 2:  # reviewed by hand: the original value first, then each author's edit
                history = [
                    {"value": value, "answer": None, "explanation": "grader", "metadata": {}, "provenance": None}
                ]
                for r in READERS[:2]:
                    history.append(
                        {
                            "value": LETTER[s.ratings[(q, m, r)]],
                            "provenance": {"timestamp": "2026-01-02T00:00:00Z", "author": r, "reason": "review"},
                        }
                    )
            samples.append(
                {
                    "id": f"q{q}",
                    "epoch": 1,
                    "input": f"question {q}",
                    "target": "x",
                    "output": {"model": m, "choices": [{"message": {"role": "assistant", "content": answer(q, m)}}]},
                    "scores": {
                        "model_graded_qa": {"value": history[-1]["value"] if history else value, "history": history}
                    },
                }
            )
        log = {
            "version": 2,
            "status": "success",
            "eval": {
                "task": "qa",
                "model": f"openai/{m}",
                "created": "2026-01-01T00:00:00+00:00",
                "dataset": {"name": "qa", "samples": len(samples)},
                "config": {},
            },
            "samples": samples,
        }
        paths.append(_json(folder / f"{m}.json", log))
    return paths


# --------------------------------------------------------------------------- Argilla
def write_argilla(folder: Path, s: Study) -> Path:
    records = []
    for q, a, b in s.pairs:
        responses = [
            {"value": {"model_a": a, "model_b": b}.get(w, "tie"), "user_id": r, "status": "submitted"}
            for ((qq, aa, bb), r), w in s.votes.items()
            if (qq, aa, bb) == (q, a, b)
        ]
        w = s.g1[(q, a, b)]
        records.append(
            {
                "id": f"rec-{q}-{a}-{b}",
                "status": "completed",
                "fields": {"prompt": f"q{q}", "response_a": answer(q, a), "response_b": answer(q, b)},
                "metadata": {"model_a": a, "model_b": b, "group_id": f"q{q}"},
                "suggestions": {
                    "preference": {
                        "value": {"model_1": "A", "model_2": "B", "tie": "tie"}.get(w),
                        "score": 0.9,
                        "agent": "gpt-4o",
                    }
                },
                "responses": {"preference": responses},
            }
        )
    return _json(folder / "records.json", records)


def write_argilla_scalar(folder: Path, s: Study) -> Path:
    records = [
        {
            "id": f"q{q}-{m}",
            "fields": {"prompt": f"q{q}", "response": answer(q, m)},
            "metadata": {"model": m, "group_id": f"q{q}"},
            "suggestions": {"quality": {"value": s.scores[(q, m)], "agent": "judge-llm"}},
            "responses": {
                "quality": [{"value": s.ratings[(q, m, r)], "user_id": r, "status": "submitted"} for r in READERS]
            },
        }
        for q in s.prompts
        for m in MODELS
    ]
    return _json(folder / "records_scalar.json", records)
