"""Every markdown file a comment or docstring names is in the repository.

A note kept elsewhere cannot be followed by whoever picks the project up: the design
lives in docs/design/, and comments cite it there. A reference resolves against the
repository root, against the citing file's folder, or, for a bare name, against any
file of that name in the repository.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("app", "tests", "bench", "scripts")
SKIPPED_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}
# Data, not prose: log fixtures, snapshots, catalogs.
DATA_SUFFIXES = {".log", ".json", ".svg", ".tsv", ".csv", ".jsonl", ".gz", ".pyc"}
MARKDOWN = re.compile(r"(?<![\w/.-])((?:\.{1,2}/)?[\w-][\w./-]*\.md)(?![\w])")


def files_under(root: Path, folder: str):
    for path in sorted((root / folder).rglob("*")):
        skipped = SKIPPED_DIRS.intersection(path.relative_to(root).parts)
        if path.is_file() and not skipped and path.suffix not in DATA_SUFFIXES:
            yield path


def python_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python module."""
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                out.append((node.body[0].lineno, doc))
    return sorted(out)


def hash_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of the `#` comments of a shell script, a TOML file or the like."""
    return [
        (n, line[line.index("#") :]) for n, line in enumerate(source.splitlines(), 1) if "#" in line
    ]


def prose(path: Path) -> list[tuple[int, str]]:
    try:
        source = path.read_text()
    except (UnicodeDecodeError, OSError):
        return []  # not text
    if path.suffix == ".py":
        return python_prose(source)
    return hash_comments(source)


def markdown_names(root: Path) -> set[str]:
    names = set()
    for _folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        names.update(f for f in files if f.endswith(".md"))
    return names


def resolves(root: Path, citing: Path, ref: str, names: set[str]) -> bool:
    if "/" not in ref:
        return ref in names
    return any((base / ref).is_file() for base in (root, citing.parent))


def dangling(root: Path, folders=SCANNED) -> list[str]:
    """`file:line: reference` for each cited markdown file the repository lacks."""
    names = markdown_names(root)
    found = []
    for folder in folders:
        if not (root / folder).is_dir():
            continue
        for path in files_under(root, folder):
            for line, text in prose(path):
                for ref in MARKDOWN.findall(text):
                    if not resolves(root, path, ref, names):
                        found.append(f"{path.relative_to(root)}:{line}: {ref}")
    return found


def test_every_markdown_file_a_comment_cites_is_in_the_repository():
    assert dangling(ROOT) == []


def test_a_citation_of_a_file_outside_the_repository_is_caught(tmp_path: Path):
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "ssh.md").write_text("# SSH\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "mod.py").write_text(
        '"""The transport (docs/design/ssh.md; the rest in DESIGN.md)."""\n'
        "\n"
        "# The details: shared engines.md, and ssh.md.\n"
        'NOT_A_COMMENT = "nowhere.md"\n'
        "\n"
        "\n"
        "def f():\n"
        '    """See ../notes/elsewhere.md."""\n'
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data.toml").write_text('source = "x"  # from fleet-k8s.md\n')
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test").write_text("#!/bin/sh\n# docs/design/ssh.md says why\n")

    assert dangling(tmp_path) == [
        "app/mod.py:1: DESIGN.md",
        "app/mod.py:3: engines.md",
        "app/mod.py:8: ../notes/elsewhere.md",
        "tests/data.toml:1: fleet-k8s.md",
    ]
