"""The optional parts of an audit, each computed, SKIPPED or ERROR with a reason.

Each function reads the validated data and the spec and returns a
:class:`~audit.result.Section`; a missing input makes it SKIPPED (the report says why), an
:class:`~audit.errors.AuditError` inside it makes it ERROR (the rest of the audit goes on).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np
import pandas as pd

from audit.checks import Check, Status, apply_severity, breach_status
from audit.errors import AuditError, WorkerLostError
from audit.policy import Policy
from audit.result import Section
from audit.uncertainty.section import UncertaintySection


def _int_seed(seed: np.random.SeedSequence) -> int:
    """An int seed drawn from the run's seed sequence, so each section records the seed it used."""
    return int(seed.generate_state(1)[0])


def not_requested(flag: str) -> Section:
    return Section(Status.SKIPPED, f"not requested ({flag})")


def _guarded(compute: Callable[[], object], what: str) -> Section:
    try:
        payload = compute()
    except WorkerLostError:
        raise  # the run is incomplete, not one section: the command line has its own exit status
    except AuditError as exc:
        from audit.redact import redact_text

        # The reason is recorded in result.json: a provider's message may quote a URL with a key.
        return Section(Status.ERROR, redact_text(f"{what} could not be computed: {exc}"))
    return Section(Status.PASS, "", payload)


def judge_credits(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Every configuration's per-pair credit and outcome (win, loss, tie, invalid: a tie is
    told apart whatever the rule credits it), as the judge criteria name them."""
    return outcomes[["pair_id", "matchup", "criterion", "judge", "credit", "outcome"]].copy()


def primary_credits(choices: pd.DataFrame, pairs: pd.DataFrame, primary: str | None) -> pd.DataFrame:
    """The primary judge's credits keyed by the *human* criterion (``overall`` = aggregate)."""
    frame = choices.merge(pairs[["pair_id", "matchup"]], on="pair_id", how="left")
    return frame.rename(columns={"y_judge": "credit"}).assign(judge=primary or "")[
        ["pair_id", "matchup", "criterion", "judge", "credit"]
    ]


# ----------------------------------------------------------------------------- dev set
def dev_section(data, spec, seed: np.random.SeedSequence) -> Section:
    if data.dev_judge is None or data.dev_humans is None:
        return Section(Status.SKIPPED, "no development set given (--dev-judge and --dev-humans)")
    from audit.devset import dev_validity

    return _guarded(lambda: dev_validity(data.dev_judge, data.dev_humans, rng=_int_seed(seed)), "dev-set validity")


# ----------------------------------------------------------------------------- uncertainty
def cells_glmm_frame(cells) -> pd.DataFrame:
    """The pipeline's GLMM fits in the shape :func:`significance_tally` reads."""
    from scipy.stats import norm

    rows = []
    for c in cells:
        g = c.human.glmm
        p = 2 * norm.sf(abs(g.b0 / g.se)) if g.se and not math.isnan(g.se) and g.se > 0 else float("nan")
        rows.append(
            {
                "matchup": c.matchup,
                "criterion": c.criterion,
                "cell": f"{c.matchup}/{c.criterion}",
                "estimate": g.estimate,
                "ci_low": g.ci_low,
                "ci_high": g.ci_high,
                "b0": g.b0,
                "se": g.se,
                "p_value": p,
                "sd_pair": g.sd_pair,
                "sd_reader": g.sd_reader,
                "converged": g.converged,
                "singular": g.singular,
                "separation": g.separation,
                "error": g.reason if g.status is Status.ERROR else "",
            }
        )
    return pd.DataFrame(rows)


def task_runner(spec):
    """The runner of the run's parallel tasks (``spec.jobs`` / ``spec.scheduler``); a context
    manager. Opened outside :func:`_guarded`: a bad scheduler address is the user's input error,
    not a section that could not be computed."""
    from audit.parallel import open_runner

    return open_runner(spec.jobs, spec.scheduler, progress=spec.progress_bar)


