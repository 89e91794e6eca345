"""A fleet source from what a user names: a `[fleets.NAME]` of the config (a Prometheus
query API or a Kubernetes address), `@GROUP` (a config group of SSH hosts), a
`k8s://...` address, or a Prometheus URL for a one-off look. `sgwatch fleet` and the
MCP `fleet` tool open theirs here, and take a one-off look with `look_once`.
"""

from __future__ import annotations

from functools import partial

from sgwatch.config import Config
from sgwatch.core.podaddress import is_pod_address, parse_address
from sgwatch.fleet.follow import AT_ONCE, Followed
from sgwatch.fleet.pods import Guarding, PodFleet
from sgwatch.fleet.source import FleetSnapshot, FleetSource
from sgwatch.fleet.ssh_group import SshGroup
from sgwatch.fleet.tail import ssh_starter

EVERY_S = 5.0  # between two refreshes, unless the fleet's refresh_s says otherwise
SETTLE_S = 15.0  # a one-off look waits this long for the hosts followed over SSH


class Refused(Exception):
    """The fleet cannot be looked at as asked: `str(e)` says why, in one line."""


def open_source(
    config: Config,
    name: str | None,
    log_places: tuple[str, ...],
    prometheus: str | None = None,
    accept_new_host_key: bool = False,
    at_once: int | None = None,
    guard: Guarding | None = None,
) -> tuple[FleetSource, float]:
    """The source `name` (or the URL `prometheus`) names, and its refresh interval.
    `log_places`: where the logs of servers that are gone are looked for; `at_once`:
    how many down servers (or pods) are followed at once (default: the fleet's `follow`);
    `guard`: what watches a pod's warmup against its probes."""
    starter = partial(ssh_starter, config, accept_new_host_key, log_places)
    if name and is_pod_address(name):
        if prometheus:
            raise Refused("pods are listed with kubectl: no --prometheus with a k8s:// address")
        try:
            address = parse_address(name)
        except ValueError as e:
            raise Refused(str(e)) from None
        return PodFleet(name, address, None, at_once or AT_ONCE, guard), EVERY_S
    if name and name.startswith("@"):
        if prometheus:
            raise Refused("a group (@NAME) is followed over SSH: no --prometheus with it")
        hosts = config.groups.get(name[1:])
        if not hosts:
            known = ", ".join(f"@{g}" for g in config.groups) or "none"
            raise Refused(f"no group {name} in the config (groups: {known})")
        # a host's row is whatever runs there, as on the dashboard: a new server is followed
        return SshGroup(name, hosts, starter(keep_looking=True)), EVERY_S
    from sgwatch.fleet.auth import AuthError  # httpx: only for a Prometheus fleet
    from sgwatch.fleet.prometheus import PrometheusSource

    if prometheus:
        if name:
            raise Refused("NAME or --prometheus URL, not both")
        try:
            inner = PrometheusSource.for_url(prometheus)
        except ValueError as e:  # the URL, as the config would check it
            raise Refused(f"--prometheus {prometheus}: {_first_line(e)}") from None
        return Followed(inner, starter(), at_once=at_once or AT_ONCE), EVERY_S
    if not name:
        raise Refused("name a fleet ([fleets.NAME] in the config), @GROUP or --prometheus URL")
    fleet = config.fleets.get(name)
    if fleet is None:
        known = ", ".join(config.fleets) or "none"
        raise Refused(f"no fleet {name} in the config (fleets: {known}; groups take @NAME)")
    if fleet.kubernetes is not None:
        address = parse_address(fleet.kubernetes)
        pods = PodFleet(name, address, fleet.selector, at_once or fleet.follow, guard)
        return pods, fleet.refresh_s
    try:
        inner = PrometheusSource.open(name, fleet)
    except AuthError as e:
        raise Refused(str(e)) from None
    return Followed(inner, starter(), at_once=at_once or fleet.follow), fleet.refresh_s


async def look_once(source: FleetSource, settle_s: float = SETTLE_S) -> FleetSnapshot:
    """One snapshot, with what SSH says of the hosts followed (waited for up to
    `settle_s`); the source is closed after."""
    try:
        snap = await source.snapshot()
        if isinstance(source, Followed | SshGroup | PodFleet) and not snap.stale:
            await source.settle(settle_s)
            snap = await source.snapshot()
    finally:
        await source.close()
    return snap


def _first_line(e: ValueError) -> str:
    """A validation error's message alone (pydantic's spans several lines)."""
    errors = getattr(e, "errors", None)
    return errors()[0]["msg"] if callable(errors) and errors() else str(e)
