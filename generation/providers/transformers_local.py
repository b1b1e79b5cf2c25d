"""A local causal language model through ``transformers`` (no server, no network).

torch and transformers are imported lazily (at construction) through
:func:`judge_transfer_audit.core.optional.import_optional`, so the core install does not need them. The model
path must be a local directory or a model already in the local cache: nothing is
downloaded (``local_files_only=True``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Sequence

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.core.optional import import_optional
from judge_transfer_audit.generation.providers.base import PROVIDERS, ChatMessage, Completion
from judge_transfer_audit.generation.providers.local_model import DTYPES, context_length, load_causal_lm, usable_device


@PROVIDERS.register("transformers")
class TransformersProvider:
    """Generate with a local ``AutoModelForCausalLM``.

    Parameters
    ----------
    model : str
        Local directory (``save_pretrained`` output) or cached model id.
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``... or ``"auto"`` (cuda, else mps, else cpu).
    max_new_tokens : int
        Default generation length when the caller gives no ``max_tokens``.
    dtype : str | None
        ``"float32"``, ``"bfloat16"``, ``"float16"``; None keeps the checkpoint's dtype.
    max_concurrency : int
        Kept for interface parity; calls are serialised (one model, one lock).

    Notes
    -----
    The prompt is built with the tokenizer's chat template when it has one; otherwise the
    messages are joined as ``"System: ...\\n\\nUser: ...\\n\\nAssistant:"``. Sampling keys
    honoured: ``temperature`` (0 = greedy), ``top_p``, ``top_k``, ``max_tokens``, ``seed``;
    any other key is listed in ``Completion.extra["ignored_sampling_keys"]``.
    """

    name = "transformers"
    _HONOURED = frozenset({"temperature", "top_p", "top_k", "max_tokens", "seed"})

    def __init__(
        self,
        model: str,
        device: str = "cpu",
        max_new_tokens: int = 1024,
        dtype: str | None = None,
        max_concurrency: int = 1,
    ):
        self._torch = import_optional("torch", "the local transformers provider")
        transformers = import_optional("transformers", "the local transformers provider")
        self.model_name = str(model)
        self.device = usable_device(self._torch, device)
        self.max_new_tokens = int(max_new_tokens)
        self.max_concurrency = 1
        if dtype and dtype not in DTYPES:
            raise InputError(
                InputProblem(
                    "provider",
                    "unknown dtype",
                    column="dtype",
                    value=str(dtype),
                    fix='use "float32", "bfloat16" or "float16" (or leave it out)',
                )
            )
        self._tokenizer, self._model = load_causal_lm(
            self._torch, transformers, self.model_name, device=self.device, dtype=dtype or None, label=self.model_name
        )
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": self.model_name,
            "device": self.device,
            "max_new_tokens": self.max_new_tokens,
        }

    def __repr__(self) -> str:
        return f"TransformersProvider(model={self.model_name!r}, device={self.device!r})"

    def build_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The text fed to the model (chat template when the tokenizer has one)."""
        if getattr(self._tokenizer, "chat_template", None):
            return self._tokenizer.apply_chat_template(
                [m.as_dict() for m in messages], tokenize=False, add_generation_prompt=True
            )
        names = {"system": "System", "user": "User", "assistant": "Assistant"}
        turns = [f"{names.get(m.role, m.role.title())}: {m.content}" for m in messages]
        return "\n\n".join(turns) + "\n\nAssistant:"

    def chat(self, messages: Sequence[ChatMessage], **sampling: Any) -> Completion:
        torch = self._torch
        start = time.monotonic()
        prompt = self.build_prompt(messages)
        temperature = sampling.get("temperature")
        max_new = sampling.get("max_tokens") or self.max_new_tokens
        gen_kwargs: dict[str, Any] = {"max_new_tokens": int(max_new)}
        if temperature is None or float(temperature) > 0:
            gen_kwargs["do_sample"] = True
            if temperature is not None:
                gen_kwargs["temperature"] = float(temperature)
            for key in ("top_p", "top_k"):
                if sampling.get(key) is not None:
                    gen_kwargs[key] = sampling[key]
        else:
            gen_kwargs["do_sample"] = False
        ignored = sorted(k for k, v in sampling.items() if v is not None and k not in self._HONOURED)
        pad_id = self._tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self._tokenizer.eos_token_id
        if pad_id is not None:
            gen_kwargs["pad_token_id"] = pad_id
        with self._lock:
            try:
                if sampling.get("seed") is not None:
                    torch.manual_seed(int(sampling["seed"]))
                encoded = self._tokenizer(prompt, return_tensors="pt").to(self.device)
                n_prompt = int(encoded["input_ids"].shape[1])
                context = context_length(self._model)
                if context is not None and n_prompt + int(max_new) > context:
                    # Past the position embeddings torch fails with "index out of range".
                    raise ProviderError(
                        f"local model '{self.model_name}': the prompt ({n_prompt} tokens) plus max_tokens "
                        f"({int(max_new)}) exceeds the model's context of {context} tokens; lower max_tokens "
                        "or shorten the prompt"
                    )
                with torch.no_grad():
                    output = self._model.generate(**encoded, **gen_kwargs)
                new_tokens = output[0, n_prompt:]
                text = self._tokenizer.decode(new_tokens, skip_special_tokens=True)
            except (RuntimeError, ValueError, IndexError) as exc:
                raise ProviderError(f"local model '{self.model_name}' failed: {exc}") from None
        n_new = int(new_tokens.shape[0])
        eos = self._tokenizer.eos_token_id
        finish = (
            "stop" if (eos is not None and n_new and int(new_tokens[-1]) == eos) or n_new < int(max_new) else "length"
        )
        return Completion(
            text=text,
            model=self.model_name,
            finish_reason=finish,
            prompt_tokens=n_prompt,
            completion_tokens=n_new,
            n_http_attempts=1,
            elapsed_s=time.monotonic() - start,
            extra={"ignored_sampling_keys": ignored} if ignored else {},
        )
