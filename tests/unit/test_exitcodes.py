"""One exit-status table: every command returns its names, each --help ends with it,
and the README shows the same numbers and meanings."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from sgwatch.cli import exitcodes
from sgwatch.cli.dashboard_args import dashboard_parser
from sgwatch.cli.main import commands_parser

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "app" / "cli"
NAMES = {name for name, value in vars(exitcodes).items() if name.isupper() and type(value) is int}


def _literal_statuses(path: Path) -> list[str]:
    """`return 3`, `sys.exit(3)`, `SystemExit(3)` and `X = 3` for a status name: a
    number (or a name of its own) where the table's name belongs."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        values = []
        if isinstance(node, ast.Return) and node.value is not None:
            values = [node.value]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "SystemExit"):
            values = node.args
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and (t.id in NAMES or t.id.startswith("EXIT_"))
            for t in node.targets
        ):
            values = [node.value]
        if any(_number(v) for v in values):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def _number(value: ast.expr) -> bool:
    """An int literal, also as a branch of `a if c else b` or `a or b`."""
    if isinstance(value, ast.IfExp):
        return _number(value.body) or _number(value.orelse)
    if isinstance(value, ast.BoolOp):
        return any(_number(v) for v in value.values)
    return isinstance(value, ast.Constant) and type(value.value) is int


def test_commands_return_statuses_by_their_names_in_the_table():
    modules = [p for p in CLI.glob("*.py") if p.name != "exitcodes.py"]
    assert len(modules) >= 7
    assert [x for p in modules for x in _literal_statuses(p)] == []


def test_the_check_catches_a_bare_number(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nNO_SERVER = 4\ndef run(a):\n    sys.exit(3)\n    return a[1:] or 2\n"
        "def ok(a):\n    return a[1]\n"
    )
    assert len(_literal_statuses(bad)) == 3


# A constant that names a status: one of the table's names, or EXIT/STATUS/RC/CODE
# as a word of it (EXIT_NO_SERVER, TIMEOUT_STATUS, RC_FAILED).
_STATUS_NAME = re.compile(r"(^|_)(EXIT|STATUS|RC|RETURNCODE|CODE)(_|$)")


def _status_constants(path: Path) -> list[str]:
    """`NO_SERVER = 4`, `EXIT_TIMEOUT: int = 5`: an exit status defined as a number."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        named = any(
            isinstance(t, ast.Name) and (t.id in NAMES or _STATUS_NAME.search(t.id))
            for t in targets
        )
        if named and _number(value):
            found.append(f"{path.relative_to(path.parents[1])}:{node.lineno}")
    return found


def test_no_module_outside_the_table_defines_exit_statuses():
    modules = [p for p in (ROOT / "app").rglob("*.py") if p != CLI / "exitcodes.py"]
    assert len(modules) >= 100
    assert [x for p in modules for x in _status_constants(p)] == []
    assert len(_status_constants(CLI / "exitcodes.py")) == len(exitcodes.TABLE)


def test_the_check_catches_a_status_constant(tmp_path):
    bad = tmp_path / "pkg" / "bad.py"
    bad.parent.mkdir()
    bad.write_text(
        "NO_SERVER = 4\nEXIT_TIMEOUT: int = 5\nclass A:\n    RC_FAILED = 1 if x else 2\n"
        "TIMEOUT_S = 5\nCODES = 3\nexit_status = 2\n"
    )
    assert _status_constants(bad) == ["pkg/bad.py:1", "pkg/bad.py:2", "pkg/bad.py:4"]


def _helps() -> dict[str, str]:
    sub = next(a for a in commands_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {name: p.format_help() for name, p in sub.choices.items()}
    helps["dashboard"] = dashboard_parser().format_help()
    return helps


@pytest.mark.parametrize(
    "command", ["dashboard", "replay", "config", "wait", "events", "bench", "restart"]
)
def test_each_help_ends_with_the_table(command):
    text = _helps()[command]
    assert text.rstrip().endswith(exitcodes.epilog())
    for code, meaning in exitcodes.TABLE:  # one row a line, as the formatter keeps them
        assert f"\n  {code:<4} {meaning}\n" in text + "\n"


def test_the_readme_table_is_the_table():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Exit status", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", section, re.M)
    assert [(int(code), _plain(text)) for code, text in rows] == [
        (code, meaning) for code, meaning in exitcodes.TABLE
    ]


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")
