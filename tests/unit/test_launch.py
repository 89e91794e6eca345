"""Launch command model: parsing what discovery and configs hold, edits, diff, masking."""

import shlex
from pathlib import Path

import pytest

from sgwatch.core.cmdline import (
    MISSING,
    Flag,
    FlagRef,
    LaunchError,
    diff,
    disable,
    enable,
    masked,
    parse,
    parse_shell,
    set_value,
    settings,
    unset,
    value_of,
)

LINES = [
    line
    for line in (Path(__file__).parents[1] / "fixtures" / "flags" / "launch_lines.txt")
    .read_text()
    .splitlines()
    if line and not line.startswith("#")
]


@pytest.mark.parametrize("line", LINES)
def test_realistic_lines_round_trip(line):
    argv = shlex.split(line)
    cmd = parse_shell(line)
    assert cmd.argv == argv
    assert parse(cmd.argv) == cmd
    assert shlex.split(cmd.shell) == argv


def test_the_parts_of_a_wrapped_command():
    cmd = parse_shell(
        "CUDA_VISIBLE_DEVICES=0,1 nohup python3 -u -m sglang.launch_server "
        "--model-path m --tp 2 --mem-fraction-static=0.8 --cuda-graph-bs 1 2 4 --enable-metrics"
    )
    assert cmd.prefix == ("CUDA_VISIBLE_DEVICES=0,1", "nohup")
    assert cmd.env == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert cmd.server_argv == cmd.argv[2:]
    assert cmd.program == ("python3", "-u", "-m", "sglang.launch_server")
    assert cmd.module == "sglang.launch_server"
    assert cmd.positional == ()
    assert cmd.flags == (
        Flag("--model-path", ("m",)),
        Flag("--tp", ("2",)),
        Flag("--mem-fraction-static", ("0.8",), inline=True),
        Flag("--cuda-graph-bs", ("1", "2", "4")),
        Flag("--enable-metrics"),
    )


@pytest.mark.parametrize(
    ("line", "prefix", "program", "positional"),
    [
        ("sglang serve MODEL --port 1", (), ("sglang", "serve"), ("MODEL",)),
        ("/usr/bin/sglang serve --model-path M", (), ("/usr/bin/sglang", "serve"), ()),
        ("sgwatch sim --model-path M", (), ("sgwatch", "sim"), ()),
        ("python -msgwatch.sim --model-path M", (), ("python", "-msgwatch.sim"), ()),
        ("env A=1 B=2 exec python3.11 -X dev -m m --x", ("env", "A=1", "B=2", "exec"), None, ()),
        ("uv run python -m sglang.launch_server", ("uv", "run"), None, ()),
        (
            "python3 /w/sglang/launch_server.py --port 1",
            (),
            ("python3", "/w/sglang/launch_server.py"),
            (),
        ),
    ],
)
def test_the_program_is_found_behind_any_wrapper(line, prefix, program, positional):
    cmd = parse_shell(line)
    assert cmd.prefix == prefix
    if program is not None:
        assert cmd.program == program
    assert cmd.positional == positional
    assert cmd.argv == shlex.split(line)


@pytest.mark.parametrize(
    "line",
    ["nohup sleep 10", "python -c 'import sglang' --tp 2", "python", "python -m", "sglang version"],
)
def test_commands_without_a_launcher_are_refused(line):
    with pytest.raises(LaunchError):
        parse_shell(line)


@pytest.mark.parametrize(
    "line",
    [
        "python -m sglang.launch_server --model-path m; rm -rf ~",
        "python -m sglang.launch_server --model-path m > server.log 2>&1",
        "python -m sglang.launch_server --model-path m &",
        "python -m sglang.launch_server --model-path $MODEL",
        'python -m sglang.launch_server --model-path "$MODEL"',
        "python -m sglang.launch_server --model-path `cat m`",
        "python -m sglang.launch_server --model-path ~/models/m",
        "python -m sglang.launch_server --model-path /models/*",
        "python -m sglang.launch_server --model-path 'unclosed",
    ],
)
def test_a_shell_line_must_be_a_simple_command(line):
    with pytest.raises(LaunchError):
        parse_shell(line)


def test_quoted_specials_are_plain_text():
    cmd = parse_shell("python -m x --name 'a; rm -rf ~' --t \"x > y\" --p a\\ b --home=~/m")
    assert [f.values for f in cmd.flags] == [("a; rm -rf ~",), ("x > y",), ("a b",), ("~/m",)]


