"""The live flag catalog is kept per host, interpreter and SGLang version."""

from sgwatch.control import catalog_cache

LIVE = '{"engine": "sglang", "version": "0.5.10", "origin": "live", "options": []}'


def test_kept_per_host_interpreter_and_version():
    catalog_cache.save("ct129", "/venv/bin/python", "0.5.10", LIVE)
    assert catalog_cache.load("ct129", "/venv/bin/python", "0.5.10") == LIVE
    assert catalog_cache.load("ct129", "/venv/bin/python", "0.5.11") is None  # upgraded
    assert catalog_cache.load("ct129", "/other/bin/python", "0.5.10") is None
    assert catalog_cache.load("ct130", "/venv/bin/python", "0.5.10") is None


def test_an_unknown_version_is_never_cached():
    catalog_cache.save("ct129", "/venv/bin/python", None, LIVE)
    assert catalog_cache.load("ct129", "/venv/bin/python", None) is None
    assert not catalog_cache.folder().exists()
