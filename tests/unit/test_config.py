"""config.toml: defaults without it, and every kind of mistake named precisely."""

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from sgwatch.config import Config, ConfigError, HostProfile, load_config

README = Path(__file__).resolve().parents[2] / "README.md"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text)
    return p


def test_no_file_at_the_default_place_means_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config() == Config()
    assert load_config().notifications.bell is True


def test_an_explicit_file_that_is_missing_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.toml")


def test_invalid_toml_names_the_file(tmp_path):
    p = write(tmp_path, "theme = \n")
    with pytest.raises(ConfigError, match=re.escape(str(p)) + ": not valid TOML"):
        load_config(p)


def test_unknown_key_is_an_error_naming_the_key(tmp_path):
    p = write(tmp_path, '[hosts.ct129]\nlog_path = "/x.log"\n')
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert str(e.value) == (
        f"{p}: unknown key `hosts.ct129.log_path` (see the README for the keys sgwatch reads)"
    )


def test_wrong_type_names_the_key_and_what_was_expected(tmp_path):
    p = write(tmp_path, "[hosts.ct129]\ngpu_bandwidth_gbps = -3\n[notifications]\nbell = 'loud'\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    lines = str(e.value).splitlines()
    assert any(
        "`hosts.ct129.gpu_bandwidth_gbps`: input should be greater than 0" in x for x in lines
    )
    assert any("`notifications.bell`: input should be a valid boolean" in x for x in lines)


def test_the_readme_examples_are_valid_configs(tmp_path):
    examples = [b.split("```", 1)[0] for b in README.read_text().split("```toml\n")[1:]]
    cfgs = [load_config(write(tmp_path, example)) for example in examples]
    assert any(cfg.hosts and cfg.theme for cfg in cfgs)
    assert any(cfg.fleets for cfg in cfgs)
    documented = set(re.findall(r"^\| `([A-Za-z_.]+)`", README.read_text(), re.M))
    assert set(config_keys(Config)) <= documented


def config_keys(model, prefix=""):
    """Every key a user can write, as the README names them (hosts.ALIAS.log, ...)."""
    for name, f in model.model_fields.items():
        key = prefix + name
        nested = f.annotation if isinstance(f.annotation, type) else None
        if name == "hosts":
            yield from config_keys(HostProfile, "hosts.ALIAS.")
        elif nested is not None and issubclass(nested, BaseModel):
            yield from config_keys(nested, key + ".")
        else:
            yield key


def test_config_check_command(tmp_path):
    import subprocess
    import sys

    sgwatch = str(Path(sys.executable).with_name("sgwatch"))
    good = write(tmp_path, '[hosts.ct129]\nlog = "/x.log"\n')
    r = subprocess.run(
        [sgwatch, "config", "check", "--config", str(good)], capture_output=True, text=True
    )
    assert r.returncode == 0 and "ok (1 host profiles" in r.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'red'\n")
    r = subprocess.run(
        [sgwatch, "config", "check", "--config", str(bad)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "unknown key `colour`" in r.stderr
