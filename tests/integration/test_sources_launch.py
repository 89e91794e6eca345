"""`sgwatch launch HOST --wait -- CMD` as a user runs it, over the real sshd: the
host's parser refuses a bad flag before anything starts; a good command starts
detached with its log and is followed to ready; one that dies at its argument check
is reported crashed with the cause, though the process is gone before it could be
discovered."""

from __future__ import annotations

import contextlib
import re
import signal
import sys

from sgwatch.cli import exitcodes
from sgwatch.sim.common.nvidia_smi import install
from tests.integration.headless import CRASH_KV, cli_env, sgwatch
from tests.integration.helpers import wait_until
from tests.integration.sshd import free_port

QWEN = ("--model-path", "Qwen/Qwen3-8B")


def launch(host, tmp_path, *flags: str, model: tuple[str, ...] = QWEN) -> tuple[int, str, str]:
    state = tmp_path / "gpu-state"
    install(host.gpu_bin, state)
    argv = [f"SGWATCH_SIM_STATE={state}", sys.executable, "-m", "sgwatch.sim", *model]
    argv += ["--sim-speed", "50", "--port", str(free_port())]
    env = cli_env(host, tmp_path / "home")
    log = tmp_path / "server.log"
    r = sgwatch(
        env, "launch", "gpu129", "--wait", "--timeout", "120", "--log", str(log),
        "--cwd", str(tmp_path), "--", *argv, *flags,
    )  # fmt: skip
    return r.returncode, r.stdout, r.stderr


def launched_pid(stdout: str) -> int | None:
    found = re.search(r"launched on gpu129: pid (\d+), log (\S+)", stdout)
    return int(found[1]) if found else None


@contextlib.contextmanager
def following(host, tmp_path, model: tuple[str, ...] = QWEN):
    """`launch --wait` a server: (status, stdout, stderr, pid); killed after, and then
    nothing of it may be left on the host."""
    status, out, err = launch(host, tmp_path, model=model)
    pid = launched_pid(out)
    try:
        yield status, out, err, pid
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                host.killpg(pid, signal.SIGKILL)
    assert wait_until(lambda: not host.remote_processes())


def test_launch_wait_follows_the_new_server_to_ready(host, tmp_path):
    with following(host, tmp_path) as (status, out, err, pid):
        assert status == exitcodes.OK, err
        assert f"log {tmp_path / 'server.log'}" in out
        assert "READY" in out.splitlines()[-1]
        assert host.cwd(pid) == tmp_path


def test_launch_wait_takes_a_simulated_vllm_as_the_simulators_not_vllms(host, tmp_path):
    """Its arguments say `vllm serve`; its program is the simulator, whose parser judges it."""
    vllm = ("vllm", "serve", "Qwen/Qwen3-8B")
    with following(host, tmp_path, model=vllm) as (status, out, err, _):
        assert status == exitcodes.OK, err
        assert "READY" in out.splitlines()[-1]


def test_launch_wait_reports_a_server_that_crashes_in_its_warmup(host, tmp_path):
    status, out, err = launch(host, tmp_path, model=CRASH_KV)  # out of memory for the KV cache
    assert launched_pid(out) is not None
    assert status == exitcodes.FAILED, err
    assert "CRASHED" in err
    assert wait_until(lambda: not host.remote_processes())


def test_commands_the_hosts_parser_refuses_start_nothing(host, tmp_path):
    for flag, why in [
        ("--no-such-flag", "--no-such-flag: not a flag of SGLang"),
        ("--language-only", "requires at least one encoder urls"),
    ]:
        status, out, err = launch(host, tmp_path, flag)
        assert status == exitcodes.REFUSED, err
        assert why in err and "nothing was started" in err and launched_pid(out) is None
        assert not (tmp_path / "server.log").exists()
        assert not host.remote_processes()
