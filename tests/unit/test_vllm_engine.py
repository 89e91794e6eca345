"""vLLM's flags and /metrics as sgwatch reads them: the bundled catalog, vLLM's own
spellings, the host's live catalog and preflight (against a stand-in vLLM package), the
default port, and `vllm:` metrics into the shared window."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sgwatch.control.restart import PREFLIGHT
from sgwatch.core.cmdline import parse_shell
from sgwatch.engines import by_name, for_command
from sgwatch.engines.port import server_port
from sgwatch.engines.vllm.flags import parser_view
from sgwatch.remote.hostprogram import program
from sgwatch.sim.vllm.metrics import VllmMetrics

VLLM = by_name("vllm")
FAKE = Path(__file__).parents[1] / "fixtures" / "flags" / "vllm_0_11"
SCRIPTS = Path(__file__).parents[2] / "scripts"


def run_on_host(source: str | bytes) -> dict:
    """A program as the host runs it: the server's python reading it from stdin."""
    r = subprocess.run(
        [sys.executable, "-"],
        input=source if isinstance(source, bytes) else source.encode(),
        capture_output=True,
        env={"PYTHONPATH": str(FAKE)},
        timeout=60,
        check=True,
    )
    return json.loads(r.stdout.decode().splitlines()[-1])


def problems(text: str) -> list[tuple[str, str, str]]:
    catalog = VLLM.select_catalog(None, None).catalog
    return [(p.flag, p.level, p.message) for p in VLLM.check(catalog, parse_shell(text))]


def test_the_bundled_catalog_is_vllm_0_11_as_its_parser_builds_it():
    sel = VLLM.select_catalog(None, "0.11.2")
    cat = sel.catalog
    assert (sel.source, cat.engine, cat.version) == ("bundled", "vllm", "0.11.0")
    assert "bundled vllm 0.11.0 (nearest to 0.11.2)" in sel.note
    assert cat.get("enforce_eager").kind == "boolean_optional"
    assert cat.get("gpu_memory_utilization").default == 0.9
    assert cat.get("compilation_config").names == ("--compilation-config", "-O")
    assert cat.get("tensor_parallel_size").names == ("--tensor-parallel-size", "-tp")
    assert cat.get("kv_cache_dtype").choices == ("auto", "bfloat16", "fp8", "fp8_e4m3",
                                                 "fp8_e5m2", "fp8_inc")  # fmt: skip
    assert cat.get("speculative_config").type == "json"
    assert cat.get("cuda_graph_sizes").nargs == "+"


def test_vllm_spellings_are_checked_as_its_parser_reads_them():
    assert (
        problems(
            "vllm serve Qwen/Qwen3-8B --gpu_memory_utilization 0.85 --no-enforce-eager "
            "--compilation-config.cudagraph_mode=FULL -O.level 3 -tp 2"
        )
        == []
    )
    assert problems("vllm serve M --mem-fraction-static 0.8") == [
        ("--mem-fraction-static", "error", "not a flag of vLLM 0.11.0")
    ]
    assert problems("vllm serve M --gpu-memory-utilization lots")[0][1] == "error"
    view = parser_view(parse_shell("vllm serve M --compilation-config.pass_config.x=true"))
    assert [(f.name, f.values) for f in view.flags] == [
        ("--compilation-config", ('{"pass_config": {"x": true}}',))
    ]


def test_the_live_catalog_comes_from_the_hosts_make_arg_parser():
    out = run_on_host(program(VLLM.catalog_program))
    assert (out["engine"], out["origin"]) == ("vllm", "live")
    by_dest = {o["dest"]: o for o in out["options"]}
    assert by_dest["enforce_eager"]["kind"] == "boolean_optional"
    assert by_dest["enforce_eager"]["names"] == ["--enforce-eager"]
    assert by_dest["compilation_config"]["type"] == "json"
    assert by_dest["kv_cache_dtype"]["choices"] == ["auto", "fp8"]
    assert by_dest["cuda_graph_sizes"]["deprecated"] is True
    assert "model_tag" not in by_dest  # the positional is not a flag
    sel = VLLM.select_catalog(json.dumps(out), None)
    assert sel.source == "live" and sel.catalog.get("port").default == 8000


