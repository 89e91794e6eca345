"""Ready and crashed are announced once each, as each host's settings say, and only
when they happen while sgwatch watches: not for a server that was already up."""

from pathlib import Path

import sgwatch.ui.app
from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from tests.conftest import FIXTURES, Clock, settle, until

SAMPLE = Path(__file__).resolve().parents[2] / "app/samples/qwen27b-tp2-warmup.log"
CRASH = FIXTURES / "sglang/crash_capture_oom.log"
SIZE = (140, 45)


class Counted(SgwatchApp):
    """The dashboard, with its terminal bell and its toasts counted."""

    CSS_PATH = Path(sgwatch.ui.app.__file__).with_name("sgwatch.tcss")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.rings = 0
        self.toasts: list[str] = []

    def bell(self) -> None:
        self.rings += 1

    def notify(self, message: str, **kwargs) -> None:
        self.toasts.append(message)
        super().notify(message, **kwargs)


def following(label: str) -> Watch:
    """A Watch whose log was empty when the session opened it: all that comes is news."""
    watch = Watch(label)
    watch.caught_up = True
    return watch


async def test_one_bell_and_one_toast_per_transition():
    ok, bad = following("ok"), following("bad")
    clock = Clock()
    app = Counted([ok, bad], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        data = SAMPLE.read_bytes()
        for line in data.splitlines(keepends=True):  # line by line, as a live log grows
            ok.feed(line)
        bad.feed(CRASH.read_bytes())
        await until(pilot, lambda: len(app.toasts) >= 2)
        await settle(app, pilot, clock)  # all drawn: nothing more may come
        assert app.rings == 2
        messages = app.toasts
        assert len(messages) == 2
        assert sum(m.startswith("ok: ready") for m in messages) == 1
        assert sum(m.startswith("bad: crashed during") for m in messages) == 1


async def test_a_server_already_up_when_sgwatch_connects_is_not_announced():
    up = Watch("up")
    clock = Clock()
    app = Counted([up], clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        up.feed(SAMPLE.read_bytes())  # the log's past, read before caught up
        up.caught_up = True
        await until(pilot, lambda: "SERVING" in str(app.pane.query_one("HostHeader").render()))
        await settle(app, pilot, clock)  # all drawn: nothing more may come
        assert app.rings == 0 and app.toasts == []


async def test_a_hosts_own_notification_settings_win():
    quiet, loud = following("quiet"), following("loud")
    clock = Clock()
    app = Counted([quiet, loud], alerts={"quiet": (False, False)}, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        quiet.feed(CRASH.read_bytes())
        loud.feed(CRASH.read_bytes())
        await until(pilot, lambda: len(app.toasts) >= 1)
        await settle(app, pilot, clock)  # all drawn: nothing more may come
        assert app.rings == 1
        assert [m.split(":")[0] for m in app.toasts] == ["loud"]
