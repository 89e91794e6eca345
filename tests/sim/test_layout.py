"""The simulator's packages: what both engines share knows neither, and neither
simulated engine leans on the other."""

import ast
from pathlib import Path

SIM = Path(__file__).resolve().parents[2] / "app" / "sim"
# package -> the simulator's packages it must not import
APART = {"common": {"sglang", "vllm"}, "sglang": {"vllm"}, "vllm": {"sglang"}}


def sim_imports(source: str) -> set[str]:
    """The sgwatch.sim sub-packages `source` imports (`sgwatch.sim.X...` -> X)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["sgwatch", "sim"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_common_knows_no_engine_and_the_engines_stay_apart():
    checked, crossings = 0, []
    for package, banned in APART.items():
        for path in sorted((SIM / package).glob("*.py")):
            checked += 1
            found = sim_imports(path.read_text()) & banned
            crossings += [f"{package}/{path.name} imports sim.{b}" for b in sorted(found)]
    assert checked >= 25  # the three packages are there for the rule to guard
    assert crossings == []


def test_each_way_of_importing_is_seen():
    for code in (
        "from sgwatch.sim.sglang.args import parse",
        "from sgwatch.sim import sglang",
        "import sgwatch.sim.sglang.args",
    ):
        assert "sglang" in sim_imports(code), code
    assert sim_imports("from sgwatch.sim.common.clock import SimClock") == {"common"}
