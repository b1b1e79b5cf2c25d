"""judge_transfer_audit.statistics.judge.panel: Dawid-Skene recovers known confusion matrices on seeded simulations;
the effective number of judges on constructed correlation structures; bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.statistics.judge.panel import dawid_skene, effective_number_of_judges

CATS = ("focal", "other", "tie")


def _simulate(confusions, priors, n_items, seed, p_missing=0.0):
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(priors), n_items, p=priors)
    rows = []
    for j, conf in enumerate(confusions):
        for i, t in enumerate(truth):
            if rng.random() < p_missing:
                continue
            rows.append(dict(item=f"i{i:04d}", rater=f"j{j}", label=CATS[rng.choice(len(priors), p=conf[t])]))
    return pd.DataFrame(rows), truth


CONF3 = [
    np.array([[0.85, 0.10, 0.05], [0.15, 0.80, 0.05], [0.30, 0.30, 0.40]]),
    np.array([[0.70, 0.25, 0.05], [0.20, 0.75, 0.05], [0.20, 0.20, 0.60]]),
    np.array([[0.60, 0.30, 0.10], [0.30, 0.60, 0.10], [0.25, 0.25, 0.50]]),
    np.array([[0.95, 0.04, 0.01], [0.05, 0.90, 0.05], [0.10, 0.10, 0.80]]),
    np.array([[0.55, 0.40, 0.05], [0.40, 0.55, 0.05], [0.30, 0.30, 0.40]]),
]
PRIORS3 = [0.5, 0.35, 0.15]


def test_recovers_known_confusion_matrices():
    """5 raters, 3 categories, 3,000 items, 10% missing: every confusion cell within 0.05,
    priors within 0.02 (Monte Carlo error at this size is ~0.01-0.02)."""
    labels, truth = _simulate(CONF3, PRIORS3, 3000, seed=4, p_missing=0.1)
    fit = dawid_skene(labels, categories=CATS, rng=1)
    assert fit.converged and fit.n_starts == 5 and fit.seed == 1
    np.testing.assert_allclose(fit.priors, PRIORS3, atol=0.02)
    for j, conf in enumerate(CONF3):
        np.testing.assert_allclose(np.array(fit.confusion[f"j{j}"]), conf, atol=0.05)
    best = max(fit.accuracy, key=fit.accuracy.get)
    assert best == "j3"


def test_latent_labels_beat_majority_vote():
    labels, truth = _simulate(CONF3, PRIORS3, 3000, seed=9)
    fit = dawid_skene(labels, categories=CATS, rng=2)
    items = fit.labels.set_index("item")
    latent = np.array([CATS.index(items.loc[f"i{i:04d}", "label"]) for i in range(len(truth))])
    counts = pd.crosstab(labels["item"], labels["label"]).reindex(columns=list(CATS), fill_value=0)
    majority = counts.to_numpy().argmax(axis=1)  # ties to the first category
    latent = latent[np.argsort([f"i{i:04d}" for i in range(len(truth))])]
    truth = truth[np.argsort([f"i{i:04d}" for i in range(len(truth))])]
    assert (latent == truth).mean() > (majority == truth).mean() + 0.02
    p_cols = [f"p_{c}" for c in CATS]
    np.testing.assert_allclose(fit.labels[p_cols].sum(axis=1), 1.0, atol=1e-12)


def test_two_categories_and_class_naming_without_label_switching():
    conf = [np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[0.8, 0.2], [0.1, 0.9]]), np.array([[0.7, 0.3], [0.3, 0.7]])]
    rng = np.random.default_rng(3)
    truth = rng.choice(2, 1500, p=[0.3, 0.7])
    rows = [
        dict(item=i, rater=f"j{j}", label=CATS[rng.choice(2, p=c[t])])
        for j, c in enumerate(conf)
        for i, t in enumerate(truth)
    ]
    for seed in (0, 1, 2):  # random starts never come back with the classes swapped
        fit = dawid_skene(pd.DataFrame(rows), rng=seed, n_starts=4)
        assert fit.categories == ("focal", "other")
        np.testing.assert_allclose(fit.priors, [0.3, 0.7], atol=0.03)


def test_reproducible_and_frame():
    labels, _ = _simulate(CONF3[:3], PRIORS3, 300, seed=1)
    a, b = dawid_skene(labels, rng=5), dawid_skene(labels, rng=5)
    assert a.loglik == b.loglik and a.labels.equals(b.labels)
    frame = a.to_frame()
    assert len(frame) == 3 * 3 * 3 and set(frame.columns) == {"rater", "truth", "said", "probability"}
    assert "Dawid-Skene" in str(a)


def test_dawid_skene_bad_input():
    labels, _ = _simulate(CONF3[:3], PRIORS3, 50, seed=1)
    with pytest.raises(InputError, match="not in the categories"):
        dawid_skene(labels, categories=("focal", "other"))
    with pytest.raises(InputError, match="two or more raters"):
        dawid_skene(labels[labels.rater == "j0"])
    with pytest.raises(InputError, match="repeated"):
        dawid_skene(pd.concat([labels, labels.head(1)]))
    with pytest.raises(InputError, match="missing column"):
        dawid_skene(labels.drop(columns="label"))


def test_effective_number_of_judges():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4000, 1))
    independent = pd.DataFrame(rng.normal(size=(4000, 4)), columns=list("abcd"))
    identical = pd.DataFrame(np.repeat(z, 4, axis=1), columns=list("abcd"))
    e_ind, e_same = effective_number_of_judges(independent), effective_number_of_judges(identical)
    assert e_ind.nyholt == pytest.approx(4, abs=0.05) and e_ind.participation_ratio == pytest.approx(4, abs=0.05)
    assert e_same.nyholt == pytest.approx(1, abs=1e-9) and e_same.participation_ratio == pytest.approx(1, abs=1e-9)
    # two clusters of two identical judges, eigenvalues (2, 2, 0, 0): Nyholt 1 + 3 (1 - (4/3)/4) = 3
    # (it is known to overcount clustered panels), participation ratio 16 / 8 = 2
    two = effective_number_of_judges(
        pd.DataFrame(np.column_stack([z, z, rng.normal(size=(4000, 1))[:, [0, 0]]]), columns=list("abcd"))
    )
    assert two.nyholt == pytest.approx(3.0, abs=0.05) and two.participation_ratio == pytest.approx(2.0, abs=0.05)
    # a constant judge is left out, named
    withconst = independent.assign(e=1.0)
    res = effective_number_of_judges(withconst)
    assert res.left_out == ("e",) and res.n_judges == 4
