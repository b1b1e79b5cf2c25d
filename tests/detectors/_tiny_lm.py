"""A tiny GPT-2 (random weights, byte-level vocabulary) saved to a folder, for the lm tests."""

import json
from pathlib import Path


def _bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def build_tiny_gpt2(folder: Path, n_positions: int = 64, seed: int = 0) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {ch: i for i, ch in enumerate(_bytes_to_unicode())}
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = GPT2Tokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(vocab),
        n_positions=n_positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=len(vocab) - 1,
        eos_token_id=len(vocab) - 1,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder
