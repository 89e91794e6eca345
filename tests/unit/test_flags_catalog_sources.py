"""Where catalogs come from: the static reader (scripts/gen_sglang_catalog.py) on stand-in
SGLang sources of both shapes, and the live dump script run by a real interpreter."""

import importlib.util
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from importlib.resources import files
from pathlib import Path

import pytest

from sgwatch.engines.sglang import ENGINE as SGLANG
from sgwatch.engines.sglang.catalog import bundled_versions, select
from sgwatch.engines.shapes.flags import Catalog
from sgwatch.remote.hostprogram import program

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "flags"
OLD, NEW = FIXTURES / "sglang_old", FIXTURES / "sglang_new"
LIVE_SCRIPT = program(SGLANG.catalog_program)  # as it is sent to the host

_spec = importlib.util.spec_from_file_location(
    "gen_sglang_catalog", ROOT / "scripts" / "gen_sglang_catalog.py"
)
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def by_name(options):
    return {o["names"][0]: o for o in options}


def run_live(pythonpath: Path | None, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pythonpath or tmp_path)}
    return subprocess.run(
        [sys.executable, "-"],
        input=LIVE_SCRIPT,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )


def test_reader_on_the_add_argument_shape():
    cat = gen.catalog(gen.Sources.open(OLD), None, "sglang_old")
    assert cat["version"] == "0.4.99"
    opts = by_name(cat["options"])
    assert opts["--tensor-parallel-size"] == {
        "names": ["--tensor-parallel-size", "--tp-size"],
        "dest": "tensor_parallel_size",
        "kind": "value",
        "type": "int",
        "default": 1,
        "field": "tp_size",
    }
    assert opts["--attention-backend"]["choices"] == ["flashinfer", "triton", "torch_native"]
    assert opts["--sampling-backend"]["choices"] == ["flashinfer", "pytorch"]  # a set, sorted
    assert opts["--tool-parser"]["choices"] == ["qwen25", "llama3"]  # a helper's import
    assert opts["--exclude-prefixes"]["default"] == ["auto", "pt", "safetensors"]
    assert opts["--max-bytes"]["default"] == 10240
    assert opts["--seed"]["default"] == -1
    assert opts["--enable-multimodal"] == {
        "names": ["--enable-multimodal"],
        "dest": "enable_multimodal",
        "kind": "store_true",
    }
    assert opts["--overlap"]["kind"] == "boolean_optional"
    assert (opts["--quiet"]["kind"], opts["--quiet"]["default"]) == ("store_false", True)
    assert (opts["--eager"]["kind"], opts["--eager"]["const"]) == ("store_const", "eager")
    assert opts["--json-model-override-args"]["type"] == "json"
    assert opts["--chat-template"]["type"] == "str"  # nullable_str
    assert "deprecated" not in opts["--note"]  # mentions another flag's deprecation
    old = opts["--enable-old-thing"]
    assert (old["deprecated"], old["removed"], old["replacement"]) == (True, True, "--eager")
    legacy = opts["--enable-legacy-metrics"]
    assert (legacy["dest"], legacy.get("removed"), legacy["replacement"]) == (
        "enable_metrics",
        None,
        "--enable-metrics",
    )
    fast = opts["--use-fast-load"]
    assert (fast["kind"], fast["const"], fast["dest"]) == (
        "store_const",
        "safetensors",
        "load_format",
    )
    assert all("help" not in o for o in cat["options"])


def test_the_live_script_agrees_with_the_reader(tmp_path):
    r = run_live(OLD, tmp_path)
    assert r.returncode == 0, r.stderr
    live = json.loads(r.stdout)  # stdout is the JSON alone: prints went to stderr
    static = gen.catalog(gen.Sources.open(OLD), None, "sglang_old")
    assert (live["version"], live["origin"]) == ("0.4.99", "live")
    assert live["python"] == sys.version.split()[0]
    assert by_name(live["options"])["--model-path"]["help"] == "Weights."
    without_help = [{k: v for k, v in o.items() if k != "help"} for o in live["options"]]
    assert without_help == static["options"]
    chosen = select(r.stdout, "0.4.99")
    assert chosen.source == "live" and chosen.catalog.lookup("--tp").option.setting == "tp_size"


def test_the_live_script_without_sglang_says_so(tmp_path):
    r = run_live(None, tmp_path)
    assert r.returncode == 0
    answer = json.loads(r.stdout)
    assert answer["error"].startswith("ModuleNotFoundError")
    chosen = select(r.stdout, None)
    assert chosen.source == "bundled" and "ModuleNotFoundError" in chosen.note


def test_reader_on_the_msgspec_fields_shape():
    cat = gen.catalog(gen.Sources.open(NEW), None, "sglang_new")
    opts = by_name(cat["options"])
    # POSITIONAL_FIELD_ORDER first, then namespace order, then the hand-registered flags.
    assert [o["names"][0] for o in cat["options"]][:3] == ["--model-path", "--tp-size", "--dtype"]
    assert list(opts)[-5:] == [
        "--sampling-backend",
        "--config",
        "--disable-cuda-graph",
        "--enable-piecewise-cuda-graph",
        "--enable-noop",
    ]
    assert "--hidden-flag" not in opts and "--internal" not in opts
    assert opts["--model-path"]["required"] and opts["--model-path"]["names"][1] == "--model"
    assert opts["--tp-size"]["names"] == ["--tp-size", "--tensor-parallel-size"]
    assert (opts["--dtype"]["kind"], opts["--dtype"]["choices"]) == ("choice", ["auto", "half"])
    assert (opts["--pages"]["type"], opts["--pages"]["choices"]) == ("int", [1, 2])
    assert opts["--enable-multimodal"] == {
        "names": ["--enable-multimodal"],
        "dest": "enable_multimodal",
        "kind": "store_true",
    }
    assert opts["--mem-fraction-static"]["resolvable"] is True
    assert (opts["--swa-ratio"]["fallback"], opts["--enable-tf32"]["fallback"]) == (0.8, False)
    assert opts["--enable-tf32"]["kind"] == "boolean_optional"
    assert (opts["--lora-paths"]["kind"], opts["--lora-paths"]["nargs"]) == ("value", "*")
    assert opts["--json-cfg"]["type"] == "json"
    assert opts["--fp8-gemm-backend"]["dest"] == "fp8_backend"
    assert opts["--fp8-gemm-backend"]["choices"] == ["auto", "deepgemm", "cutlass"]
    assert (opts["--cuda-graph-bs-decode"]["type"], opts["--cuda-graph-bs-decode"]["nargs"]) == (
        "int",
        "+",
    )
    prefill = opts["--cuda-graph-backend-prefill"]
    assert (prefill["type"], prefill["choices"]) == (
        "parse_backend",
        ["full", "breakable", "disabled"],
    )
    assert opts["--sizes"]["default"] == [] and opts["--big"]["default"] == 10000
    assert opts["--old-grpc"]["deprecated"] and "deprecated" not in opts["--new-grpc"]
    assert opts["--sampling-backend"]["default"] == "auto"  # _declared_default
    assert opts["--sampling-backend"]["choices"] == ["flashinfer", "pytorch"]
    gone = opts["--enable-piecewise-cuda-graph"]
    assert (gone["removed"], gone["replacement"]) == (True, "--cuda-graph-backend-prefill")
    assert "removed" not in opts["--enable-noop"]  # no error_message: it only warns


def test_archives_and_the_written_file(tmp_path):
    wheel = tmp_path / "sglang-0.4.99-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for p in OLD.rglob("*"):
            if p.is_file():
                z.write(p, p.relative_to(OLD))
    sdist = tmp_path / "sglang-0.4.99.tar.gz"
    with tarfile.open(sdist, "w:gz") as t:
        for p in OLD.rglob("*"):
            if p.is_file() and p.suffix == ".py":
                t.add(p, f"sglang-0.4.99/python/{p.relative_to(OLD)}")
        info = tarfile.TarInfo("sglang-0.4.99/PKG-INFO")
        data = b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.4.99\n"
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    out = tmp_path / "out"
    out.mkdir()
    for archive in (wheel, sdist):
        assert gen.main(["--source", str(archive), "--out", str(out)]) == 0
        text = (out / "sglang-0.4.99.json").read_text()
        cat = Catalog.from_json(text)
        assert (cat.version, cat.origin, len(cat.options)) == ("0.4.99", archive.name, 22)
        assert len(text.splitlines()) == len(cat.options) + 2  # a head, one option per line, "]}"
    with pytest.raises(SystemExit):
        gen.Sources.open(out)  # no sglang/srt/server_args.py inside


@pytest.mark.parametrize("version", bundled_versions())
def test_bundled_files_are_the_readers_output_format(version):
    text = files("sgwatch.engines.sglang.catalog").joinpath(f"sglang-{version}.json").read_text()
    assert gen.dumps(json.loads(text)) == text
