"""``compute_features(stories) -> FeatureTable``: every detector over every story, cached."""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem, MissingDependencyError, ProviderError
from judge_transfer_audit.core.redact import redact_text
from judge_transfer_audit.detectors.base import DEFAULT_DETECTORS, DETECTORS, Detector
from judge_transfer_audit.detectors.cache import FeatureCache, text_sha256
from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig
from judge_transfer_audit.model.checks import Status

_KEYS = ("pair_id", "system")
#: Bookkeeping columns the loader (judge_transfer_audit.model.data) adds; numeric but never features.
RESERVED_COLUMNS = ("line", "order", "item_id")
PERPLEXITY_HINT = (
    "set --perplexity-model NAME_OR_PATH (a transformers causal LM; add --allow-download "
    "to fetch it from the Hugging Face hub) or --perplexity-url URL --perplexity-server-model M "
    "(an OpenAI-compatible completions server such as vLLM), or supply a numeric 'perplexity' "
    "column in stories.csv"
)


@dataclass(frozen=True)
class DetectorRun:
    """What one detector did in a :func:`compute_features` call.

    Attributes
    ----------
    name, version : str
        The detector's registered name and version.
    status : Status
        PASS (features computed), SKIPPED (could not run: ``reason`` says what to set or
        install) or ERROR (failed while running: ``reason`` has the message).
    reason : str
        Empty for PASS.
    features : tuple[str, ...]
        Columns it contributes to the table (empty unless PASS).
    params : dict[str, str]
        Every parameter that can change its output.
    revision : str
        Model revision (commit hash or weights fingerprint); "" when model-free.
    n_texts, n_computed, n_cached : int
        Distinct texts, of which computed now and read from the cache.
    n_missing : dict[str, int]
        Per feature, stories whose value is NaN (undefined, e.g. MATTR of a text shorter
        than its window).
    seconds : float
        Wall time spent on this detector (model loading and cache look-ups included).
    n_tokens : int
        Tokens scored by a language model in this call (perplexity; 0 for model-free
        detectors and for texts read from the cache).
    tokens_per_second : float
        ``n_tokens`` over the time spent scoring them (model loading excluded); 0.0 when
        no token was scored.
    """

    name: str
    version: str
    status: Status
    reason: str
    features: tuple[str, ...]
    params: dict[str, str]
    revision: str
    n_texts: int
    n_computed: int
    n_cached: int
    n_missing: dict[str, int]
    seconds: float
    n_tokens: int = 0
    tokens_per_second: float = 0.0

    def record(self) -> "DetectorRecord":
        """What the detector computed, without this call's execution figures (for the audit result)."""
        return DetectorRecord(
            name=self.name,
            version=self.version,
            status=self.status,
            reason=self.reason,
            features=self.features,
            params=self.params,
            revision=self.revision,
            n_texts=self.n_texts,
            n_missing=self.n_missing,
        )

    def execution(self) -> dict[str, object]:
        """This call's execution figures: cache use, wall time, tokens (for timings.json)."""
        return {
            "detector": self.name,
            "status": self.status.value,
            "n_computed": self.n_computed,
            "n_cached": self.n_cached,
            "seconds": self.seconds,
            "n_tokens": self.n_tokens,
            "tokens_per_second": self.tokens_per_second,
        }


@dataclass(frozen=True)
class DetectorRecord:
    """A :class:`DetectorRun` as the audit result keeps it: what was computed and how.

    The execution figures (seconds, tokens per second, texts computed vs read from the
    cache) are left out: they change from one run to the next and would make two runs of
    the same audit differ. ``audit run`` writes them to ``timings.json``.
    """

    name: str
    version: str
    status: Status
    reason: str
    features: tuple[str, ...]
    params: dict[str, str]
    revision: str
    n_texts: int
    n_missing: dict[str, int]


