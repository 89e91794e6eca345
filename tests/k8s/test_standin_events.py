"""The kubectl stand-in's events, written by many kubelets at once (a group's pods start
together): none lost, no kubelet failing on another's write (which ended its pod)."""

import json
import subprocess
import sys
from pathlib import Path

STANDINS = Path(__file__).resolve().parents[1] / "integration" / "standins"
KUBELETS, EACH = 8, 25

WRITER = f"""
import sys
sys.path.insert(0, {str(STANDINS)!r})
import _kube
for i in range({EACH}):
    _kube.event("kind", "llm", "pod-" + sys.argv[1], "Pulled", "image " + str(i))
"""


def test_kubelets_recording_events_at_once_lose_none(tmp_path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(n)], cwd=tmp_path, stderr=subprocess.PIPE
        )
        for n in range(KUBELETS)
    ]
    errors = [p.communicate(timeout=60)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * KUBELETS, errors
    # `python -c` keeps the state beside its argv[0]: the working folder
    events = json.loads((tmp_path / "standin-state" / "k8s-events-kind-llm.json").read_text())
    seen = {(e["involvedObject"]["name"], e["message"]) for e in events}
    assert len(seen) == KUBELETS * EACH
