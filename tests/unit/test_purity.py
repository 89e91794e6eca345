"""The pure core never reaches for the UI, SSH or the outside world."""

import ast
import subprocess
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
UI_AND_SSH = ("textual", "asyncssh")
# What pure code must not import itself (libraries may use them underneath).
FORBIDDEN = (*UI_AND_SSH, "socket", "subprocess", "asyncio", "os", "shutil")
PURE_PACKAGES = ("core", "engines")
# Libraries pure code may use: they compute, they do no I/O of their own.
PURE_LIBRARIES = ("pydantic", "prometheus_client", "packaging")
# Imported inside a function, so importing the module loads none of it: a program sent
# to the host imports the engine there.
LAZY = {
    "engines/sglang/host_catalog.py": ("sglang.srt.server_args", "sglang.srt.arg_groups.arg_utils"),
}
# The registry loads plug-in engines named by the environment (SGWATCH_ENGINES): the one
# module of engines/ that reads it.
ENVIRONMENT = {"engines/__init__.py": ("os",)}


def test_importing_core_and_engines_loads_no_ui_or_ssh():
    # A meta-path hook records every attempt, so the test means something even
    # where textual/asyncssh are not installed.
    modules = [
        "sgwatch." + ".".join(p.relative_to(APP).with_suffix("").parts).removesuffix(".__init__")
        for pkg in PURE_PACKAGES
        for p in (APP / pkg).rglob("*.py")
    ]
    code = f"""
import sys
tried = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {UI_AND_SSH!r}:
            tried.append(name)
        return None
sys.meta_path.insert(0, Spy())
import importlib
for m in {modules!r}:
    importlib.import_module(m)
print(sorted(set(tried)))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout
    assert len(modules) >= 8


def test_pure_modules_import_only_stdlib_pydantic_and_each_other():
    for pkg in PURE_PACKAGES:
        for path in (APP / pkg).rglob("*.py"):
            lazy = LAZY.get(str(path.relative_to(APP)), ())
            allowed = ENVIRONMENT.get(str(path.relative_to(APP)), ())
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                for name in names:
                    if name in lazy and node.col_offset > 0:  # in a function, not at import
                        continue
                    if name in allowed:
                        continue
                    top = name.split(".")[0]
                    assert top not in FORBIDDEN, f"{path.name} imports {name}"
                    if top == "sgwatch":
                        assert name.split(".")[1] in PURE_PACKAGES, f"{path.name} imports {name}"
                    else:
                        assert top in sys.stdlib_module_names or top in PURE_LIBRARIES, (
                            f"{path.name} imports {name}"
                        )


# How a module would reach a file: core computes on what it is given and reads none
# (the programs sent to a host are read by remote/hostprogram.py, catalogs by engines/).
FILE_MODULES = ("pathlib", "importlib.resources", "io", "tempfile", "glob", "fileinput", "mmap")
FILE_CALLS = ("open", "read_text", "read_bytes", "write_text", "write_bytes", "iterdir")


def file_access(root: Path) -> list[str]:
    """Each import of a file module and each call that opens, reads or writes a file."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                names = []
            found += [f"{where} imports {n}" for n in names if n.startswith(FILE_MODULES)]
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                if name in FILE_CALLS:
                    found.append(f"{where}:{node.lineno} calls {name}")
    return found


def test_core_reads_no_files():
    assert file_access(APP / "core") == []


def test_a_core_module_that_reads_a_file_is_caught(tmp_path):
    (tmp_path / "reads.py").write_text("def f(p):\n    with open(p) as fh:\n        return fh\n")
    (tmp_path / "loads.py").write_text("from importlib.resources import files\n")
    (tmp_path / "path.py").write_text("def g(p):\n    return p.read_text()\n")
    assert file_access(tmp_path) == [
        "loads.py imports importlib.resources",
        "path.py:2 calls read_text",
        "reads.py:2 calls open",
    ]
