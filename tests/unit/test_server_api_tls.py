"""A server's API is plain HTTP through a forward: opening it again (each restart, link
drop and failed scrape does) must not load the CA bundle again, a large block of the
C library's heap and a pause of the event loop each time."""

import ssl

from sgwatch.control.server_http import api_at


async def test_the_ca_bundle_is_loaded_once_for_every_client(monkeypatch):
    loads = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loads.append(args or kwargs)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    for port in (1, 2, 3):
        async with api_at(port, f"ct129:{port}") as api:
            assert str(api.client.base_url) == f"http://127.0.0.1:{port}"
    assert len(loads) <= 1
