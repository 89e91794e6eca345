"""The dashboard and the fleet view both set, as they are built, what a dashboard left
open relies on (ui/leftopen.py)."""

import pickle

import pytest
import rich.style
import textual.style
import textual.widget
from textual._compositor import Compositor
from textual.cache import LRUCache
from textual.css.stylesheet import Stylesheet
from textual.strip import Strip
from textual.widget import Widget

from sgwatch.live.watch import Watch
from sgwatch.ui import boxmodels, components, maps, pickles, removed, rings, strips
from sgwatch.ui.app import SgwatchApp
from sgwatch.ui.fleet_app import FleetApp
from tests.ui.test_fleet_table import Script, snap

REPLACED = [  # Textual's own, and what each app puts in its place as it is built
    (Compositor, "_arrange_root", maps.TEXTUALS, maps._arrange_root),
    (LRUCache, "clear", rings.TEXTUALS, rings._clear),
    (
        Stylesheet,
        "_process_component_classes",
        components.TEXTUALS,
        components._process_component_classes,
    ),
    (Widget, "_message_loop_exit", removed.TEXTUALS, removed._message_loop_exit),
    (Strip, "__init__", strips.TEXTUALS, strips._init),
    (Strip, "divide", strips.TEXTUALS_DIVIDE, strips._divide),
    (textual.widget, "LRUCache", LRUCache, boxmodels._box_models),
    (rich.style, "dumps", pickle.dumps, pickles._dumps),
    (textual.style, "dumps", pickle.dumps, pickles._dumps),
]


@pytest.mark.parametrize(
    "make",
    [lambda: SgwatchApp([Watch("ct129")]), lambda: FleetApp(Script([snap()]))],
    ids=["dashboard", "fleet"],
)
def test_each_app_sets_what_a_dashboard_left_open_relies_on(make):
    for owner, name, textuals, _ in REPLACED:
        setattr(owner, name, textuals)
    make()
    assert [getattr(owner, name) for owner, name, *_ in REPLACED] == [ours for *_, ours in REPLACED]
