"""One home for a local causal language model (transformers): the device check, the load and
the declared context length, shared by the ``transformers`` provider (generation, scoring)
and the perplexity detector (detectors/perplexity/local.py).

torch and transformers are imported by the caller through
:func:`judge_transfer_audit.core.optional.import_optional` and passed in, so this module imports neither and
the core install does not need them. Nothing is downloaded here: the source is a local
directory (or a model already in the local cache), loaded with ``local_files_only=True``.
"""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError

DTYPES = ("float32", "float16", "bfloat16")


def usable_device(
    torch, device: str, *, where: str = "provider", column: str = "device", fix: str = 'use device = "auto" or "cpu"'
) -> str:
    """``device`` checked against this machine ("auto": cuda, else mps, else cpu).

    ``where``/``column``/``fix`` name the setting in the caller's terms (a provider table's
    ``device`` key, the ``--perplexity-device`` option).

    Raises
    ------
    InputError
        Not a torch device string, or a device this machine does not have (torch would
        otherwise fail later with an AssertionError such as "not compiled with CUDA").
    """
    mps = getattr(torch.backends, "mps", None)
    mps_ok = mps is not None and mps.is_available()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if mps_ok else "cpu"
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError, ValueError):
        kind = None
    usable = {"cpu": True, "cuda": torch.cuda.is_available(), "mps": mps_ok}.get(kind, kind is not None)
    if not usable:
        raise InputError(
            InputProblem(
                where,
                "not a torch device" if kind is None else f"no {kind} device is available here",
                column=column,
                value=str(device),
                fix=fix,
            )
        )
    return device


def load_causal_lm(torch, transformers, source: Any, *, device: str, dtype: str | None, label: str) -> tuple[Any, Any]:
    """``(tokenizer, model)`` of the causal LM in ``source``, on ``device``, in eval mode.

    ``dtype`` is one of :data:`DTYPES` or None (the checkpoint's own); ``label`` names the
    model in the error message.

    Raises
    ------
    ProviderError
        The directory holds no loadable causal LM (transformers' OSError / ValueError).
    """
    kwargs: dict[str, Any] = {"local_files_only": True}
    if dtype is not None:
        # transformers 5 renamed torch_dtype to dtype
        major = int(str(getattr(transformers, "__version__", "5")).split(".")[0])
        kwargs["dtype" if major >= 5 else "torch_dtype"] = getattr(torch, dtype)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as exc:
        raise ProviderError(
            f"cannot load the causal LM '{label}' from {source}: {exc}. Give a directory written by "
            "save_pretrained or a model in the local cache (nothing is downloaded unless allowed)"
        ) from None
    model.to(device)
    model.eval()
    return tokenizer, model


def context_length(model) -> int | None:
    """The model's declared context length (position embeddings), None if it declares none."""
    config = getattr(model, "config", None)
    for attr in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None
