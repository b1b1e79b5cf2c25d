import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import Policy, load_policy


def test_defaults_without_file():
    policy = load_policy(None)
    assert policy == Policy()
    t = policy.transfer
    assert (t.margin, t.min_pairs, t.min_readers, t.alpha, t.n_boot, t.adjust) == (0.10, 10, 3, 0.05, 999, "holm")
    assert policy.severity == {}
    # a check without a recorded default is a programming error, not a silent FAIL
    from judge_transfer_audit.model.checks import breach_status

    assert breach_status("transfer.decision") is Status.FAIL and breach_status("dev.spearman") is Status.WARN
    with pytest.raises(ValueError, match="no default severity"):
        breach_status("anything")


def test_file_overrides_and_severity(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(
        '[transfer]\nmargin = 0.05\nmin_pairs = 20\nadjust = "bonferroni"\nn_boot = 499\n'
        '[uncertainty]\nn_boot = 500\n[severity]\n"transfer.decision" = "WARN"\n'
    )
    policy = load_policy(path)
    assert (policy.transfer.margin, policy.transfer.min_pairs, policy.transfer.adjust) == (0.05, 20, "bonferroni")
    assert policy.transfer.n_boot == 499 and policy.uncertainty.n_boot == 500
    assert policy.severity["transfer.decision"] == "WARN"
    assert policy.agreement.min_human_alpha == Policy().agreement.min_human_alpha


def test_every_problem_is_reported_at_once(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(
        '[transfer]\nmax_fraction = 0.5\nlevel = "high"\n[nonsense]\nx = 1\n'
        '[severity]\n"agreement.human_alpha" = "LOUD"\n'
    )
    with pytest.raises(InputError) as info:
        load_policy(path)
    text = str(info.value)
    assert len(info.value.problems) == 4
    assert "unknown key 'max_fraction'" in text and "max_baseline_gap" in text
    assert "must be a number" in text and "unknown section [nonsense]" in text and "LOUD" in text


def test_bad_toml_and_missing_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[transfer\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_policy(path)
    with pytest.raises(InputError, match="not found"):
        load_policy(tmp_path / "missing.toml")


def test_values_out_of_range_and_unknown_checks(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(
        "[transfer]\nlevel = 1.5\nmax_baseline_gap = 2.0\nmargin = 0.7\nalpha = 0.5\nmin_pairs = 1\n"
        'adjust = "bh"\n[uncertainty]\nn_boot = 1\n[severity]\n"transfer.outside" = "WARN"\n'
    )
    with pytest.raises(InputError) as info:
        load_policy(path)
    text = str(info.value)
    assert len(info.value.problems) == 8
    assert "'transfer.level' must lie in (0.0, 1.0)" in text and "max_baseline_gap' must lie in [0.0, 1.0]" in text
    assert "'transfer.margin' must lie in (0.0, 0.5)" in text and "'transfer.alpha' must lie in (0.0, 0.5)" in text
    assert "'transfer.min_pairs' must lie in [2" in text and "'transfer.adjust' must be one of the listed words" in text
    assert "use one of: holm, bonferroni, none" in text
    assert "'uncertainty.n_boot' must lie in [100" in text
    assert "unknown check 'transfer.outside'" in text and "transfer.decision" in text


def test_schema_1_keys_and_checks_say_what_replaced_them(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text('[transfer]\nmax_fraction_outside_ci = 0.25\n[severity]\n"transfer.judge_in_human_ci" = "WARN"\n')
    with pytest.raises(InputError) as info:
        load_policy(path)
    text = str(info.value)
    assert "'transfer.max_fraction_outside_ci' was removed in result schema 2.0" in text
    assert "'transfer.judge_in_human_ci' was replaced" in text and "transfer.decision" in text


@pytest.mark.slow
def test_known_checks_cover_every_check_the_pipeline_emits():
    from pathlib import Path

    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.policy import KNOWN_CHECKS
    from judge_transfer_audit.model.spec import AuditSpec

    fixtures = Path(__file__).resolve().parents[3] / "fixtures"
    d, dev = fixtures / "deployment", fixtures / "dev"
    data = load_audit_data(
        d / "judge.csv",
        d / "humans.csv",
        pairs=d / "pairs.csv",
        stories=d / "stories.csv",
        dev_judge=dev / "judge.csv",
        dev_humans=dev / "humans.csv",
    )
    names = {c.name for c in run_audit(data, AuditSpec(n_boot=200)).checks}
    assert names <= KNOWN_CHECKS, names - KNOWN_CHECKS


def test_misspelled_section_key_and_check_name_the_near_one(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text('[transfr]\nmargin = 0.1\n[transfer]\nmargn = 0.05\n[severity]\n"transfer.decison" = "WARN"\n')
    with pytest.raises(InputError) as info:
        load_policy(path)
    text = str(info.value)
    assert "unknown section [transfr] (did you mean 'transfer'?)" in text
    assert "unknown key 'margn' in [transfer] (did you mean 'margin'?)" in text
    assert "unknown check 'transfer.decison' in [severity] (did you mean 'transfer.decision'?)" in text
