"""The gate policy: which checks run, their thresholds, and what a breach means.

A policy is a TOML file; every key is optional and falls back to the documented default
(docs/policy.md lists each check with its rationale). Example::

    [transfer]
    margin = 0.10                      # equivalence margin around the human band (probability scale)
    min_pairs = 10                     # fewer compared pairs: the cell is INSUFFICIENT
    alpha = 0.05                       # one-sided level of the cell tests (intervals at 1 - 2 alpha)
    adjust = "holm"                    # multiplicity adjustment of the FAIL tests across cells

    [agreement]
    min_human_alpha = 0.2              # below: the human target itself is unreliable (WARN)

    [severity]
    "transfer.decision" = "FAIL"       # or "WARN": FAIL cells reported without failing the gate
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from judge_transfer_audit.core.errors import InputError, InputProblem, did_you_mean
from judge_transfer_audit.model.checks import DEFAULT_SEVERITY, SEVERITY_LEVELS


@dataclass(frozen=True)
class TransferPolicy:
    """The cell decision (docs/policy.md, docs/audit.md "The decision")."""

    level: float = 0.95  #: level of the human GLMM interval and of the human estimands' intervals
    decisive_level: float = 0.95  #: level of the intervals that give the displayed directions
    max_baseline_gap: float = 0.05  #: judge-vs-majority may trail the reader baseline by this much
    margin: float = 0.10  #: equivalence margin around the human band, probability scale
    min_pairs: int = 10  #: fewer compared pairs (human vote + valid judge output): INSUFFICIENT
    min_readers: int = 3  #: fewer readers on the compared pairs: INSUFFICIENT
    alpha: float = 0.05  #: one-sided level of each test; intervals at 1 - 2 alpha (TOST)
    n_boot: int = 999  #: replicates of the paired bootstrap per cell
    adjust: str = "holm"  #: multiplicity adjustment of the FAIL tests: holm, bonferroni or none
    #: the FAIL tests as a closed test that pools the criteria of a matchup (study, matchup, then cells:
    #: audit/verdict/hierarchy.py); false: each cell its own family member (Holm over the cells)
    pool_criteria: bool = True


@dataclass(frozen=True)
class AgreementPolicy:
    min_human_alpha: float = 0.2
    #: the agreement decision (audit/verdict/agreement_decision.py): the judge may agree with the other
    #: readers this many points less often than a reader does and still PASS; FAIL beyond it
    margin: float = 0.05


@dataclass(frozen=True)
class JudgePolicy:
    max_invalid_fraction: float = 0.05


@dataclass(frozen=True)
class GlmmPolicy:
    max_fraction_singular: float = 0.5


@dataclass(frozen=True)
class UncertaintyPolicy:
    max_loro_shift: float = 0.10  #: largest rate shift from dropping one reader
    n_boot: int = 2000


@dataclass(frozen=True)
class DevPolicy:
    min_dev_spearman: float = 0.4


@dataclass(frozen=True)
class SurfacePolicy:
    max_abs_judge_feature_r: float = 0.5  #: largest |story-level r| of a feature with a judge criterion
    min_abs_within_pair_beta: float = 0.3  #: smallest |within-pair beta| that counts as tracking a feature


@dataclass(frozen=True)
class ReadersPolicy:
    """Thresholds of the reader checks (audit/statistics/readers/policy.py says what each check does)."""

    outside_range_margin: float = 0.0  #: judge rate may lie this far outside all readers' rates
    fast_reader_max_loo_shift: float = 0.05
    fatigue_min_end_to_start: float = 0.5
    alpha: float = 0.05
    adjust: str = "holm"  #: multiplicity adjustment across a check's scopes: "holm", "bh" or "none"


@dataclass(frozen=True)
class DiffPolicy:
    """What `audit diff OLD NEW --gate` fails on.

    audit/results/diff.py; decisions are ordered PASS, INCONCLUSIVE, INSUFFICIENT, ERROR, FAIL.
    """

    worse: str = "any"  #: "any" cell decision down the order, "fail" (down to FAIL or ERROR), "pass" (a PASS lost)
    removed: str = "worse"  #: a cell of OLD absent from NEW: "worse" (counts) or "ignore"


@dataclass(frozen=True)
class PredictionPoweredPolicy:
    """How the human sample was drawn from the judged pairs: the user's claim, which the
    prediction-powered estimates' validity rests on (docs/prediction-powered.md)."""

    #: "random": the voted pairs are a simple random sample of each matchup's judged pairs;
    #: "stratified": a random sample within each matchup (the matchup's own sampling fraction)
    sampling: str = "random"


