"""What `pip install clients/python` installs: the payguard package, with this directory's README.md as its
description (the issue promises an installable package with its own README). Checked on the installed
distribution the suite imports."""

import importlib.metadata
import re
from pathlib import Path

import payguard

HERE = Path(__file__).parents[1]


def test_installed_distribution_carries_the_readme():
    # pyproject.toml read for three keys (tomllib is 3.11+; the package supports 3.10).
    toml = (HERE / "pyproject.toml").read_text()
    project = {k: re.search(rf'^{k} = "([^"]+)"', toml, re.M).group(1) for k in ("name", "version", "readme")}
    assert project["readme"] == "README.md"
    readme = (HERE / project["readme"]).read_text()
    assert readme.startswith("# payguard-guard")
    meta = importlib.metadata.metadata(project["name"])
    assert meta["Version"] == project["version"] == payguard.__version__
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == readme.strip()


def test_installed_distribution_ships_every_module():
    files = {str(f) for f in importlib.metadata.files("payguard-guard") or []}
    modules = {p.name for p in (HERE / "src" / "payguard").glob("*.py")}
    installed_from_source = Path(payguard.__file__).resolve().parent == (HERE / "src" / "payguard").resolve()
    if not installed_from_source:  # a regular (not editable) install copies every module
        assert {m for m in modules if f"payguard/{m}" in files} == modules


def test_installed_package_is_typed_and_passes_mypy_strict():
    """py.typed is shipped, so a user's type checker reads the package's annotations, and they pass --strict."""
    import os
    import subprocess
    import sys

    files = {str(f) for f in importlib.metadata.files("payguard-guard") or []}
    assert any(f.endswith("payguard/py.typed") for f in files) or (Path(payguard.__file__).parent / "py.typed").exists()
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, "-p", "payguard"],
                       capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, r.stdout + r.stderr
