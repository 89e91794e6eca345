#!/usr/bin/env python3
"""Write the bundled SGLang flag catalog for a version, read from SGLang's source with `ast`.

    scripts/gen_sglang_catalog.py 0.5.23 0.5.10          # pip download each (no deps), read it
    scripts/gen_sglang_catalog.py --source WHEEL_OR_SDIST_OR_DIR [--version V]

Nothing of SGLang is imported (that needs torch): the options are rebuilt from
the source the way SGLang's parser builds them, in one of two shapes:
  - up to 0.5.x: `ServerArgs.add_cli_args` calls `parser.add_argument(...)`;
    defaults name dataclass fields (`default=ServerArgs.port`);
  - 0.5.2x: `add_cli_args_from_dataclass` turns annotated msgspec fields
    (`A[T, Arg(...)]` in srt/arg_groups/fields/*.py) into options, plus a few
    hand-registered ones. The type rules below mirror `arg_groups/arg_utils.py`.
Choices and defaults are evaluated from literals, module constants and simple
helpers; what cannot be evaluated statically stays unknown (choices: null,
default_known: false) rather than guessed. Help prose is not copied.

Output: app/engines/sglang/catalog/sglang-VERSION.json, the shape that
app/engines/sglang/host_catalog.py prints from a live parser, one option per line
(both write an option through app/engines/host_option.py).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from sgwatch.engines.host_option import jsonable, option_json

OUT_DIR = Path(__file__).resolve().parents[1] / "app" / "engines" / "sglang" / "catalog"
SERVER_ARGS = "sglang.srt.server_args"
_FLAG_IN_TEXT = re.compile(r"--[a-z0-9][a-z0-9-]*")
# `type=` callables -> the catalog's value types (others keep their own name).
_TYPES = {"int": "int", "float": "float", "str": "str", "nullable_str": "str", "loads": "json"}


class Unresolved(Exception):
    """An expression this reader cannot evaluate statically."""


class Opaque:
    """A dict value nobody asked for (only a dict's keys were needed)."""


# -- sources -----------------------------------------------------------------------


class Sources:
    """Module name -> source text, from a wheel, an sdist or an unpacked tree."""

    def __init__(self, files: dict[str, str], packages: set[str], metadata: str = "") -> None:
        self.files = files
        self.packages = packages  # modules that are packages (an __init__.py)
        self.metadata = metadata  # the wheel's METADATA or the sdist's PKG-INFO

    @classmethod
    def open(cls, path: Path) -> Sources:
        wanted = (".py", "/METADATA", "/PKG-INFO")
        if path.is_dir():
            items = {
                str(p.relative_to(path)): p.read_text()
                for p in path.rglob("*")
                if p.is_file() and str(p).endswith(wanted)
            }
        elif path.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(path) as z:
                items = {n: z.read(n).decode() for n in z.namelist() if n.endswith(wanted)}
        else:
            with tarfile.open(path) as t:
                items = {
                    m.name: t.extractfile(m).read().decode()  # type: ignore[union-attr]
                    for m in t.getmembers()
                    if m.isfile() and m.name.endswith(wanted)
                }
        metadata = next((v for n, v in sorted(items.items()) if not n.endswith(".py")), "")
        anchor = next((n for n in items if n.endswith("sglang/srt/server_args.py")), None)
        if anchor is None:
            raise SystemExit(f"{path}: no sglang/srt/server_args.py inside")
        root = anchor[: -len("sglang/srt/server_args.py")]
        names = {
            n: n[len(root) : -len(".py")].replace("/", ".")
            for n in items
            if n.startswith(root + "sglang/")
        }
        files = {m.removesuffix(".__init__"): items[n] for n, m in names.items()}
        packages = {m.removesuffix(".__init__") for m in names.values() if m.endswith(".__init__")}
        return cls(files, packages, metadata)

    def version(self) -> str | None:
        m = re.search(r"^Version:\s*(\S+)", self.metadata, re.MULTILINE)
        return m.group(1) if m else None


class Module:
    """One module's top-level names, evaluated on demand."""

    def __init__(self, reader: Reader, name: str, tree: ast.Module) -> None:
        self.reader = reader
        self.name = name
        self.tree = tree
        self.nodes: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str | None]] = {}  # name -> (module, attr)
        for st in tree.body:
            self._index(st)

    def _index(self, st: ast.stmt) -> None:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    self.nodes[t.id] = st.value
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value:
            self.nodes[st.target.id] = st.value
        elif isinstance(st, ast.ClassDef | ast.FunctionDef):
            self.nodes[st.name] = st
        elif isinstance(st, ast.ImportFrom) and st.module:
            base = self.reader.absolute(self.name, st.module, st.level)
            for a in st.names:
                self.imports[a.asname or a.name] = (base, a.name)
        elif isinstance(st, ast.Import):
            for a in st.names:
                self.imports[a.asname or a.name.split(".")[0]] = (a.name, None)
        elif isinstance(st, ast.If | ast.Try):
            for sub in [*st.body, *getattr(st, "orelse", [])]:
                self._index(sub)

    def lookup(self, name: str) -> tuple[Module, ast.AST] | tuple[None, str]:
        """(module, node) for a name defined or imported here; (None, dotted) for other modules."""
        if name in self.nodes:
            return self, self.nodes[name]
        if name in self.imports:
            mod, attr = self.imports[name]
            if attr is None:
                return None, mod
            target = self.reader.module(mod)
            if target is not None:
                return target.lookup(attr)
            sub = self.reader.module(f"{mod}.{attr}")
            return (None, f"{mod}.{attr}") if sub is None else (None, sub.name)
        raise Unresolved(name)


