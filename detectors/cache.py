"""On-disk feature cache: a re-run computes nothing twice.

An entry is keyed by (detector name, detector version, parameters, model revision, SHA-256
of the text). Layout::

    <cache dir>/<detector>/<sha256 of the key, 16 hex>/key.json     the key, readable
    <cache dir>/<detector>/<sha256 of the key, 16 hex>/part-*.csv   text_sha256 + features

Each run that computes something appends one ``part-*.csv`` (written to a temporary name
and renamed, so a crash never leaves half a file and two concurrent runs never write the
same file). Floats are stored as ``float.hex`` strings, so a cached value is bit-identical
to the computed one whatever CSV parser reads it back.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pandas as pd

from judge_transfer_audit.detectors.base import Detector


def text_sha256(text: str) -> str:
    """Hex SHA-256 of the UTF-8 text (the text part of the cache key)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FeatureCache:
    """Per-detector feature cache under ``directory`` (created on first write)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _entry_dir(self, detector: Detector) -> Path:
        key = json.dumps(detector.cache_key(), sort_keys=True, default=str)
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return self.directory / detector.name / digest

    def lookup(self, detector: Detector, hashes: list[str]) -> pd.DataFrame:
        """Cached rows for the given text hashes: index ``text_sha256``, columns ``detector.features``.

        Hashes not in the cache are absent from the result.
        """
        entry = self._entry_dir(detector)
        parts = sorted(entry.glob("part-*.csv")) if entry.is_dir() else []
        if not parts:
            return pd.DataFrame(columns=list(detector.features), index=pd.Index([], name="text_sha256"), dtype=float)
        frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts]
        stored = pd.concat(frames, ignore_index=True).drop_duplicates("text_sha256", keep="last")
        stored = stored.set_index("text_sha256")
        wanted = pd.Index(hashes).unique()
        found = stored.reindex(wanted.intersection(stored.index))[list(detector.features)]
        return found.apply(lambda col: col.map(float.fromhex)).astype(float)

    def store(self, detector: Detector, hashes: list[str], values: pd.DataFrame) -> Path | None:
        """Append computed rows (``values`` aligned with ``hashes``); returns the file written."""
        if not hashes:
            return None
        entry = self._entry_dir(detector)
        entry.mkdir(parents=True, exist_ok=True)
        key_file = entry / "key.json"
        if not key_file.exists():
            key_file.write_text(json.dumps(detector.cache_key(), sort_keys=True, indent=2, default=str) + "\n")
        frame = pd.DataFrame({f: [float(v).hex() for v in values[f]] for f in detector.features})
        frame.insert(0, "text_sha256", list(hashes))
        name = f"part-{uuid.uuid4().hex}.csv"
        tmp = entry / f".{name}.tmp"
        frame.to_csv(tmp, index=False)
        os.replace(tmp, entry / name)
        return entry / name