@dataclass(frozen=True)
class FeatureTable:
    """Surface features of every story.

    Attributes
    ----------
    frame : pandas.DataFrame
        ``pair_id``, ``system``, then one float column per feature (detector features in
        detector order, then the precomputed columns).
    detectors : tuple[DetectorRun, ...]
        One record per detector, including SKIPPED ones.
    precomputed : tuple[str, ...]
        Numeric columns taken as supplied in the stories frame.
    ignored_columns : tuple[str, ...]
        Extra non-numeric columns of the stories frame (not features). The loader's
        bookkeeping columns (:data:`RESERVED_COLUMNS`, e.g. ``line``) are never features.
    n_stories, n_unique_texts : int
        Rows, and distinct texts (identical texts are computed once).
    cache_dir : str
        The cache directory, "" when none.
    """

    frame: pd.DataFrame
    detectors: tuple[DetectorRun, ...]
    precomputed: tuple[str, ...]
    ignored_columns: tuple[str, ...]
    n_stories: int
    n_unique_texts: int
    cache_dir: str

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(c for c in self.frame.columns if c not in _KEYS)

    def to_frame(self) -> pd.DataFrame:
        """The feature table (a copy): pair_id, system, features."""
        return self.frame.copy()

    def status_frame(self) -> pd.DataFrame:
        """One row per detector: name, version, status, reason, revision, counts, seconds."""
        return pd.DataFrame(
            [
                {
                    "detector": d.name,
                    "version": d.version,
                    "status": d.status.value,
                    "reason": d.reason,
                    "revision": d.revision,
                    "features": ",".join(d.features),
                    "n_texts": d.n_texts,
                    "n_computed": d.n_computed,
                    "n_cached": d.n_cached,
                    "seconds": d.seconds,
                    "n_tokens": d.n_tokens,
                    "tokens_per_second": d.tokens_per_second,
                }
                for d in self.detectors
            ]
        )

    def __str__(self) -> str:
        lines = [
            f"FeatureTable: {self.n_stories} stories ({self.n_unique_texts} distinct texts), "
            f"{len(self.feature_names)} features"
        ]
        for d in self.detectors:
            line = f"  [{d.status.value}] {d.name}" + (f" v{d.version}" if d.version else "")
            if d.params.get("model"):  # model-based: which weights produced the numbers
                line += f" (model {d.params['model']}" + (f" @ {d.revision}" if d.revision else "") + ")"
            if d.status is Status.PASS:
                line += f": {', '.join(d.features)} ({d.n_computed} computed, {d.n_cached} cached)"
                missing = {k: v for k, v in d.n_missing.items() if v}
                if missing:
                    line += f"; undefined: {missing}"
                if d.n_tokens:
                    line += f"; {d.n_tokens} tokens at {d.tokens_per_second:,.0f} tokens/s"
            else:
                line += f": {d.reason}"
            lines.append(line)
        if self.precomputed:
            lines.append(f"  precomputed: {', '.join(self.precomputed)}")
        if self.ignored_columns:
            lines.append(f"  ignored non-numeric columns: {', '.join(self.ignored_columns)}")
        return "\n".join(lines)


def _validate(stories: pd.DataFrame) -> None:
    problems = []
    missing = [c for c in ("pair_id", "system", "text") if c not in stories.columns]
    if missing:
        raise InputError(
            InputProblem(
                file="stories",
                message=f"missing column(s) {', '.join(missing)}",
                fix="stories need columns pair_id, system, text (extra numeric columns are precomputed features)",
            )
        )
    for i, text in enumerate(stories["text"]):
        if not isinstance(text, str):
            problems.append(
                InputProblem(
                    file="stories",
                    line=i + 2,
                    column="text",
                    value=repr(text),
                    message="text is missing or not a string",
                    fix="give every story its text",
                )
            )
    dup = stories.duplicated(list(_KEYS), keep="first")
    for i in np.flatnonzero(dup.to_numpy()):
        problems.append(
            InputProblem(
                file="stories",
                line=int(i) + 2,
                column="pair_id",
                value=f"{stories['pair_id'].iloc[i]}/{stories['system'].iloc[i]}",
                message="duplicate story for this pair_id and system",
                fix="keep one text per pair_id and system",
            )
        )
    if problems:
        raise InputError(problems[:50])