class Reader:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.modules: dict[str, Module] = {}

    def module(self, name: str) -> Module | None:
        if name not in self.modules:
            text = self.sources.files.get(name)
            if text is None:
                return None
            self.modules[name] = Module(self, name, ast.parse(text))
        return self.modules[name]

    def absolute(self, current: str, module: str, level: int) -> str:
        if not level:
            return module
        package = current.split(".")
        base = package if current in self.sources.packages else package[:-1]
        base = base[: len(base) - (level - 1)]
        return ".".join([*base, module] if module else base)


# -- evaluation ------------------------------------------------------------------------


class Evaluator:
    """Evaluates the literal-ish expressions SGLang uses for choices and defaults."""

    def __init__(self, module: Module, local: dict[str, Any] | None = None, fields=None) -> None:
        self.module = module
        self.local = {} if local is None else local
        self.fields = fields  # field name -> default value (or Unresolved), for ServerArgs.X

    def ev(self, node: ast.AST) -> Any:
        match node:
            case ast.Constant(value=v):
                return v
            case ast.List(elts=e) | ast.Tuple(elts=e):
                return [self.ev(x) for x in e]
            case ast.Set(elts=e):
                return {self.ev(x) for x in e}
            case ast.Dict(keys=ks, values=vs):
                return {self.ev(k): self._maybe(v) for k, v in zip(ks, vs, strict=True) if k}
            case ast.UnaryOp(op=ast.USub(), operand=o):
                return -self.ev(o)
            case ast.UnaryOp(op=ast.Not(), operand=o):
                return not self.ev(o)
            case ast.BinOp(left=a, op=op, right=b):
                return _binop(op, self.ev(a), self.ev(b))
            case ast.Subscript(value=v, slice=ast.Constant(value=i)):
                return self.ev(v)[i]
            case ast.Name(id=name):
                if name in self.local:
                    value = self.local[name]
                    if isinstance(value, Unresolved):
                        raise value
                    return value
                if name in ("True", "False", "None"):
                    return {"True": True, "False": False, "None": None}[name]
                return self._name(self.module, name)
            case ast.Attribute():
                return self._attribute(node)
            case ast.Call():
                return self._call(node)
            case ast.Lambda(body=b):
                return self.ev(b)
        raise Unresolved(ast.unparse(node))

    def _maybe(self, node: ast.AST) -> Any:
        try:
            return self.ev(node)
        except Unresolved:
            return Opaque()

    def _name(self, module: Module, name: str) -> Any:
        mod, node = module.lookup(name)
        if mod is None or isinstance(node, ast.FunctionDef | ast.ClassDef):
            raise Unresolved(name)
        return Evaluator(mod).ev(node)

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == "ServerArgs" and self.fields is not None:
            value = self.fields.get(node.attr, Unresolved(node.attr))
            if isinstance(value, Unresolved):
                raise value
            return value
        if isinstance(owner, ast.Name):  # a class attribute: Backend.ALL
            mod, cls = self.module.lookup(owner.id)
            if isinstance(cls, ast.ClassDef) and mod is not None:
                for st in cls.body:
                    if (
                        isinstance(st, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == node.attr for t in st.targets)
                    ) or (
                        isinstance(st, ast.AnnAssign)
                        and isinstance(st.target, ast.Name)
                        and st.target.id == node.attr
                        and st.value
                    ):
                        return Evaluator(mod).ev(st.value)
        raise Unresolved(ast.unparse(node))

    def _call(self, node: ast.Call) -> Any:
        func = ast.unparse(node.func)
        args = node.args
        if func in ("list", "tuple", "sorted", "set", "frozenset") and len(args) <= 1:
            items = self.ev(args[0]) if args else []
            if func == "sorted":
                return sorted(items)
            return set(items) if func in ("set", "frozenset") else list(items)
        if func.endswith(".keys") and not args and isinstance(node.func, ast.Attribute):
            return list(self.ev(node.func.value))
        if func.split(".")[-1] == "field":  # dataclasses.field / msgspec.field
            kw = {k.arg: k.value for k in node.keywords}
            if "default" in kw:
                return self.ev(kw["default"])
            if "default_factory" in kw:
                factory = kw["default_factory"]
                if isinstance(factory, ast.Name) and factory.id in ("list", "dict", "set"):
                    return {"list": [], "dict": {}, "set": set()}[factory.id]
                return self.ev(factory)
        if func == "_declared_default" and self.fields is not None and args:
            # 0.5.2x: reads a msgspec field's declared default.
            value = self.fields.get(self.ev(args[0]), Unresolved(func))
            if isinstance(value, Unresolved):
                raise value
            return value
        if isinstance(node.func, ast.Name) and not args:
            return self._function_result(node.func.id)
        raise Unresolved(func)

    def _function_result(self, name: str) -> Any:
        """A helper's last `return`, with the imports in its body (choices helpers)."""
        mod, fn = self.module.lookup(name)
        if mod is None or not isinstance(fn, ast.FunctionDef) or fn.args.args:
            raise Unresolved(name)
        local: dict[str, Any] = {}
        returned = None
        for st in fn.body:
            if isinstance(st, ast.ImportFrom) and st.module:
                base = mod.reader.absolute(mod.name, st.module, st.level)
                target = mod.reader.module(base)
                for a in st.names:
                    try:
                        if target is None:
                            raise Unresolved(base)
                        local[a.asname or a.name] = Evaluator(target)._name(target, a.name)
                    except Unresolved as e:
                        local[a.asname or a.name] = e
            elif isinstance(st, ast.Return) and st.value is not None:
                returned = st.value
        if returned is None:
            raise Unresolved(name)
        return Evaluator(mod, local, self.fields).ev(returned)


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    match op:
        case ast.Add():
            return a + b
        case ast.Sub():
            return a - b
        case ast.Mult():
            return a * b
        case ast.Div():
            return a / b
        case ast.FloorDiv():
            return a // b
        case ast.BitOr():
            return a | b
    raise Unresolved(type(op).__name__)


