"""The bundled flag catalogs: lookup as argparse does it, per version; checks; selection."""

import json

import pytest

from sgwatch.core.cmdline import diff, disable, enable, parse_shell, set_value, unset
from sgwatch.engines import for_command
from sgwatch.engines.sglang.catalog import (
    bundled,
    bundled_versions,
    load_bundled,
    nearest_bundled,
    select,
    version_key,
)
from sgwatch.engines.shapes.flags import (
    ATTENTION,
    CUDA_GRAPHS,
    GROUPS,
    MEMORY,
    OTHER,
    PARALLELISM,
    SCHEDULING,
    SPECULATIVE,
    Catalog,
)

NEWEST = "0.5.23"


def test_bundled_versions_span_0_4_to_the_newest():
    assert bundled_versions() == ("0.4.4.post1", "0.4.6.post2", "0.5.10", "0.5.19", NEWEST)
    for cat in bundled():
        assert cat.engine == "sglang" and cat.origin.startswith(f"sglang-{cat.version}")
        strings = [s for o in cat.options for s in o.option_strings]
        assert len(strings) == len(set(strings)), "argparse refuses a spelling registered twice"
        assert all(o.help == "" for o in cat.options), "no SGLang prose in the bundle"
        assert cat.get("model_path").required


def test_newest_catalog_matches_the_static_count_of_0_5_23():
    # 531 options; 161 store_true-style, 12 BooleanOptional, 15 with aliases
    # (docs/design/log-formats.md, flag catalog).
    cat = load_bundled(NEWEST)
    kinds = [o.kind for o in cat.options]
    assert len(cat.options) == 531
    assert kinds.count("store_true") == 161
    assert kinds.count("boolean_optional") == 12
    assert sum(bool(o.aliases) for o in cat.options) == 15


LOOKUPS = [
    # (version, as written, status, resolves to)
    (NEWEST, "--cuda-graph-max-bs", "ambiguous", None),
    (NEWEST, "--cuda-graph-bs", "ambiguous", None),
    (NEWEST, "--pp", "ambiguous", None),
    (NEWEST, "--enable-hi", "ambiguous", None),  # two spellings of one flag still count twice
    (NEWEST, "--tp", "abbrev", "--tp-size"),
    (NEWEST, "--dp", "abbrev", "--dp-size"),
    (NEWEST, "--mem-fraction", "abbrev", "--mem-fraction-static"),
    (NEWEST, "--mem-fraction=0.8", "abbrev", "--mem-fraction-static"),
    (NEWEST, "--model", "alias", "--model-path"),
    (NEWEST, "--tensor-parallel-size", "alias", "--tp-size"),
    (NEWEST, "--ep", "alias", "--ep-size"),
    (NEWEST, "--no-enable-tf32-matmul", "negated", "--enable-tf32-matmul"),
    (NEWEST, "--cuda-graph-max-bs-decode", "exact", "--cuda-graph-max-bs-decode"),
    (NEWEST, "--enable-piecewise-cuda-graph", "unknown", None),
    (NEWEST, "--disable-piecewise-cuda-graph", "unknown", None),
    (NEWEST, "--piecewise-cuda-graph-max-tokens", "unknown", None),
    (NEWEST, "--hel", "help", None),
    (NEWEST, "-x", "unknown", None),
    ("0.5.19", "--cuda-graph-max-bs", "exact", "--cuda-graph-max-bs"),
    ("0.5.19", "--disable-piecewise-cuda-graph", "exact", "--disable-piecewise-cuda-graph"),
    ("0.5.10", "--cuda-graph-max-bs", "exact", "--cuda-graph-max-bs"),
    ("0.5.10", "--enable-piecewise-cuda-graph", "exact", "--enable-piecewise-cuda-graph"),
    ("0.5.10", "--tp", "abbrev", "--tensor-parallel-size"),
    ("0.4.6.post2", "--tp", "abbrev", "--tensor-parallel-size"),
    ("0.4.4.post1", "--tp-size", "alias", "--tensor-parallel-size"),
    ("0.4.4.post1", "--cuda-graph-max-bs", "exact", "--cuda-graph-max-bs"),
    ("0.4.4.post1", "--cuda-graph-max", "abbrev", "--cuda-graph-max-bs"),
]


