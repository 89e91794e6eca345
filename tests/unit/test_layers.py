"""Imports only point down: cli -> ui -> control -> live -> sim -> engines/remote ->
transport/config -> core. A module may import its own package and any package below."""

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
# Each top-level package of sgwatch and its rank: higher ranks build on lower ones.
RANK = {
    "core": 0,
    "themes": 0,
    "samples": 0,
    "config": 1,
    "transport": 1,
    "engines": 2,
    "remote": 2,
    "sim": 3,
    "live": 4,
    "control": 5,
    "ui": 6,
    "cli": 7,
    "__main__": 8,
}


def imports(path: Path) -> list[str]:
    """The sgwatch modules `path` imports, at the top or inside a function."""
    found = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "sgwatch":
                names = [f"sgwatch.{a.name}" for a in node.names]
        else:
            continue
        found += [n for n in names if n.startswith("sgwatch.")]
    return found


def package_of(path: Path, root: Path = APP) -> str:
    return path.relative_to(root).parts[0].removesuffix(".py")


def upward(root: Path = APP) -> list[str]:
    """Every import under `root` that points up or sideways to a higher rank."""
    wrong = []
    for path in root.rglob("*.py"):
        here = package_of(path, root)
        if here == "__init__":
            continue
        for name in imports(path):
            there = name.split(".")[1]
            if there == "__version__" or there == here:
                continue
            if RANK.get(there, -1) >= RANK[here]:
                wrong.append(f"{path.relative_to(root)} imports {name}")
    return wrong


def test_every_package_has_a_rank():
    packages = {package_of(p) for p in APP.rglob("*.py")} - {"__init__"}
    assert packages - set(RANK) == set(), "give the new package a rank"


def test_imports_only_point_down():
    assert upward() == []


def test_an_upward_import_is_caught(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "bad.py").write_text("from sgwatch.ui.app import SgwatchApp\n")
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "fine.py").write_text("def f():\n    from sgwatch.core import bad\n")
    assert upward(tmp_path) == ["core/bad.py imports sgwatch.ui.app"]