# -- options -----------------------------------------------------------------------------


def _help_text(node: ast.AST | None) -> str:
    """Only to spot "deprecated" and the flag it points to; the text is not kept."""
    if node is None:
        return ""
    return " ".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def _choices(value: Any) -> list | None:
    if value is None:
        return None
    items = sorted(value, key=str) if isinstance(value, set | frozenset) else list(value)
    items = [c for c in items if c is not None]
    return items if jsonable(items)[1] else None


def option(
    names: list[str],
    dest: str,
    kind: str,
    *,
    type_: str | None = None,
    nargs: Any = None,
    const: Any = None,
    default: Any = None,
    default_known: bool = True,
    choices: list | None = None,
    required: bool = False,
    deprecated: bool = False,
    removed: bool = False,
    replacement: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One option in the catalog's JSON shape; keys at their default value are left out."""
    default, ok = jsonable(default) if default_known else (None, False)
    out = option_json(
        names,
        dest,
        kind,
        type=type_,
        nargs=nargs,
        const=jsonable(const)[0],
        default=default,
        default_known=ok,
        choices=choices,
        required=required,
        deprecated=deprecated,
        removed=removed,
        replacement=replacement,
    )
    out.update(extra or {})
    return out


def _is_deprecated(help_text: str, names: list[str]) -> bool:
    """The help opens with "Deprecated" ("(Deprecated: ...", "[Deprecated] ...") or says
    "--this-flag is deprecated"; not a flag whose help merely mentions another's deprecation."""
    if help_text.lstrip("([ ").lower().startswith("deprecated"):
        return True
    return any(f"{n} is deprecated" in help_text for n in names)


def _replacement(help_text: str, names: list[str]) -> str | None:
    return next((f for f in _FLAG_IN_TEXT.findall(help_text) if f not in names), None)


class ActionInfo:
    """What a custom argparse Action class does when its flag is given."""

    def __init__(self, cls: ast.ClassDef | None) -> None:
        self.rejects = False  # raises or calls parser.error unconditionally
        self.rejects_with_message = False  # parser.error only when error_message is set
        self.init_defaults: dict[str, Any] = {}  # its __init__'s keyword defaults (nargs=0)
        if cls is None:
            return
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                for arg, value in zip(
                    reversed(fn.args.args), reversed(fn.args.defaults), strict=False
                ):
                    if isinstance(value, ast.Constant):
                        self.init_defaults[arg.arg] = value.value
            if isinstance(fn, ast.FunctionDef) and fn.name == "__call__":
                for st in fn.body:
                    if isinstance(st, ast.Raise) or _calls_error(st):
                        self.rejects = True
                    elif isinstance(st, ast.If) and "error_message" in ast.unparse(st.test):
                        self.rejects_with_message = any(_calls_error(s) for s in st.body)


def _calls_error(st: ast.stmt) -> bool:
    return (
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and ast.unparse(st.value.func).endswith("parser.error")
    )


def from_add_argument(
    call: ast.Call, ev: Evaluator, module: Module, action_classes: dict[str, ActionInfo]
) -> dict[str, Any]:
    names = [a.value for a in call.args if isinstance(a, ast.Constant)]
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    long_names = [n for n in names if n.startswith("--")] or names
    dest = ev.ev(kw["dest"]) if "dest" in kw else long_names[0].lstrip("-").replace("-", "_")
    action_node = kw.get("action")
    if action_node is None:
        action = "store"
    elif isinstance(action_node, ast.Constant):
        action = action_node.value
    else:
        action = ast.unparse(action_node)
    # A refusing action's message names the replacement as often as the help does.
    help_text = f"{_help_text(kw.get('help'))} {_help_text(kw.get('error_message'))}"
    deprecated = _is_deprecated(help_text, names)
    removed = False
    replacement = ev.ev(kw["new_flag"]) if "new_flag" in kw else None
    nargs = ev.ev(kw["nargs"]) if "nargs" in kw else None
    choices = _try(lambda: _choices(ev.ev(kw["choices"]))) if "choices" in kw else None
    type_ = _type_name(kw.get("type"))
    if "default" in kw:
        default, known = _try_value(ev, kw["default"])
    else:
        default, known = None, True

    const = None
    if action in ("store_true", "store_false"):
        kind = action
        if "default" not in kw:
            default = action == "store_false"
        type_ = None
    elif action == "store_const":
        kind, type_, const = "store_const", None, _try(lambda: ev.ev(kw["const"]))
    elif action.endswith("BooleanOptionalAction"):
        kind, type_ = "boolean_optional", None
    elif action == "store" or action.endswith("LoRAPathAction"):
        kind = "choice" if choices else "value"
        type_ = type_ or "str"
    else:
        info = action_classes.get(action.split(".")[-1]) or ActionInfo(None)
        if "Deprecat" in action:
            deprecated = True
        removed = info.rejects or (info.rejects_with_message and "error_message" in kw)
        if "default" not in kw:
            default = info.init_defaults.get("default")
        if "nargs" not in kw:
            nargs = info.init_defaults.get("nargs")
        const_node = kw.get("const_value", kw.get("const"))
        if nargs == 0 and const_node is not None:  # writes a fixed value (a retired boolean)
            kind, type_, nargs = "store_const", None, None
            const = _try(lambda: ev.ev(const_node))
        elif nargs == 0:
            kind, type_, nargs = "store_true", None, None
        else:
            kind = "choice" if choices else "value"
            type_ = type_ or "str"
    if deprecated and replacement is None:
        replacement = _replacement(help_text, names)
    return option(
        names,
        dest,
        kind,
        type_=type_,
        nargs=nargs,
        const=const,
        default=default,
        default_known=known,
        choices=choices,
        required=bool(ev.ev(kw["required"])) if "required" in kw else False,
        deprecated=deprecated,
        removed=removed,
        replacement=replacement,
    )


def _type_name(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    name = ast.unparse(node).split(".")[-1]
    return _TYPES.get(name, name)


def _try(fn):
    try:
        return fn()
    except (Unresolved, TypeError):
        return None


def _try_value(ev: Evaluator, node: ast.AST) -> tuple[Any, bool]:
    try:
        return ev.ev(node), True
    except (Unresolved, TypeError):
        return None, False


# -- the two shapes of ServerArgs -----------------------------------------------------------


def read_catalog(sources: Sources) -> list[dict[str, Any]]:
    reader = Reader(sources)
    module = reader.module(SERVER_ARGS)
    if module is None:
        raise SystemExit("no sglang.srt.server_args module")
    # 0.5.2x rebinds the name to a msgspec struct after the class statement.
    cls = next(
        (n for n in module.tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"),
        None,
    )
    if cls is None:
        raise SystemExit("no ServerArgs class in srt/server_args.py")
    fields = Fields(reader, module, cls)
    add_cli_args = next(
        (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "add_cli_args"), None
    )
    if add_cli_args is None:
        raise SystemExit("ServerArgs.add_cli_args not found: an unknown source layout")
    actions = _action_classes(reader, module)
    out: list[dict[str, Any]] = []
    local: dict[str, Any] = {}
    ev = Evaluator(module, local, fields.defaults)
    for st in _statements(add_cli_args.body):
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target = st.targets[0]
            if isinstance(target, ast.Name):
                try:
                    local[target.id] = ev.ev(st.value)
                except (Unresolved, TypeError) as e:
                    local[target.id] = Unresolved(str(e))
            continue
        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
            continue
        call = st.value
        func = ast.unparse(call.func)
        if func.endswith(".add_argument"):
            out.append(from_add_argument(call, ev, module, actions))
        elif func == "add_cli_args_from_dataclass":
            out.extend(fields.options())
    renames = _cli_renames(cls)
    for opt in out:
        if opt["dest"] in renames:
            opt["field"] = renames[opt["dest"]]
    return out


def _cli_renames(cls: ast.ClassDef) -> dict[str, str]:
    """dest -> ServerArgs field, from `args.tp_size = args.tensor_parallel_size` lines in
    `from_cli_args` (0.4-0.5.x): the field is the name the server_args dump uses."""
    fn = next(
        (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "from_cli_args"), None
    )
    out: dict[str, str] = {}
    for st in fn.body if fn else []:
        match st:
            case ast.Assign(
                targets=[ast.Attribute(value=ast.Name(id="args"), attr=field)],
                value=ast.Attribute(value=ast.Name(id="args"), attr=dest),
            ):
                out[dest] = field
    return out


def _statements(body: list[ast.stmt]):
    """Statements in order, including those inside if/for/with/try blocks."""
    for st in body:
        yield st
        for attr in ("body", "orelse", "finalbody"):
            inner = getattr(st, attr, None)
            if isinstance(inner, list) and not isinstance(st, ast.FunctionDef | ast.ClassDef):
                yield from _statements(inner)


def _action_classes(reader: Reader, module: Module) -> dict[str, ActionInfo]:
    out: dict[str, ActionInfo] = {}
    names = set(module.nodes) | set(module.imports)
    for name in names:
        try:
            _, node = module.lookup(name)
        except Unresolved:
            continue
        if isinstance(node, ast.ClassDef) and any("Action" in ast.unparse(b) for b in node.bases):
            out[name] = ActionInfo(node)
    return out


class Fields:
    """ServerArgs' fields: their defaults (both shapes) and, in 0.5.2x, the CLI they declare."""

    def __init__(self, reader: Reader, module: Module, cls: ast.ClassDef) -> None:
        self.reader = reader
        self.module = module
        self.declared: list[tuple[str, ast.AnnAssign, Module]] = []
        for st in cls.body:  # the dataclass shape
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                self.declared.append((st.target.id, st, module))
        for ns_cls, mod in self._namespaces():  # the msgspec-namespaces shape
            for st in ns_cls.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    self.declared.append((st.target.id, st, mod))
        self.defaults: dict[str, Any] = {}
        for name, st, mod in self.declared:
            if st.value is None:
                self.defaults[name] = Unresolved(f"{name} has no default")
                continue
            try:
                self.defaults[name] = Evaluator(mod).ev(st.value)
            except (Unresolved, TypeError) as e:
                self.defaults[name] = Unresolved(str(e))

    def _namespaces(self) -> list[tuple[ast.ClassDef, Module]]:
        node = self.module.nodes.get("_INPUT_NAMESPACES")
        if not isinstance(node, ast.List):
            return []
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Name):
                mod, cls = self.module.lookup(elt.id)
                if isinstance(cls, ast.ClassDef) and mod is not None:
                    out.append((cls, mod))
        return out

    def options(self) -> list[dict[str, Any]]:
        """The options `add_cli_args_from_dataclass` registers, in ServerArgs field order."""
        order_node = None
        order_mod = self.reader.module("sglang.srt.arg_groups.field_order")
        if order_mod is not None:
            order_node = order_mod.nodes.get("POSITIONAL_FIELD_ORDER")
        order = Evaluator(order_mod).ev(order_node) if order_node and order_mod else []
        by_name = {name: (st, mod) for name, st, mod in self.declared}
        names = [n for n in order if n in by_name] + [n for n in by_name if n not in set(order)]
        out = []
        for name in names:
            st, mod = by_name[name]
            opt = self._field_option(name, st, mod)
            if opt is not None:
                out.append(opt)
        return out

    def _field_option(self, name: str, st: ast.AnnAssign, mod: Module) -> dict[str, Any] | None:
        ann = st.annotation
        if not (
            isinstance(ann, ast.Subscript)
            and ast.unparse(ann.value) in ("A", "Annotated")
            and isinstance(ann.slice, ast.Tuple)
        ):
            return None
        raw_type, *meta = ann.slice.elts
        arg: dict[str, ast.AST] | None = None
        for m in meta:
            if isinstance(m, ast.Call) and ast.unparse(m.func) == "Arg":
                arg = {k.arg: k.value for k in m.keywords if k.arg}
                break
            if isinstance(m, ast.Constant | ast.JoinedStr):
                arg = {"help": m}
                break
        if arg is None:
            return None
        ev = Evaluator(mod)
        if "no_cli" in arg and ev.ev(arg["no_cli"]):
            return None
        cli = ev.ev(arg["cli_name"]) if "cli_name" in arg else "--" + name.replace("_", "-")
        names = [cli, *(ev.ev(arg["aliases"]) if "aliases" in arg else [])]
        default = self.defaults.get(name)
        has_default = st.value is not None
        default_known = not isinstance(default, Unresolved) or not has_default
        if not has_default:
            default = None
        help_text = _help_text(arg.get("help"))
        deprecated = _is_deprecated(help_text, names)
        extra: dict[str, Any] = {}
        if "resolvable" in arg and ev.ev(arg["resolvable"]):
            extra["resolvable"] = True
        fallback = _try(lambda: ev.ev(arg["fallback"])) if "fallback" in arg else None
        if fallback is not None:
            extra["fallback"] = fallback
        common = dict(
            default=default,
            default_known=default_known,
            deprecated=deprecated,
            replacement=_replacement(help_text, names) if deprecated else None,
            extra=extra,
        )
        choices = _try(lambda: _choices(ev.ev(arg["choices"]))) if "choices" in arg else None
        parser_name = _type_name(arg.get("type_parser"))
        nargs = ev.ev(arg["nargs"]) if "nargs" in arg else None

        if "action" in arg:
            action = ast.unparse(arg["action"])
            kwargs = ev.ev(arg["action_kwargs"]) if "action_kwargs" in arg else {}
            if action.endswith("BooleanOptionalAction"):
                return option(names, name, "boolean_optional", **common)
            nargs = kwargs.get("nargs")
            return option(names, name, "value", type_="str", nargs=nargs, **common)

        inner, _optional = _unwrap_optional(raw_type)
        literal = _literal(inner, ev)
        if literal is not None:
            first = literal[0] if literal else ""
            type_ = parser_name or (
                "int" if type(first) is int else "float" if type(first) is float else "str"
            )
            return option(
                names, name, "choice", type_=type_, choices=choices or _choices(literal), **common
            )
        if _is_list(inner) and parser_name is None:
            elem = _scalar(inner.slice)
            return option(
                names,
                name,
                "choice" if choices else "value",
                type_=elem,
                nargs=nargs or "+",
                choices=choices,
                **common,
            )
        if isinstance(inner, ast.Name) and inner.id == "bool":
            return option(names, name, "store_true", **common)
        type_ = parser_name or _scalar(inner)
        required = bool(ev.ev(arg["required"])) if "required" in arg else not has_default
        return option(
            names,
            name,
            "choice" if choices else "value",
            type_=type_,
            nargs=nargs,
            choices=choices,
            required=required,
            **common,
        )


def _unwrap_optional(node: ast.AST) -> tuple[ast.AST, bool]:
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
        "Optional",
        "typing.Optional",
    ):
        return node.slice, True
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Union":
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        rest = [p for p in parts if ast.unparse(p) != "None"]
        if len(rest) == 1 and len(parts) == 2:
            return rest[0], True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [node.left, node.right]
        rest = [p for p in parts if ast.unparse(p) != "None"]
        if len(rest) == 1:
            return rest[0], True
    return node, False


def _literal(node: ast.AST, ev: Evaluator) -> list | None:
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Literal", "typing.Literal"):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [ev.ev(e) for e in elts]
    return None


def _is_list(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("List", "list")


def _scalar(node: ast.AST) -> str:
    return ast.unparse(node) if ast.unparse(node) in ("int", "float", "str") else "str"


# -- main --------------------------------------------------------------------------------


def catalog(sources: Sources, version: str | None, origin: str) -> dict[str, Any]:
    return {
        "engine": "sglang",
        "version": version or sources.version() or "unknown",
        "origin": origin,
        "options": read_catalog(sources),
    }


def dumps(cat: dict[str, Any]) -> str:
    """Compact and diffable: one option per line."""
    head = {k: v for k, v in cat.items() if k != "options"}
    lines = [json.dumps(o, separators=(",", ":")) for o in cat["options"]]
    body = ",\n".join(lines)
    return json.dumps(head)[:-1] + ', "options": [\n' + body + "\n]}\n"


def download(version: str, folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"sglang=={version}", "--no-deps", "-q",
         "-d", str(folder)],
        check=True,
    )  # fmt: skip
    found = sorted(folder.glob(f"sglang-{version}*"))
    if not found:
        raise SystemExit(f"pip download left no sglang {version} archive in {folder}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", help="SGLang versions to download from PyPI")
    ap.add_argument("--source", type=Path, help="a wheel, sdist or unpacked tree instead")
    ap.add_argument("--version", help="the version of --source (default: its version.py)")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="output folder")
    args = ap.parse_args(argv)
    jobs: list[tuple[Path, str | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.source:
            jobs.append((args.source, args.version))
        for v in args.versions:
            jobs.append((download(v, Path(tmp) / v), v))
        if not jobs:
            ap.error("give versions or --source")
        for path, version in jobs:
            cat = catalog(Sources.open(path), version, path.name)
            out = args.out / f"sglang-{cat['version']}.json"
            out.write_text(dumps(cat))
            print(f"{out}: {len(cat['options'])} options")
    return 0


if __name__ == "__main__":
    sys.exit(main())