def test_no_vllm_on_the_host_falls_back_to_the_bundled_catalog():
    r = subprocess.run(
        [sys.executable, "-"], input=program(VLLM.catalog_program).encode(), capture_output=True,
        env={}, timeout=60, check=True,
    )  # fmt: skip
    sel = VLLM.select_catalog(r.stdout.decode(), "0.11.0")
    assert sel.source == "bundled" and "the host's parser failed: ImportError" in sel.note


@pytest.mark.parametrize(
    ("text", "ok", "says"),
    [
        ("vllm serve M --gpu_memory_utilization 0.85 --no-enforce-eager", True, None),
        ("vllm serve M --mem-fraction-static 0.8", False, "unrecognized arguments"),
        ("vllm serve M --kv-cache-dtype fp16", False, "invalid choice: 'fp16'"),
    ],
)
def test_preflight_asks_the_hosts_vllm_parser(text, ok, says):
    cmd = parse_shell(text)
    answer = run_on_host(program(PREFLIGHT, VLLM.preflight_request(cmd)))
    assert answer["ok"] is ok and answer["checked_by"] == "the host's vLLM parser"
    assert says is None or says in answer["error"]


def test_the_default_port_is_the_engines():
    assert server_port(["vllm", "serve", "M"]) == 8000
    assert server_port(["python3", "-m", "sgwatch.sim", "vllm", "serve", "M"]) == 8000
    assert server_port(["python3", "-m", "sglang.launch_server", "--model-path", "M"]) == 30000
    assert server_port(["vllm", "serve", "M", "--port=9001"]) == 9001


def test_the_simulator_answers_as_vllm_for_its_vllm_commands():
    cmd = parse_shell("python -m sgwatch.sim vllm serve M --sim-speed 50 --max-num-seqs 8")
    sim = for_command(cmd)  # the program is the simulator's, whatever its arguments say
    assert sim is not None and sim.name == "sim"
    assert sim.preflight_request(cmd)["checked_by"] == "the simulator's vLLM parser"
    sel = sim.select_catalog(None, sim.command_version(cmd))
    assert sel.catalog.engine == "vllm"
    assert sim.check(sel.catalog, cmd) == []
    bad = parse_shell("python -m sgwatch.sim vllm serve M --cuda-graph-max-bs 8")
    assert [p.flag for p in sim.check(sel.catalog, bad)] == ["--cuda-graph-max-bs"]


def test_metrics_read_into_the_shared_window():
    m = VllmMetrics("Qwen/Qwen3-8B", spec_tokens=3)
    m.prompt_tokens, m.generation_tokens, m.drafts, m.accepted = 100, 1000, 100, 150
    m.running, m.queued, m.token_usage = 4, 1, 0.25
    for _ in range(10):
        m.ttft.observe(0.3)
    first = VLLM.read_metrics(m.render())
    m.generation_tokens, m.drafts, m.accepted = 1500, 200, 350
    for _ in range(10):
        m.ttft.observe(0.7)
    w = VLLM.metrics_between(first, VLLM.read_metrics(m.render()), 5.0)
    assert (w.gen_tok_s, w.running, w.queued, w.token_usage) == (100.0, 4, 1, 0.25)
    assert w.accept_length == pytest.approx(1 + 200 / 100)  # this window's, not the total
    assert 0.6 <= w.ttft_p50 <= 0.8
    assert first.accept_length == pytest.approx(2.5)  # since the start
    assert VLLM.metrics_served({}) is True


