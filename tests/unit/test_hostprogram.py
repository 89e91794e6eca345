"""Programs sent to a host: their shared modules inlined, their request filled in, and
nothing of sgwatch needed where they run."""

import ast
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import uuid

import pytest

from sgwatch.control import restart
from sgwatch.engines.sglang import ENGINE as SGLANG
from sgwatch.engines.vllm import ENGINE as VLLM
from sgwatch.remote import discover, logfollow, panefollow, streamfollow
from sgwatch.remote.discover import LogSource
from sgwatch.remote.hostprogram import program
from sgwatch.transport.link import Link


def imports_of(source: str) -> list[str]:
    return [
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    ]


def sent_by(sh: str) -> str:
    """The program a follower's command runs (`"$py" -c PROGRAM`)."""
    words = shlex.split(sh)
    return words[words.index("-c") + 1]


def test_a_shared_modules_import_is_replaced_by_its_text():
    sent = program("sgwatch.remote.host.follow", None)
    frames = program("sgwatch.remote.host.frames")
    assert "from sgwatch" not in sent and frames in sent
    assert sent.index(frames) < sent.index("\nREQUEST = None")  # in place of its import


def test_the_request_is_written_into_its_slot_as_json():
    request = {"path": "/srv/a b.log", "offset": 7, "env": {"TOKEN": "x'\"; rm -rf ~"}}
    sent = program("sgwatch.remote.host.follow", request)
    assert "\nREQUEST = None" not in sent
    scope: dict = {"__name__": "sent"}
    exec(compile(sent, "follow", "exec"), scope)
    assert scope["REQUEST"] == request


def test_a_request_for_a_program_without_a_slot_is_refused():
    with pytest.raises(ValueError, match="REQUEST = None"):
        program("sgwatch.remote.host.frames", {"a": 1})


LINK = Link(lambda: None)  # type: ignore[arg-type,return-value]  # only commands are built
PANE = LogSource("tmux", "tmux main:1.0", detail={"socket": None, "pane": "%1"})
JOURNAL = LogSource("journald", "unit", detail={"unit": "u.service", "since": 1.0})
SENT = {
    "discovery": program("sgwatch.remote.host.discover", {"patterns": [], "logs": []}),
    "sglang catalog": program(SGLANG.catalog_program),
    "vllm catalog": program(VLLM.catalog_program),
    "preflight": program(restart.PREFLIGHT, {"entry": "m:f"}),
    "restart": program(restart.RESTART, {"argv": ["x"]}),
    "pane restart": program(restart.PANE, {"pane": "%1"}),
    "service restart": program(restart.SERVICE, {"tool": ["docker"]}),
    "log follower": sent_by(logfollow.follow_command("/srv/x.log", 10, "1:2", b"ab", "", 7)),
    "stream follower": sent_by(streamfollow.StreamFollower(LINK, JOURNAL)._command()),
    "pane follower": sent_by(panefollow.PaneFollower(LINK, PANE)._command()),
}


@pytest.mark.parametrize("name", SENT)
def test_a_program_as_sent_needs_nothing_of_sgwatch(name):
    source = SENT[name]
    assert not [m for m in imports_of(source) if m.startswith("sgwatch")]
    # Run without site-packages (nothing of sgwatch importable): it loads, defines what
    # it calls and reads its request; `__name__` is not __main__, so it does not start.
    code = f"exec(compile({source!r}, {name!r}, 'exec'), {{'__name__': 'sent'}})"
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_each_follower_tells_its_program_where_to_resume():
    def request(sh: str) -> dict:
        scope: dict = {"__name__": "sent"}
        exec(compile(sent_by(sh), "sent", "exec"), scope)
        return scope["REQUEST"]

    log = request(logfollow.follow_command("/srv/x.log", 10, "1:2", b"ab", "", 7))
    assert (log["offset"], log["ident"], log["head_len"], log["writer"]) == (
        10,
        "1:2",
        2,
        "/proc/7/fd/1",
    )
    assert log["head_sha"] == hashlib.sha256(b"ab").hexdigest()
    fresh = request(logfollow.follow_command("/srv/x.log"))
    assert (fresh["ident"], fresh["head_sha"], fresh["writer"]) == (None, None, None)
    stream = request(streamfollow.StreamFollower(LINK, JOURNAL)._command())
    assert stream["command"][:3] == ["journalctl", "-u", "u.service"]
    pane = request(panefollow.PaneFollower(LINK, PANE)._command())
    assert pane == {
        "socket": None,
        "pane": "%1",
        "offset": 0,
        "sent": {"count": 0, "begun": False, "tail": []},
        "trim": 1 << 20,
    }


def test_discovery_names_the_words_of_a_servers_command_line_to_the_shell():
    patterns = [
        {"module": "sglang.launch_server", "launcher": ["sglang", "serve"]},
        {"module": None, "launcher": ["vllm", "serve"]},
        {"module": "bad;word", "launcher": None},
    ]
    assert discover.shell(patterns) == "exec /bin/sh -s -- sglang vllm"
    assert discover.shell([]) == "exec /bin/sh -s -- python"
    script = discover.script([], ["/srv/old.log"])
    sent = script.split("<<'SGWATCH_END_OF_PROGRAM'\n", 1)[1].rsplit("SGWATCH_END_OF_PROGRAM", 1)
    scope: dict = {"__name__": "sent"}
    exec(compile(sent[0], "discover", "exec"), scope)
    assert scope["REQUEST"] == {"patterns": [], "logs": ["/srv/old.log"], "recent": None}


def test_a_host_without_python3_on_path_runs_a_servers_own_python(tmp_path):
    """python.sh, told the words of a server's command line as its arguments, finds the
    interpreter of a process whose command line holds one (a conda or venv only host)."""
    for tool in ("tr", "readlink"):  # what python.sh needs besides the shell, no python3
        (tmp_path / tool).symlink_to(shutil.which(tool))
    word, absent = (f"{what}-{uuid.uuid4().hex[:8]}" for what in ("server", "absent"))
    find = discover.run_by_found_python("import sys; print(sys.executable)")

    def on_host(*words: str) -> str:
        sh = ["/bin/sh", "-s", "--", *words]
        env = {"PATH": str(tmp_path)}
        return subprocess.run(sh, input=find, env=env, capture_output=True, text=True).stdout

    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", word])
    try:
        exe = os.readlink(f"/proc/{server.pid}/exe")
        assert on_host(absent, word) == f"{exe}\n"
        assert on_host(absent) == '{"error": "no python3 on this host"}\n'
    finally:
        server.kill()
        server.wait()
