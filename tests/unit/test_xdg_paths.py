"""Where sgwatch keeps its files: the XDG variables when set, else the documented defaults."""

from pathlib import Path

import pytest

from sgwatch.config import default_path
from sgwatch.control import catalog_cache
from sgwatch.control.history import default_folder

VARS = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def places() -> tuple[Path, Path, Path]:
    return default_path(), default_folder(), catalog_cache.folder()


def test_the_xdg_variables_decide_where_files_go(tmp_path, monkeypatch):
    for var in VARS:
        monkeypatch.setenv(var, str(tmp_path / var))
    assert places() == (
        tmp_path / "XDG_CONFIG_HOME/sgwatch/config.toml",
        tmp_path / "XDG_STATE_HOME/sgwatch/history",
        tmp_path / "XDG_CACHE_HOME/sgwatch/catalogs",
    )


@pytest.mark.parametrize("unset", ["absent", "empty"])
def test_without_them_the_home_folder_defaults(tmp_path, monkeypatch, unset):
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in VARS:
        if unset == "absent":
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, "")
    assert places() == (
        tmp_path / ".config/sgwatch/config.toml",
        tmp_path / ".local/state/sgwatch/history",
        tmp_path / ".cache/sgwatch/catalogs",
    )
