"""Every malformed policy file is an input error (exit 2) naming the file and the key, never exit 70."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.policy import _SECTION_CLASSES, KNOWN_CHECKS, RANGES, Policy, load_policy
from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study


@pytest.mark.parametrize(
    "text, words",
    [
        ("transfer = 5\n", ["'transfer' must be a [transfer] table", "column 'transfer'"]),
        ("agreement = 'x'\n", ["'agreement' must be a [agreement] table", "found 'x'"]),
        ("[uncertainty]\nn_boot = 1000000000\n", ["'uncertainty.n_boot' must lie in [100, 100000]", "1000000000"]),
        ("[uncertainty]\nn_boot = 2000.5\n", ["must be a whole number"]),
        ("[transfer]\nlevel = nan\n", ["'transfer.level' must lie in (0.0, 1.0)"]),
        ("[transfer]\nmax_baseline_gap = inf\n", ["must lie in [0.0, 1.0]"]),
        ("[transfer]\nmargin = nan\n", ["'transfer.margin' must lie in (0.0, 0.5)"]),
        ("[agreement]\nmin_human_alpha = -1.5\n", ["'agreement.min_human_alpha' must lie in [-1.0, 1.0]"]),
        ("[transfer]\nlevel = true\n", ["must be a number"]),
        ("[transfer]\nlevel = [0.9]\n", ["must be a number"]),
        ("severity = 3\n", ["[severity] must be a table"]),
        ('[severity]\n"glmm.fit" = {a = 1}\n', ["must be FAIL, WARN or OFF"]),
        ("[a.b.c]\nx = 1\n", ["unknown section [a]"]),
        ("x = " + "[" * 3000 + "]" * 3000 + "\n", ["nested too deeply"]),
        ("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", ["nested too deeply"]),
        ("[transfer\n", ["not valid TOML"]),
    ],
)
def test_malformed_policy_is_an_input_error(tmp_path, text, words):
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_policy(path)
    message = str(info.value)
    assert str(path) in message and "Fix:" in message
    for word in words:
        assert word in message


def test_non_utf8_policy_names_the_line(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_bytes(b"[transfer]\nlevel = 0.9\n# caf\xe9\n")
    with pytest.raises(InputError, match=r"line 3: not UTF-8 text \(byte 0xe9\)"):
        load_policy(path)


def test_policy_that_is_a_folder_or_huge(tmp_path):
    with pytest.raises(InputError, match="cannot read the policy file"):
        load_policy(tmp_path)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 1_100_000 + "\n")
    with pytest.raises(InputError, match="a policy is a short TOML file"):
        load_policy(big)


def test_every_numeric_policy_key_has_a_documented_range():
    numeric = {
        f"{section}.{f.name}"
        for section, cls in _SECTION_CLASSES.items()
        for f in dataclasses.fields(cls)
        if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
    }
    assert numeric == set(RANGES), (
        "declare a range in judge_transfer_audit.model.policy.RANGES (and docs/policy.md) for every key"
    )
    docs = (Path(__file__).resolve().parents[2] / "docs" / "policy.md").read_text(encoding="utf-8")
    for key, bound in RANGES.items():
        assert f"| `{key}` | {bound} |" in docs, f"docs/policy.md's range table lacks {key} {bound}"
    defaults = Policy()
    for key, bound in RANGES.items():
        section, name = key.split(".")
        assert bound.contains(getattr(getattr(defaults, section), name)), key


def test_policy_errors_exit_2_through_the_cli(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    policy = tmp_path / "p.toml"
    policy.write_bytes(b"transfer = 5\n\xff")
    status, _, err = run_cli(
        fast_args(files, tmp_path / "out", "--policy", str(policy)), capsys, protect=[policy, *files.values()]
    )
    assert status == 2 and "p.toml" in err and "UTF-8" in err
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- fuzz
_KNOWN_KEYS = sorted({f.name for cls in _SECTION_CLASSES.values() for f in dataclasses.fields(cls)})
_names = st.one_of(
    st.sampled_from([*_SECTION_CLASSES, "severity"]),
    st.sampled_from(_KNOWN_KEYS),
    st.sampled_from(sorted(KNOWN_CHECKS)),
    st.text(min_size=1, max_size=8),
)


def _key(name: str) -> str:
    return json.dumps(name)  # a TOML basic string is a valid quoted key


_scalars = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(
        lambda x: "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf") if math.isinf(x) else repr(x)
    ),
    st.booleans().map(lambda b: "true" if b else "false"),
    st.sampled_from(["FAIL", "WARN", "OFF", "fail", ""]).map(json.dumps),
    st.text(max_size=10).map(json.dumps),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.dictionaries(_names, inner, max_size=3).map(
            lambda d: "{" + ", ".join(f"{_key(k)} = {v}" for k, v in d.items()) + "}"
        ),
    ),
    max_leaves=6,
)
_sections = st.dictionaries(_names, st.dictionaries(_names, _values, max_size=4), max_size=4)
_top = st.dictionaries(_names, _values, max_size=2)


def _toml(top: dict, sections: dict) -> str:
    lines = [f"{_key(k)} = {v}" for k, v in top.items()]
    for section, body in sections.items():
        if section in top:
            continue
        lines.append(f"[{_key(section)}]")
        lines.extend(f"{_key(k)} = {v}" for k, v in body.items())
    return "\n".join(lines) + "\n"


def _check(path) -> None:
    try:
        policy = load_policy(path)
    except InputError as exc:
        assert exc.problems and all(p.file == str(path) or p.file.startswith(str(path)) for p in exc.problems)
        assert all(p.message for p in exc.problems)
        return
    for key, bound in RANGES.items():
        section, name = key.split(".")
        assert bound.contains(getattr(getattr(policy, section), name)), key
    assert set(policy.severity.values()) <= {"FAIL", "WARN", "OFF"} and set(policy.severity) <= KNOWN_CHECKS


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=_top, sections=_sections)
@pytest.mark.slow
def test_fuzz_structured_policies(tmp_path, top, sections):
    """Any TOML document (known and unknown sections, keys and values of every type): a Policy or an InputError."""
    path = tmp_path / "fuzz.toml"
    path.write_text(_toml(top, sections), encoding="utf-8")
    _check(path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.text(alphabet=st.sampled_from(list("[]{}=.,\"'#\n \\tu0123456789aeflnrsx_-+")), max_size=200).map(
            lambda t: t.encode("utf-8")
        ),
    )
)
def test_fuzz_raw_bytes(tmp_path, data):
    """Arbitrary bytes and TOML-ish noise: a Policy or an InputError, never another exception."""
    path = tmp_path / "fuzz.toml"
    path.write_bytes(data)
    _check(path)
