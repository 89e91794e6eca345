"""After a restart through a real sshd with the simulator: the second run of a command is
timed by the first (ETA to ready), and the source the log pane names is the new pid."""

from __future__ import annotations

from sgwatch.core import events as ev
from sgwatch.live.transition import PHASE
from tests.integration.headless import UP
from tests.integration.helpers import arun, until


def test_the_second_run_of_a_command_has_an_eta_to_ready_from_the_first(rig):
    async def scenario():
        session, ctl, task = await rig.start()
        assert ctl.ready_eta() is None  # ready: nothing left to estimate
        seen = []  # (phase, the estimate then) as each phase of the new run begins

        def on(t) -> None:
            if t.kind == PHASE and t.value in ev.WARMUP_PHASES and not t.past:
                seen.append((t.value, ctl.ready_eta(), ctl.reference_warmup_s))

        session.watch.subscribe(on)
        launched = await ctl.restart(ctl.current, grace_s=10)
        rig.pids.append(launched.pid)
        await until(lambda: session.watch.state.state in UP and ctl.current is not None)
        task.cancel()
        return seen

    seen = arun(scenario(), timeout=120)
    first = rig.history.runs()[0]
    assert first.extra["model"] == "Qwen/Qwen3-8B"  # what makes runs comparable, recorded
    timed = [(phase, eta, ref) for phase, eta, ref in seen if eta is not None]
    assert timed, seen
    phase, eta, reference = timed[0]
    assert phase == "starting"  # timed from the first phase on
    assert eta.basis == "from 1 earlier run of this command"
    assert reference == first.warmup_seconds
    assert 0 < eta.seconds <= first.warmup_seconds
    # The estimate shrinks as the warmup goes on.
    assert [e.seconds for _, e, _ in timed] == sorted(
        (e.seconds for _, e, _ in timed), reverse=True
    )


def test_the_source_the_log_pane_names_follows_each_restart(rig):
    async def scenario():
        session, ctl, task = await rig.start()
        names = [session.watch.source]
        for _ in range(2):
            launched = await ctl.restart(ctl.current, grace_s=10)
            rig.pids.append(launched.pid)
            names.append(session.watch.source)
            await until(lambda: session.watch.state.state in UP)
        task.cancel()
        return names

    names = arun(scenario(), timeout=120)
    # The log pane's title is the Watch's source: the pid now running, not the first.
    assert [n.rsplit("(pid ", 1)[1].rstrip(")") for n in names] == [str(p) for p in rig.pids]
