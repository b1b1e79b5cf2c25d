"""Perplexity under a local transformers causal LM (hub name or local directory)."""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem, MissingDependencyError
from judge_transfer_audit.core.optional import import_optional
from judge_transfer_audit.detectors.base import Detector
from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig

_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "merges.txt",
    "special_tokens_map.json",
    "tokenizer.model",
    "generation_config.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_MiB = 1 << 20


def weights_fingerprint(directory: Path) -> str:
    """``sha256:<hex>`` identifying a local model directory without a known commit.

    Hashes config.json and the tokenizer files in full and, for each weight file, its name,
    size and the SHA-256 of its first and last MiB (hashing tens of GB in full on every run
    would cost minutes; a changed tensor changes the size or, in practice, those bytes).
    """
    h = hashlib.sha256()
    for name in ("config.json",) + _TOKENIZER_FILES:
        p = directory / name
        if p.is_file():
            h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    for p in sorted(directory.iterdir()):
        if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES):
            size = p.stat().st_size
            h.update(f"{p.name}\0{size}\0".encode())
            with p.open("rb") as fh:
                h.update(fh.read(_MiB))
                if size > _MiB:
                    fh.seek(max(size - _MiB, _MiB))
                    h.update(fh.read(_MiB))
    return "sha256:" + h.hexdigest()[:32]


