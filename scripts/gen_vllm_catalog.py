#!/usr/bin/env python3
"""Write the bundled vLLM flag catalog for a version, read from vLLM's source with `ast`.

    scripts/gen_vllm_catalog.py 0.11.0                  # pip download the wheel (no deps), read it
    scripts/gen_vllm_catalog.py --source WHEEL_OR_DIR [--version V]

Nothing of vLLM is imported (that needs torch). `vllm serve`'s parser is
`make_arg_parser` (vllm/entrypoints/openai/cli_args.py): `model_tag` and a few
hand-registered flags, one flag per FrontendArgs field, then
`AsyncEngineArgs.add_cli_args` (vllm/engine/arg_utils.py), whose calls name the
flags and take their kwargs from `get_kwargs(SomeConfig)[field]`. The kind of
such a flag follows vLLM's `_compute_kwargs` applied to the EngineArgs (or
FrontendArgs) field's annotation: a config dataclass is JSON, `bool` is
`--X/--no-X`, a `Literal` gives choices, `list[...]` takes several values.
Defaults are read where they are literals (or a config class field with a
literal default); otherwise they stay unknown (default_known: false). Help prose
is not copied.

Output: app/engines/vllm/catalog/vllm-VERSION.json, the shape that
app/engines/vllm/host_catalog.py prints from a live parser, one option per line.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parents[1] / "app" / "engines" / "vllm" / "catalog"
ARG_UTILS = "vllm/engine/arg_utils.py"
CLI_ARGS = "vllm/entrypoints/openai/cli_args.py"
# Config dataclasses: get_kwargs gives them a JSON-parsing type.
_DATACLASSES = re.compile(r"\w+Config|LoRAModulePath")
_UNKNOWN = object()


class Source:
    """vLLM's .py files, from a wheel or an unpacked tree."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    @classmethod
    def open(cls, path: Path) -> Source:
        if path.is_dir():
            return cls(
                {str(p.relative_to(path)): p.read_text() for p in path.rglob("vllm/**/*.py")}
            )
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if n.startswith("vllm/") and n.endswith(".py")]
            return cls({n: z.read(n).decode() for n in names})

    def tree(self, name: str) -> ast.Module:
        return ast.parse(self.files[name])

    def literal_aliases(self) -> dict[str, list[Any]]:
        """`Name = Literal[...]` anywhere under vllm/: the choices a type alias stands for."""
        out: dict[str, list[Any]] = {}
        for name, text in self.files.items():
            if "Literal[" not in text or not name.startswith("vllm/"):
                continue
            for node in ast.parse(text).body:
                target, value = _assignment(node)
                if target and isinstance(value, ast.Subscript) and _name(value.value) == "Literal":
                    with_choices = _literal_items(value)
                    if with_choices is not None:
                        out.setdefault(target, with_choices)
        return out

    def config_defaults(self) -> dict[str, Any]:
        """`Class.field` -> its literal default, for the config classes under vllm/config."""
        out: dict[str, Any] = {}
        for name, text in self.files.items():
            if not name.startswith("vllm/config/"):
                continue
            for node in ast.parse(text).body:
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            value = _literal(item.value) if item.value is not None else _UNKNOWN
                            if value is not _UNKNOWN:
                                out[f"{node.name}.{item.target.id}"] = value
        return out


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return _name(node.targets[0]), node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _name(node.target), node.value
    return None, None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literal(node: ast.expr | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else _UNKNOWN
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _literal_items(sub: ast.Subscript) -> list[Any] | None:
    items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    values = [_literal(i) for i in items]
    return None if any(v is _UNKNOWN for v in values) else values


class Fields:
    """A dataclass's annotated fields: name -> (annotation source, default)."""

    def __init__(self, cls: ast.ClassDef, defaults: dict[str, Any]) -> None:
        self.fields: dict[str, tuple[ast.expr, Any]] = {}
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.fields[item.target.id] = (item.annotation, _default(item.value, defaults))


def _default(node: ast.expr | None, defaults: dict[str, Any]) -> Any:
    if node is None:
        return _UNKNOWN
    value = _literal(node)
    if value is not _UNKNOWN:
        return value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return defaults.get(f"{node.value.id}.{node.attr}", _UNKNOWN)
    if isinstance(node, ast.Call) and _name(node.func) == "field":
        for kw in node.keywords:
            if kw.arg == "default_factory" and isinstance(kw.value, ast.Lambda):
                return _literal(kw.value.body)
    return _UNKNOWN


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


# -- one option ---------------------------------------------------------------------


def from_annotation(
    names: list[str], dest: str, ann: ast.expr, default: Any, aliases: dict[str, list[Any]]
) -> dict[str, Any]:
    """What `get_kwargs` makes of a field, in the catalog's terms (the order of its rules)."""
    members = _members(ann)
    heads = {_head(m) for m in members}
    opt: dict[str, Any] = {"names": names, "dest": dest}
    literal = [m for m in members if _head(m) == "Literal" or _head(m) in aliases]
    if any(_DATACLASSES.fullmatch(h or "") for h in heads):
        opt.update(kind="value", type="json")
    elif "bool" in heads:
        opt["kind"] = "boolean_optional"
    elif literal:
        choices = _choices(literal, aliases)
        typ = "int" if choices and all(isinstance(c, int) for c in choices) else "str"
        if "str" in heads:  # vLLM then shows them as a metavar, any string passes
            opt.update(kind="value", type=typ)
        else:
            none = ["None"] if "None" in heads else []
            opt.update(kind="choice", type=typ, choices=[*sorted(choices, key=str), *none])
    elif heads & {"tuple", "list", "set"}:
        seq = next(m for m in members if _head(m) in ("tuple", "list", "set"))
        elem = _head(_members(seq.slice)[0]) if isinstance(seq, ast.Subscript) else "str"
        if elem in aliases or elem == "Literal":
            choices = _choices(_members(seq.slice), aliases)
            opt.update(kind="choice", type="str", choices=sorted(choices, key=str))
        else:
            opt.update(kind="value", type={"int": "int", "float": "float"}.get(elem or "", "str"))
        opt["nargs"] = "+"
    elif "int" in heads:
        opt.update(kind="value", type="int")
    elif "float" in heads:
        opt.update(kind="value", type="float")
    elif "dict" in heads:
        opt.update(kind="value", type="json")
    else:
        opt.update(kind="value", type="str")
    _set_default(opt, default)
    return opt


def _members(ann: ast.expr) -> list[ast.expr]:
    """The top-level members of a union (`A | B`, `Optional[A]`, `Union[A, B]`)."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _members(ann.left) + _members(ann.right)
    if isinstance(ann, ast.Subscript) and _head(ann) in ("Optional", "Union"):
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [m for i in items for m in _members(i)] + (
            [ast.Constant(None)] if _head(ann) == "Optional" else []
        )
    if isinstance(ann, ast.Subscript) and _head(ann) == "Annotated":
        first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
        return _members(first)
    return [ann]


_TYPING = {"Dict": "dict", "List": "list", "Tuple": "tuple", "Set": "set", "Type": "type"}


def _head(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    name = _name(node.value) if isinstance(node, ast.Subscript) else _name(node)
    return _TYPING.get(name or "", name)


def _choices(members: list[ast.expr], aliases: dict[str, list[Any]]) -> list[Any]:
    out: list[Any] = []
    for node in members:
        if isinstance(node, ast.Subscript) and _head(node) == "Literal":
            out += _literal_items(node) or []
        elif _head(node) in aliases:
            out += aliases[_head(node) or ""]
    return list(dict.fromkeys(out))


def _set_default(opt: dict[str, Any], default: Any) -> None:
    if default is _UNKNOWN:
        opt["default_known"] = False
    elif default is not None:
        opt["default"] = default


def explicit(names: list[str], call: ast.Call) -> dict[str, Any]:
    """An add_argument call that spells its own kwargs."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    action = kw.get("action")
    action_name = (
        _literal(action) if isinstance(action, ast.Constant) else _name(action) if action else None
    )
    dest = names[0].lstrip("-").replace("-", "_")
    opt: dict[str, Any] = {"names": names, "dest": dest}
    if action_name == "store_true":
        opt["kind"] = "store_true"
    elif action_name == "BooleanOptionalAction":
        opt["kind"] = "boolean_optional"
    else:
        typ = _name(kw["type"]) if "type" in kw else "str"
        opt.update(
            kind="value", type={"int": "int", "float": "float", "bool": "bool"}.get(typ, "str")
        )
        nargs = _literal(kw["nargs"]) if "nargs" in kw else _UNKNOWN
        if nargs is not _UNKNOWN:
            opt["nargs"] = nargs
        const = _literal(kw["const"]) if "const" in kw else _UNKNOWN
        if const is not _UNKNOWN:
            opt["const"] = const
    if "default" in kw:
        _set_default(opt, _literal(kw["default"]))
    if _literal(kw.get("deprecated")) is True:
        opt["deprecated"] = True
    return opt


# -- the parser -------------------------------------------------------------------


def read(src: Source) -> list[dict[str, Any]]:
    aliases = src.literal_aliases()
    defaults = src.config_defaults()
    engine_tree, cli_tree = src.tree(ARG_UTILS), src.tree(CLI_ARGS)
    engine = Fields(_class(engine_tree, "EngineArgs"), defaults)
    engine.fields.update(Fields(_class(engine_tree, "AsyncEngineArgs"), defaults).fields)
    frontend = Fields(_class(cli_tree, "FrontendArgs"), defaults)
    options: list[dict[str, Any]] = []
    make = next(
        n for n in cli_tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_arg_parser"
    )
    options += _calls(make, engine, aliases)
    for field, (ann, default) in frontend.fields.items():
        opt = from_annotation([f"--{field.replace('_', '-')}"], field, ann, default, aliases)
        if field in ("allowed_origins", "allowed_methods", "allowed_headers"):
            opt.update(type="json")  # FrontendArgs.add_cli_args: json.loads, no nargs
            opt.pop("nargs", None)
        if field == "middleware":
            opt.pop("nargs", None)  # action="append"
        options.append(opt)
    for cls in ("EngineArgs", "AsyncEngineArgs"):
        options += _calls(_method(_class(engine_tree, cls), "add_cli_args"), engine, aliases)
    return [o for o in options if o["names"] and o["names"][0].startswith("-")]


def _calls(
    fn: ast.FunctionDef, fields: Fields, aliases: dict[str, list[Any]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for node in fn.body:
        out += _statement(node, fields, aliases)
    return out


def _statement(
    node: ast.stmt, fields: Fields, aliases: dict[str, list[Any]]
) -> list[dict[str, Any]]:
    if isinstance(node, ast.If):  # `if not ("serve" in argv and "--help" in argv)`: --model
        return [o for n in node.body for o in _statement(n, fields, aliases)]
    if isinstance(node, ast.For) and isinstance(node.iter, ast.List):  # deprecated loops
        out = []
        for elt in node.iter.elts:
            values = _literal(elt)
            if isinstance(values, tuple) and isinstance(values[0], str):
                opt = {
                    "names": [values[0]],
                    "dest": values[0][2:].replace("-", "_"),
                    "kind": "value",
                    "type": "str",
                    "deprecated": True,
                }
                out.append(opt)
        return out
    call = node.value if isinstance(node, ast.Expr) else None
    if not isinstance(call, ast.Call) or _name(call.func) != "add_argument":
        return []
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names:
        return []
    if not names[0].startswith("-"):
        return [{"names": names}]  # model_tag: positional
    spread = next((k.value for k in call.keywords if k.arg is None), None)
    if spread is None:
        return [explicit(names, call)]
    dest = names[0].lstrip("-").replace("-", "_")
    ann, default = fields.fields.get(dest, (ast.Name("str"), _UNKNOWN))
    opt = from_annotation(names, dest, ann, default, aliases)
    for k in call.keywords:
        if k.arg == "deprecated" and _literal(k.value) is True:
            opt["deprecated"] = True
        if k.arg == "choices":  # a list only the live parser knows (reasoning parsers)
            opt.update(kind="value", type="str")
    return [opt]


# -- command line -------------------------------------------------------------------


def download(version: str, folder: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            f"vllm=={version}",
            "--no-deps",
            "-d",
            str(folder),
        ],
        check=True,
    )
    return next(folder.glob("vllm-*.whl"))


def write(version: str, origin: str, options: list[dict[str, Any]]) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"vllm-{version}.json"
    body = ",\n".join("    " + json.dumps(o, sort_keys=False) for o in options)
    head = json.dumps({"engine": "vllm", "version": version, "origin": origin})[:-1]
    path.write_text(f'{head}, "options": [\n{body}\n]}}\n')
    return path


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("versions", nargs="*")
    p.add_argument("--source", type=Path)
    p.add_argument("--version")
    ns = p.parse_args(argv)
    jobs: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if ns.source:
            jobs.append((ns.version or "unknown", ns.source))
        for v in ns.versions:
            jobs.append((v, download(v, Path(tmp) / v)))
        for version, path in jobs:
            options = read(Source.open(path))
            out = write(version, path.name, options)
            print(f"{out}: {len(options)} options")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