def test_negative_numbers_and_dashes_inside_values():
    cmd = parse(["python", "-m", "x", "--seed", "-1", "--c", "-0.5", "--t", "-x y", "--u", "-"])
    assert [f.values for f in cmd.flags] == [("-1",), ("-0.5",), ("-x y",), ("-",)]


def test_settings_last_occurrence_wins_and_switches_are_true():
    cmd = parse_shell("python -m x --tp 1 --enable-metrics --tp 2 --bs 1 2")
    assert settings(cmd) == {"--tp": "2", "--enable-metrics": True, "--bs": ("1", "2")}
    assert value_of(cmd, "tp") == "2"
    assert value_of(cmd, "--port") is MISSING


# -- edits: a tiny resolver stands in for the catalog ---------------------------------

REFS = {
    "--tp-size": FlagRef("tp_size", "--tp-size", True),
    "--tensor-parallel-size": FlagRef("tp_size", "--tp-size", True),
    "--tp": FlagRef("tp_size", "--tp-size", True),
    "--enable-metrics": FlagRef("enable_metrics", "--enable-metrics", False),
    "--overlap": FlagRef("overlap", "--overlap", False, True, "--no-overlap", True),
    "--no-overlap": FlagRef("overlap", "--overlap", False, False, "--no-overlap", True),
    "--fused": FlagRef("fused", "--fused", False, True, "--no-fused", None),
    "--no-fused": FlagRef("fused", "--fused", False, False, "--no-fused", None),
}
resolve = REFS.get

BASE = parse_shell(
    "A=1 python -m sglang.launch_server --model-path m --tensor-parallel-size 2 "
    "--mem-fraction-static=0.8 --enable-metrics --port 30000"
)


def test_enable_adds_at_the_end_and_is_idempotent():
    cmd = enable(BASE, "enable-torch-compile", resolve)
    assert cmd.argv == [*BASE.argv, "--enable-torch-compile"]
    assert enable(cmd, "--enable-torch-compile", resolve) == cmd
    assert enable(BASE, "enable-metrics", resolve) == BASE


def test_enable_rewrites_a_no_form_in_place():
    cmd = parse_shell("python -m x --no-fused --port 1")
    assert enable(cmd, "fused", resolve).argv[3:] == ["--fused", "--port", "1"]


def test_disable_removes_every_spelling_and_writes_no_form_for_default_on():
    cmd = parse_shell("python -m x --enable-metrics --port 1 --enable-metrics")
    assert disable(cmd, "enable-metrics", resolve).argv[3:] == ["--port", "1"]
    assert disable(BASE, "overlap", resolve).argv == [*BASE.argv, "--no-overlap"]
    on = parse_shell("python -m x --overlap --port 1")
    assert disable(on, "overlap", resolve).argv[3:] == ["--no-overlap", "--port", "1"]
    assert disable(parse_shell("python -m x --no-overlap"), "overlap", resolve).argv[3:] == [
        "--no-overlap"
    ]
    # Default auto (None): dropping the flag is enough.
    assert disable(parse_shell("python -m x --fused"), "fused", resolve).argv[3:] == []


def test_set_value_keeps_place_spelling_and_style():
    cmd = set_value(BASE, "tp", "4", resolve)
    assert cmd.argv == [a if a != "2" else "4" for a in BASE.argv]
    cmd = set_value(BASE, "mem-fraction-static", "0.7", resolve)
    assert "--mem-fraction-static=0.7" in cmd.argv and len(cmd.argv) == len(BASE.argv)
    cmd = set_value(BASE, "chunked-prefill-size", "4096", resolve)
    assert cmd.argv == [*BASE.argv, "--chunked-prefill-size", "4096"]


def test_set_value_drops_later_duplicates_that_would_win():
    cmd = parse_shell("python -m x --tp 1 --port 1 --tp-size 2 --tensor-parallel-size 3")
    assert set_value(cmd, "tp-size", "8", resolve).argv[3:] == ["--tp", "8", "--port", "1"]


def test_set_value_lists_and_dash_values():
    cmd = set_value(BASE, "cuda-graph-bs", ["1", "2", "4"])
    assert cmd.argv[-4:] == ["--cuda-graph-bs", "1", "2", "4"]
    cmd = set_value(BASE, "chat-template", "-weird")
    assert cmd.argv[-1] == "--chat-template=-weird"
    assert set_value(BASE, "seed", "-1").argv[-2:] == ["--seed", "-1"]
    with pytest.raises(LaunchError):
        set_value(BASE, "cuda-graph-bs", ["1", "-2x"])
    with pytest.raises(LaunchError):
        set_value(BASE, "cuda-graph-bs", [])


