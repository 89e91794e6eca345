"""`[keys]` in the config moves the dashboard's bindings: the new key acts, the old one
no longer does, and the footer and the help screen show the key as bound."""

import subprocess
import sys

from textual.widgets import Static
from textual.widgets._footer import FooterKey

from sgwatch.config import load_config
from sgwatch.live.watch import Watch
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.help import HelpScreen
from tests.conftest import until


async def test_a_remapped_key_fires_its_action_and_the_old_one_does_not(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[keys]\nlayout = "x"\nhelp = "f1"\n')
    app = SgwatchApp([Watch("ct129")], keys=load_config(path).keys)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.query(FooterKey) and app.query(".body"))
        log = app.pane.log_pane
        await pilot.press("l")
        await pilot.pause()
        assert log.region.x > 0  # `l` is no longer the layout key: still beside the panels
        await pilot.press("x")
        await until(pilot, lambda: log.region.x == 0)
        shown = {k.description: k.key_display for k in app.query(FooterKey) if k.display}
        assert shown["layout"] == "x" and shown["help"] == "f1"
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = str(app.screen.query(Static)[1].render())
        assert any(
            line.split()[:1] == ["x"] and "panels beside the log" in line
            for line in rows.splitlines()
        )


def test_config_check_rejects_an_unknown_action(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[keys]\nserch = "x"\n')
    r = subprocess.run(
        [sys.executable, "-m", "sgwatch", "config", "check", "--config", str(path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "`keys.serch`: no such action" in r.stderr
    assert "search, next, previous, follow" in r.stderr
