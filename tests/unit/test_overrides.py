"""The table reader both engines' "I changed a setting" warnings go through."""

import re

from sgwatch.engines.overrides import said

TABLE = (
    (re.compile(r"Capping cudagraph capture sizes from max (\d+) to (\d+)"), "size", 2, 1),
    (r"reduce --mem-fraction-static to (\d+(?:\.\d+)?)", "mem_fraction_static", 1),
    (r"mode is '(\w+)'", "mode", 1, None),
    (r"^Cuda graph is disabled", "disable_cuda_graph", True),
    (r"backend (\w+) off", "backend", 1),
)


def test_the_first_matching_row_gives_the_value_the_server_runs_with_and_what_was_asked():
    e = said(TABLE, "  Capping cudagraph capture sizes from max 512 to 256 for mtp  ", "t1")
    assert (e.ts, e.setting, e.effective, e.requested) == ("t1", "size", 256, 512)
    assert e.reason == "Capping cudagraph capture sizes from max 512 to 256 for mtp"


def test_logged_values_are_typed_as_the_server_holds_them():
    values = [
        said(TABLE, message, None).effective
        for message in (
            "reduce --mem-fraction-static to 0.85",
            "mode is 'FULL'",
            "Cuda graph is disabled because of x",
            "backend triton off",
        )
    ]
    assert values == [0.85, "FULL", True, "triton"]


def test_a_line_no_row_matches_is_none():
    assert said(TABLE, "Disable Cuda graph is disabled", None) is None  # anchored
    assert said(TABLE, "an ordinary line", None) is None
