"""The simulated server's process tree and import time, as SGLang's: a scheduler per
rank and a detokenizer under their SGLang titles, gone with the server however it
dies; a bad flag reported only after the imports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sgwatch.sim.common.proctree import DEMO_PREFIX, OWNER, owner
from sgwatch.sim.demo import OWNER_FILE, UNOWNED_AGE_S, sweep_orphans
from sgwatch.sim.sglang.processes import IMPORT_S
from tests.integration.helpers import wait_until

SPEED = 10.0

OUTLIVE_THEN_SLEEP = (
    "from sgwatch.sim.common.proctree import outlive_no_owner as o; o(); "
    "import time; time.sleep(60)"
)


def children(pid: int) -> dict[int, tuple[str, str]]:
    """Live children of `pid`: (comm, argv[0])."""
    out = {}
    for d in Path("/proc").iterdir():
        try:
            if (
                not d.name.isdigit()
                or int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) != pid
            ):
                continue
            argv0 = (d / "cmdline").read_bytes().split(b"\0")[0].decode()
            out[int(d.name)] = ((d / "comm").read_text().strip(), argv0)
        except (OSError, IndexError):
            continue
    return out


def alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def sim(*args: str, log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "sgwatch.sim", "--sim-speed", str(SPEED), *args]
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


def test_schedulers_per_rank_and_a_detokenizer_die_with_the_server(tmp_path):
    proc = sim("--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--port", "0", log=tmp_path / "log")
    try:

        def titled() -> dict[int, tuple[str, str]]:
            kids = children(proc.pid)
            return (
                len(kids) == 3 and all(c.startswith("sglang::") for c, _ in kids.values()) and kids
            )

        kids = wait_until(titled, timeout=30)
        assert sorted(kids.values()) == [
            ("sglang::detoken", "sglang::detokenizer"),
            ("sglang::schedul", "sglang::scheduler_TP0"),
            ("sglang::schedul", "sglang::scheduler_TP1"),
        ]
    finally:
        proc.send_signal(signal.SIGKILL)  # the server alone, not its group
        proc.wait()
    assert wait_until(lambda: not any(alive(k) for k in kids))


def test_a_bad_flag_is_reported_after_the_imports(tmp_path):
    log = tmp_path / "log"
    t0 = time.monotonic()
    proc = sim("--model-path", "Qwen/Qwen3-8B", "--language-only", "--port", "0", log=log)
    assert proc.wait(timeout=60) == 1
    assert time.monotonic() - t0 >= IMPORT_S / SPEED
    assert "requires at least one encoder urls" in log.read_text()
    assert not children(proc.pid) and os.path.exists(log)


def test_a_server_with_an_owner_ends_with_it_and_removes_its_folder(tmp_path):
    """The demo's environment names sgwatch as the owner; a server started from it
    (however: a restart's has no parent to die with) ends when the owner does."""
    folder = tmp_path / "sgwatch-demo-x"
    folder.mkdir()
    (folder / "server.log").write_text("kept while the owner lives\n")
    ours = subprocess.Popen(["sleep", "60"])
    code = OUTLIVE_THEN_SLEEP
    env = {**os.environ, OWNER: owner(ours.pid, folder)}
    server = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        assert not wait_until(lambda: server.poll() is not None, 1.0)  # the owner lives
        assert folder.exists()
        ours.kill()
        ours.wait()
        assert wait_until(lambda: server.poll() is not None, 5)
        assert server.returncode == -signal.SIGKILL
        assert not folder.exists()
    finally:
        ours.kill()
        server.kill()


def test_a_server_whose_owner_pid_was_recycled_ends_at_once(tmp_path):
    folder = tmp_path / "sgwatch-demo-y"
    folder.mkdir()
    code = OUTLIVE_THEN_SLEEP
    wrong_start = f"{os.getpid()}:1:{folder}"  # this pid, but not the process that started then
    server = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, OWNER: wrong_start})
    try:
        assert wait_until(lambda: server.poll() is not None, 5)
        assert server.returncode == -signal.SIGKILL
        assert not folder.exists()
    finally:
        server.kill()


def test_the_next_demo_removes_the_folders_of_a_demo_killed_at_once(tmp_path):
    """A demo SIGKILLed within its server's imports leaves its folder; the next demo
    removes it, and never a folder whose sgwatch still runs; a folder with no owner
    record, an earlier version's, once nothing in it changed for a day."""
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead_owner = owner(gone.pid, tmp_path / "x")  # taken while it runs
    gone.kill()
    gone.wait()
    names = ("dead", "alive", "unowned", "unowned-stale", "unowned-logging")
    folders = {name: tmp_path / f"{DEMO_PREFIX}{name}" for name in names}
    for folder in folders.values():
        (folder / "bin").mkdir(parents=True)
        (folder / "server.log").write_text("log\n")
    (folders["dead"] / OWNER_FILE).write_text(dead_owner)
    (folders["alive"] / OWNER_FILE).write_text(owner(os.getpid(), folders["alive"]))
    # An earlier version's folders (no owner record): untouched for over a day, or
    # its server still writing the log though the folder is that old.
    old = time.time() - UNOWNED_AGE_S - 60
    for name in ("unowned-stale", "unowned-logging"):
        for path in (folders[name] / "bin", folders[name] / "server.log", folders[name]):
            os.utime(path, (old, old))
    os.utime(folders["unowned-logging"] / "server.log")  # written just now
    sweep_orphans(tmp_path)
    left = {name for name, f in folders.items() if f.exists()}
    assert left == {"alive", "unowned", "unowned-logging"}
