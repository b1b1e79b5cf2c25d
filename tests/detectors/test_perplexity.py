"""Perplexity (transformers backend) against exp(mean token NLL) computed separately.

The model is a tiny random GPT-2 built in the test and saved with ``save_pretrained``; it is
loaded through the same ``compute_features`` path users take. Marked ``lm`` (needs torch and
transformers) except the missing-torch test, which simulates their absence.
"""

import math
import sys

import pandas as pd
import pytest

from judge_transfer_audit.detectors import PerplexityConfig, compute_features
from judge_transfer_audit.detectors.perplexity import TransformersPerplexity
from judge_transfer_audit.model.checks import Status

TEXTS = ["The cat sat on the mat. It was happy.", "Short!", "x" * 150 + " and then some words at the end."]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from tests.detectors._tiny_lm import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), n_positions=64)


def _features(model_dir, texts=TEXTS, **config):
    stories = pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(texts))], "system": "a", "text": texts})
    return compute_features(
        stories, detectors=["perplexity"], perplexity=PerplexityConfig(model=str(model_dir), **config)
    )


def _reference_nll(model, ids, begin, end, first):
    """Sum of -log p(token t | tokens begin..t-1) for t in first..end-1, straight from the logits."""
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids[begin:end]])).logits[0]
    logp = torch.log_softmax(logits.double(), dim=-1)
    return -sum(logp[t - begin - 1, ids[t]].item() for t in range(first, end))


@pytest.mark.lm
def test_short_texts_equal_exp_mean_nll(tiny_lm):
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(tiny_lm, local_files_only=True)
    model = GPT2LMHeadModel.from_pretrained(tiny_lm, local_files_only=True).eval()
    table = _features(tiny_lm, texts=TEXTS[:2])
    assert table.detectors[0].status is Status.PASS
    for text, got in zip(TEXTS[:2], table.frame["perplexity"]):
        ids = tok(text)["input_ids"]
        with torch.no_grad():  # transformers' own shifted cross-entropy: mean NLL
            loss = model(torch.tensor([ids]), labels=torch.tensor([ids])).loss.item()
        assert got == pytest.approx(math.exp(loss), rel=1e-5)
        assert got == pytest.approx(math.exp(_reference_nll(model, ids, 0, len(ids), 1) / (len(ids) - 1)), rel=1e-5)


@pytest.mark.lm
@pytest.mark.parametrize("stride", [16, 40])
def test_long_text_sliding_window(tiny_lm, stride):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(tiny_lm, local_files_only=True)
    model = GPT2LMHeadModel.from_pretrained(tiny_lm, local_files_only=True).eval()
    ids = tok(TEXTS[2])["input_ids"]
    assert len(ids) > 64
    # Reference loop written independently: window [b, b+64), score tokens not yet scored.
    total, scored, b = 0.0, 1, 0
    while scored < len(ids):
        e = min(b + 64, len(ids))
        total += _reference_nll(model, ids, b, e, scored)
        scored, b = e, b + stride
    expected = math.exp(total / (len(ids) - 1))
    got = _features(tiny_lm, texts=[TEXTS[2]], stride=stride).frame["perplexity"].iloc[0]
    assert got == pytest.approx(expected, rel=1e-5)


@pytest.mark.lm
def test_batching_does_not_change_values(tiny_lm):
    alone = [_features(tiny_lm, texts=[t], batch_size=1).frame["perplexity"].iloc[0] for t in TEXTS]
    together = _features(tiny_lm, batch_size=8).frame["perplexity"].tolist()
    assert together == pytest.approx(alone, rel=1e-5)


@pytest.mark.lm
def test_revision_is_a_weights_fingerprint(tiny_lm, tmp_path):
    from tests.detectors._tiny_lm import build_tiny_gpt2

    first = _features(tiny_lm, texts=TEXTS[:1]).detectors[0]
    other = _features(build_tiny_gpt2(tmp_path / "other", seed=1), texts=TEXTS[:1]).detectors[0]
    assert first.revision.startswith("sha256:")
    assert first.revision != other.revision
    assert first.params["model"] == str(tiny_lm) and first.params["backend"] == "transformers"


