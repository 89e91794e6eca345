"""The keys that act on one host's log pane and layout, shared by the dashboard (on the
visible tab's host) and a fleet's host screen: each acts on `self.pane`, the HostPane
shown, so the two cannot drift apart."""

from __future__ import annotations


class PaneActions:
    """Mixed into an App or a Screen that has `pane` (a HostPane) and `notify`."""

    def action_search(self) -> None:
        self.pane.log_pane.open_search()

    def action_next_hit(self, step: int) -> None:
        self.pane.log_pane.next_hit(step)

    def action_follow(self) -> None:
        self.pane.log_pane.follow()

    def action_level(self) -> None:
        self.pane.log_pane.cycle_level()

    def action_rank(self) -> None:
        self.pane.log_pane.cycle_rank()

    def action_crash(self) -> None:
        crash = self.pane.watch.state.crash
        if crash is None or not self.pane.log_pane.jump_to_text(crash.line.strip()):
            self.notify("no crash line in the log", severity="warning")

    def action_layout(self) -> None:
        self.pane.toggle_layout()

    def action_maximize(self) -> None:
        # an App's screen is the one shown; a Screen's is itself
        self.screen.maximize(self.pane.log_pane, container=False)
