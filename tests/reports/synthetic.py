"""A synthetic, paper-shaped AuditResult (used by tests/audit/statistics/budget/test_budget.py and test_diff.py with
``sections=False``; the report tests run on real results, see conftest.py) (3 matchups x 6 criteria, 7 readers).

``make_result(text=...)`` passes every piece of user text (system, criterion, matchup,
reader and judge names, comments, story excerpts, check reasons, file paths) through
``text``, so the escaping test can inject markup everywhere at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.section_result import Computed
from judge_transfer_audit.results.result import (
    SCHEMA_VERSION,
    AuditResult,
    Cell,
    GlmmSummary,
    HumanSide,
    Interval,
    JudgeConfigRate,
    JudgeSide,
    Provenance,
    Transfer,
)
from judge_transfer_audit.results.tables import JUDGE_PAIR_COLUMNS, AgreementRows, BaselineRows, JudgePairs
from judge_transfer_audit.statistics.agreement import AgreementRow, BaselineRow
from judge_transfer_audit.statistics.surface.associations import POOLED

CRITERIA = ("authenticity", "emotion_provocation", "empathy", "engagement", "narrative_complexity", "overall")
MATCHUPS = (("gpt5-auto", "gpt4o"), ("gpt5-high", "gpt4o"), ("r1", "v3"))


@dataclass(frozen=True)
class UncertaintyPayload:
    bootstrap: pd.DataFrame
    loro: pd.DataFrame
    tally: pd.DataFrame


def _identity(s: str) -> str:
    return s


def make_result(text: Callable[[str], str] = _identity, *, sections: bool = True, seed: int = 7) -> AuditResult:
    rng = np.random.default_rng(seed)
    readers = [text(f"reader {i}") for i in range(1, 8)]
    judge = text("ensemble")
    configs = [text(f"config-{k}") for k in range(1, 4)]
    cells, checks = [], []
    boot, loro, rates = [], [], []
    for focal_raw, other_raw in MATCHUPS:
        focal, other = text(focal_raw), text(other_raw)
        matchup = text(f"{focal_raw} vs {other_raw}")
        for crit_raw in CRITERIA:
            crit = text(crit_raw)
            est = float(rng.uniform(0.35, 0.7))
            lo, hi = est - 0.09, min(est + 0.08, 0.99)
            ties = int(rng.integers(0, 5))
            wins = int(rng.integers(13, 21 - ties))
            losses = 20 - wins - ties
            jrate = (wins + 0.5 * ties) / 20
            glmm = GlmmSummary(
                est,
                lo,
                hi,
                float(np.log(est / (1 - est))),
                0.2,
                0.3,
                0.25,
                singular=crit_raw == "empathy",
                converged=True,
                separation=False,
                loglik=-90.0,
                majority_plugin=min(est + 0.1, 1.0),
                degenerate=crit_raw == "engagement",
                degenerate_reason=text("pair SD 18.7 on the logit scale (above 5)") if crit_raw == "engagement" else "",
            )
            majority = min(est + 0.12, 0.99)
            human = HumanSide(
                rate=est + 0.01,
                n_focal=80,
                n_other=60,
                n_ties=0,
                rate_even_split=est,
                glmm=glmm,
                vote_share=Interval(est, lo, hi, 0.95),
                majority_rate=Interval(majority, majority - 0.2, min(majority + 0.1, 1.0), 0.95),
                between_pair_sd=0.12,
                n_pairs_compared=20,
            )
            jside = JudgeSide(
                judge,
                text("aggregate") if crit_raw == "overall" else crit,
                jrate,
                wins,
                losses,
                ties,
                0,
                20,
                "even-split",
                crit_raw == "overall",
                tuple(
                    JudgeConfigRate(c, jrate - 0.02 * k, wins - k, losses + k, ties, 0) for k, c in enumerate(configs)
                ),
            )
            band = (est, majority)
            dist = jrate - band[1] if jrate > band[1] else (jrate - band[0] if jrate < band[0] else 0.0)
            verdict = (
                Status.FAIL
                if abs(dist) > 0.2
                else Status.INCONCLUSIVE
                if abs(dist) > 0.05
                else Status.INSUFFICIENT
                if crit_raw == "authenticity" and focal_raw == "r1"
                else Status.PASS
            )
            transfer = Transfer(
                verdict,
                text(f"{verdict.value}: judge {100 * jrate:.0f}% vs the human band"),
                margin=0.1,
                difference=Interval(dist, dist - 0.08, dist + 0.08, 0.9),
                difference_vote_share=Interval(jrate - est, jrate - est - 0.1, jrate - est + 0.1, 0.9),
                difference_majority=Interval(jrate - majority, jrate - majority - 0.2, jrate - majority + 0.1, 0.9),
                judge_rate=Interval(jrate, jrate - 0.1, min(jrate + 0.08, 1.0), 0.9),
                band_low=band[0],
                band_high=band[1],
                interval_level=0.9,
                p_outside=0.01,
                p_outside_adjusted=0.05,
                p_conflict=1.0,
                p_conflict_adjusted=1.0,
                adjust="holm",
                direction_conflict=False,
                human_direction="chance" if lo < 0.5 < hi else "focal",
                judge_direction="focal",
                pairs_needed=60 if verdict is Status.INCONCLUSIVE else None,
                n_pairs=20,
                n_readers=7,
                readers_per_pair=7.0,
                n_boot=999,
                judge_vs_majority=0.52,
                reader_baseline=0.55,
                below_reader_baseline=True,
            )
            cells.append(Cell(matchup, crit, focal, other, 20, 7, 140, human, jside, transfer))
            checks.append(Check("transfer.decision", verdict, dist, 0.1, transfer.reason, scope=f"{matchup}/{crit}"))
            for scheme, width in (("pairs", 0.08), ("readers", 0.12), ("two-way", 0.14)):
                boot.append(
                    {
                        "matchup": matchup,
                        "criterion": crit,
                        "cell": f"{matchup}/{crit}",
                        "scheme": scheme,
                        "rate": est + 0.01,
                        "ci_low_percentile": est - width,
                        "ci_high_percentile": est + width,
                        "ci_low_bca": np.nan,
                        "ci_high_bca": np.nan,
                    }
                )
            for r in readers:
                loro.append(
                    {"reader_id": r, "matchup": matchup, "criterion": crit, "shift": float(rng.normal(0, 0.02))}
                )
                rates.append(
                    {
                        "matchup": matchup,
                        "reader_id": r,
                        "criterion": crit,
                        "rate": float(rng.uniform(0.2, 0.85)),
                        "n": 20,
                    }
                )
    checks.append(Check("agreement.krippendorff_alpha", Status.WARN, 0.07, 0.2, text("readers barely agree")))
    checks.append(Check("surface.sensitivity", Status.SKIPPED, None, None, text("no stories given")))
    agreement = AgreementRows(
        tuple(
            AgreementRow(
                level="criterion",
                matchup=text("all"),
                criterion=text(c),
                n_pairs=60,
                n_units=60,
                n_readers=7,
                n_votes=420,
                n_ties=12,
                n_units_single_vote=0,
                balanced=True,
                fleiss_kappa=0.05,
                observed_agreement=0.54,
                expected_agreement=0.52,
                krippendorff_alpha=0.07,
                raw_agreement=0.538,
            )
            for c in CRITERIA
        )
    )
    baseline = BaselineRows(
        tuple(
            BaselineRow(
                level="criterion",
                matchup=text("all"),
                criterion=text(c),
                n_pairs=60,
                n_readers=7,
                reader_mean=0.55,
                reader_min=0.41,
                reader_max=0.66,
                reader_min_id=readers[0],
                reader_max_id=readers[-1],
                n_units_split=3,
                judge_agreement=0.52,
                judge_n_units=57,
                judge_n_missing=0,
                judge_agreement_loo=0.51,
            )
            for c in CRITERIA
        )
    )
    prov = Provenance(
        package_version="0.1.0",
        package_versions={"numpy": "2.0", "pandas": "3.1"},
        command=text("audit run judge.csv humans.csv --seed 7"),
        seed=7,
        tie_rule="even-split",
        policy={"transfer": {"ci_level": 0.95}, "agreement": {"min_alpha": 0.2}},
        policy_source=text("policy.toml"),
        sources=(
            {
                "role": "judge",
                "path": text("judge.csv"),
                "sha256": "ab" * 32,
                "format": "csv",
                "n_rows": 1800,
                "layout": "scalar-long",
            },
        ),
        exclusions=({"role": "judge", "reason": text("unparsable output"), "n_rows": 3},),
        focal_source="pairs file",
        human_shape="pairwise",
        primary_judge=judge,
        notes=(text("a note"),),
    )
    kw: dict[str, Any] = {}
    if sections:
        linkage = np.array(
            [[0, 2, 0.5, 2], [3, 6, 0.7, 2], [1, 7, 0.9, 3], [4, 5, 1.0, 2], [8, 9, 1.4, 5], [10, 11, 2.0, 7]], float
        )
        timing = pd.DataFrame(
            [
                {
                    "reader_id": r,
                    "n_pairs": 60,
                    "median_seconds": 120.0 + 40 * i,
                    "mean_seconds_capped": 140.0 + 38 * i,
                    "n_capped": i % 3,
                    "fatigue_slope": float(rng.normal(0, 1)),
                    "fatigue_slope_se": 0.8,
                    "fast_reader": i == 5,
                }
                for i, r in enumerate(readers)
            ]
        )
        heat = []
        for m in [text("(all matchups)")] + [c.matchup for c in cells[::6]]:
            for crit in CRITERIA:
                for r in readers:
                    heat.append(
                        {
                            "row_kind": "reader",
                            "row_label": r,
                            "matchup": m,
                            "criterion": text(crit),
                            "rate": float(rng.uniform(0.2, 0.85)),
                        }
                    )
                heat.append(
                    {
                        "row_kind": "human_pooled",
                        "row_label": "humans (pooled)",
                        "matchup": m,
                        "criterion": text(crit),
                        "rate": 0.55,
                    }
                )
                heat.append(
                    {
                        "row_kind": "human_glmm",
                        "row_label": "humans (GLMM)",
                        "matchup": m,
                        "criterion": text(crit),
                        "rate": 0.56,
                    }
                )
                for cfg in configs:
                    heat.append(
                        {
                            "row_kind": "judge",
                            "row_label": cfg,
                            "matchup": m,
                            "criterion": text(crit),
                            "rate": float(rng.uniform(0.75, 1.0)),
                        }
                    )
        votes56 = pd.DataFrame(
            [
                {"reader_id": r, **{text(c): ("focal" if (i + k) % 3 else "other") for k, c in enumerate(CRITERIA)}}
                for i, r in enumerate(readers)
            ]
        )
        readers_payload = {
            "rates": {"status": "PASS", "reason": "", "rates": pd.DataFrame(heat)},
            "clustering": {
                "status": "PASS",
                "linkage": "average",
                "weights": {"labels": readers, "linkage_matrix": linkage.tolist(), "cophenetic_correlation": 0.8},
                "kappas": {"labels": readers, "linkage_matrix": linkage.tolist(), "cophenetic_correlation": 0.7},
            },
            "timing": {"status": "PASS", "readers": timing},
            "divergent_pairs": {
                "status": "PASS",
                "top": [
                    {
                        "rank": 1,
                        "pair_id": text("p56"),
                        "matchup": cells[-1].matchup,
                        "n_against": 4,
                        "mean_divergence": 0.61,
                        "votes": votes56,
                        "comments": [
                            {"reader_id": r, "criterion": text("overall"), "text": text("Story B felt more authentic")}
                            for r in readers[:3]
                        ],
                    }
                ],
            },
            "excerpts": pd.DataFrame(
                [
                    {"pair_id": text("p56"), "system": text(s), "excerpt": text("Once upon a time ") * 3}
                    for s in ("gpt5-high", "gpt4o")
                ]
            ),
            "position_bias": {"status": "SKIPPED", "reason": text("no shown_first column")},
            "n_readers": 7,
        }
        points = pd.DataFrame(
            [
                {
                    "pair_id": f"p{k}",
                    "matchup": cells[6 * (k % 3)].matchup,
                    "judge": j,
                    "criterion": text("aggregate"),
                    "feature": text(f),
                    "feature_diff": float(rng.normal()),
                    "score_diff": float(rng.normal()),
                }
                for j in (judge, configs[0])
                for f in ("mean_sentence_length", "mattr")
                for k in range(60)
            ]
        )
        side = pd.DataFrame(
            [
                {
                    "scope": sc,
                    "judge": judge,
                    "criterion": text(c),
                    "feature": text("mattr"),
                    "judge_beta": -0.3,
                    "human_coef": 0.01,
                    "pattern": "judge only",
                }
                for sc in (POOLED, cells[0].matchup)
                for c in CRITERIA[:5]
            ]
        )
        kw = {
            "dev": Computed(
                {
                    "correlations": pd.DataFrame(
                        [
                            {"criterion": text(c), "judge": j, "spearman": sp, "n_items": 80}
                            for c in CRITERIA[:5]
                            for j, sp in ((judge, 0.646), (configs[0], 0.5))
                        ]
                    ),
                    "oof_mean": 0.58,
                    "warning": text("selection and validation share data"),
                },
            ),
            "uncertainty": Computed(
                UncertaintyPayload(
                    pd.DataFrame(boot), pd.DataFrame(loro), pd.DataFrame([{"method": "GLMM", "n_significant": 11}])
                ),
            ),
            "readers": Computed(readers_payload),
            "surface": Computed({"scatter_points": points, "side_by_side": side, "n_boot": 1000}),
        }
    from judge_transfer_audit.verdict import cell_counts

    if sections:
        from judge_transfer_audit.statistics.budget.compute import budget_of_cells

        budget = budget_of_cells(tuple(cells), alpha=0.05, adjust="holm", margin=0.10)
        kw["label_budget"] = Computed(budget)
    return AuditResult(
        schema_version=SCHEMA_VERSION,
        status=Status.FAIL,
        verdict=text("The judge does not transfer: its rate lies outside the human band in most cells."),
        cells=tuple(cells),
        counts=cell_counts(cells),
        agreement=agreement,
        reader_baseline=baseline,
        checks=tuple(checks),
        provenance=prov,
        judge_pairs=JudgePairs(
            pd.DataFrame(
                [
                    {
                        "pair_id": "p1",
                        "matchup": cells[0].matchup,
                        "focal": cells[0].focal,
                        "other": cells[0].other,
                        "criterion": "empathy",
                        "judge": judge,
                        "focal_score": 7.0,
                        "other_score": 5.0,
                        "outcome": "win",
                        "credit": 1.0,
                    }
                ],
                columns=list(JUDGE_PAIR_COLUMNS),
            )
        ),
        **kw,
    )
