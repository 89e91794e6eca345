"""The wheel a user installs holds the package under its real name, with its data."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_data_files_and_no_top_level_app(tmp_path):
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
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("sgwatch-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
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