@dataclass(frozen=True)
class GatePolicy:
    """Which decisions fail the gate (docs/policy.md)."""

    #: "auto": the rate and the agreement decision, the agreement one where the data can decide it;
    #: "both": both, and data with no pair read twice is an input error; "rate" or "agreement": one
    decisions: str = "auto"


@dataclass(frozen=True)
class Policy:
    transfer: TransferPolicy = field(default_factory=TransferPolicy)
    agreement: AgreementPolicy = field(default_factory=AgreementPolicy)
    judge: JudgePolicy = field(default_factory=JudgePolicy)
    glmm: GlmmPolicy = field(default_factory=GlmmPolicy)
    uncertainty: UncertaintyPolicy = field(default_factory=UncertaintyPolicy)
    dev: DevPolicy = field(default_factory=DevPolicy)
    surface: SurfacePolicy = field(default_factory=SurfacePolicy)
    readers: ReadersPolicy = field(default_factory=ReadersPolicy)
    diff: DiffPolicy = field(default_factory=DiffPolicy)
    prediction_powered: PredictionPoweredPolicy = field(default_factory=PredictionPoweredPolicy)
    gate: GatePolicy = field(default_factory=GatePolicy)
    #: check name -> "FAIL" | "WARN" | "OFF": what a breach of that check reports, applied by
    #: judge_transfer_audit.model.checks.apply_severity (the one place; defaults in
    #: judge_transfer_audit.model.checks.DEFAULT_SEVERITY)
    severity: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: Every check name a policy's [severity] may refer to (``<section>.computed`` included): the
#: checks whose default severity judge_transfer_audit.model.checks.DEFAULT_SEVERITY records.
KNOWN_CHECKS = frozenset(DEFAULT_SEVERITY)


