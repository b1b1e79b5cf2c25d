"""An --out that cannot be written is refused before any input is loaded, not after the audit is computed."""

from __future__ import annotations

import os

import pytest

from tests.hostile.conftest import fast_args, run_cli


def _unwritable(tmp_path):
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        return locked / "out"
    return "/proc/judge-audit-out"  # root may write anywhere but here (no file can be created in /proc)


@pytest.mark.parametrize("where", ["under a file", "not writable"])
def test_an_unwritable_out_is_refused_before_the_work(study, tmp_path, capsys, where):
    out = study["judge"] / "out" if where == "under a file" else _unwritable(tmp_path)
    argv = [a for a in fast_args(study, out) if a != "-q"]
    status, _, err = run_cli([str(a) for a in argv], capsys, protect=study.values())
    assert status == 2, err
    assert str(out) in err and "Fix: choose a location you can write to" in err
    assert "loading inputs" not in err  # refused before the first step
    assert not os.path.exists(out)


def test_a_single_output_file_under_a_file_is_refused(study, capsys):
    from judge_transfer_audit.core.errors import InputError
    from judge_transfer_audit.core.output_files import check_output_file

    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_file(study["judge"] / "sub" / "report.html")
    argv = ["labelstudio", "import", str(study["humans"]), "--pairs", str(study["pairs"])]
    status, _, err = run_cli([*argv, "-o", str(study["judge"] / "h.csv")], capsys, protect=study.values())
    assert status == 2 and "is a file, not a folder" in err
