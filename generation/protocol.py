"""The generation protocol: what every system is asked, and how a story is accepted.

Loaded from a TOML file laid over the packaged default
(``generation/templates/protocol.toml``), so a user file may hold only its ``[systems]``
and ``[[matchups]]``. Every key and its default is listed in docs/generation.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import tomllib

from judge_transfer_audit.core.errors import InputError, InputProblem

DEFAULT_PROTOCOL_PATH = Path(__file__).parent / "templates" / "protocol.toml"
TEMPLATE_FIELDS = frozenset({"premise", "phrasing", "word_target", "word_min", "word_max"})
_TOP_KEYS = {
    "system_prompt",
    "word_min",
    "word_max",
    "word_target",
    "max_attempts",
    "reasoning_pattern",
    "reuse_stories",
    "concurrency",
    "seed",
    "sampling",
    "phrasing",
    "templates",
    "systems",
    "matchups",
}
_SYSTEM_KEYS = {"template", "provider", "sampling"}
#: Accepted range (inclusive) of every integer key of the protocol.
INT_RANGES = {
    "word_min": (0, 100_000),
    "word_max": (0, 100_000),
    "word_target": (0, 100_000),
    "max_attempts": (1, 1000),
    "concurrency": (1, 256),
}


def non_finite(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every NaN or infinite number inside a (nested) table."""
    found: list[tuple[str, Any]] = []
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, float) and not math.isfinite(value):
            found.append((name, value))
        elif isinstance(value, Mapping):
            found += non_finite(value, name + ".")
        elif isinstance(value, list):
            found += [(f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, float) and not math.isfinite(v)]
    return found


@dataclass(frozen=True)
class SystemSpec:
    """One generating system: its prompt template, its provider table and sampling overrides."""

    name: str
    template: str
    provider: dict[str, Any]
    sampling: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Matchup:
    """Two systems compared on every premise; ``focal`` is the one whose win rate is reported."""

    focal: str
    other: str
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or f"{self.focal} vs {self.other}"


@dataclass(frozen=True)
class GenerationProtocol:
    """The parsed protocol (see docs/generation.md for the meaning and default of each key)."""

    system_prompt: str
    templates: dict[str, str]
    phrasing: dict[str, str]
    word_min: int
    word_max: int
    word_target: int
    max_attempts: int
    reasoning_pattern: str
    sampling: dict[str, Any]
    systems: dict[str, SystemSpec]
    matchups: tuple[Matchup, ...]
    reuse_stories: bool = True
    concurrency: int = 4
    seed: int | None = None
    source: str = ""

    @property
    def reasoning_regex(self) -> re.Pattern[str]:
        return re.compile(self.reasoning_pattern)

    def sampling_for(self, system: str) -> dict[str, Any]:
        merged = dict(self.sampling)
        merged.update(self.systems[system].sampling)
        return merged

    def user_prompt(self, system: str, premise: str, kind: str = "") -> str:
        """The user message for ``system`` on ``premise`` (``kind`` picks the phrasing)."""
        template = self.templates[self.systems[system].template]
        phrasing = self.phrasing.get(kind) if kind else None
        if phrasing is None:
            phrasing = self.phrasing.get("default", "on")
        return template.format(
            premise=premise,
            phrasing=phrasing,
            word_target=self.word_target,
            word_min=self.word_min,
            word_max=self.word_max,
        )

    def request_fingerprint(self, system: str, premise: str, kind: str = "") -> str:
        """Hash of everything that decides one story's requests and its acceptance.

        Used on resume: a finished story is reused only when this matches.
        """
        spec = self.systems[system]
        content = {
            "system_prompt": self.system_prompt,
            "user": self.user_prompt(system, premise, kind),
            "model": spec.provider.get("model"),
            "provider": spec.provider.get("provider"),
            "extra_body": spec.provider.get("extra_body"),
            "sampling": self.sampling_for(system),
            "window": [self.word_min, self.word_max, self.word_target, self.max_attempts],
            "reasoning_pattern": self.reasoning_pattern,
        }
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