def _resolve(detectors, perplexity: PerplexityConfig | None) -> list[Detector | str]:
    if detectors is None:
        names: list = list(DEFAULT_DETECTORS) + ["perplexity"]
    else:
        names = [detectors] if isinstance(detectors, (str, Detector)) else list(detectors)
    out: list[Detector | str] = []
    for item in names:
        if isinstance(item, Detector):
            out.append(item)
        elif item == "perplexity":
            if perplexity is None or not perplexity.configured:
                out.append("perplexity")  # recorded as SKIPPED
            else:
                from judge_transfer_audit.detectors.perplexity import make_perplexity_detector

                out.append(make_perplexity_detector(perplexity))
        else:
            out.append(DETECTORS.get(item)())
    return out


def _skipped(name: str, reason: str, n: int, detector: Detector | None = None) -> DetectorRun:
    return DetectorRun(
        name=name,
        version=detector.version if detector else "",
        status=Status.SKIPPED,
        reason=reason,
        features=(),
        params=detector.params_text() if detector else {},
        revision="",
        n_texts=n,
        n_computed=0,
        n_cached=0,
        n_missing={},
        seconds=0.0,
    )


#: Below this many texts per worker, a process pool costs more than it saves.
MIN_TEXTS_PER_JOB = 500


def _run_detector(detector: Detector, texts: list[str]) -> pd.DataFrame:
    return detector.compute(texts)


