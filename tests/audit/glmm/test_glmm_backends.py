"""GLMM backend registry and the optional lme4 backends."""

from __future__ import annotations

import builtins
import shutil

import pandas as pd
import pytest

from audit.errors import MissingDependencyError
from audit.glmm import BACKENDS, fit_crossed_glmm
from audit.glmm import rscript


def test_registry_names():
    assert BACKENDS.names() == ["lme4", "native"]


def test_lme4_backend_without_pymer4_says_how_to_install(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("pymer4"):
            raise ImportError("No module named 'pymer4'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingDependencyError, match=r"judge-audit\[lme4\]"):
        fit_crossed_glmm([0, 1, 1, 0], {"g": ["a", "b", "a", "b"]}, backend="lme4")


def test_rscript_helper_without_r_raises_missing_dependency(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert not rscript.rscript_available()
    with pytest.raises(MissingDependencyError, match="Rscript"):
        rscript.run_glmer(pd.DataFrame({"y": [0, 1]}), "y ~ 1")


def test_reference_script_is_the_packaged_one():
    from tests.audit.glmm.reference_cases import REFERENCE

    assert (REFERENCE / "fit_glmer.R").read_text() == rscript.GLMER_SCRIPT.read_text()
