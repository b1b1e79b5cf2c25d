"""The local transformers provider on a tiny model the test builds (nothing downloaded)."""

from __future__ import annotations

import pytest

from judge_transfer_audit.core.errors import MissingDependencyError, ProviderError
from judge_transfer_audit.generation.providers import ChatMessage, build_provider

SENTENCES = [
    "the keeper found a letter by the light",
    "the train left the station in the rain",
    "a story about a garden and a promise",
    "System: User: Assistant: write a story",
]


def build_tiny_model(path, *, chat_template: str | None = None):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    if chat_template:
        fast.chat_template = chat_template
    fast.save_pretrained(path)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(fast),
        n_positions=128,
        n_embd=16,
        n_layer=1,
        n_head=2,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(path)
    return path


@pytest.mark.lm
def test_tiny_model_generates(tmp_path):
    path = build_tiny_model(tmp_path / "tiny")
    provider = build_provider({"provider": "transformers", "model": str(path), "max_new_tokens": 8})
    messages = [ChatMessage("system", "write a story"), ChatMessage("user", "the keeper found a letter")]
    assert provider.build_prompt(messages) == "System: write a story\n\nUser: the keeper found a letter\n\nAssistant:"
    first = provider.chat(messages, temperature=0.0, max_tokens=6, presence_penalty=0.5)
    again = provider.chat(messages, temperature=0.0, max_tokens=6)
    assert first.text == again.text  # greedy is deterministic
    assert first.completion_tokens <= 6 and first.prompt_tokens > 0
    assert first.extra == {"ignored_sampling_keys": ["presence_penalty"]}
    sampled = [provider.chat(messages, temperature=1.0, max_tokens=6, seed=7).text for _ in range(2)]
    assert sampled[0] == sampled[1]  # seeded sampling is reproducible
    assert provider.describe()["provider"] == "transformers"


@pytest.mark.lm
def test_chat_template_is_used(tmp_path):
    template = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    path = build_tiny_model(tmp_path / "tiny", chat_template=template)
    provider = build_provider({"provider": "transformers", "model": str(path), "max_new_tokens": 4})
    assert provider.build_prompt([ChatMessage("user", "hi")]) == "<user>hi<assistant>"
    assert isinstance(provider.chat([ChatMessage("user", "the train")], temperature=0).text, str)


@pytest.mark.lm
def test_missing_model_is_provider_error(tmp_path):
    with pytest.raises(ProviderError, match="nothing is downloaded"):
        build_provider({"provider": "transformers", "model": str(tmp_path / "absent")})


def test_missing_dependency(monkeypatch):
    import judge_transfer_audit.generation.providers.transformers_local as module

    def refuse(name, purpose=None):
        raise MissingDependencyError(
            f"'{name}' is not installed; install it with: pip install 'judge-transfer-audit[lm]'"
        )

    monkeypatch.setattr(module, "import_optional", refuse)
    with pytest.raises(MissingDependencyError, match="judge-transfer-audit\\[lm\\]"):
        build_provider({"provider": "transformers", "model": "x"})


@pytest.mark.lm
def test_unknown_dtype_is_input_error(tmp_path):
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="dtype"):
        build_provider({"provider": "transformers", "model": str(tmp_path), "dtype": "float8"})


@pytest.mark.lm
def test_unusable_device_is_input_error(tmp_path):
    import torch

    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="not a torch device"):
        build_provider({"provider": "transformers", "model": str(tmp_path), "device": "gpu0"})
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no cuda device"):
            build_provider({"provider": "transformers", "model": str(tmp_path), "device": "cuda"})


@pytest.mark.lm
def test_prompt_beyond_the_context_is_a_clear_provider_error(tmp_path):
    """Without the check torch fails with a bare "index out of range in self"."""
    path = build_tiny_model(tmp_path / "tiny")  # n_positions = 128
    provider = build_provider({"provider": "transformers", "model": str(path)})
    messages = [ChatMessage("user", "the keeper found a letter")]
    assert provider.chat(messages, temperature=0.0, max_tokens=100).completion_tokens <= 100
    with pytest.raises(ProviderError, match="exceeds the model's context of 128 tokens"):
        provider.chat(messages, temperature=0.0, max_tokens=128)
