"""The wheel a user installs holds the package under its real name, with its data."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_wheel(folder: Path, env: dict[str, str] | None = None) -> set[str]:
    """Build from a copy of the sources: pip builds in the tree it is given, and
    a build/ folder left there would hand over what an earlier build compiled."""
    src = folder / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".*", "build", "dist", "*.egg-info", "*.so", "__pycache__", "snapshot_report.html"
        ),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(folder),
            str(src),
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    (wheel,) = folder.glob("sgwatch-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_wheel_builds_without_a_c_compiler_and_is_pure_python(tmp_path):
    names = build_wheel(tmp_path, env={**os.environ, "CC": "/bin/false"})
    assert not any(n.endswith((".so", ".pyd", ".c")) for n in names)
    wheel_meta = next(n for n in names if n.endswith("/WHEEL"))
    (wheel,) = tmp_path.glob("sgwatch-*.whl")
    assert "Root-Is-Purelib: true" in zipfile.ZipFile(wheel).read(wheel_meta).decode()


def test_wheel_ships_data_files_and_no_top_level_app(tmp_path):
    names = build_wheel(tmp_path)
    (wheel,) = tmp_path.glob("sgwatch-*.whl")
    assert not any(n.startswith("app/") for n in names)
    assert "sgwatch/__init__.py" in names and "sgwatch/themes/__init__.py" in names
    # Every data file of the source tree (themes, .tcss, sample logs) is in the wheel.
    for src, pkg in (("app", "sgwatch"), ("themes", "sgwatch/themes")):
        for path in (ROOT / src).rglob("*"):
            if path.suffix in (".toml", ".tcss", ".log", ".json"):
                assert f"{pkg}/{path.relative_to(ROOT / src).as_posix()}" in names, path
    assert any(n.startswith("sgwatch/themes/") and n.endswith(".toml") for n in names)
    assert "sgwatch/samples/qwen27b-tp2-warmup.log" in names
    assert "sgwatch/engines/sglang/catalog/sglang-0.5.23.json" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "sgwatch = sgwatch.__main__:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
