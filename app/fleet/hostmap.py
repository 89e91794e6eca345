"""Which SSH host a scraped server is: a table first, then a template over its labels.

    hosts = {"10.0.0.5:8000": "ct129"}    # by instance, or by the instance's host
    host = "{instance_host}"              # labels, plus instance_host and instance_port

A template naming a label the server lacks maps it to no host.
"""

from __future__ import annotations

from collections.abc import Mapping


def split_instance(instance: str) -> tuple[str, str]:
    """(host, port) of `host:port`, `[v6]:port` or a bare host (port "")."""
    if instance.startswith("["):
        host, _, rest = instance[1:].partition("]")
        return host, rest.removeprefix(":")
    host, colon, port = instance.rpartition(":")
    if not colon or not port.isdigit():
        return instance, ""
    return host, port


class HostMap:
    def __init__(self, table: Mapping[str, str], template: str | None) -> None:
        self._table = dict(table)
        self._template = template

    def host_of(self, labels: Mapping[str, str]) -> str | None:
        instance = labels.get("instance", "")
        host, port = split_instance(instance)
        for key in (instance, host):
            if key in self._table:
                return self._table[key]
        if self._template is None:
            return None
        fields = {**labels, "instance_host": host, "instance_port": port}
        try:
            return self._template.format_map(fields) or None
        except KeyError:
            return None
