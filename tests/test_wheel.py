"""The built wheel is complete: installed on its own, it runs the command-line reproduction.

The wheel is built from a copy of the files the package declares (``pyproject.toml``,
``README.md``, ``LICENSE``, ``delight_gym/``), installed *not* editable into a fresh virtual
environment, and run from a directory outside the source tree.

The environment reuses this interpreter's third-party packages (torch, numpy, Gymnasium, ...)
through a plain path entry, not through ``--system-site-packages``: the system site-packages
holds the editable install of ``delight_gym``, whose import hook (run from a ``.pth`` file)
would fill any module missing from the wheel from the source tree and hide the gap. A path
entry in a ``.pth`` file adds the directory to ``sys.path`` without running the ``.pth``
files inside it, so that hook never loads. The test then checks that every ``delight_gym``
module the run imported lives inside the virtual environment.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "delight_gym"
# ``python -m build`` makes the sdist, then the wheel *from the sdist*, so a file missing from
# the sdist fails too; no isolation, so no download of the build backend.
BUILD = (sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel")


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from a copy of the declared sources (the working tree stays untouched)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / PACKAGE, source / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    out = tmp_path_factory.mktemp("dist")
    _run([*BUILD, "--outdir", str(out), str(source)], cwd=source)
    (built,) = out.glob("delight_gym-*.whl")
    (sdist,) = out.glob("delight_gym-*.tar.gz")
    # The metadata PyPI would show: README renders, license and classifiers are well formed.
    _run([sys.executable, "-m", "twine", "check", "--strict", str(built), str(sdist)], cwd=out)
    return built


@pytest.fixture(scope="module")
def venv_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed (no dependencies resolved)."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(home)
    python = home / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=home
    ).strip()
    # Third-party dependencies from this interpreter, without running its .pth files.
    (Path(purelib) / "_test_wheel_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], home)
    return python


def _clean_env(venv_python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{venv_python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def test_wheel_contains_every_module_and_the_type_marker(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    sources = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / PACKAGE).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert sources, "no package sources found"
    assert sources <= names, f"missing from the wheel: {sorted(sources - names)}"
    assert f"{PACKAGE}/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    (metadata,) = (n for n in names if n.endswith(".dist-info/METADATA"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(metadata).decode("utf-8")
    assert "License-Expression: Apache-2.0" in text


def test_installed_wheel_reproduces_a_figure_outside_the_source_tree(venv_python, tmp_path):
    work = tmp_path / "elsewhere"  # not inside the repository
    work.mkdir()
    assert ROOT not in work.resolve().parents
    env = _clean_env(venv_python)
    home = venv_python.parents[1].resolve()

    # The package imported by the venv's interpreter is the wheel's copy, with every module.
    probe = (
        "import importlib, pkgutil, delight_gym\n"
        "for m in pkgutil.walk_packages(delight_gym.__path__, 'delight_gym.'):\n"
        "    importlib.import_module(m.name)\n"
        "import sys\n"
        "for name, mod in sorted(sys.modules.items()):\n"
        "    if name.split('.')[0] == 'delight_gym' and getattr(mod, '__file__', None):\n"
        "        print(mod.__file__)\n"
    )
    files = _run([str(venv_python), "-c", probe], cwd=work, env=env).split()
    assert files, "no delight_gym module was imported"
    outside = [f for f in files if home not in Path(f).resolve().parents]
    assert not outside, f"modules loaded from outside the virtual environment: {outside}"

    # The console script the wheel installs runs the quick reproduction end to end.
    script = venv_python.parent / "delight-gym"
    assert script.exists()
    out = work / "results"
    _run(
        [str(script), "reproduce", "bernoulli-arms", "--quick", "--no-progress", "--out", str(out)],
        cwd=work,
        env=env,
    )
    with open(out / "summary.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows, "empty summary"
    assert {r["agent"] for r in rows} >= {"delight", "thompson", "egreedy"}
    for row in rows:
        assert float(row["regret_mean"]) >= 0.0
    assert (out / "bernoulli-arms.png").stat().st_size > 0
    assert (out / "curves.csv").stat().st_size > 0
