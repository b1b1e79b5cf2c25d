"""The gate policy: which checks run, their thresholds, and what a breach means.

A policy is a TOML file; every key is optional and falls back to the documented default
(docs/policy.md lists each check with its rationale). Example::

    [transfer]
    max_fraction_outside_ci = 0.25     # share of cells whose judge rate is outside the human CI
    max_fraction_direction_conflict = 0.25
    decisive_level = 0.95              # Wilson interval level that makes a judge rate "decisive"

    [agreement]
    min_human_alpha = 0.2              # below: the human target itself is unreliable (WARN)

    [severity]
    "transfer.fraction_outside_ci" = "FAIL"   # or "WARN" to report without failing the gate
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.errors import InputError, InputProblem


@dataclass(frozen=True)
class TransferPolicy:
    level: float = 0.95  #: level of the human GLMM interval
    max_fraction_outside_ci: float = 0.25
    max_fraction_direction_conflict: float = 0.25
    decisive_level: float = 0.95
    max_baseline_gap: float = 0.05  #: judge-vs-majority may trail the reader baseline by this much


@dataclass(frozen=True)
class AgreementPolicy:
    min_human_alpha: float = 0.2


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
    outside_range_margin: float = 0.0  #: judge rate may lie this far outside all readers' rates
    fast_reader_max_loo_shift: float = 0.05
    fatigue_min_end_to_start: float = 0.5
    alpha: float = 0.05


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
    #: check name -> "FAIL" | "WARN" | "OFF": what a breach of that check reports
    severity: dict[str, str] = field(default_factory=dict)

    def breach(self, check_name: str, default: str = "FAIL") -> str:
        return self.severity.get(check_name, default)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: Every check name a policy's [severity] may refer to (``<section>.computed`` included).
KNOWN_CHECKS = frozenset({
    "transfer.judge_in_human_ci", "transfer.direction_conflict", "transfer.judge_vs_reader_baseline",
    "transfer.fraction_outside_ci", "transfer.fraction_direction_conflict", "agreement.human_alpha",
    "judge.invalid_fraction", "glmm.fraction_singular", "glmm.fit", "dev.spearman", "dev.computed",
    "uncertainty.loro_max_shift", "uncertainty.computed", "readers.judge_outside_reader_range",
    "readers.separation", "readers.fast_reader", "readers.fatigue", "readers.position_bias",
    "readers.group_difference", "readers.computed", "surface.judge_feature_r", "surface.judge_only_feature",
    "surface.computed", "judge.position_bias",
})

#: key -> (low, high, inclusive): the range a numeric policy value must fall in
_RANGES = {
    "level": (0.0, 1.0, False), "decisive_level": (0.0, 1.0, False), "alpha": (0.0, 1.0, False),
    "n_boot": (100, float("inf"), True),
}
_FRACTION = (0.0, 1.0, True)

_SECTION_CLASSES = {
    "transfer": TransferPolicy, "agreement": AgreementPolicy, "judge": JudgePolicy,
    "glmm": GlmmPolicy, "uncertainty": UncertaintyPolicy, "dev": DevPolicy, "surface": SurfacePolicy,
    "readers": ReadersPolicy,
}


def load_policy(path: str | Path | None) -> Policy:
    """Read a policy TOML file; ``None`` gives the defaults. Unknown keys are input errors."""
    if path is None:
        return Policy()
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(InputProblem(str(path), "policy file not found", "check the --policy path")) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(InputProblem(str(path), f"not valid TOML: {exc}", "fix the TOML syntax")) from None
    problems: list[InputProblem] = []
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key == "severity":
            if not isinstance(value, dict):
                problems.append(InputProblem(str(path), "[severity] must be a table", column=key))
                continue
            for name, level in value.items():
                if name not in KNOWN_CHECKS:
                    problems.append(InputProblem(str(path), f"unknown check '{name}' in [severity]",
                                                 f"use one of: {', '.join(sorted(KNOWN_CHECKS))}",
                                                 column=f"severity.{name}"))
                if level not in ("FAIL", "WARN", "OFF"):
                    problems.append(InputProblem(str(path), f"severity of '{name}' must be FAIL, WARN or OFF",
                                                 "write FAIL, WARN or OFF (upper case)",
                                                 column=f"severity.{name}", value=str(level)))
            kwargs["severity"] = dict(value)
            continue
        cls = _SECTION_CLASSES.get(key)
        if cls is None:
            problems.append(InputProblem(str(path), f"unknown section [{key}]",
                                         f"use one of: {', '.join(sorted(_SECTION_CLASSES))}, severity"))
            continue
        known = {f.name: f for f in dataclasses.fields(cls)}
        section_kwargs = {}
        for name, val in (value or {}).items():
            if name not in known:
                problems.append(InputProblem(str(path), f"unknown key '{name}' in [{key}]",
                                             f"use one of: {', '.join(sorted(known))}", column=f"{key}.{name}"))
                continue
            default = known[name].default
            if isinstance(default, int) and not isinstance(default, bool) and isinstance(val, int):
                number = val
            elif isinstance(default, float) and isinstance(val, (int, float)) and not isinstance(val, bool):
                number = float(val)
            else:
                kind = "a whole number" if isinstance(default, int) else "a number"
                problems.append(InputProblem(str(path), f"'{key}.{name}' must be {kind}",
                                             f"write e.g. {name} = {default!r}", column=f"{key}.{name}",
                                             value=repr(val)))
                continue
            low, high, inclusive = _RANGES.get(name, _FRACTION if name.startswith(("max_", "min_")) and
                                               isinstance(default, float) else (float("-inf"), float("inf"), True))
            inside = low <= number <= high if inclusive else low < number < high
            if not inside:
                bounds = f"[{low}, {high}]" if inclusive else f"({low}, {high})"
                problems.append(InputProblem(str(path), f"'{key}.{name}' must lie in {bounds}",
                                             f"the default is {default!r}", column=f"{key}.{name}",
                                             value=repr(val)))
                continue
            section_kwargs[name] = number
        kwargs[key] = cls(**section_kwargs)
    if problems:
        raise InputError(problems)
    return Policy(**kwargs)
