"""Outputs never overwrite or delete an input, never follow a link, clean only their own files, and are atomic."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import judge_transfer_audit.core.output_files as output_files
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.output_files import MANIFEST, TEMP_PREFIX, write_file
from tests.hostile.conftest import FAST, fast_args, run_cli
from tests.hostile.study import digest, write_study

ROOT = Path(__file__).resolve().parents[2]


def _folder_state(folder: Path) -> dict[str, str]:
    return digest(sorted(p for p in folder.iterdir() if p.is_file()))


def test_out_equal_to_the_inputs_folder_with_output_names_is_refused(tmp_path, capsys):
    folder = tmp_path / "study"
    files = write_study(folder)
    # inputs that happen to carry output names (the campaign's case: judge_pairs.csv, dev.csv, readers.csv, surface.csv)
    renamed = {"judge": "judge_pairs.csv", "humans": "readers.csv", "pairs": "dev.csv", "stories": "surface.csv"}
    for role, name in renamed.items():
        files[role] = files[role].rename(folder / name)
    before = _folder_state(folder)
    args = [
        "run",
        str(files["judge"]),
        str(files["humans"]),
        "--pairs",
        str(files["pairs"]),
        "--stories",
        str(files["stories"]),
        "--out",
        str(folder),
        *FAST,
    ]
    status, _, err = run_cli(args, capsys, protect=files.values())
    assert status == 2
    for name in renamed.values():
        assert f"{folder / name}: writing this output would overwrite the input file" in err
    assert _folder_state(folder) == before  # nothing written, nothing removed


@pytest.mark.slow
def test_out_equal_to_the_inputs_folder_is_fine_when_no_name_collides(tmp_path, capsys):
    files = write_study(tmp_path / "study")
    status, _, _ = run_cli(fast_args(files, tmp_path / "study"), capsys, protect=files.values())
    assert status == 0 and (tmp_path / "study" / "result.json").exists()
    status, _, _ = run_cli(fast_args(files, tmp_path / "study", "--no-html"), capsys, protect=files.values())
    assert status == 0 and all(p.exists() for p in files.values())


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_an_output_linked_to_an_input_is_refused(tmp_path, capsys, how):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    link = out / "result.json"
    (os.symlink if how == "symlink" else os.link)(files["humans"], link)
    status, _, err = run_cli(fast_args(files, out), capsys, protect=files.values())
    assert status == 2 and str(link) in err
    assert ("symbolic link" in err) if how == "symlink" else (f"input file {files['humans']}" in err)
    assert sorted(p.name for p in out.iterdir()) == ["result.json"]


def test_a_link_to_a_file_elsewhere_is_not_written_through(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    elsewhere = tmp_path / "precious.txt"
    elsewhere.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "cells.csv").symlink_to(elsewhere)
    status, _, err = run_cli(fast_args(files, out), capsys, protect=[elsewhere, *files.values()])
    assert status == 2 and "cells.csv" in err and "symbolic link" in err


def test_a_foreign_file_with_an_output_name_is_neither_overwritten_nor_deleted(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "surface.csv"  # a section this run does not even compute (--no-surface)
    mine.write_text("the user's own table")
    status, _, err = run_cli(fast_args(files, out), capsys, protect=[mine])
    assert status == 2 and "surface.csv" in err and "did not write" in err
    assert sorted(p.name for p in out.iterdir()) == ["surface.csv"]


@pytest.mark.slow
def test_stale_cleanup_removes_only_unchanged_files_of_our_own(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    with_readers = [a for a in fast_args(files, out) if a != "--no-readers"]
    assert run_cli(with_readers, capsys)[0] == 0 and (out / "readers.csv").exists()
    (out / "notes.txt").write_text("the user's own file")
    assert run_cli(fast_args(files, out), capsys)[0] == 0
    assert not (out / "readers.csv").exists() and (out / "notes.txt").exists()
    # a file of ours edited since: kept, said, and no longer ours
    assert run_cli(with_readers, capsys)[0] == 0
    (out / "readers.csv").write_text("edited in a spreadsheet")
    status, _, err = run_cli([a for a in fast_args(files, out) if a != "-q"], capsys)
    assert status == 0 and "kept" in err and "readers.csv" in err
    assert (out / "readers.csv").read_text() == "edited in a spreadsheet"
    assert run_cli(with_readers, capsys)[0] == 2  # now a foreign file: refused, not overwritten
    assert (out / "readers.csv").read_text() == "edited in a spreadsheet"


@pytest.mark.slow
def test_a_folder_written_before_manifests_is_adopted(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    assert run_cli(fast_args(files, out), capsys)[0] == 0
    (out / MANIFEST).unlink()
    assert run_cli(fast_args(files, out), capsys)[0] == 0 and (out / MANIFEST).exists()


@pytest.mark.slow
def test_a_failed_write_leaves_the_previous_result_intact(tmp_path, capsys, monkeypatch):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    assert run_cli(fast_args(files, out), capsys)[0] == 0
    before = _folder_state(out)
    real = output_files._write_temp
    calls = []

    def disk_full_on_the_fourth_file(folder, name, content):
        calls.append(name)
        if len(calls) == 4:
            raise OSError(28, "No space left on device", str(folder / name))
        return real(folder, name, content)

    monkeypatch.setattr(output_files, "_write_temp", disk_full_on_the_fourth_file)
    status, _, err = run_cli(fast_args(files, out, "--seed", "5"), capsys)
    assert status == 2 and "No space left on device" in err
    assert _folder_state(out) == before
    assert not list(out.glob(f"{TEMP_PREFIX}*"))


@pytest.mark.slow
def test_a_killed_run_leaves_the_previous_result_intact(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    assert run_cli(fast_args(files, out), capsys)[0] == 0
    before = _folder_state(out)
    script = textwrap.dedent(f"""
        import sys, time
        import judge_transfer_audit.core.output_files as of
        real = of._write_temp
        def slow(folder, name, content):
            path = real(folder, name, content)
            if name == "report.html":  # every other file's temporary copy is written by now
                print("WRITING", flush=True)
                time.sleep(120)
            return path
        of._write_temp = slow
        from judge_transfer_audit.cli import main
        sys.exit(main({fast_args(files, out, "--seed", "9")!r}))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "WRITING"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    leftovers = list(out.glob(f"{TEMP_PREFIX}*"))
    assert leftovers  # the kill hit mid-write ...
    after = {k: v for k, v in _folder_state(out).items() if Path(k) not in leftovers}
    assert after == before  # ... and every output (and the manifest) is the previous run's
    assert run_cli(fast_args(files, out), capsys)[0] == 0  # the next run recognises the folder and tidies up
    assert not list(out.glob(f"{TEMP_PREFIX}*"))


def test_report_and_features_refuse_to_overwrite_their_input(tmp_path, capsys):
    files = write_study(tmp_path / "in")
    out = tmp_path / "out"
    assert run_cli(fast_args(files, out), capsys)[0] == 0
    result = out / "result.json"
    status, _, err = run_cli(["report", str(result), "-o", str(result)], capsys, protect=[result])
    assert status == 2 and "would overwrite the input file" in err
    status, _, err = run_cli(
        ["report", str(result), "-o", str(tmp_path / "r.html"), "--junit", str(result)], capsys, protect=[result]
    )
    assert status == 2 and "would overwrite the input file" in err
    status, _, err = run_cli(
        ["features", str(files["stories"]), "-o", str(files["stories"]), "-q"], capsys, protect=[files["stories"]]
    )
    assert status == 2 and "would overwrite the input file" in err


def test_write_file_replaces_atomically_and_keeps_permissions_usual(tmp_path):
    target = tmp_path / "a.txt"
    write_file(target, "one")
    write_file(target, "two")
    assert target.read_text() == "two" and not list(tmp_path.glob(f"{TEMP_PREFIX}*"))
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
    with pytest.raises(InputError, match="overwrite the input"):
        write_file(target, "three", inputs=[target])
