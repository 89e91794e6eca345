"""The keys find the dashboard's tabs and panes without a query (ui/app.py): Textual keeps
each query's answer under the DOM's version, so a query at every key and footer refresh
filled the screen's cache (up to 1,024 entries) with answers never asked for again."""

from tests.ui.test_hidden_tabs import SAMPLE, SIZE, two_hosts

ROUND = ("l", "2", "l", "1", "slash", "D", "enter", "escape")


def cached_answers(app) -> int:
    nodes = (app, *app.screen.walk_children(with_self=True))
    return sum(len(node._query_one_cache) for node in nodes)


async def test_keys_and_tab_switches_leave_no_stale_query_answers():
    app, _, a, b = two_hosts()
    async with app.run_test(size=SIZE) as pilot:
        a.feed(SAMPLE.read_bytes())
        b.feed(SAMPLE.read_bytes())
        await pilot.press("1")
        before = cached_answers(app)
        for _ in range(6):
            for key in ROUND:
                await pilot.press(key)
        assert app.pane.watch is a  # the keys acted: the first host's tab is back
        assert cached_answers(app) - before <= 5  # Textual's own (its tabs' few)
