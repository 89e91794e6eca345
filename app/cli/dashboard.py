"""`sgwatch HOST ...` and `sgwatch --demo`: sessions wired to the dashboard."""

from __future__ import annotations

import argparse
import asyncio
import sys
from functools import partial
from typing import TYPE_CHECKING

from sgwatch.cli import exitcodes, lifeline, notty
from sgwatch.cli.pods import pod_address
from sgwatch.cli.wait_events import exit_status
from sgwatch.config import Config, ConfigError, load_config_arg
from sgwatch.control.controller import Controller
from sgwatch.control.history import History
from sgwatch.control.podcontrol import PodController
from sgwatch.live import linkstate
from sgwatch.live.follow import UNREACHABLE
from sgwatch.live.options import Options
from sgwatch.live.podsession import PodSession
from sgwatch.live.session import Session
from sgwatch.live.watch import Watch
from sgwatch.transport.factory import transport_for
from sgwatch.transport.local import LocalTransport

if TYPE_CHECKING:
    from sgwatch.sim.demo import Demo


def run_dashboard(args: argparse.Namespace) -> int:
    try:
        config = load_config_arg(args.config)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    if not notty.terminal():  # before Textual is imported or any host is reached
        print(notty.refusal(args.hosts), file=sys.stderr)
        return exitcodes.USAGE
    from sgwatch.ui.app import SgwatchApp

    hosts = _expand(args.hosts, config)
    if len(set(hosts)) != len(hosts):
        print("sgwatch: a host is named twice", file=sys.stderr)
        return exitcodes.USAGE
    try:
        pods = {h: a for h in hosts if (a := pod_address(h, config)) is not None}
    except ValueError as e:
        print(e, file=sys.stderr)
        return exitcodes.USAGE
    watches, pumps, sessions, demo = [], [], [], None
    controllers: list[Controller | PodController] = []
    if args.demo:
        from sgwatch.sim.demo import start_demo, traffic

        demo = start_demo(engine=args.engine)
        session = demo_session(demo)
        controllers.append(Controller(session))
        sessions.append(session)
        watches.append(session.watch)
        pumps.append(lambda _w, s=session, d=demo: asyncio.gather(s.run(), traffic(d)))
    for host in hosts:
        if host in pods:  # followed on through restarts and rollouts, as a host's server is
            pod_session = PodSession(Watch(host), pods[host], options=Options(keep_looking=True))
            sessions.append(pod_session)
            watches.append(pod_session.watch)
            pumps.append(lambda _w, s=pod_session: s.run())
            controllers.append(PodController(pod_session))
            continue
        watch = Watch(host)
        make = partial(transport_for, host, accept_new_host_key=args.accept_new_host_key)
        history = History(host)  # the session's past logs and the controller's runs
        session = Session(
            watch,
            make,
            log=args.log,
            profile=config.host(host),
            choose=lambda servers, h=host: app.pick_server(h, servers),
            pid=getattr(args, "pid", None),  # sgwatch launch: the server it started
            options=Options(
                offer_launch=True,  # hosts.NAME.launch, when no server runs there
                past_logs=tuple(history.logs()),  # its last run, when none runs now
                keep_looking=True,  # and a server started later, as soon as it runs
            ),
        )
        sessions.append(session)
        watches.append(watch)
        pumps.append(lambda _w, s=session: s.run())
        controllers.append(Controller(session, history))
    bell = config.notifications.bell and not args.no_bell
    alerts = {  # hosts.NAME.notifications: that host's own bell and toast
        host: (n.bell and not args.no_bell, n.toast)
        for host in hosts
        if (n := config.host(host).notifications) is not None
    }
    app = SgwatchApp(
        watches,
        pumps,
        bell=bell,
        toast=config.notifications.toast,
        controllers=controllers,
        alerts=alerts,
        keys=config.keys,
    )
    theme = args.theme or config.theme
    if theme is not None and theme not in app.available_themes:
        names = ", ".join(sorted(app.available_themes))
        print(f"sgwatch: no theme named {theme!r}; choose one of: {names}", file=sys.stderr)
        if demo is not None:
            demo.stop()
        return exitcodes.USAGE
    if theme is not None:
        app.theme = theme
    # A closed terminal or a kill ends sgwatch within 2 s, and the demo's servers with it.
    lifeline.install(app.exit, lambda: demo and demo.kill(_followed_pid(sessions[0])))
    try:
        app.run()
    finally:
        if demo is not None:
            # a restart from the flag panel replaced the demo's server: stop that one too
            demo.stop(_followed_pid(sessions[0]))
    return quit_status(sessions)


def _followed_pid(session: Session | PodSession) -> int | None:
    return session.server.pid if isinstance(session, Session) and session.server else None


def quit_status(sessions: list[Session | PodSession]) -> int:
    """OK, unless no host could be watched at all: then why the first could not, as
    the headless commands would say it (unreachable, no server)."""
    if any(s.watch.link != linkstate.FAILED for s in sessions):
        return exitcodes.OK
    return exit_status(UNREACHABLE, sessions[0])


def demo_session(demo: Demo) -> Session:
    """A session on the demo's server through a local transport of its own: its commands
    (the log follower, nvidia-smi) find the stand-in; `localhost`'s and sgwatch's do not."""
    make = partial(LocalTransport, env=demo.commands_env)
    return Session(Watch("demo"), make, pid=demo.proc.pid)


def _expand(hosts: list[str], config: Config) -> list[str]:
    """`@name` stands for the hosts of config group `name`."""
    out = []
    for h in hosts:
        if h.startswith("@") and h[1:] in config.groups:
            out.extend(config.groups[h[1:]])
        else:
            out.append(h)
    return out