@pytest.mark.parametrize(("version", "token", "status", "target"), LOOKUPS)
def test_lookup_follows_argparse(version, token, status, target):
    found = load_bundled(version).lookup(token)
    assert found.status == status
    assert (found.option.name if found.option else None) == target


def test_ambiguous_lookups_name_their_candidates():
    found = load_bundled(NEWEST).lookup("--cuda-graph-max-bs")
    assert found.candidates == ("--cuda-graph-max-bs-decode", "--cuda-graph-max-bs-prefill")


def test_retired_flags_per_version():
    v5_10, v5_19, newest = (load_bundled(v) for v in ("0.5.10", "0.5.19", NEWEST))
    old = v5_10.get("--enable-piecewise-cuda-graph")
    assert (
        old.deprecated and not old.removed and old.replacement == "--enforce-piecewise-cuda-graph"
    )
    renamed = v5_19.get("--disable-piecewise-cuda-graph")
    assert (renamed.kind, renamed.const, renamed.replacement) == (
        "store_const",
        "disabled",
        "--cuda-graph-backend-prefill=disabled",
    )
    assert v5_19.get("cuda_graph_backend_prefill").name == "--cuda-graph-backend-prefill"
    assert newest.get("--disable-cuda-graph").deprecated
    mla = load_bundled("0.4.6.post2").get("--enable-flashinfer-mla")
    assert mla.removed and mla.replacement == "--attention-backend"


def test_options_read_like_their_argparse_registration():
    newest = load_bundled(NEWEST)
    assert newest.get("--enable-lora").auto  # Optional[bool]: None until the server decides
    assert not newest.get("--enable-metrics").auto
    assert newest.get("--dllm-fdfo").negations == ("--no-dllm-fdfo",)
    bs = newest.get("--cuda-graph-bs-decode")
    assert (bs.kind, bs.type, bs.nargs) == ("value", "int", "+")
    prefill = newest.get("--cuda-graph-backend-prefill")
    assert prefill.choices == ("full", "breakable", "disabled")
    tp = load_bundled("0.4.4.post1").get("--tp-size")
    assert (tp.dest, tp.setting, tp.default) == ("tensor_parallel_size", "tp_size", 1)
    assert load_bundled("0.4.4.post1").get("tp_size") is tp


def test_typed_values_and_refusals():
    cat = load_bundled(NEWEST)
    assert cat.get("--tp-size").typed(["2"]) == 2
    assert cat.get("--mem-fraction-static").typed(["0.85"]) == 0.85
    assert cat.get("--cuda-graph-bs-decode").typed(["1", "2"]) == [1, 2]
    assert cat.get("--cuda-graph-backend-prefill").typed(["disabled"]) == "disabled"
    for flag, bad in [
        ("--tp-size", "two"),
        ("--cuda-graph-backend-prefill", "off"),
        ("--default-chat-template-kwargs", "{not json"),
    ]:
        with pytest.raises(ValueError):
            cat.get(flag).typed([bad])


@pytest.mark.parametrize(
    ("version", "name", "group"),
    [
        (NEWEST, "--cuda-graph-max-bs-decode", CUDA_GRAPHS),
        (NEWEST, "--enable-torch-compile", CUDA_GRAPHS),
        (NEWEST, "--speculative-algorithm", SPECULATIVE),
        (NEWEST, "--speculative-attention-mode", SPECULATIVE),
        (NEWEST, "--tp-size", PARALLELISM),
        (NEWEST, "--enable-dp-attention", PARALLELISM),
        (NEWEST, "--mem-fraction-static", MEMORY),
        (NEWEST, "--kv-cache-dtype", MEMORY),
        (NEWEST, "--chunked-prefill-size", SCHEDULING),
        (NEWEST, "--max-running-requests", SCHEDULING),
        (NEWEST, "--disable-overlap-schedule", SCHEDULING),
        (NEWEST, "--attention-backend", ATTENTION),
        (NEWEST, "--port", OTHER),
        ("0.5.10", "--disable-piecewise-cuda-graph", CUDA_GRAPHS),
        ("0.4.4.post1", "--tensor-parallel-size", PARALLELISM),
    ],
)
def test_panel_groups(version, name, group):
    assert load_bundled(version).get(name).group == group