def full_glmm_fits(cells) -> dict[tuple[str, str], tuple[float, float, float]]:
    """The pipeline's per-cell GLMM optimum ``(b0, sd_pair, sd_reader)``, where finite: the
    leave-one-reader-out analysis starts from it instead of refitting every cell."""
    fits = {}
    for c in cells:
        g = c.human.glmm
        values = (g.b0, g.sd_pair, g.sd_reader)
        if g.status is not Status.ERROR and all(v is not None and math.isfinite(v) for v in values):
            fits[(c.matchup, c.criterion)] = tuple(float(v) for v in values)
    return fits


def uncertainty_section(
    data, spec, credits: pd.DataFrame, all_credits: pd.DataFrame, cells, seed: np.random.SeedSequence
) -> Section:
    from audit.uncertainty import cluster_bootstrap, judge_configuration_rates, leave_one_reader_out, significance_tally

    n_boot = spec.n_boot if spec.n_boot is not None else spec.policy.uncertainty.n_boot

    with task_runner(spec) as runner:

        def compute():
            boot = cluster_bootstrap(
                data.votes,
                n_boot=n_boot,
                level=spec.policy.transfer.level,
                judge_credits=credits if len(credits) else None,
                rng=_int_seed(seed),
                runner=runner,
            )
            glmm = cells_glmm_frame(cells)
            tallies = [significance_tally(boot, glmm, adjust=a) for a in ("none", "holm", "bh")]
            loro = leave_one_reader_out(
                data.votes, full_fits=full_glmm_fits(cells), exact_budget=spec.loro_exact_budget, runner=runner
            )
            return UncertaintySection(
                bootstrap=boot,
                loro=loro,
                tally=tallies[0],
                tally_holm=tallies[1],
                tally_bh=tallies[2],
                judge_configurations=judge_configuration_rates(all_credits),
            )

        return _guarded(compute, "uncertainty")


# ----------------------------------------------------------------------------- readers
def readers_section(data, spec, credits: pd.DataFrame, cells, seed: np.random.SeedSequence) -> Section:
    """Reader analysis; ``credits`` are every judge configuration's (divergent pairs need the
    judge to be unanimous *across configurations*, and the heat maps show each one)."""
    from audit.human_side import fit_cell_glmm
    from audit.readers import analyse_readers

    rows = [
        {
            "matchup": c.matchup,
            "criterion": c.criterion,
            "estimate": c.human.glmm.estimate,
            "lo": c.human.glmm.ci_low,
            "hi": c.human.glmm.ci_high,
        }
        for c in cells
    ]
    # pooled heat maps only over matchups whose focal system means one thing (audit.data.pooling_scopes);
    # each gets its own GLMM row (pair + reader, per criterion)
    pools = data.pooling_scopes()
    for label, matchups in pools.items():
        pooled = data.votes[data.votes["matchup"].isin(list(matchups))]
        for criterion, votes in pooled.groupby("criterion", sort=False):
            g = fit_cell_glmm(votes, level=spec.policy.transfer.level, backend=spec.glmm_backend)
            rows.append(
                {"matchup": label, "criterion": criterion, "estimate": g.estimate, "lo": g.ci_low, "hi": g.ci_high}
            )
    estimates = pd.DataFrame(rows)
    return _guarded(
        lambda: analyse_readers(
            data.votes,
            credits if len(credits) else None,
            glmm_estimates=estimates,
            linkage=spec.linkage,
            rng=_int_seed(seed),
            stories=data.stories,
            pools=pools,
            tie_rule=spec.tie_rule,
        ),
        "reader analysis",
    )


# ----------------------------------------------------------------------------- surface
def surface_section(data, spec, primary: str | None, seed: np.random.SeedSequence) -> Section:
    if data.stories is None:
        return Section(Status.SKIPPED, "no stories given (--stories): surface features need the texts")
    if data.judge_scores is None:
        return Section(Status.SKIPPED, "the judge gives pairwise verdicts, not scores: no score-feature association")
    from audit.surface import surface_associations
    from detectors import compute_features

    n_boot = spec.n_boot if spec.n_boot is not None else spec.policy.uncertainty.n_boot

    def compute():
        features = compute_features(data.stories, perplexity=_perplexity_config(spec), cache=spec.features_cache)
        if spec.timings is not None:  # seconds and cache use: timings.json, not the result
            spec.timings.detector_runs(features.detectors)
        return surface_associations(
            features, data.judge_scores, data.pairs, data.votes, judge=primary, n_boot=n_boot, rng=_int_seed(seed)
        )

    return _guarded(compute, "surface features")


