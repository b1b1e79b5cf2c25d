"""How often do the surface and reader checks warn a judge that deserves no warning?

A seeded simulation of a study shaped like the demo fixture (3 matchups x 20 prompt-matched
pairs, 7 readers in two groups, 5 criteria + overall, timing and presentation order without
any effect, 4 surface features per story). Two judges:

``aligned``
    behaves like one more reader: its score difference on a pair and criterion follows the
    readers' latent preference plus a judge effect and noise of a reader's size; the
    surface features are unrelated to the judge and to the readers. It deserves no
    surface or reader warning.
``length``
    scores follow the stories' mean sentence length (plus noise), which the readers ignore:
    ``surface.judge_only_feature`` should warn.

For each seed the study is drawn, the surface associations and the reader analysis are
computed, and the checks are read (with the default Holm adjustment across scopes, and with
``adjust="none"``, the pointwise reading: each check and scope at its own alpha). Run
``python -m judge_transfer_audit.sections.diagnostics_simulation --seeds 40`` to print the table of docs/detectors.md
and docs/readers.md (warn rates with binomial standard errors).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.data import AuditData

CRITERIA = ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity")
MATCHUPS = (("gpt5-auto", "gpt4o", 0.4), ("gpt5-high", "gpt4o", 0.35), ("r1", "v3", -0.2))
FEATURES = ("sentence_length", "mattr", "mtld", "n_words")
JUDGES = ("aligned", "length")


@dataclass(frozen=True)
class SimulatedStudy:
    data: AuditData
    features: pd.DataFrame  #: pair_id, system, one column per feature


def simulate_study(seed: int, judge: str = "aligned", n_pairs: int = 20, n_readers: int = 7) -> SimulatedStudy:
    """One seeded study (see the module docstring); ``judge`` is "aligned" or "length"."""
    if judge not in JUDGES:
        raise ValueError(f"judge must be one of {JUDGES}")
    rng = np.random.default_rng(seed)
    reader_bias = rng.normal(0, 0.3, n_readers)
    judge_bias = rng.normal(0, 0.3)
    pairs, votes, scores, feats = [], [], [], []
    order = 0
    for focal, other, mu in MATCHUPS:
        matchup = f"{focal} vs {other}"
        for i in range(n_pairs):
            pid = f"{focal}-{i:02d}"
            pairs.append(
                (pid, focal, other, focal, other, matchup, f"premise{i:02d}", f"{pid}:{focal}", f"{pid}:{other}")
            )
            q = mu + rng.normal(0, 0.6)  # the pair's latent preference for the focal story
            q_crit = {c: q + rng.normal(0, 0.5) for c in CRITERIA}
            q_crit["overall"] = float(np.mean([q_crit[c] for c in CRITERIA]))
            story = {
                s: {
                    "sentence_length": rng.normal(14, 3),
                    "mattr": rng.normal(0.72, 0.03),
                    "mtld": rng.normal(80, 12),
                    "n_words": rng.normal(500, 40),
                }
                for s in (focal, other)
            }
            for s in (focal, other):
                feats.append({"pair_id": pid, "system": s, **story[s]})
            for r in range(n_readers):
                for c in (*CRITERIA, "overall"):
                    y = float(rng.random() < 1 / (1 + math.exp(-(q_crit[c] + reader_bias[r]))))
                    shown = focal if rng.random() < 0.5 else other
                    votes.append(
                        (
                            pid,
                            f"reader{r + 1}",
                            c,
                            matchup,
                            focal,
                            other,
                            focal if y else other,
                            y,
                            float(rng.lognormal(math.log(60), 0.3)),
                            "",
                            shown,
                            "expert" if r < 4 else "enthusiast",
                            order,
                            0,
                        )
                    )
                    order += 1
            for c in CRITERIA:
                if judge == "aligned":  # one more reader: the same latent preference, its own bias and noise
                    d = q_crit[c] + judge_bias + rng.logistic()
                else:  # the judge scores shorter sentences higher, whatever the readers prefer
                    d = -0.5 * (story[focal]["sentence_length"] - story[other]["sentence_length"]) + rng.normal(0, 1)
                base = 3 + rng.normal(0, 0.5)
                scores.append((pid, focal, f"{pid}:{focal}", c, "ensemble", 0, base + d / 2, 0))
                scores.append((pid, other, f"{pid}:{other}", c, "ensemble", 0, base - d / 2, 0))
    from judge_transfer_audit.inputs.resolve import VOTE_COLUMNS

    data = AuditData(
        votes=pd.DataFrame(votes, columns=VOTE_COLUMNS),
        pairs=pd.DataFrame(
            pairs,
            columns=["pair_id", "system_a", "system_b", "focal", "other", "matchup", "group_id", "item_a", "item_b"],
        ),
        judge_scores=pd.DataFrame(
            scores, columns=["pair_id", "system", "item_id", "criterion", "judge", "sample", "score", "line"]
        ),
        focal_source="pairs file",
    )
    return SimulatedStudy(data=data, features=pd.DataFrame(feats))


def diagnostic_checks(
    study: SimulatedStudy, seed: int, *, adjust: tuple[str, ...] = ("holm",), n_boot: int = 200
) -> dict[str, list]:
    """The surface and reader checks of one simulated study, per adjustment (computed once)."""
    from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
    from judge_transfer_audit.sections import judge_credits
    from judge_transfer_audit.statistics.readers import analyse_readers, reader_checks
    from judge_transfer_audit.statistics.surface import surface_associations, surface_checks
    from judge_transfer_audit.statistics.surface.associations import readjust
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    data = study.data
    surface = surface_associations(
        study.features, data.judge_scores, data.pairs, data.votes, judge="ensemble", n_boot=n_boot, rng=seed
    )
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(seed))
    readers = analyse_readers(
        data.votes, judge_credits(outcomes), rng=seed, fit_glmm_if_missing=False, pools=data.pooling_scopes()
    )
    from judge_transfer_audit.statistics.readers.policy import reader_check_families
    from judge_transfer_audit.statistics.surface.checks import surface_check_families

    # as judge_transfer_audit.sections.registry.section_checks: the diagnostic checks share one error budget, except
    # when read pointwise ("none": every check and scope at its own alpha)
    families = reader_check_families(readers) + surface_check_families(surface)
    return {
        a: surface_checks(readjust(surface, a), families=families if a != "none" else 1)
        + reader_checks(readers, {"adjust": a}, families=families if a != "none" else 1)
        for a in adjust
    }


def warned(checks) -> dict[str, int]:
    """Number of WARN/FAIL checks per check name, plus "any surface", "any reader" and "any"."""
    out: dict[str, int] = {}
    for c in checks:
        out[c.name] = out.get(c.name, 0) + (c.status in (Status.WARN, Status.FAIL))
    out["any surface"] = sum(v for k, v in out.items() if k.startswith("surface."))
    out["any reader"] = sum(v for k, v in out.items() if k.startswith("readers."))
    out["any"] = out["any surface"] + out["any reader"]
    return out


def warn_rates(seeds: range, judge: str, adjust: tuple[str, ...] = ("holm", "none")) -> pd.DataFrame:
    """Per adjustment and check name (and "any surface", "any reader", "any"), the share of
    studies with at least one WARN, its binomial standard error, and the mean number of WARNs."""
    per_study = {a: [] for a in adjust}
    for seed in seeds:
        for a, checks in diagnostic_checks(simulate_study(seed, judge), seed, adjust=adjust).items():
            per_study[a].append(warned(checks))
    rows = []
    for a, studies in per_study.items():
        frame = pd.DataFrame(studies).fillna(0)
        n = len(frame)
        for name in frame.columns:
            rate = float((frame[name] > 0).mean())
            rows.append(
                {
                    "judge": judge,
                    "adjust": a,
                    "check": name,
                    "studies": n,
                    "warn_rate": rate,
                    "se": math.sqrt(rate * (1 - rate) / n),
                    "mean_warnings": float(frame[name].mean()),
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="studies per judge and adjustment (seeds 0..N-1)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tables = [warn_rates(range(args.seeds), judge) for judge in JUDGES]
    table = pd.concat(tables, ignore_index=True)
    pd.set_option("display.width", 160)
    for (judge, adjust), t in table.groupby(["judge", "adjust"], sort=False):
        print(f"\njudge = {judge}, adjust = {adjust} ({int(t['studies'].iloc[0])} seeded studies)")
        print(
            t[["check", "warn_rate", "se", "mean_warnings"]].to_string(index=False, float_format=lambda x: f"{x:.3f}")
        )
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
