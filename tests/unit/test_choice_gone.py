"""Choice with no server running: the logs of servers that are gone (host/recent.py's)."""

from __future__ import annotations

import asyncio

from sgwatch.config import HostProfile
from sgwatch.live.choice import Choice
from sgwatch.live.linkstate import FAILED
from sgwatch.live.watch import Watch
from sgwatch.remote.discover import Discovery, GoneLog, PastLog, ServerProcess

NOW = 1_800_000_000.0
CRASHED = (
    "[2026-01-10 08:00:01] Scheduler hit an exception: Traceback (most recent call last):\n"
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
)
LOADING = "[2026-01-10 08:00:00 TP0] Load weight begin. avail mem=78.00 GB\n"


def gone(path: str, ago: float, tail: str) -> GoneLog:
    return GoneLog(path=path, mtime=NOW - ago, size=len(tail), engine="sglang", tail=tail)


def choose(*logs: GoneLog, profile: HostProfile | None = None, ask=None):
    choice = Choice(Watch("ct129"), None, profile or HostProfile(), ask, None, False)
    found = Discovery(hostname="h", python="python3", recent=list(logs), now=NOW)
    return choice, asyncio.run(choice.pick(found))


def test_one_log_of_a_gone_server_is_followed_with_a_note_naming_it():
    choice, picked = choose(gone("/tmp/sglang.log", 300, CRASHED))
    assert picked == ("/tmp/sglang.log", None)
    assert not choice.ambiguous
    assert "following the log of one that is gone, /tmp/sglang.log, written 5 min ago" in (
        choice.watch.note
    )


def test_several_are_listed_newest_first_with_state_and_nothing_is_picked():
    choice, picked = choose(gone("/root/b.log", 30, LOADING), gone("/tmp/a.log", 900, CRASHED))
    assert picked == (None, None) and choice.ambiguous
    assert choice.watch.link == FAILED
    head, first, second = choice.watch.note.splitlines()
    assert "2 logs of servers that are gone" in head and "--log PATH" in head
    assert first.split()[0] == "/root/b.log" and first.endswith("sglang  LOADING")
    assert second.split()[0] == "/tmp/a.log" and second.endswith("sglang  CRASHED")


def test_someone_to_ask_gets_the_newest_and_the_others_named():
    async def ask(_servers):
        raise AssertionError("servers only are asked about")

    choice, picked = choose(
        gone("/root/b.log", 30, LOADING), gone("/tmp/a.log", 900, CRASHED), ask=ask
    )
    assert picked == ("/root/b.log", None) and not choice.ambiguous
    assert "/tmp/a.log" in choice.watch.note


def test_looked_for_once_and_never_over_a_named_log():
    choice = Choice(Watch("ct129"), None, HostProfile(), None, None, False, ("/scratch",))
    first = choice.gone_request()
    assert first is not None and first["places"] == ["/scratch"]
    assert {name for name, _ in first["engines"]} >= {"sglang", "vllm"}
    assert choice.gone_request() is None
    named = Choice(Watch("ct129"), "/srv/x.log", HostProfile(), None, None, False)
    assert named.gone_request() is None
    since = Choice(Watch("ct129"), None, HostProfile(), None, None, True)
    assert since.gone_request() is None
    profile = Choice(Watch("ct129"), None, HostProfile(log="/srv/s.log"), None, None, False)
    assert profile.gone_request() is None


def test_a_look_that_ran_out_of_time_is_said_with_nothing_found():
    choice = Choice(Watch("ct129"), None, HostProfile(), None, None, False)
    found = Discovery(hostname="h", python="python3", now=NOW, recent_cut=True)
    assert asyncio.run(choice.pick(found)) == (None, None)
    assert "ran out of time" in choice.nothing()
    fresh = Choice(Watch("ct129"), None, HostProfile(), None, None, False)
    asyncio.run(fresh.pick(Discovery(hostname="h", python="python3", now=NOW)))
    assert "ran out of time" not in fresh.nothing()


def server(log: str | None) -> ServerProcess:
    return ServerProcess(
        pid=41, pgid=41, start_time=1, engine="sglang", kind="launch_server", argv=["python3"],
        user="u", cwd="/", env=None, env_error=None, stdin=None, stdout=None, stderr=None,
        log=log, log_deleted=False, interpreter=None, engine_version=None, started_at=NOW - 600,
    )  # fmt: skip


def last_run(*servers: ServerProcess) -> Watch:
    """The host's last run, as a log written since every running server started."""
    watch = Watch("ct129")
    choice = Choice(watch, None, HostProfile(), None, None, False)
    found = Discovery(
        hostname="h", python="python3", servers=list(servers), now=NOW,
        logs=[PastLog(path="/srv/llm.log", mtime=NOW - 5, size=10)],
    )  # fmt: skip
    assert choice._last_run(found) == "/srv/llm.log"
    return watch


def test_a_log_no_known_server_writes_is_over_only_when_every_server_names_its_log():
    assert last_run().writer_gone  # none running
    assert last_run(server("/srv/other.log")).writer_gone
    # a server whose output discovery could not place may be the one writing it
    assert not last_run(server(None)).writer_gone
