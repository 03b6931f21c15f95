"""Helpers shared by the test modules (``from tests.conftest import ...``) and fixtures."""

import gc
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
from amaranth.hdl import UnusedElaboratable

ROOT = Path(__file__).resolve().parent.parent
# The presets a user saved (`topsort-hdl explore --save`) are not the suite's: every test sees
# the built-in ones alone, unless it points TOPSORT_PRESETS somewhere itself.
os.environ["TOPSORT_PRESETS"] = tempfile.mkdtemp(prefix="topsort-presets-")


@pytest.fixture
def install_package(tmp_path):
    """``install_package(deps=False)``: ``pip install .`` (not editable) of a copy of this
    checkout into a fresh venv under ``tmp_path``; returns the venv's ``bin`` directory. With
    ``deps``, the dependencies too, at the versions of ``requirements/pinned.txt``."""
    def install(deps=False):
        source = tmp_path / "source"
        source.mkdir()
        for name in ("pyproject.toml", "setup.py", "README.md"):
            shutil.copy(ROOT / name, source)
        for name in ("topsort_hdl", "platforms"):
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        subprocess.run([sys.executable, "-m", "venv", tmp_path / "venv"], check=True)
        bin_dir = tmp_path / "venv" / "bin"
        options = (["-c", ROOT / "requirements" / "pinned.txt"] if deps else ["--no-deps"])
        subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", *options, source],
                       check=True, capture_output=True)
        return bin_dir
    return install


def constructor_error(build):
    """Return ``(type, message)`` of the error ``build()`` raises.

    The half-built component is collected here, without the "created but never used" warning
    it would otherwise give during some later test.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            build()
        except (TypeError, ValueError) as error:
            caught = type(error), str(error)
        else:
            pytest.fail("no error raised")
        gc.collect()
    return caught