@pytest.mark.lm
def test_unknown_hub_model_is_skipped_without_downloading(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    table = _features("nobody-has/this-model-xyz", texts=TEXTS[:1])
    run = table.detectors[0]
    assert run.status is Status.SKIPPED
    assert "--allow-download" in run.reason


def test_missing_torch_is_skipped_with_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    table = _features("any/model", texts=TEXTS[:1])
    run = table.detectors[0]
    assert run.status is Status.SKIPPED
    assert "'torch' is not installed" in run.reason and "pip install" in run.reason
    assert "perplexity" not in table.feature_names


def test_stride_must_leave_context():
    det = TransformersPerplexity(PerplexityConfig(model="m", max_length=8, stride=8))
    det._loaded = (None, None, None, "cpu")
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError):
        det.windows(20)
    det.config = PerplexityConfig(model="m", max_length=8, stride=3)
    covered = [t for b, e, first in det.windows(20) for t in range(first, e)]
    assert covered == list(range(1, 20))


@pytest.mark.lm
def test_hub_name_resolves_from_the_local_cache_with_its_commit(tiny_lm, tmp_path, monkeypatch):
    """A hub name already in the Hugging Face cache loads offline; its revision is the commit hash."""
    import shutil

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--tiny-org--tiny-gpt2"
    shutil.copytree(tiny_lm, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    by_name = _features("tiny-org/tiny-gpt2", texts=TEXTS[:1])
    by_path = _features(tiny_lm, texts=TEXTS[:1])
    assert by_name.detectors[0].status is Status.PASS
    assert by_name.detectors[0].revision == commit
    assert by_name.frame["perplexity"].iloc[0] == pytest.approx(by_path.frame["perplexity"].iloc[0], rel=1e-6)


@pytest.mark.lm
def test_dtype_device_and_throughput_are_recorded(tiny_lm):
    """device auto resolves to cuda, else mps, else cpu; dtype is part of the record and of the cache key;
    the scored tokens (all but the first of each text) and tokens/s are reported."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm, local_files_only=True)
    f32 = _features(tiny_lm, texts=TEXTS[:2])
    bf16 = _features(tiny_lm, texts=TEXTS[:2], dtype="bfloat16")
    run32, run16 = f32.detectors[0], bf16.detectors[0]
    # the record and the cache key hold the dtype actually used, not "auto"
    import torch

    auto = ("bfloat16" if torch.cuda.is_bf16_supported() else "float16") if torch.cuda.is_available() else "float32"
    assert run32.params["dtype"] == auto and run16.params["dtype"] == "bfloat16"
    assert run32.n_tokens == sum(len(tok(t)["input_ids"]) - 1 for t in TEXTS[:2]) and run32.tokens_per_second > 0
    assert "tokens/s" in str(f32) and f"model {tiny_lm} @ {run32.revision}" in str(f32)
    # bfloat16 keeps ~3 significant digits: close to, but not bit-equal with, float32
    for a, b in zip(f32.frame["perplexity"], bf16.frame["perplexity"]):
        assert b == pytest.approx(a, rel=5e-2)
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    expected = "cuda" if torch.cuda.is_available() else "mps" if mps else "cpu"
    det = TransformersPerplexity(PerplexityConfig(model=str(tiny_lm)))
    assert det._load()[3] == expected
    assert det.cache_key() != TransformersPerplexity(PerplexityConfig(model=str(tiny_lm), dtype="bfloat16")).cache_key()


@pytest.mark.lm
def test_window_longer_than_the_context_is_an_input_error(tiny_lm):
    """Positions past n_positions would index outside the embeddings (a torch IndexError)."""
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="context of 64 tokens"):
        _features(tiny_lm, max_length=65)
    assert _features(tiny_lm, max_length=64, stride=32).detectors[0].status is Status.PASS


@pytest.mark.lm
def test_unusable_device_is_an_input_error(tiny_lm):
    """torch would raise an AssertionError ("not compiled with CUDA") deep inside the run."""
    import torch

    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="not a torch device"):
        _features(tiny_lm, device="gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no cuda device is available"):
            _features(tiny_lm, device="cuda")
    assert _features(tiny_lm, device="cpu").detectors[0].status is Status.PASS
