"""The host's preflight program judges a command with whichever parser the engine names."""

import json
import subprocess
import sys

from sgwatch.control.restart import PREFLIGHT
from sgwatch.core.cmdline import parse_shell
from sgwatch.engines import for_command
from sgwatch.remote.hostprogram import program

# An argparse builder shaped like SGLang's ServerArgs.add_cli_args, importable on the "host".
FAKE_SERVER_ARGS = """
class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--tp-size", type=int, default=1)
"""


def on_host(request: dict, folder) -> dict:
    """Run the program as the host does: the server's python reading it from stdin."""
    r = subprocess.run(
        [sys.executable, "-"],
        input=program(PREFLIGHT, request).encode(),
        capture_output=True,
        cwd=folder,
        env={"PYTHONPATH": str(folder)},
        timeout=60,
        check=True,
    )
    return json.loads(r.stdout.decode().splitlines()[-1])


def sglang_request(text: str) -> dict:
    cmd = parse_shell(text)
    return for_command(cmd).preflight_request(cmd)


def test_an_argparse_builder_accepts_and_refuses_as_the_server_would(tmp_path):
    (tmp_path / "fake_sglang.py").write_text(FAKE_SERVER_ARGS)
    entry = {"entry": "fake_sglang:ServerArgs.add_cli_args"}
    good = sglang_request("sglang serve Qwen/Qwen3-8B --tp-size 2")
    assert good["args"] == ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "2"]
    ok = on_host({**good, **entry}, tmp_path)
    assert ok == {"ok": True, "checked_by": "the host's SGLang parser"}
    bad = on_host({**sglang_request("sglang serve m --tp-size two"), **entry}, tmp_path)
    assert bad["ok"] is False
    assert bad["error"] == "sglang: error: argument --tp-size: invalid int value: 'two'"


def test_a_host_without_the_engine_gives_no_verdict(tmp_path):
    answer = on_host(sglang_request("python -m sglang.launch_server --model-path m"), tmp_path)
    assert answer["ok"] is None and "ModuleNotFoundError" in answer["error"]


def test_the_simulators_own_parser_applies_its_startup_checks(tmp_path):
    def judged(text: str) -> dict:
        cmd = parse_shell(text)
        return on_host(for_command(cmd).preflight_request(cmd), tmp_path)

    fine = judged("python -m sgwatch.sim --model-path m --sim-speed 50")
    assert fine == {"ok": True, "checked_by": "the simulator's parser"}
    refused = judged("python -m sgwatch.sim --model-path m --language-only")
    assert refused["ok"] is False and "--encoder-urls" in refused["error"]
    typo = judged("python -m sgwatch.sim --model-path m --sim-speed fast")
    assert typo["ok"] is False and "--sim-speed" in typo["error"]
