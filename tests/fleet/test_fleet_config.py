"""`[fleets.NAME]` in the config: what is accepted, and one line for what is not."""

from __future__ import annotations

import pytest

from sgwatch.config import ConfigError, load_config
from sgwatch.fleet.hostmap import HostMap
from sgwatch.fleet.open import open_source
from sgwatch.fleet.prometheus import PrometheusSource


def load(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_a_fleet_with_every_key(tmp_path):
    cfg = load(
        tmp_path,
        """
[fleets.prod]
prometheus = "https://prom.example:9090/"
basic_auth = {username = "ops", password_file = "~/.prom-pw"}
ca_file = "/etc/ssl/our-ca.pem"
match = ['job=~"vllm.*"', 'env = "prod"']
gpu_match = ['job="dcgm"']
host = "{instance_host}"
hosts = {"10.0.0.5:8000" = "ct129"}
refresh_s = 10
rate_window = "2m"
follow = 3
""",
    )
    fleet = cfg.fleets["prod"]
    assert fleet.prometheus == "https://prom.example:9090"
    assert fleet.match == ['job=~"vllm.*"', 'env = "prod"'] and fleet.refresh_s == 10


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('prometheus = "http://p:9090"\ntoken = "abc123"', "unknown key `fleets.f.token`"),
        ('prometheus = "http://ops:abc123@p:9090"', "a user or password in the URL"),
        ('prometheus = "ftp://p"', "expected an http:// or https:// URL"),
        ('prometheus = "http://p:9090"\nmatch = ["vllm"]', "is not a label matcher"),
        (
            'prometheus = "http://p:9090"\nhost = "{instance_host"',
            "`fleets.f.host`: not a template",
        ),
        ('prometheus = "http://p:9090"\nrate_window = "1 minute"', "a PromQL duration"),
        ('prometheus = "http://p:9090"\nfollow = 0', "`fleets.f.follow`"),
        (
            'prometheus = "http://p:9090"\nbearer_token_env = "T"\nbearer_token_file = "F"',
            "give one of bearer_token_file",
        ),
        (
            'basic_auth = {username = "u", password = "abc123"}',
            "unknown key `fleets.f.basic_auth.password`",
        ),
    ],
)
def test_a_bad_fleet_is_named_and_its_secrets_are_not(tmp_path, text, says):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, f"[fleets.f]\n{text}\n")
    assert says in str(e.value)
    assert "abc123" not in str(e.value)


def test_the_ssh_host_of_a_server():
    table = HostMap({"10.0.0.5:8000": "ct129", "10.0.0.6": "ct130"}, "gpu-{instance_host}")
    assert table.host_of({"instance": "10.0.0.5:8000"}) == "ct129"
    assert table.host_of({"instance": "10.0.0.6:8001"}) == "ct130"
    assert table.host_of({"instance": "10.0.0.7:8000"}) == "gpu-10.0.0.7"
    assert HostMap({}, "{node}").host_of({"instance": "10.0.0.7:8000"}) is None
    assert HostMap({}, None).host_of({"instance": "[::1]:8000"}) is None
    assert HostMap({}, "{instance_host}").host_of({"instance": "[::1]:8000"}) == "::1"


def test_a_one_off_url_is_checked_as_the_config_checks_it():
    with pytest.raises(ValueError) as e:
        PrometheusSource.for_url("http://ops:abc123@p:9090")
    assert str(e.value) == "a user or password in the URL; use basic_auth"


async def test_how_many_down_servers_are_followed_at_once(tmp_path):
    """The fleet's `follow`; `--follow N` over it; 8 when neither says."""
    text = '[fleets.a]\nprometheus = "http://p:9090"\nfollow = 3\n[fleets.b]\nprometheus = "http://p"\n'
    cfg = load(tmp_path, text)
    for name, asked, follows in (("a", None, 3), ("a", 2, 2), ("b", None, 8)):
        source, _ = open_source(cfg, name, (), at_once=asked)
        try:
            assert source.at_once == follows
        finally:
            await source.close()
    source, _ = open_source(cfg, None, (), prometheus="http://p:9090")
    assert source.at_once == 8
    await source.close()
