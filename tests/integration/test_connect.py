"""Connecting by alias as `ssh` would, and refusing what `ssh` would refuse."""

from __future__ import annotations

import socket
import subprocess
import threading
from pathlib import Path

import pytest

from sgwatch.transport import errors
from sgwatch.transport.link import Link
from sgwatch.transport.ssh import KEEPALIVE, SshTransport, keepalive, parse_target
from tests.integration.helpers import arun
from tests.integration.sshd import SshdServer, free_port


def host_block(path: Path, srv: SshdServer, known_hosts: Path, **options: object) -> Path:
    """A config with one `Host bad` entry: the fixture's settings, some replaced."""
    settings = {
        "HostName": "127.0.0.1",
        "Port": srv.port,
        "User": srv.user,
        "IdentityFile": srv.client_key,
        "IdentitiesOnly": "yes",
        "UserKnownHostsFile": known_hosts,
        "GlobalKnownHostsFile": "/dev/null",
        "ConnectTimeout": 5,
        **options,
    }
    path.write_text("Host bad\n" + "".join(f"    {k} {v}\n" for k, v in settings.items()))
    return path


async def whoami(t: SshTransport) -> str:
    await t.connect()
    try:
        return (await t.run("id -un")).stdout.decode().strip()
    finally:
        await t.close()


def test_connects_by_alias_with_the_configs_user_key_and_port(host, ssh):
    assert arun(whoami(ssh("ct129"))) == host.user


def test_connects_through_a_proxyjump_host(host, ssh, tmp_path):
    assert arun(whoami(ssh("viajump129"))) == host.user
    # The hop is really used: with the jump host unreachable the target is too.
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        host.ssh_config.read_text().replace(f"Port {host.port}\n", f"Port {free_port()}\n", 1)
    )
    with pytest.raises(errors.HostUnreachable, match="jump129"):
        arun(whoami(SshTransport("viajump129", config=[str(cfg)])))


