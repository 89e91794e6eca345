"""Properties of the launch model over generated commands: nothing is lost or re-split."""

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from sgwatch.core.cmdline import parse, parse_shell, set_value, unset, value_of

PROGRAMS = st.sampled_from(
    [
        ["python", "-m", "sglang.launch_server"],
        ["python3", "-u", "-m", "sglang.launch_server"],
        ["/opt/venv/bin/python3.12", "-X", "dev", "-m", "sgwatch.sim"],
        ["sglang", "serve"],
        ["sgwatch", "sim"],
    ]
)
PREFIXES = st.lists(
    st.sampled_from(["nohup", "exec", "env", "A=1", "CUDA_VISIBLE_DEVICES=0,1", "X= ; rm -rf ~"]),
    max_size=4,
)
# Tokens of every shape: flags, `--a=b`, negative numbers, dashes, spaces, quotes, shell syntax.
TEXT = st.text(alphabet=st.sampled_from([*"ab-=_ ;'\"$`\\~*|&<>\n\t01.", "é"]), max_size=12)
TOKENS = st.lists(
    st.one_of(
        TEXT,
        st.sampled_from(["--tp", "--tp-size=2", "-1", "-0.5", "--", "-", "--x=a b", "-h", "MODEL"]),
        st.builds(lambda t: "--" + t, TEXT),
    ),
    max_size=12,
)
NAMES = st.sampled_from(["tp", "port", "served-model-name", "enable-metrics", "x"])


@settings(max_examples=300)
@given(prefix=PREFIXES, program=PROGRAMS, rest=TOKENS)
def test_any_argv_round_trips(prefix, program, rest):
    argv = [*prefix, *program, *rest]
    cmd = parse(argv)
    assert cmd.argv == argv
    assert parse(cmd.argv) == cmd
    assert shlex.split(cmd.shell) == argv
    assert parse_shell(cmd.shell) == cmd


@settings(max_examples=300)
@given(program=PROGRAMS, rest=TOKENS, name=NAMES, value=TEXT)
def test_a_set_value_reaches_the_server_as_one_argument(program, rest, name, value):
    cmd = set_value(parse([*program, *rest]), name, value)
    again = parse_shell(cmd.shell)
    assert again == cmd
    assert value_of(again, name) == value


@settings(max_examples=300)
@given(program=PROGRAMS, rest=TOKENS, name=NAMES, value=TEXT)
def test_edits_keep_the_other_flags_in_order(program, rest, name, value):
    cmd = parse([*program, *rest])
    others = [f for f in cmd.flags if f.name != "--" + name]
    assert [f for f in set_value(cmd, name, value).flags if f.name != "--" + name] == others
    assert list(unset(cmd, name).flags) == others