def test_by_group_covers_every_option_once():
    cat = load_bundled(NEWEST)
    groups = cat.by_group()
    assert tuple(groups) == GROUPS
    assert sum(len(v) for v in groups.values()) == len(cat.options)
    assert all(groups[g] for g in GROUPS)


# -- checks before a restart -------------------------------------------------------------


def test_check_reports_what_the_newest_parser_refuses():
    cmd = parse_shell(
        "python -m sglang.launch_server --model-path m --cuda-graph-max-bs 8 --tp 2 "
        "--enable-piecewise-cuda-graph --disable-cuda-graph --tp-size x "
        "--attention-backend nope --enable-metrics 3 --cuda-graph-bs-decode"
    )
    problems = [(p.flag, p.level, p.message) for p in load_bundled(NEWEST).check(cmd, bundled())]
    assert problems == [
        (
            "--cuda-graph-max-bs",
            "error",
            "ambiguous abbreviation: could match --cuda-graph-max-bs-decode, "
            "--cuda-graph-max-bs-prefill",
        ),
        ("--tp", "warning", "abbreviation of --tp-size; write it in full"),
        (
            "--enable-piecewise-cuda-graph",
            "error",
            "not a flag of SGLang 0.5.23 (0.5.10 accepted it)",
        ),
        (
            "--disable-cuda-graph",
            "warning",
            "deprecated; use --cuda-graph-backend-{decode,prefill}=disabled",
        ),
        ("--tp-size", "error", "invalid int value: 'x'"),
        ("--attention-backend", "error", problems[5][2]),
        ("--enable-metrics", "error", "takes no value, got 1"),
        ("--cuda-graph-bs-decode", "error", "expects at least one value"),
    ]
    assert problems[5][2].startswith("invalid choice 'nope' (choose from ")


def test_check_accepts_a_clean_command_and_a_positional_model():
    cat = load_bundled(NEWEST)
    serve = parse_shell("sglang serve Qwen/Qwen3-8B --tp-size 2 --enable-metrics")
    assert cat.check(serve, positional="model_path") == []  # the model: SGLang's engine says
    assert cat.check(parse_shell("python -m sglang.launch_server --model Qwen/Qwen3-8B")) == []
    missing = cat.check(parse_shell("python -m sglang.launch_server --port 1"))
    assert [(p.level, p.message) for p in missing] == [("error", "required: --model-path")]
    extra = cat.check(parse_shell("sglang serve A B --port 1"), positional="model_path")
    assert [p.message for p in extra] == ["unrecognized arguments: B"]


def test_the_simulators_engine_leaves_its_own_flags_alone():
    cmd = parse_shell("python -m sgwatch.sim --model-path m --sim-speed 200 --sim-format 0.5.23")
    cat = load_bundled(NEWEST)
    assert for_command(cmd).check(cat, cmd) == []
    # SGLang's own catalog refuses them: the adapter, not the catalog, knows whose they are.
    assert {p.flag for p in cat.check(cmd)} == {"--sim-speed", "--sim-format"}
    typo = parse_shell("python -m sgwatch.sim --model-path m --cuda-graph-max-bsz 8")
    assert [p.flag for p in for_command(typo).check(cat, typo)] == ["--cuda-graph-max-bsz"]


def test_check_the_same_command_across_versions():
    cmd = parse_shell("python -m sglang.launch_server --model-path m --cuda-graph-max-bs 160")
    assert load_bundled("0.5.10").check(cmd) == []
    assert load_bundled("0.5.19").check(cmd)[0].level == "warning"  # deprecated there
    assert load_bundled(NEWEST).check(cmd)[0].level == "error"  # ambiguous there


# -- the catalog drives the launch edits --------------------------------------------------