ARG_UTILS = """
from typing import Literal, Optional
ModelDType = Literal["auto", "half", "bfloat16"]

class EngineArgs:
    model: str = ModelConfig.model
    dtype: ModelDType = ModelConfig.dtype
    enforce_eager: bool = ModelConfig.enforce_eager
    max_num_seqs: int | None = SchedulerConfig.max_num_seqs
    gpu_memory_utilization: float = 0.9
    cuda_graph_sizes: list[int] | None = None
    speculative_config: Optional[Dict[str, Any]] = None
    compilation_config: CompilationConfig = get_field(VllmConfig, "compilation_config")

    @staticmethod
    def add_cli_args(parser):
        model_group.add_argument("--model", **model_kwargs["model"])
        model_group.add_argument("--dtype", **model_kwargs["dtype"])
        model_group.add_argument("--enforce-eager", **model_kwargs["enforce_eager"])
        scheduler_group.add_argument("--max-num-seqs", **scheduler_kwargs["max_num_seqs"])
        cache_group.add_argument(
            "--gpu-memory-utilization", **cache_kwargs["gpu_memory_utilization"]
        )
        scheduler_group.add_argument("--cuda-graph-sizes", **scheduler_kwargs["cuda_graph_sizes"])
        vllm_group.add_argument("--speculative-config", **vllm_kwargs["speculative_config"])
        vllm_group.add_argument("--compilation-config", "-O", **vllm_kwargs["compilation_config"])
        parser.add_argument("--disable-log-stats", action="store_true", help="Disable.")
        return parser

class AsyncEngineArgs(EngineArgs):
    enable_log_requests: bool = False

    @staticmethod
    def add_cli_args(parser, async_args_only=False):
        parser.add_argument("--disable-log-requests", action=argparse.BooleanOptionalAction,
                            default=True, help="[DEPRECATED]", deprecated=True)
        return parser
"""
CLI_ARGS = """
class FrontendArgs:
    host: str | None = None
    port: int = 8000

def make_arg_parser(parser):
    parser.add_argument("model_tag", type=str, nargs="?")
    parser.add_argument("--api-server-count", "-asc", type=int, default=1)
    return parser
"""
CONFIG = """
class ModelConfig:
    model: str = "Qwen/Qwen3-0.6B"
    dtype: str = "auto"
    enforce_eager: bool = False
"""


def test_the_catalog_generator_reads_vllms_source_as_its_parser_builds_it(tmp_path):
    for name, text in {
        "vllm/engine/arg_utils.py": ARG_UTILS,
        "vllm/entrypoints/openai/cli_args.py": CLI_ARGS,
        "vllm/config/model.py": CONFIG,
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spec = importlib.util.spec_from_file_location("gen", SCRIPTS / "gen_vllm_catalog.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    options = {o["dest"]: o for o in gen.read(gen.Source.open(tmp_path))}
    assert list(options) == [
        "api_server_count", "host", "port", "model", "dtype", "enforce_eager", "max_num_seqs",
        "gpu_memory_utilization", "cuda_graph_sizes", "speculative_config",
        "compilation_config", "disable_log_stats", "disable_log_requests",
    ]  # fmt: skip
    assert options["dtype"] == {
        "names": ["--dtype"], "dest": "dtype", "kind": "choice", "type": "str",
        "choices": ["auto", "bfloat16", "half"], "default": "auto",
    }  # fmt: skip
    assert options["enforce_eager"]["kind"] == "boolean_optional"
    assert options["enforce_eager"]["default"] is False
    assert options["max_num_seqs"]["default_known"] is False  # another config's default
    assert options["cuda_graph_sizes"] == {
        "names": ["--cuda-graph-sizes"], "dest": "cuda_graph_sizes", "kind": "value",
        "type": "int", "nargs": "+",
    }  # fmt: skip
    assert options["speculative_config"]["type"] == "json"
    assert options["compilation_config"]["names"] == ["--compilation-config", "-O"]
    assert options["disable_log_stats"]["kind"] == "store_true"
    assert options["disable_log_requests"]["deprecated"] is True