def test_unknown_host_key_is_refused_with_how_to_accept_it(host, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    cfg = host_block(tmp_path / "cfg", host, known)
    with pytest.raises(errors.HostKeyUnknown) as e:
        arun(whoami(SshTransport("bad", config=[str(cfg)])))
    assert "--accept-new-host-key" in str(e.value)
    assert not e.value.retry
    assert known.read_text() == ""


def test_accept_new_learns_an_unknown_key_once(host, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    cfg = host_block(tmp_path / "cfg", host, known)
    assert arun(whoami(SshTransport("bad", config=[str(cfg)], accept_new_host_key=True)))
    assert known.read_text() == host.host_key_line().splitlines(keepends=True)[0]
    assert arun(whoami(SshTransport("bad", config=[str(cfg)]))) == host.user


def test_changed_host_key_is_refused_even_with_accept_new(host, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, blob = other.with_suffix(".pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{host.port} {kind} {blob}\n")
    before = known.read_text()
    cfg = host_block(tmp_path / "cfg", host, known)
    with pytest.raises(errors.HostKeyChanged, match="HOST KEY HAS CHANGED") as e:
        arun(whoami(SshTransport("bad", config=[str(cfg)], accept_new_host_key=True)))
    assert not e.value.retry
    assert known.read_text() == before


def test_refused_login_is_one_line_and_never_retried(host, tmp_path):
    stranger = tmp_path / "stranger_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    cfg = host_block(tmp_path / "cfg", host, host.known_hosts, IdentityFile=stranger)
    link = Link(lambda: SshTransport("bad", config=[str(cfg)]))
    with pytest.raises(errors.AuthFailed) as e:
        arun(link.connected())
    assert link.attempts == 1
    assert "\n" not in str(e.value)


def test_dns_failure(host, tmp_path):
    # Too long for DNS: the resolver refuses it without sending a query anywhere.
    name = ".".join(["a" * 63] * 5)
    cfg = host_block(tmp_path / "cfg", host, host.known_hosts, HostName=name)
    with pytest.raises(errors.HostNotFound, match="bad: host name not found") as e:
        arun(whoami(SshTransport("bad", config=[str(cfg)])))
    assert e.value.retry and not e.value.answered  # retried, but with the full backoff


def test_closed_port_is_unreachable_and_worth_retrying(host, tmp_path):
    cfg = host_block(tmp_path / "cfg", host, host.known_hosts, Port=free_port())
    with pytest.raises(errors.HostUnreachable) as e:
        arun(whoami(SshTransport("bad", config=[str(cfg)])))
    assert e.value.retry


def test_silent_server_times_out(host, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never speaks SSH
        accepted: list[socket.socket] = []
        threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
        port = silent.getsockname()[1]
        cfg = host_block(tmp_path / "cfg", host, host.known_hosts, Port=port, ConnectTimeout=1)
        with pytest.raises(errors.ConnectTimeout, match="no answer within 1 s"):
            arun(whoami(SshTransport("bad", config=[str(cfg)])))
        for conn in accepted:
            conn.close()


def test_keepalive_notices_a_dead_link_within_15_s():
    interval, count = KEEPALIVE
    assert interval * (count + 1) <= 15
    assert keepalive(0, 3) == KEEPALIVE  # ssh's default: no ServerAlive at all
    assert keepalive(60, 3) == KEEPALIVE  # too lax to notice a drop in time
    assert keepalive(1, 2) == (1, 2)  # a tighter user setting is kept


def test_targets_parse_like_ssh():
    assert parse_target("ct129") == ("ct129", None, None)
    assert parse_target("alice@gpu-7:2222") == ("gpu-7", "alice", 2222)
    assert parse_target("bob@[fe80::1]:22") == ("fe80::1", "bob", 22)
    assert parse_target("fe80::1") == ("fe80::1", None, None)


def test_with_no_config_given_the_users_ssh_config_decides_everything(host, tmp_path, monkeypatch):
    """`sgwatch ct129` with nothing but ~/.ssh/config: its UserKnownHostsFile is the one
    checked (there is no ~/.ssh/known_hosts here), and its ProxyJump is followed."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    known = tmp_path / "elsewhere_known_hosts"
    known.write_text(host.host_key_line())
    host.write_client_config(home / ".ssh" / "config", known)
    monkeypatch.setenv("HOME", str(home))

    async def both():
        out = []
        for alias in ("ct129", "viajump129"):
            t = SshTransport(alias)
            await t.connect()
            try:
                out.append((await t.run("echo ok")).stdout)
            finally:
                await t.close()
        return out

    assert arun(both()) == [b"ok\n", b"ok\n"]


async def cipher(t: SshTransport) -> str:
    await t.connect()
    try:
        return t._conns[-1].get_extra_info("recv_cipher")
    finally:
        await t.close()


def test_aes_gcm_first_unless_the_config_names_ciphers(host, tmp_path):
    # AES-GCM costs asyncssh less CPU than chacha20 for a streamed log; the
    # user's own Ciphers line still decides.
    known = tmp_path / "known_hosts"
    known.write_text(host.known_hosts.read_text())
    plain = host_block(tmp_path / "plain", host, known)
    assert arun(cipher(SshTransport("bad", config=[str(plain)]))) == "aes128-gcm@openssh.com"
    chosen = host_block(tmp_path / "chosen", host, known, Ciphers="chacha20-poly1305@openssh.com")
    assert (
        arun(cipher(SshTransport("bad", config=[str(chosen)]))) == "chacha20-poly1305@openssh.com"
    )


def test_connects_where_this_asyncssh_has_no_chacha20(host, tmp_path, monkeypatch):
    # A FIPS OpenSSL has no poly1305: asyncssh then never registers chacha20 and
    # refuses a cipher list that names it.
    import asyncssh.encryption as enc

    chacha = b"chacha20-poly1305@openssh.com"
    monkeypatch.setattr(enc, "_enc_algs", [a for a in enc._enc_algs if a != chacha])
    known = tmp_path / "known_hosts"
    known.write_text(host.known_hosts.read_text())
    plain = host_block(tmp_path / "plain", host, known)
    assert arun(cipher(SshTransport("bad", config=[str(plain)]))) == "aes128-gcm@openssh.com"
