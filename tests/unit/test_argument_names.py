"""No module outside an engine's folder reads that engine's argument names.

The run's settings are the engine's own (ServerState.args, handed back only to its
functions); everything else reads the typed identity (core/identity.py). Every name
an engine's bundled catalogs list (`dest`, SGLang's dataclass `field`, and each flag's
spellings) is looked for among the string literals of app/, outside
app/engines/<that engine>/ and the simulator (which imitates each engine's flags).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
IMITATORS = ("sim",)
# Names every engine and tool has, which say nothing about which engine runs.
GENERIC = {
    "host": "the address a server listens on, and the host sgwatch connects to",
    "port": "the port a server listens on, and SSH's",
    "config": "sgwatch's own config file and ssh_config's option",
    "model": "what every engine serves: the OpenAI request's field, the run identity's",
    "--config": "sgwatch's own flag for its config file",
    "--port": "every engine's server takes it (the port sgwatch talks to); `bench --port`",
}


def argument_names(app: Path) -> dict[str, set[str]]:
    """Each engine's folder name -> every argument name its bundled catalogs list."""
    names: dict[str, set[str]] = {}
    for path in sorted(app.glob("engines/*/catalog/*.json")):
        options = json.loads(path.read_text())["options"]
        found = names.setdefault(path.parent.parent.name, set())
        found.update(n for o in options for n in (o["dest"], o.get("field"), *o["names"]) if n)
    return names


def offences(app: Path, allowed: dict[str, str]) -> list[str]:
    """`file:line: 'name' (engine)` for each literal that is another engine's name."""
    names = argument_names(app)
    found = []
    for path in sorted(app.rglob("*.py")):
        parts = path.relative_to(app).parts
        if parts[0] in IMITATORS:
            continue
        home = parts[1] if parts[0] == "engines" and len(parts) > 2 else None
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            owners = sorted(e for e, known in names.items() if node.value in known)
            if owners and home not in owners and node.value not in allowed:
                where = f"{path.relative_to(app)}:{node.lineno}"
                found.append(f"{where}: {node.value!r} ({', '.join(owners)})")
    return found


def test_no_module_outside_an_engine_reads_its_argument_names():
    names = argument_names(APP)
    # The rule has something to guard: both engines' catalogs, and the names that
    # once leaked (the header, the summary, the roofline read SGLang's).
    assert {"tp_size", "model_path", "speculative_num_steps"} <= names["sglang"]
    assert {"tensor_parallel_size", "model"} <= names["vllm"]
    assert offences(APP, GENERIC) == []


def test_each_generic_name_is_needed():
    # An allowance no literal uses any more is stale: it would let the next one in.
    used = {o.split("'")[1] for o in offences(APP, {})}
    assert set(GENERIC) <= used


def test_the_rule_catches_a_name_read_outside_its_engine(tmp_path):
    app = tmp_path / "app"
    catalog = app / "engines" / "alpha" / "catalog"
    catalog.mkdir(parents=True)
    options = [
        {"names": ["--alpha-size", "-a"], "dest": "alpha_size"},
        {"names": ["--tensor-width"], "dest": "tensor_width", "field": "tw_size"},
        {"names": ["--port"], "dest": "port"},
    ]
    (catalog / "alpha-1.0.json").write_text(json.dumps({"options": options}))
    planted = {
        "engines/alpha/parse.py": 'SIZE = args.get("alpha_size")\nW = args["tw_size"]\n',
        "engines/beta/parse.py": 'SIZE = args.get("alpha_size")\n',
        "engines/shared.py": 'W = {"tensor_width": 1}\n',
        "ui/header.py": 'x = s.args["tw_size"]\nPORT = args.get("port")\n',
        "ui/picker.py": 'FLAGS = ("--alpha-size", "--port")\n',
        "sim/alpha.py": 'SIZE = args.get("alpha_size")\n',
    }
    for name, text in planted.items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(text)
    assert offences(app, {"port": "generic", "--port": "generic"}) == [
        "engines/beta/parse.py:1: 'alpha_size' (alpha)",
        "engines/shared.py:1: 'tensor_width' (alpha)",
        "ui/header.py:1: 'tw_size' (alpha)",
        "ui/picker.py:1: '--alpha-size' (alpha)",
    ]
    assert "ui/header.py:2: 'port' (alpha)" in offences(app, {})
