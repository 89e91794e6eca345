"""The fleet table over a namespace's pods, as a person drives it: rows from the kubectl
stand-in, a rollout's new pod a new row and the old one's gone, enter opens the pod's
dashboard."""

from __future__ import annotations

from sgwatch.config import Config
from sgwatch.core.podaddress import parse_address
from sgwatch.fleet.pods import PodFleet
from sgwatch.ui.fleet_app import FleetApp
from sgwatch.ui.host_screen import HostScreen, row_opener
from sgwatch.ui.widgets.header import HostHeader
from tests.conftest import until
from tests.k8s.conftest import container, deployment, sim, wait_for

SIZE = (140, 45)


def rows(app) -> list[str]:
    return list(app.view.table._order)


def text(app, selector) -> str:
    return str(app.screen.query_one(selector).render())


async def test_enter_opens_a_pods_dashboard_and_a_rollout_replaces_its_row(kube):
    kube.apply(deployment("vllm", container(sim())))
    (first,) = [p["metadata"]["name"] for p in wait_for(kube.pods)]
    source = PodFleet("k8s://llm", parse_address("k8s://llm"))
    app = FleetApp(source, row_opener(Config()), interval_s=0.5)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.view.table.cursor_key == f"{first}/vllm")
        await until(pilot, lambda: "ready in" in text(app, "#fleet-detail"), timeout=120)
        assert f"on kind-worker (k8s://llm/{first})" in text(app, "#fleet-detail")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HostScreen))
        await until(pilot, lambda: "READY" in text(app, HostHeader), timeout=120)
        await pilot.press("escape")
        kube.kubectl("rollout", "restart", "deployment/vllm", "-n", "llm")
        # The new pod is ready as its container starts (no readiness probe), and the old
        # one goes as soon as its server stops: a slow poll may never see both, so each is
        # waited on alone.
        await until(pilot, lambda: set(rows(app)) - {f"{first}/vllm"}, timeout=120)
        await until(pilot, lambda: f"{first}/vllm" not in rows(app), timeout=120)
        (successor,) = rows(app)
        assert successor.startswith("vllm-") and successor.endswith("/vllm")
    await source.close()