def test_edits_and_diff_through_the_catalog():
    cat = load_bundled(NEWEST)
    cmd = parse_shell(
        "python -m sglang.launch_server --model Qwen/Qwen3-8B --tp 2 --enable-metrics"
    )
    assert diff(cmd, set_value(cmd, "tensor-parallel-size", "2", cat.ref), cat.ref) == []
    four = set_value(cmd, "tp-size", "4", cat.ref)
    assert four.argv[5:7] == ["--tp", "4"]  # the user's spelling, in place
    off = disable(enable(four, "enable-torch-compile", cat.ref), "enable-metrics", cat.ref)
    changes = [(c.key, c.kind) for c in diff(cmd, off, cat.ref)]
    assert changes == [
        ("tp_size", "changed"),
        ("enable_metrics", "removed"),
        ("enable_torch_compile", "added"),
    ]
    # BooleanOptional flags on by default are disabled with their --no- form.
    assert disable(cmd, "dllm-fdfo", cat.ref).argv[-1] == "--no-dllm-fdfo"
    assert unset(off, "model", cat.ref).argv[3:] == ["--tp", "4", "--enable-torch-compile"]


# -- selection: live when the host answers, else the nearest bundled ------------------------


def test_select_prefers_the_live_catalog():
    live = {
        "engine": "sglang",
        "version": "0.5.21",
        "origin": "live",
        "python": "3.12.3",
        "options": [{"names": ["--model-path"], "dest": "model_path", "kind": "value"}],
    }
    got = select("noise on stdout\n" + json.dumps(live) + "\n", "0.5.21")
    assert got.source == "live" and got.catalog.version == "0.5.21"
    assert got.note == "live from the host's parser (sglang 0.5.21, Python 3.12.3)"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ('{"engine": "sglang", "error": "ModuleNotFoundError: No module named \'sglang\'"}',
         "the host's parser failed: ModuleNotFoundError"),
        ("Traceback ...", "the host's answer was unreadable"),
        ('{"engine": "sglang", "options": []}', "the host's parser listed no options"),
        ('{"engine": "sglang", "options": [{"names": 3}]}', "the host's answer was unreadable"),
        (None, "the host's parser was not asked"),
    ],
)  # fmt: skip
def test_select_falls_back_to_the_nearest_bundled(output, reason):
    got = select(output, "0.5.21")
    assert got.source == "bundled" and got.catalog.version == "0.5.19"
    assert got.note.startswith("bundled sglang 0.5.19 (nearest to 0.5.21); " + reason)


@pytest.mark.parametrize(
    ("version", "nearest"),
    [
        ("0.5.23", "0.5.23"),
        ("0.5.23.post1", "0.5.23"),
        ("0.5.21", "0.5.19"),
        ("0.5.15", "0.5.19"),
        ("0.5.11.dev", "0.5.10"),
        ("0.5.9", "0.5.10"),
        ("0.5", "0.5.10"),
        ("0.4.5", "0.4.4.post1"),
        ("0.4.4", "0.4.4.post1"),
        ("0.3.6", "0.4.4.post1"),
        ("0.6.0", NEWEST),
        ("", NEWEST),
        (None, NEWEST),
    ],
)
def test_nearest_bundled(version, nearest):
    assert nearest_bundled(version).version == nearest


def test_version_order():
    order = ["0.4.6.dev0", "0.4.6", "0.4.6.post2", "0.5.9", "0.5.10rc1", "0.5.10", "v0.5.11"]
    assert sorted(order, key=version_key) == order


def test_the_release_a_command_runs_is_the_simulators_sim_format():
    def version(text: str) -> str | None:
        cmd = parse_shell(text)
        return for_command(cmd).command_version(cmd)

    assert version("python -m sgwatch.sim --model-path m") == "0.5"
    assert version("sgwatch sim --model-path m --sim-format 0.5.23") == "0.5.23"
    assert version("sglang serve m --sim-format 0.4") is None  # SGLang's: the host says


def test_a_live_catalog_with_help_and_unknown_keys_loads():
    cat = Catalog.from_json(
        json.dumps(
            {
                "version": "9.9",
                "future_key": 1,
                "options": [
                    {
                        "names": ["--x"],
                        "dest": "x",
                        "kind": "value",
                        "help": "Host text.",
                        "new": 2,
                    }
                ],
            }
        )
    )
    assert cat.get("--x").help == "Host text."
