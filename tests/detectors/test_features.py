"""compute_features: table shape, statuses, precomputed columns, input errors, cache, round trip."""

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.detectors import DETECTORS, FeatureTable, PerplexityConfig, compute_features
from judge_transfer_audit.detectors.lexical import LexicalDetector
from judge_transfer_audit.detectors.sentences import sentence_lengths
from judge_transfer_audit.model.checks import Status


def _stories():
    return pd.DataFrame(
        {
            "pair_id": ["p1", "p1", "p2", "p2"],
            "system": ["a", "b", "a", "b"],
            "text": [
                "The cat sat. It was happy!",
                "One two three. Four five six seven.",
                "The cat sat. It was happy!",
                "Short.",
            ],
            "ppl_70b": [9.5, 16.3, 9.5, 5.1],
            "note": ["x", "y", "z", "w"],
            "line": [2, 3, 4, 5],  # added by judge_transfer_audit.model.data's loader: bookkeeping, not a feature
        }
    )


def test_table_has_all_default_features_and_precomputed_columns():
    table = compute_features(_stories())
    assert list(table.frame.columns[:2]) == ["pair_id", "system"]
    for name in (
        "n_words",
        "n_chars",
        "n_sentences",
        "sentence_length_mean",
        "sentence_length_sd",
        "sentence_length_skewness",
        "sentence_length_kurtosis",
        "mattr",
        "mtld",
        "ppl_70b",
    ):
        assert name in table.feature_names
    assert table.precomputed == ("ppl_70b",)
    assert table.ignored_columns == ("note",)
    assert "line" not in table.feature_names
    assert table.frame["ppl_70b"].tolist() == [9.5, 16.3, 9.5, 5.1]
    assert table.n_unique_texts == 3  # the repeated text is computed once
    assert table.frame["sentence_length_mean"].tolist()[1] == np.mean(
        sentence_lengths(["One two three. Four five six seven."])[0]
    )


def test_perplexity_skipped_names_the_option_to_set():
    table = compute_features(_stories())
    run = {d.name: d for d in table.detectors}["perplexity"]
    assert run.status is Status.SKIPPED
    assert "--perplexity-model" in run.reason and "--perplexity-url" in run.reason
    assert "perplexity" not in table.feature_names


def test_unconfigured_perplexity_config_is_skipped_too():
    table = compute_features(_stories(), detectors=["length", "perplexity"], perplexity=PerplexityConfig())
    assert [d.status for d in table.detectors] == [Status.PASS, Status.SKIPPED]


def test_params_and_versions_recorded():
    table = compute_features(_stories(), detectors=[LexicalDetector(mattr_window=3)])
    (run,) = table.detectors
    assert run.version == "1" and run.params["mattr_window"] == "3" and run.params["mtld_threshold"] == "0.72"
    assert run.n_missing == {"mattr": 1, "mtld": 0}  # "Short." has one token < window 3


@pytest.mark.parametrize(
    "frame, needle",
    [
        (pd.DataFrame({"pair_id": ["p"], "system": ["a"]}), "missing column"),
        (pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": [None]}), "text is missing"),
        (pd.DataFrame({"pair_id": ["p", "p"], "system": ["a", "a"], "text": ["x", "y"]}), "duplicate story"),
        (pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["x"], "mattr": [0.5]}), "also a feature"),
    ],
)
def test_bad_input_is_an_input_error(frame, needle):
    with pytest.raises(InputError) as info:
        compute_features(frame)
    assert needle in str(info.value)


def test_unknown_detector_lists_known_ones():
    with pytest.raises(InputError) as info:
        compute_features(_stories(), detectors=["lenght"])
    assert "length" in str(info.value) and "lexical" in str(info.value)
    assert "length" in DETECTORS


def test_cache_rerun_computes_nothing_and_is_bit_identical(tmp_path, monkeypatch):
    first = compute_features(_stories(), cache=tmp_path)
    calls = []
    original = LexicalDetector.compute
    monkeypatch.setattr(LexicalDetector, "compute", lambda self, texts: calls.append(texts) or original(self, texts))
    second = compute_features(_stories(), cache=tmp_path)
    assert calls == []
    assert all(d.n_computed == 0 for d in second.detectors if d.status is Status.PASS)
    pd.testing.assert_frame_equal(first.frame, second.frame, check_exact=True)
    # A new text is the only thing computed.
    more = pd.concat(
        [
            _stories(),
            pd.DataFrame(
                {
                    "pair_id": ["p3"],
                    "system": ["a"],
                    "text": ["Brand new text here."],
                    "ppl_70b": [1.0],
                    "note": ["n"],
                    "line": [6],
                }
            ),
        ],
        ignore_index=True,
    )
    compute_features(more, cache=tmp_path)
    assert calls == [["Brand new text here."]]


def test_cache_is_keyed_by_parameters(tmp_path):
    compute_features(_stories(), detectors=[LexicalDetector(mattr_window=2)], cache=tmp_path)
    other = compute_features(_stories(), detectors=[LexicalDetector(mattr_window=3)], cache=tmp_path)
    assert other.detectors[0].n_computed == 3
    assert len(list((tmp_path / "lexical").iterdir())) == 2


def test_feature_table_round_trips_through_json():
    table = compute_features(_stories())
    back = from_jsonable(FeatureTable, json.loads(json.dumps(to_jsonable(table))))
    pd.testing.assert_frame_equal(back.frame, table.frame)
    assert back.detectors == table.detectors
    assert "SKIPPED" in str(back) and "mattr" in str(back)


def test_parallel_jobs_give_identical_values(monkeypatch):
    import judge_transfer_audit.detectors.features as features_module

    monkeypatch.setattr(features_module, "MIN_TEXTS_PER_JOB", 2)
    stories = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(9)],
            "system": "a",
            "text": [f"Story {i}. " + "word and more words " * (i + 1) + "The end!" for i in range(9)],
        }
    )
    serial = compute_features(stories, detectors=["length", "sentences", "lexical"])
    parallel = compute_features(stories, detectors=["length", "sentences", "lexical"], n_jobs=2)
    pd.testing.assert_frame_equal(serial.frame, parallel.frame, check_exact=True)


def test_empty_frame_and_empty_text():
    empty = compute_features(pd.DataFrame({"pair_id": [], "system": [], "text": []}))
    assert empty.n_stories == 0 and "mattr" in empty.feature_names
    blank = compute_features(pd.DataFrame({"pair_id": ["a"], "system": ["x"], "text": [""]})).frame.iloc[0]
    assert blank["n_words"] == 0 and blank["n_sentences"] == 0 and np.isnan(blank["mattr"])
