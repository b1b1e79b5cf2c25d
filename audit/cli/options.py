"""Option parsing and progress display shared by the subcommands."""

from __future__ import annotations

import functools
import sys
import time

import click


def parse_scale(ctx, param, value: str | None) -> tuple[float, float] | None:
    """``--scale LO,HI``: the loader's own parser (one rule for the CLI and ``audit.run``)."""
    if value is None:
        return None
    from judge_transfer_audit.core.errors import InputError
    from judge_transfer_audit.inputs.load import parse_scale as parse

    try:
        return parse(value)
    except InputError as exc:
        raise click.BadParameter("; ".join(f"{p.message} ({p.fix})" for p in exc.problems)) from None


# ----------------------------------------------------------------------------- perplexity
#: the perplexity options of every command that computes surface features, declared once
_PERPLEXITY_OPTIONS = (
    click.option(
        "--perplexity-model",
        help="transformers causal LM for perplexity: a local directory or a hub name "
        "already in the Hugging Face cache.",
    ),
    click.option(
        "--perplexity-revision",
        help="Hub revision to load (or, with --perplexity-url, a label for the served weights; it keys the cache).",
    ),
    click.option(
        "--allow-download",
        "--perplexity-allow-download",
        "allow_download",
        is_flag=True,
        help="Let transformers download --perplexity-model (never done by default).",
    ),
    click.option(
        "--perplexity-url", help="OpenAI-compatible completions server returning prompt logprobs (e.g. vLLM)."
    ),
    click.option("--perplexity-server-model", help="Model name to request from --perplexity-url."),
    click.option(
        "--perplexity-api-key-env",
        metavar="NAME",
        help="Environment variable holding the key of --perplexity-url (default: no key is sent).",
    ),
    click.option(
        "--perplexity-device", default="auto", show_default=True, help="auto (cuda, mps, cpu) or a torch device."
    ),
    click.option(
        "--perplexity-dtype",
        type=click.Choice(["auto", "float32", "float16", "bfloat16"]),
        default="auto",
        show_default=True,
    ),
    click.option(
        "--perplexity-batch-size",
        type=click.IntRange(min=1),
        default=8,
        show_default=True,
        help="Windows per forward pass / prompts per request.",
    ),
    click.option(
        "--perplexity-max-length",
        type=click.IntRange(min=2),
        help="Window length in tokens (default: the model's context).",
    ),
    click.option(
        "--perplexity-stride", type=click.IntRange(min=1), help="Sliding-window stride (default: half the window)."
    ),
)
_PERPLEXITY_PARAMS = {
    "perplexity_model": "model",
    "perplexity_revision": "revision",
    "allow_download": "allow_download",
    "perplexity_url": "url",
    "perplexity_server_model": "server_model",
    "perplexity_api_key_env": "api_key_env",
    "perplexity_device": "device",
    "perplexity_dtype": "dtype",
    "perplexity_batch_size": "batch_size",
    "perplexity_max_length": "max_length",
    "perplexity_stride": "stride",
}


def perplexity_options(command):
    """Add the ``--perplexity-*`` options to a click command; it receives them as one
    ``perplexity`` argument: a :class:`detectors.PerplexityConfig`, or None when neither
    ``--perplexity-model`` nor ``--perplexity-url`` is given."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        values = {field: kwargs.pop(param) for param, field in _PERPLEXITY_PARAMS.items()}
        return command(*args, perplexity=perplexity_config(**values), **kwargs)

    for option in reversed(_PERPLEXITY_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def perplexity_config(**values):
    """The options' values -> a PerplexityConfig (None without a model or a server); a usage
    error when they contradict each other."""
    if values["url"] and not values["server_model"]:
        raise click.UsageError("--perplexity-url needs --perplexity-server-model (the model name the server serves)")
    if values["url"] and values["model"]:
        raise click.UsageError("give --perplexity-model or --perplexity-url, not both")
    if not (values["model"] or values["url"]):
        return None
    from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig

    return PerplexityConfig(**values)


#: the seeds numpy accepts (a negative seed is refused as a usage error, not an internal one)
SEED = click.IntRange(min=0, max=2**63 - 1)


def seed_option(help: str, default: int | None = None):
    """``--seed N``: one declaration for every command that seeds something (``help`` says what)."""
    return click.option("--seed", type=SEED, default=default, show_default=default is not None, help=help)


def tables_out_option(json_name: str):
    """``--out PATH`` of the commands that write a JSON and one CSV per table (reliability, consistency)."""
    return click.option(
        "-o",
        "--out",
        default=None,
        metavar="PATH",
        help=f"Write results: PATH.json for JSON only, otherwise a directory receiving {json_name} and one CSV "
        "per table.",
    )


def jobs_option(function):
    """``--jobs N``: tasks at once on a local process pool (default: every available core)."""
    return click.option(
        "--jobs",
        type=click.IntRange(min=1),
        default=None,
        help="Run the long statistics (bootstrap chunks, GLMM refits) on N local processes; 1 runs them in "
        "this process. Default: every available core. The results do not depend on it.",
    )(function)


def scheduler_option(function):
    """``--scheduler tcp://HOST:PORT``: run the tasks on a Dask distributed cluster."""
    return click.option(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="Run the long statistics on the Dask distributed cluster at this address instead of local "
        "processes (pip install 'judge-transfer-audit[dask]'; see docs/uncertainty.md). Same results as --jobs 1.",
    )(function)


class Progress:
    """Stage messages on stderr with elapsed time; silent when disabled (``--quiet``).

    With ``timings`` (an :class:`judge_transfer_audit.core.timings.RunTimings`), every stage is also timed
    there, quiet or not. :meth:`bar` is the progress factory of :mod:`judge_transfer_audit.core.progress`: a bar
    with an ETA for long batches of tasks, drawn only when enabled and stderr is a terminal (no
    bar in CI logs).
    """

    def __init__(self, enabled: bool = True, stream=None, timings=None, force_bars: bool | None = None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.timings = timings
        #: True: bars even when the stream is not a terminal (``--progress``); False: never
        #: (``--no-progress``); None: on a terminal only, and not when disabled
        self.force_bars = force_bars

    @property
    def bars(self) -> bool:
        if self.force_bars is not None:
            return self.force_bars
        isatty = getattr(self.stream, "isatty", None)
        return bool(self.enabled and isatty is not None and isatty())

    def bar(self, description: str, total: int):
        from judge_transfer_audit.core.progress import TqdmBar, no_progress

        if not self.bars or total < 2:
            return no_progress(description, total)
        return TqdmBar(description, total, self.stream)

    def __call__(self, message: str) -> None:
        if self.timings is not None:
            self.timings.stage(message)
        if self.enabled:
            elapsed = time.perf_counter() - self.started
            line = f"[{elapsed:5.1f}s] {message}..."
            if self.bars:  # above the bars drawn at the time, which are redrawn below it
                from tqdm import tqdm

                tqdm.write(line, file=self.stream)
                self.stream.flush()
            else:
                print(line, file=self.stream, flush=True)

    def done(self) -> None:
        pass