class TransformersPerplexity(Detector):
    """Perplexity ``exp(mean token NLL)`` under any transformers causal language model.

    Texts are tokenised with the model's tokenizer (special tokens as the tokenizer adds
    them, e.g. Llama's BOS). Texts longer than ``max_length`` are scored with a sliding
    window advancing by ``stride`` tokens; each token is scored once, in the first window
    that contains it as a new token. Windows are batched (right-padded, attention-masked).
    Validated against ``exp`` of the mean NLL computed directly from the model's logits on a
    tiny GPT-2 built in the test (tests/detectors/test_perplexity.py).
    """

    name = "perplexity"
    version = "1"
    features = ("perplexity",)

    def __init__(self, config: PerplexityConfig):
        if not config.model:
            raise ValueError("TransformersPerplexity needs config.model")
        self.config = config
        self._loaded: tuple[Any, Any, Any, str] | None = None
        self._local_dir: Path | None = None
        self.tokens_scored = 0
        self.seconds = 0.0

    # -- identity -----------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        c = self.config
        # The resolved dtype, not "auto": auto is float32 on cpu but bfloat16 on most GPUs, and
        # a cache shared between machines must not hand bf16 values to a float32 run.
        return {
            "backend": "transformers",
            "model": c.model,
            "dtype": self._dtype_name(),
            "max_length": c.max_length,
            "stride": c.stride,
        }

    def _device(self, torch) -> str:
        # judge_transfer_audit.generation.providers (imported with local_model) registers the LLM backends: only a
        # perplexity run needs it, not every importer of detectors (e.g. `audit report`).
        from judge_transfer_audit.generation.providers.local_model import usable_device

        return usable_device(
            torch,
            self.config.device,
            where="options",
            column="perplexity device",
            fix="use --perplexity-device auto (cuda, else mps, else cpu) or cpu",
        )

    def _dtype_name(self) -> str:
        """``config.dtype`` with "auto" resolved for the device (left as "auto" without torch)."""
        c = self.config
        if c.dtype != "auto":
            return c.dtype
        try:
            torch = import_optional("torch", "perplexity under a local language model")
        except MissingDependencyError:
            return c.dtype
        device = self._device(torch)
        if device.startswith("cuda"):
            return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        return "float32"

    def availability(self) -> str | None:
        try:
            import_optional("torch", "perplexity under a local language model")
            import_optional("transformers", "perplexity under a local language model")
        except MissingDependencyError as exc:
            return str(exc)
        try:
            self._resolve_dir()
        except FileNotFoundError as exc:
            return str(exc)
        return None

    def _resolve_dir(self) -> Path:
        if self._local_dir is not None:
            return self._local_dir
        c = self.config
        path = Path(os.path.expanduser(c.model))
        if path.is_dir():
            self._local_dir = path
            return path
        hub = import_optional("huggingface_hub", "loading models from the Hugging Face hub")
        try:
            # Weights in formats transformers will not load here are not fetched.
            local = hub.snapshot_download(
                c.model,
                revision=c.revision,
                local_files_only=not c.allow_download,
                ignore_patterns=["*.onnx", "*.h5", "*.msgpack", "*.gguf", "*.tflite", "*.ot", "original/*", "onnx/*"],
            )
        except Exception as exc:  # noqa: BLE001 - hub raises many types; all mean "not available"
            if c.allow_download:
                raise FileNotFoundError(f"could not download model '{c.model}': {exc}") from exc
            raise FileNotFoundError(
                f"model '{c.model}' is neither a local directory nor in the Hugging Face cache; "
                "nothing is downloaded unless you pass --allow-download "
                "(PerplexityConfig(allow_download=True))"
            ) from exc
        self._local_dir = Path(local)
        return self._local_dir

    def revision(self) -> str:
        directory = self._resolve_dir()
        match = re.search(r"[\\/]snapshots[\\/]([0-9a-f]{40})$", str(directory))
        if match:
            return match.group(1)
        return weights_fingerprint(directory)

    # -- model --------------------------------------------------------------------------
    def _load(self):
        if self._loaded is not None:
            return self._loaded
        torch = import_optional("torch", "perplexity under a local language model")
        transformers = import_optional("transformers", "perplexity under a local language model")
        from judge_transfer_audit.generation.providers.local_model import DTYPES, load_causal_lm

        c = self.config
        device = self._device(torch)
        if self._dtype_name() not in DTYPES:
            raise InputError(
                InputProblem(
                    file="options",
                    column="perplexity dtype",
                    value=c.dtype,
                    message="unknown dtype",
                    fix="use auto, float32, float16 or bfloat16",
                )
            )
        directory = self._resolve_dir()
        tokenizer, model = load_causal_lm(
            torch, transformers, directory, device=device, dtype=self._dtype_name(), label=str(c.model)
        )
        self._loaded = (torch, tokenizer, model, device)
        return self._loaded

    def model_context(self) -> int | None:
        """The model's declared context length (position embeddings), None if it declares none."""
        from judge_transfer_audit.generation.providers.local_model import context_length as declared_context

        _, _, model, _ = self._load()
        return declared_context(model)

    def context_length(self) -> int:
        """The window length: ``max_length`` if set (at most the model's context), else the context."""
        _, tokenizer, _, _ = self._load()
        context = self.model_context()
        if self.config.max_length:
            if context is not None and self.config.max_length > context:
                # Positions past the context index outside the position embeddings.
                raise InputError(
                    InputProblem(
                        file="options",
                        column="perplexity max_length",
                        value=str(self.config.max_length),
                        message=f"window longer than the model's context of {context} tokens",
                        fix=f"pass --perplexity-max-length {context} or less (or leave it out)",
                    )
                )
            return int(self.config.max_length)
        if context is not None:
            return context
        limit = getattr(tokenizer, "model_max_length", 0)
        return int(limit) if 0 < limit < 1_000_000 else 1024

    def windows(self, n_tokens: int) -> list[tuple[int, int, int]]:
        """``(begin, end, first_target)`` windows covering tokens 1..n-1 exactly once."""
        max_len = self.context_length()
        stride = int(self.config.stride or max(1, max_len // 2))
        if not 0 < stride < max_len:
            # stride == max_len would leave each window's first token without context.
            raise InputError(
                InputProblem(
                    file="options",
                    column="perplexity stride",
                    value=str(stride),
                    message=f"stride must be in 1..{max_len - 1} (window {max_len})",
                    fix="pass a smaller --perplexity-stride",
                )
            )
        out = []
        prev_end = 1  # token 0 has no left context
        begin = 0
        while prev_end < n_tokens:
            end = min(begin + max_len, n_tokens)
            out.append((begin, end, prev_end))
            prev_end = end
            begin += stride
        return out

    def compute(self, texts: list[str]) -> pd.DataFrame:
        torch, tokenizer, model, device = self._load()
        start = time.perf_counter()
        ids = tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        chunks = [(i, b, e, t) for i, seq in enumerate(ids) for (b, e, t) in self.windows(len(seq))]
        chunks.sort(key=lambda ch: ch[2] - ch[1])
        nll_sum = np.zeros(len(texts))
        n_scored = np.zeros(len(texts), dtype=np.int64)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        bs = max(1, int(self.config.batch_size))
        with torch.inference_mode():
            for k in range(0, len(chunks), bs):
                batch = chunks[k : k + bs]
                width = max(e - b for _, b, e, _ in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, (i, b, e, _) in enumerate(batch):
                    input_ids[r, : e - b] = torch.tensor(ids[i][b:e], dtype=torch.long)
                    mask[r, : e - b] = 1
                logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits
                for r, (i, b, e, t) in enumerate(batch):
                    # logits at position j predict token j+1; score targets t..e-1 (absolute).
                    lp = torch.log_softmax(logits[r, t - b - 1 : e - b - 1].float(), dim=-1)
                    target = input_ids[r, t - b : e - b].to(lp.device)
                    nll = -lp.gather(1, target[:, None]).sum().item()
                    nll_sum[i] += nll
                    n_scored[i] += e - t
        with np.errstate(invalid="ignore", divide="ignore"):
            ppl = np.where(n_scored > 0, np.exp(nll_sum / np.maximum(n_scored, 1)), np.nan)
        self.tokens_scored += int(n_scored.sum())
        self.seconds += time.perf_counter() - start
        return pd.DataFrame({"perplexity": ppl})


def perplexity_from_logprobs(token_logprobs: list[float]) -> float:
    """``exp(-mean(logprobs))``; NaN when there is no scored token."""
    if not token_logprobs:
        return math.nan
    return math.exp(-math.fsum(token_logprobs) / len(token_logprobs))