def test_dangerous_values_stay_one_literal_argument():
    evil = "x; rm -rf ~ && echo 'pwned' \"$(id)\""
    cmd = set_value(BASE, "served-model-name", evil)
    assert cmd.argv[-2:] == ["--served-model-name", evil]
    assert shlex.split(cmd.shell) == cmd.argv
    assert parse_shell(cmd.shell) == cmd


def test_kind_mismatches_are_refused():
    with pytest.raises(LaunchError):
        set_value(BASE, "enable-metrics", "1", resolve)
    with pytest.raises(LaunchError):
        enable(BASE, "tp", resolve)
    with pytest.raises(LaunchError):
        disable(BASE, "tp-size", resolve)
    for bad in ("", "-", "---x", "two words"):
        with pytest.raises(LaunchError):
            unset(BASE, bad)


def test_unset_removes_all_spellings_and_nothing_else():
    cmd = unset(BASE, "tp", resolve)
    assert cmd.argv == [a for a in BASE.argv if a not in ("--tensor-parallel-size", "2")]
    assert unset(BASE, "not-there", resolve) == BASE


def test_edits_leave_prefix_program_and_positional_alone():
    cmd = parse_shell("CUDA_VISIBLE_DEVICES=1 sglang serve MODEL --port 1")
    out = unset(enable(set_value(cmd, "port", "2"), "enable-metrics"), "port")
    assert (out.prefix, out.program, out.positional) == (cmd.prefix, cmd.program, cmd.positional)
    assert out.argv == ["CUDA_VISIBLE_DEVICES=1", "sglang", "serve", "MODEL", "--enable-metrics"]


# -- diff ------------------------------------------------------------------------------


def test_diff_flag_by_flag():
    new = disable(
        set_value(enable(BASE, "enable-torch-compile"), "tp", "4", resolve), "enable-metrics"
    )
    changes = {c.key: (c.kind, c.before, c.after) for c in diff(BASE, new, resolve)}
    assert changes == {
        "tp_size": ("changed", ("--tensor-parallel-size", "2"), ("--tensor-parallel-size", "4")),
        "enable_metrics": ("removed", ("--enable-metrics",), None),
        "--enable-torch-compile": ("added", None, ("--enable-torch-compile",)),
    }


def test_diff_resolves_aliases_and_ignores_order():
    a = parse_shell("python -m x --tp 2 --port 1 --enable-metrics")
    b = parse_shell("python -m x --enable-metrics --port=1 --tensor-parallel-size 2")
    assert diff(a, b, resolve) == []
    assert [c.key for c in diff(a, b)] == ["--tp", "--tensor-parallel-size"]  # no resolver


def test_diff_compares_what_argparse_keeps():
    a = parse_shell("python -m x --tp 1 --tp 2 --overlap")
    b = parse_shell("python -m x --tp 2 --no-overlap")
    assert [(c.key, c.kind) for c in diff(a, b, resolve)] == [("overlap", "changed")]


def test_diff_of_env_program_and_positional():
    a = parse_shell("A=1 B=2 sglang serve M1 --port 1")
    b = parse_shell("A=1 C=3 python -m sglang.launch_server --port 1")
    got = [(c.key, c.kind) for c in diff(a, b)]
    assert got == [
        ("(program)", "changed"),
        ("(positional)", "removed"),
        ("env B", "removed"),
        ("env C", "added"),
    ]


# -- masking ----------------------------------------------------------------------------


def test_masked_hides_secret_env_and_flag_values_only():
    cmd = parse_shell(
        "HF_TOKEN=hf_x CUDA_VISIBLE_DEVICES=0 python -m sglang.launch_server --model-path m "
        "--api-key k1 --admin-api-key=k2 --tokenizer-path t --max-total-tokens 9 --hf-token t3"
    )
    out = masked(cmd)
    assert out.argv == [
        "HF_TOKEN=***",
        "CUDA_VISIBLE_DEVICES=0",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "m",
        "--api-key",
        "***",
        "--admin-api-key=***",
        "--tokenizer-path",
        "t",
        "--max-total-tokens",
        "9",
        "--hf-token",
        "***",
    ]
    assert "k1" not in out.shell and "hf_x" not in out.shell