def _compute(detector: Detector, texts: list[str], n_jobs: int) -> pd.DataFrame:
    """``detector.compute(texts)``, split over ``n_jobs`` forked processes when that pays.

    Only model-free detectors (``parallel_safe``) are split; each worker computes a
    contiguous chunk and the chunks are concatenated in order, so the result is identical
    to the serial one. Needs the ``fork`` start method (Linux, macOS); else runs serially.
    """
    jobs = min(int(n_jobs), len(texts) // MIN_TEXTS_PER_JOB)
    if jobs <= 1 or not detector.parallel_safe or "fork" not in multiprocessing.get_all_start_methods():
        return detector.compute(texts)
    bounds = np.linspace(0, len(texts), jobs + 1).astype(int)
    chunks = [texts[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        parts = list(pool.map(_run_detector, [detector] * jobs, chunks))
    return pd.concat(parts, ignore_index=True)


def compute_features(
    stories: pd.DataFrame,
    *,
    detectors=None,
    perplexity: PerplexityConfig | None = None,
    cache=None,
    n_jobs: int = 1,
) -> FeatureTable:
    """Compute surface features for every story.

    Parameters
    ----------
    stories : pandas.DataFrame
        Columns ``pair_id``, ``system``, ``text``; any extra numeric column is a precomputed
        feature and is copied into the table as is.
    detectors : sequence of str or Detector, optional
        Registered names (see ``DETECTORS.names()``) or detector instances. Default: length,
        sentences, lexical, and perplexity (SKIPPED unless ``perplexity`` is configured).
    perplexity : PerplexityConfig, optional
        The language model (local transformers model or completions server).
    cache : str or path-like, optional
        Feature cache directory (:class:`judge_transfer_audit.detectors.cache.FeatureCache`); ``None`` disables it.
    n_jobs : int
        Processes for the model-free detectors (values are identical to ``n_jobs=1``);
        used only with at least :data:`MIN_TEXTS_PER_JOB` texts per process.

    Returns
    -------
    FeatureTable

    Raises
    ------
    InputError
        Missing columns, a missing text, a duplicate (pair_id, system), an unknown detector
        name, or a precomputed column named like a detector feature.
    """
    _validate(stories)
    base = stories[["pair_id", "system"]].astype(str).reset_index(drop=True)
    extra = [c for c in stories.columns if c not in ("pair_id", "system", "text") + RESERVED_COLUMNS]
    precomputed = tuple(
        c for c in extra if pd.api.types.is_numeric_dtype(stories[c]) and not pd.api.types.is_bool_dtype(stories[c])
    )
    ignored = tuple(c for c in extra if c not in precomputed)
    texts = stories["text"].tolist()
    hashes = [text_sha256(t) for t in texts]
    unique_hashes = list(dict.fromkeys(hashes))
    first_text = dict(zip(hashes, texts))
    unique_texts = [first_text[h] for h in unique_hashes]
    store = FeatureCache(cache) if cache is not None else None

    runs: list[DetectorRun] = []
    columns: dict[str, np.ndarray] = {}
    for det in _resolve(detectors, perplexity):
        if isinstance(det, str):
            reason = f"no language model configured: {PERPLEXITY_HINT}"
            if "perplexity" in precomputed:
                reason = "not computed: the stories supply a precomputed 'perplexity' column"
            runs.append(_skipped(det, reason, len(unique_texts)))
            continue
        clash = [f for f in det.features if f in precomputed]
        if clash:
            raise InputError(
                InputProblem(
                    file="stories",
                    column=clash[0],
                    message=f"column '{clash[0]}' is also a feature of detector '{det.name}'",
                    fix=f"rename the column or leave detector '{det.name}' out",
                )
            )
        unavailable = det.availability()
        if unavailable:
            runs.append(_skipped(det.name, unavailable, len(unique_texts), det))
            continue
        start = time.perf_counter()
        tokens_before = int(getattr(det, "tokens_scored", 0))
        model_seconds_before = float(getattr(det, "seconds", 0.0))
        try:
            revision = det.revision()
            found = (
                store.lookup(det, unique_hashes)
                if store
                else pd.DataFrame(columns=list(det.features), index=pd.Index([], dtype=object), dtype=float)
            )
            todo = [h for h in unique_hashes if h not in found.index]
            if todo:
                computed = _compute(det, [first_text[h] for h in todo], n_jobs).reset_index(drop=True)
                if store:
                    store.store(det, todo, computed)
                computed.index = pd.Index(todo)
                found = computed if found.empty else pd.concat([found, computed])
        except MissingDependencyError as exc:
            runs.append(
                _skipped(
                    det.name,
                    f"{exc} ({PERPLEXITY_HINT})" if det.name == "perplexity" else str(exc),
                    len(unique_texts),
                    det,
                )
            )
            continue
        except (ProviderError, OSError, RuntimeError) as exc:  # RuntimeError: torch (e.g. out of memory)
            runs.append(
                DetectorRun(
                    name=det.name,
                    version=det.version,
                    status=Status.ERROR,
                    reason=redact_text(f"{type(exc).__name__}: {exc}"),  # a server URL may carry a key
                    features=(),
                    params=det.params_text(),
                    revision="",
                    n_texts=len(unique_texts),
                    n_computed=0,
                    n_cached=0,
                    n_missing={},
                    seconds=time.perf_counter() - start,
                )
            )
            continue
        n_tokens = int(getattr(det, "tokens_scored", 0)) - tokens_before
        model_seconds = float(getattr(det, "seconds", 0.0)) - model_seconds_before
        per_story = found.reindex(hashes)
        for f in det.features:
            columns[f] = per_story[f].to_numpy(dtype=float)
        runs.append(
            DetectorRun(
                name=det.name,
                version=det.version,
                status=Status.PASS,
                reason="",
                features=tuple(det.features),
                params=det.params_text(),
                revision=revision,
                n_texts=len(unique_texts),
                n_computed=len(todo),
                n_cached=len(unique_texts) - len(todo),
                n_missing={f: int(np.isnan(columns[f]).sum()) for f in det.features},
                seconds=time.perf_counter() - start,
                n_tokens=n_tokens,
                tokens_per_second=n_tokens / model_seconds if n_tokens and model_seconds > 0 else 0.0,
            )
        )

    frame = base.copy()
    for name, values in columns.items():
        frame[name] = values
    for name in precomputed:
        frame[name] = stories[name].to_numpy(dtype=float)
    return FeatureTable(
        frame=frame,
        detectors=tuple(runs),
        precomputed=precomputed,
        ignored_columns=ignored,
        n_stories=len(frame),
        n_unique_texts=len(unique_texts),
        cache_dir=str(cache) if cache is not None else "",
    )