@dataclass(frozen=True)
class Bound:
    """The range a numeric policy value must lie in (documented in docs/policy.md)."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def contains(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below  # False for NaN

    def __str__(self) -> str:
        def fmt(x: float) -> str:
            return repr(int(x)) if float(x).is_integer() and abs(x) >= 100 else repr(float(x))

        return f"{'(' if self.low_open else '['}{fmt(self.low)}, {fmt(self.high)}{')' if self.high_open else ']'}"


_FRACTION = Bound(0.0, 1.0)
_PROBABILITY = Bound(0.0, 1.0, low_open=True, high_open=True)
_CORRELATION = Bound(-1.0, 1.0)
#: Bootstrap replicates: at least 100 for a percentile interval, at most 100,000 (the
#: bootstrap holds n_boot x clusters weights in memory; 10,000 already gives stable 95% ends).
N_BOOT_RANGE = Bound(100, 100_000)

#: "section.key" -> its range. Every numeric policy key has one (a test enforces it).
RANGES: dict[str, Bound] = {
    "transfer.level": _PROBABILITY,
    "transfer.decisive_level": _PROBABILITY,
    "transfer.max_baseline_gap": _FRACTION,
    "transfer.margin": Bound(0.0, 0.5, low_open=True, high_open=True),
    "transfer.min_pairs": Bound(2, 1_000_000),
    "transfer.min_readers": Bound(2, 1_000_000),
    "transfer.alpha": Bound(0.0, 0.5, low_open=True, high_open=True),
    "transfer.n_boot": N_BOOT_RANGE,
    "agreement.min_human_alpha": _CORRELATION,
    "agreement.margin": Bound(0.0, 1.0, low_open=True, high_open=True),
    "judge.max_invalid_fraction": _FRACTION,
    "glmm.max_fraction_singular": _FRACTION,
    "uncertainty.max_loro_shift": _FRACTION,
    "uncertainty.n_boot": N_BOOT_RANGE,
    "dev.min_dev_spearman": _CORRELATION,
    "surface.max_abs_judge_feature_r": _FRACTION,
    "surface.min_abs_within_pair_beta": _FRACTION,
    "readers.outside_range_margin": _FRACTION,
    "readers.fast_reader_max_loo_shift": _FRACTION,
    "readers.fatigue_min_end_to_start": _FRACTION,
    "readers.alpha": _PROBABILITY,
}
#: "section.key" -> allowed values of a text-valued policy key.
CHOICES: dict[str, tuple[str, ...]] = {
    "transfer.adjust": ("holm", "bonferroni", "none"),
    "readers.adjust": ("holm", "bh", "none"),
    "diff.worse": ("any", "fail", "pass"),
    "diff.removed": ("worse", "ignore"),
    "prediction_powered.sampling": ("random", "stratified"),
    "gate.decisions": ("auto", "both", "rate", "agreement"),
}
#: Checks of result schema 1.x that the cell decision replaced (a policy naming one is told so).
REPLACED_CHECKS = {
    "transfer.judge_in_human_ci": "transfer.decision",
    "transfer.direction_conflict": "transfer.decision",
    "transfer.fraction_outside_ci": "transfer.decision",
    "transfer.fraction_direction_conflict": "transfer.decision",
}
#: Keys of result schema 1.x that the cell decision replaced.
REPLACED_KEYS = {
    "transfer.max_fraction_outside_ci": "the cell decision (margin, alpha, adjust)",
    "transfer.max_fraction_direction_conflict": "the cell decision (margin, alpha, adjust)",
}
SEVERITIES = SEVERITY_LEVELS

_SECTION_CLASSES = {
    "transfer": TransferPolicy,
    "agreement": AgreementPolicy,
    "judge": JudgePolicy,
    "glmm": GlmmPolicy,
    "uncertainty": UncertaintyPolicy,
    "dev": DevPolicy,
    "surface": SurfacePolicy,
    "readers": ReadersPolicy,
    "diff": DiffPolicy,
    "prediction_powered": PredictionPoweredPolicy,
    "gate": GatePolicy,
}
#: A policy file is a few hundred bytes; anything this large is not one.
MAX_POLICY_BYTES = 1_000_000


def load_policy(path: str | Path | None) -> Policy:
    """Read a policy TOML file; ``None`` gives the defaults.

    Every problem is an :class:`~judge_transfer_audit.core.errors.InputError` naming the file and the key: not
    UTF-8, not TOML, nested too deeply, an unknown section or key, a value of the wrong type
    or outside its documented range (:data:`RANGES`).

    Examples
    --------
    >>> from judge_transfer_audit.model.policy import load_policy
    >>> load_policy(None).transfer.margin
    0.1
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp(), "policy.toml")
    >>> _ = path.write_text("[transfer]\\nmargin = 0.15\\n")
    >>> load_policy(path).transfer.margin
    0.15
    >>> _ = path.write_text("[transfer]\\nmargen = 0.15\\n")
    >>> load_policy(path)
    Traceback (most recent call last):
    ...
    judge_transfer_audit.core.errors.InputError: ...
    """
    if path is None:
        return Policy()
    path = Path(path)
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(InputProblem(name, "policy file not found", "check the --policy path")) from None
    except OSError as exc:
        raise InputError(
            InputProblem(
                name,
                f"cannot read the policy file: {exc.strerror or exc}",
                "check the --policy path and its permissions",
            )
        ) from None
    if len(raw) > MAX_POLICY_BYTES:
        raise InputError(
            InputProblem(
                name,
                f"the policy file is {len(raw):,} bytes; a policy is a short TOML file",
                "check the --policy path (at most 1 MB)",
            )
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            InputProblem(
                name, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", "save the policy file as UTF-8", line=line
            )
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(InputProblem(name, f"not valid TOML: {exc}", "fix the TOML syntax")) from None
    except RecursionError:
        raise InputError(
            InputProblem(
                name,
                "not valid TOML for a policy: arrays or tables nested too deeply",
                "a policy has one level of [section] tables holding numbers",
            )
        ) from None
    return policy_from_mapping(data, name)


def policy_from_mapping(data: Any, source: str) -> Policy:
    """A :class:`Policy` from parsed TOML (or a result's recorded ``provenance.policy``), validated.

    ``source`` names the file in the messages.
    """
    if not isinstance(data, dict):
        raise InputError(InputProblem(source, "a policy is a table of [sections]", "see docs/policy.md"))
    problems: list[InputProblem] = []
    kwargs: dict[str, Any] = {}
    sections = ", ".join([*sorted(_SECTION_CLASSES), "severity"])
    for key, value in data.items():
        if key == "severity":
            severity = _severity(value, source, problems)
            if severity is not None:
                kwargs["severity"] = severity
            continue
        cls = _SECTION_CLASSES.get(key)
        if cls is None:
            problems.append(
                InputProblem(
                    source, f"unknown section [{key}]{did_you_mean(key, _SECTION_CLASSES)}", f"use one of: {sections}"
                )
            )
            continue
        if not isinstance(value, dict):
            problems.append(
                InputProblem(
                    source,
                    f"'{key}' must be a [{key}] table of settings",
                    f"write [{key}] on its own line, then one setting per line (see docs/policy.md)",
                    column=key,
                    value=_shown(value),
                )
            )
            continue
        section_kwargs = {}
        known = {f.name: f for f in dataclasses.fields(cls)}
        for name, val in value.items():
            if f"{key}.{name}" in REPLACED_KEYS:
                problems.append(
                    InputProblem(
                        source,
                        f"'{key}.{name}' was removed in result schema 2.0",
                        f"delete it: {REPLACED_KEYS[f'{key}.{name}']} replaced it (docs/policy.md)",
                        column=f"{key}.{name}",
                    )
                )
                continue
            if name not in known:
                problems.append(
                    InputProblem(
                        source,
                        f"unknown key '{name}' in [{key}]{did_you_mean(name, known)}",
                        f"use one of: {', '.join(sorted(known))}",
                        column=f"{key}.{name}",
                    )
                )
                continue
            checked = _setting(f"{key}.{name}", known[name].default, val, source, problems)
            if checked is not None:
                section_kwargs[name] = checked
        kwargs[key] = cls(**section_kwargs)
    if problems:
        raise InputError(problems)
    return Policy(**kwargs)


def _shown(value: Any) -> str:
    """The offending value as the user wrote it (shortened: a policy value can be a huge table)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _severity(value: Any, source: str, problems: list[InputProblem]) -> dict[str, str] | None:
    if not isinstance(value, dict):
        problems.append(
            InputProblem(
                source,
                "[severity] must be a table",
                'write [severity] and then lines such as "transfer.decision" = "FAIL"',
                column="severity",
                value=_shown(value),
            )
        )
        return None
    for name, level in value.items():
        if name in REPLACED_CHECKS:
            problems.append(
                InputProblem(
                    source,
                    f"check '{name}' was replaced in result schema 2.0",
                    f"use '{REPLACED_CHECKS[name]}' (the cell decision)",
                    column=f"severity.{name}",
                )
            )
        elif name not in KNOWN_CHECKS:
            problems.append(
                InputProblem(
                    source,
                    f"unknown check '{name}' in [severity]{did_you_mean(name, KNOWN_CHECKS)}",
                    f"use one of: {', '.join(sorted(KNOWN_CHECKS))}",
                    column=f"severity.{name}",
                )
            )
        if not isinstance(level, str) or level not in SEVERITIES:
            problems.append(
                InputProblem(
                    source,
                    f"severity of '{name}' must be FAIL, WARN or OFF",
                    "write FAIL, WARN or OFF (upper case)",
                    column=f"severity.{name}",
                    value=str(level) if isinstance(level, (str, int, float)) else _shown(level),
                )
            )
    return dict(value)


def _setting(key: str, default: Any, value: Any, source: str, problems: list[InputProblem]) -> Any:
    """``value`` checked against the default's type and the key's range or choices; None if invalid."""
    name = key.split(".", 1)[1]
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        problems.append(
            InputProblem(
                source,
                f"'{key}' must be true or false",
                f"write e.g. {name} = {str(default).lower()}",
                column=key,
                value=_shown(value),
            )
        )
        return None
    if isinstance(default, str):
        choices = CHOICES.get(key)
        if isinstance(value, str) and (choices is None or value in choices):
            return value
        fix = f"use one of: {', '.join(choices)}" if choices else f'write e.g. {name} = "{default}"'
        problems.append(
            InputProblem(
                source,
                f"'{key}' must be " + ("one of the listed words" if choices else "text"),
                fix,
                column=key,
                value=_shown(value),
            )
        )
        return None
    if isinstance(default, int) and isinstance(value, int) and not isinstance(value, bool):
        number: float | int = value
    elif isinstance(default, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        kind = "a whole number" if isinstance(default, int) else "a number"
        problems.append(
            InputProblem(
                source, f"'{key}' must be {kind}", f"write e.g. {name} = {default!r}", column=key, value=_shown(value)
            )
        )
        return None
    bound = RANGES.get(key)
    if bound is not None and not bound.contains(number):
        problems.append(
            InputProblem(
                source, f"'{key}' must lie in {bound}", f"the default is {default!r}", column=key, value=_shown(value)
            )
        )
        return None
    return number
