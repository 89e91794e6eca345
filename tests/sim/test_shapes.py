"""The simulator cannot drift into invented formats: every record it prints
belongs to a family of real SGLang output, and every family is real."""

from pathlib import Path

from tests.sim.shapes import FAMILIES, REAL_PREFIX, family_of, records, undocumented


def test_every_simulated_record_belongs_to_a_real_family(scenarios):
    unknown = {
        (name, text[:160])
        for name, result in scenarios.items()
        for prefixed, text in records(result.log)
        if family_of(prefixed, text) is None
    }
    assert sorted(unknown) == []


def test_every_family_is_printed_by_some_scenario(scenarios):
    used = {
        family_of(prefixed, text).name
        for result in scenarios.values()
        for prefixed, text in records(result.log)
        if family_of(prefixed, text) is not None
    }
    assert sorted(f.name for f in FAMILIES if f.name not in used) == []


def test_each_family_matches_its_real_log(corpus: Path):
    missing = []
    for family in FAMILIES:
        if not family.source.endswith(".log"):
            continue
        real = records((corpus / family.source).read_bytes(), REAL_PREFIX)
        if not any(p == family.prefixed and family.matches(t) for p, t in real):
            missing.append((family.name, family.source))
    assert missing == []


def test_each_documented_family_is_in_the_design_notes():
    assert undocumented(FAMILIES) == []