def merge_tables(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) and key not in ("systems",):
            out[key] = merge_tables(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(
            InputProblem(str(path), "file not found", fix="give the path of a protocol TOML file")
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(InputProblem(str(path), f"not valid TOML: {exc}", fix="fix the TOML syntax")) from None


def load_protocol(path: str | Path | None = None, *, overrides: Mapping[str, Any] | None = None) -> GenerationProtocol:
    """Read a protocol file laid over the packaged default.

    Parameters
    ----------
    path : str or Path, optional
        The user's TOML file; None uses the default alone (then ``systems`` is empty and
        generation needs systems from somewhere else).
    overrides : mapping, optional
        Top-level keys that win over both files (e.g. ``{"seed": 3}`` from the CLI).

    Raises
    ------
    InputError
        One problem per invalid key (unknown key, wrong type, template placeholder,
        window not containing its target, unknown system in a matchup...).
    """
    raw = _read_toml(DEFAULT_PROTOCOL_PATH)
    source = str(path) if path is not None else str(DEFAULT_PROTOCOL_PATH)
    if path is not None:
        raw = merge_tables(raw, _read_toml(Path(path)))
    if overrides:
        raw = merge_tables(raw, {k: v for k, v in overrides.items() if v is not None})
    return _validate(raw, source)


def _validate(raw: dict[str, Any], source: str) -> GenerationProtocol:
    problems: list[InputProblem] = []

    def bad(key: str, message: str, fix: str = "", value: Any = None) -> None:
        problems.append(InputProblem(source, message, fix=fix, column=key, value=None if value is None else str(value)))

    for key in sorted(set(raw) - _TOP_KEYS):
        bad(key, "unknown key", fix=f"use one of: {', '.join(sorted(_TOP_KEYS))}")
    ints = {}
    for key, (low, high) in INT_RANGES.items():
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            bad(
                key,
                f"must be an integer in [{low}, {high}]",
                value=value,
                fix=f"set {key} to a whole number from {low} to {high}",
            )
        else:
            ints[key] = value
    if len(ints) == len(INT_RANGES) and not ints["word_min"] <= ints["word_target"] <= ints["word_max"]:
        bad(
            "word_target",
            "must lie in [word_min, word_max]",
            value=f"{ints['word_min']} <= {ints['word_target']} <= {ints['word_max']} is false",
        )
    seed = raw.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
        bad("seed", f"must be an integer in [0, {2**63 - 1}]", value=seed)
    for where, table in [("sampling", raw.get("sampling"))] + [
        (f"systems.{name}.sampling", t.get("sampling"))
        for name, t in (raw.get("systems") or {}).items()
        if isinstance(t, Mapping)
    ]:
        for key, value in non_finite(table if isinstance(table, Mapping) else {}):
            bad(
                f"{where}.{key}",
                "NaN or infinity cannot be sent to a server (JSON has no such numbers)",
                value=value,
                fix="give a finite number",
            )
    pattern = raw.get("reasoning_pattern", "")
    try:
        re.compile(pattern)
    except (re.error, TypeError) as exc:
        bad("reasoning_pattern", f"not a valid regular expression: {exc}", value=pattern)
    if not isinstance(raw.get("system_prompt"), str):
        bad("system_prompt", "must be a string")
    templates = raw.get("templates") or {}
    for name, text in templates.items():
        if not isinstance(text, str):
            bad(f"templates.{name}", "must be a string")
            continue
        used = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        if unknown := sorted(used - TEMPLATE_FIELDS):
            bad(
                f"templates.{name}",
                f"unknown placeholder(s) {unknown}",
                fix=f"use only {{{'}, {'.join(sorted(TEMPLATE_FIELDS))}}} (write {{{{ }}}} for a literal brace)",
            )
        elif "premise" not in used:
            bad(f"templates.{name}", "has no {premise} placeholder", fix="put {premise} where the premise goes")
    systems: dict[str, SystemSpec] = {}
    for name, table in (raw.get("systems") or {}).items():
        if not isinstance(table, Mapping):
            bad(f"systems.{name}", "must be a table")
            continue
        for key in sorted(set(table) - _SYSTEM_KEYS):
            bad(f"systems.{name}.{key}", "unknown key", fix=f"use one of: {', '.join(sorted(_SYSTEM_KEYS))}")
        template = table.get("template", "standard")
        if template not in templates:
            bad(
                f"systems.{name}.template",
                "names no template",
                value=template,
                fix=f"use one of: {', '.join(sorted(templates))}",
            )
        provider = table.get("provider")
        if not isinstance(provider, Mapping) or "provider" not in provider:
            bad(
                f"systems.{name}.provider",
                "missing provider table",
                fix=f'add [systems.{name}.provider] with provider = "openai" and model = ...',
            )
            provider = {}
        systems[name] = SystemSpec(name, template, dict(provider), dict(table.get("sampling") or {}))
    matchups = []
    for i, table in enumerate(raw.get("matchups") or []):
        focal, other = table.get("focal"), table.get("other")
        for role, value in (("focal", focal), ("other", other)):
            if value not in systems:
                bad(
                    f"matchups[{i}].{role}",
                    "names no system",
                    value=value,
                    fix=f"use one of: {', '.join(sorted(systems)) or '(define [systems.NAME] first)'}",
                )
        if focal == other and focal is not None:
            bad(f"matchups[{i}]", "a system cannot be matched with itself", value=focal)
        matchups.append(Matchup(str(focal), str(other), str(table.get("label", ""))))
    labels = [m.name for m in matchups]
    for dup in sorted({x for x in labels if labels.count(x) > 1}):
        bad("matchups", "the same matchup is listed twice", value=dup)
    if problems:
        raise InputError(problems)
    return GenerationProtocol(
        system_prompt=raw["system_prompt"],
        templates=dict(templates),
        phrasing={str(k): str(v) for k, v in (raw.get("phrasing") or {}).items()},
        word_min=ints["word_min"],
        word_max=ints["word_max"],
        word_target=ints["word_target"],
        max_attempts=ints["max_attempts"],
        reasoning_pattern=pattern,
        sampling=dict(raw.get("sampling") or {}),
        systems=systems,
        matchups=tuple(matchups),
        reuse_stories=bool(raw.get("reuse_stories", True)),
        concurrency=ints["concurrency"],
        seed=seed,
        source=source,
    )


def parse_matchup(text: str, systems: Mapping[str, Any]) -> Matchup:
    """Parse ``FOCAL:OTHER`` (CLI form) into a :class:`Matchup`."""
    focal, sep, other = text.partition(":")
    problems = []
    if not sep or not focal or not other:
        problems.append(
            InputProblem("--matchup", "expected FOCAL:OTHER", value=text, fix="e.g. --matchup gpt-5:gpt-4o")
        )
    else:
        for value in (focal, other):
            if value not in systems:
                problems.append(
                    InputProblem(
                        "--matchup",
                        "names no system of the protocol",
                        value=value,
                        fix=f"use one of: {', '.join(sorted(systems))}",
                    )
                )
    if problems:
        raise InputError(problems)
    return Matchup(focal, other)
