"""Nothing outside engines/ and sim/ names an engine: a second one plugs in there alone."""

import ast
from pathlib import Path

import sgwatch.engines as engines

APP = Path(__file__).resolve().parents[2] / "app"
OWNERS = ("engines", "sim")  # the registry and the engine packages; the simulator's adapter
# The demo and `sgwatch sim` are the simulator's own commands: wiring, not engine knowledge.
ALLOWED = {("cli", "sgwatch.sim.demo"), ("cli", "sgwatch.sim.main")}


NEUTRAL = {"shapes"}  # a package under engines/ that is no engine: the shared shapes


def engine_packages() -> set[str]:
    packages = {p.name for p in (APP / "engines").iterdir() if (p / "__init__.py").exists()}
    return packages - NEUTRAL


def imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [
                f"{node.module}.{a.name}" for a in node.names
            ]  # from sgwatch.engines import sglang
    return names


def forbidden(name: str, folder: str) -> bool:
    parts = name.split(".")
    if parts[0] != "sgwatch" or len(parts) < 2:
        return False
    if any(f == folder and (name == a or name.startswith(a + ".")) for f, a in ALLOWED):
        return False
    if parts[1] == "sim":
        return True
    return parts[1] == "engines" and len(parts) > 2 and parts[2] in engine_packages()


def test_only_engines_and_sim_import_an_engine_or_the_simulator():
    assert engine_packages() >= {"sglang"}  # the rule below has something to guard
    found = []
    for path in APP.rglob("*.py"):
        folder = path.relative_to(APP).parts[0]
        if folder in OWNERS:
            continue
        for name in imported(ast.parse(path.read_text(), str(path))):
            if forbidden(name, folder):
                found.append(f"{path.relative_to(APP)}: {name}")
    assert found == []


def test_the_rule_catches_each_way_of_naming_an_engine():
    for code in (
        "import sgwatch.engines.sglang.parse",
        "from sgwatch.engines.sglang.flags import Catalog",
        "from sgwatch.engines import sglang",
        "from sgwatch.sim.engine import ENGINE",
        "import sgwatch.sim",
    ):
        assert any(forbidden(n, "ui") for n in imported(ast.parse(code))), code
    assert not any(
        forbidden(n, "ui") for n in imported(ast.parse("from sgwatch.engines import by_name"))
    )
    assert not any(
        forbidden(n, "cli") for n in imported(ast.parse("from sgwatch.sim.demo import start_demo"))
    )


def test_every_engine_is_in_the_registry_and_found_by_name():
    names = [e.name for e in engines.all_engines()]
    assert len(set(names)) == len(names)
    assert {"sglang", "sim"} <= set(names)
    for name in names:
        assert engines.by_name(name).name == name