def _perplexity_config(spec):
    return spec.perplexity if spec.perplexity is not None and spec.perplexity.configured else None


# ----------------------------------------------------------------------------- checks
def _primary_judge_only(checks: list[Check], primary: str | None) -> list[Check]:
    """Reader checks scoped ``cell [judge]`` are kept for the primary judge only; the other
    configurations stay visible in the heat maps and tables without multiplying the gate."""
    if not primary:
        return checks
    return [c for c in checks if not c.scope.endswith("]") or c.scope.endswith(f"[{primary}]")]


def section_checks(
    policy: Policy,
    *,
    dev: Section,
    uncertainty: Section,
    readers: Section,
    surface: Section,
    primary: str | None = None,
) -> list[Check]:
    checks: list[Check] = []
    for name, section in (("dev", dev), ("uncertainty", uncertainty), ("readers", readers), ("surface", surface)):
        if section.status is Status.ERROR:
            checks.append(Check(f"{name}.computed", Status.ERROR, reason=section.reason))
    if dev.payload is not None:
        checks.extend(_dev_checks(dev.payload, policy))
    if uncertainty.payload is not None:
        checks.extend(_loro_checks(uncertainty.payload, policy))
    # the reader and surface checks that test something share one family-wise error budget
    # (docs/detectors.md, "Multiplicity"): each gets an equal share
    from audit.readers.policy import reader_check_families
    from audit.surface.checks import surface_check_families

    families = (reader_check_families(readers.payload) if readers.payload is not None else 0) + (
        surface_check_families(surface.payload) if surface.payload is not None else 0
    )
    if readers.payload is not None:
        from audit.readers import reader_checks

        checks.extend(_primary_judge_only(reader_checks(readers.payload, policy.readers, families=families), primary))
    if surface.payload is not None:
        from audit.surface import surface_checks

        checks.extend(
            surface_checks(
                surface.payload, dataclasses.asdict(policy.surface), severity=policy.severity, families=families
            )
        )
        # A detector that ran and failed (e.g. the perplexity server is down) is missing
        # evidence the user asked for; one that could not run (nothing configured) is SKIPPED.
        checks.extend(
            Check("surface.detector", Status.ERROR, reason=f"detector {d.name} failed: {d.reason}", scope=d.name)
            for d in getattr(surface.payload, "feature_detectors", ())
            if d.status is Status.ERROR
        )
    return apply_severity(checks, policy.severity)


def _dev_checks(dev, policy: Policy) -> list[Check]:
    """Gate on the out-of-fold estimate: the in-sample figure is the one the judge was selected on."""
    value = getattr(dev, "oof_pooled", float("nan"))
    threshold = policy.dev.min_dev_spearman
    if value is None or math.isnan(value):
        return [Check("dev.spearman", Status.SKIPPED, reason="no out-of-fold dev-set correlation could be computed")]
    status = Status.PASS if value >= threshold else breach_status("dev.spearman")
    reason = (
        f"development-set Spearman of the routed judge with mean human ratings, out of fold: {value:.3f} "
        f"(in sample {dev.routed_in_sample_pooled:.3f}, optimism {dev.optimism_pooled:+.3f})"
        + ("; selection and validation share data" if dev.selection_shares_data else "")
    )
    return [Check("dev.spearman", status, value, threshold, reason)]


def _loro_checks(section: UncertaintySection, policy: Policy) -> list[Check]:
    loro = section.loro
    if math.isnan(loro.largest_shift):
        return [Check("uncertainty.loro_max_shift", Status.SKIPPED, reason="leave-one-reader-out not computed")]
    value = abs(loro.largest_shift)
    threshold = policy.uncertainty.max_loro_shift
    status = Status.PASS if value <= threshold else breach_status("uncertainty.loro_max_shift")
    return [
        Check(
            "uncertainty.loro_max_shift",
            status,
            value,
            threshold,
            f"dropping reader {loro.largest_shift_reader} moves {loro.largest_shift_cell} by "
            f"{loro.largest_shift:+.1%} (raw rate)",
        )
    ]
