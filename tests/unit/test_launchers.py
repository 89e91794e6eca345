"""Launchers: how `parse` finds a server's program, for every shape an engine registers.

The engines registry declares each engine's launchers (core/cmdline.py register_launchers);
these tests declare their own, in a copy of the table that is put back afterwards.
"""

import dataclasses
import shlex
from functools import partial

import pytest

from sgwatch.core import cmdline
from sgwatch.core.cmdline import Flag, LaunchError, parse_shell, register_launchers
from sgwatch.engines import by_name
from sgwatch.engines.base import ProcessPattern
from sgwatch.remote.host import discover as host_discover


@pytest.fixture
def launchers(monkeypatch):
    """The launcher table as the registry left it, restored after the test."""
    monkeypatch.setattr(cmdline, "_LAUNCHERS", {k: set(v) for k, v in cmdline._LAUNCHERS.items()})
    register_launchers([("llama-server",), ("trtllm-serve",)])


@pytest.mark.parametrize(
    ("line", "prefix", "program", "positional", "flags"),
    [
        ("llama-server -m M", (), ("llama-server",), (), (Flag("-m", ("M",)),)),
        (
            "CUDA_VISIBLE_DEVICES=0 nohup /opt/llama/bin/llama-server -m /m/q.gguf --port 8080",
            ("CUDA_VISIBLE_DEVICES=0", "nohup"),
            ("/opt/llama/bin/llama-server",),
            (),
            (Flag("-m", ("/m/q.gguf",)), Flag("--port", ("8080",))),
        ),
        ("trtllm-serve M", (), ("trtllm-serve",), ("M",), ()),
        (
            "env A=1 trtllm-serve meta/Llama --tp_size=2 --backend pytorch",
            ("env", "A=1"),
            ("trtllm-serve",),
            ("meta/Llama",),
            (Flag("--tp_size", ("2",), inline=True), Flag("--backend", ("pytorch",))),
        ),
    ],
)
def test_a_plain_executable_is_a_program(launchers, line, prefix, program, positional, flags):
    cmd = parse_shell(line)
    assert (cmd.prefix, cmd.program, cmd.positional, cmd.flags) == (
        prefix,
        program,
        positional,
        flags,
    )
    assert cmd.argv == shlex.split(line)


def test_unregistered_plain_executables_are_refused_naming_what_is_known(monkeypatch):
    monkeypatch.setattr(cmdline, "_LAUNCHERS", {})
    register_launchers([("vllm", "serve")])
    with pytest.raises(LaunchError, match=r"\(python -m MODULE, vllm serve\) in llama-server"):
        parse_shell("llama-server -m M")
    register_launchers([("llama-server",)])
    assert parse_shell("llama-server -m M").program == ("llama-server",)


def test_a_subcommand_launcher_still_needs_its_subcommand(launchers):
    with pytest.raises(LaunchError):
        parse_shell("vllm bench serve --model M")
    # a name that is both: the subcommand form first, else the plain one
    register_launchers([("trtllm-serve", "disaggregated")])
    assert parse_shell("trtllm-serve disaggregated -c c.yaml").program == (
        "trtllm-serve",
        "disaggregated",
    )
    assert parse_shell("trtllm-serve M").program == ("trtllm-serve",)


@pytest.mark.parametrize("launcher", [(), ("a", "b", "c")])
def test_a_launcher_is_one_or_two_words(launchers, launcher):
    with pytest.raises(ValueError, match="at most one subcommand"):
        register_launchers([launcher])


def test_an_engine_with_a_plain_launcher_matches_its_commands(launchers):
    pattern = ProcessPattern("server", launcher=("llama-server",))
    llama = dataclasses.replace(by_name("sglang"), name="llama", processes=(pattern,))
    assert llama.matches(parse_shell("/usr/local/bin/llama-server -m M --port 8080"))
    assert not llama.matches(parse_shell("trtllm-serve M"))
    assert not llama.matches(parse_shell("python -m sglang.launch_server --model-path llama"))
    # discovery's rule on the host, given the pattern as data, agrees
    (sent,) = llama.process_patterns()
    assert sent["launcher"] == ["llama-server"]
    for line, found in (
        ("/usr/local/bin/llama-server -m M --port 8080", True),
        ("trtllm-serve M", False),
        ("python -m sglang.launch_server --model-path llama", False),
    ):
        argv = shlex.split(line)
        on_host = any(map(partial(host_discover.matches, sent), argv, [*argv[1:], ""]))
        assert on_host is found, line
