"""benchmarks/compared_pythons.py: the benchmarks that compare versions name each interpreter's columns by the
folder holding the package it imports, so a table says which code it measured."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import judge_transfer_audit

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("compared_pythons", ROOT / "benchmarks" / "compared_pythons.py")
compared_pythons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compared_pythons)


def test_an_interpreter_reports_the_package_this_process_imports():
    imported = compared_pythons.imported_package(sys.executable)
    assert imported == Path(judge_transfer_audit.__file__)
    assert compared_pythons.package_location(imported) == Path(judge_transfer_audit.__file__).resolve().parents[1]


def test_an_editable_install_is_located_at_its_source_tree(tmp_path):
    package_file = tmp_path / "tree" / "audit" / "__init__.py"
    package_file.parent.mkdir(parents=True)
    package_file.touch()
    assert compared_pythons.package_location(str(package_file)) == (tmp_path / "tree").resolve()


def test_columns_are_named_by_folder_and_shared_code_is_flagged():
    base, branch = Path("/w/base"), Path("/w/branch")
    assert compared_pythons.column_labels([base, branch]) == ["base", "branch"]
    assert compared_pythons.column_labels([base, Path("/v/base")]) == ["base#1", "base#2"]
    assert "WARNING" not in compared_pythons.legend(["a/python", "b/python"], [base, branch])
    assert "WARNING" in compared_pythons.legend(["a/python", "b/python"], [base, base])
