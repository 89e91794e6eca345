"""Both forms of SGLang's startup `server_args=` dump, whole and cut short."""

import gc

from sgwatch.engines.settings_dump import parse_settings


def test_old_dataclass_repr():
    args = parse_settings(
        "ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=2, "
        "mem_fraction_static=0.88, quantization=None, disable_cuda_graph=False, "
        "json_model_override_args='{}', lora_paths=None)"
    )
    assert args["model_path"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert args["tp_size"] == 2 and args["mem_fraction_static"] == 0.88
    assert args["quantization"] is None and args["disable_cuda_graph"] is False


def test_new_dict_repr_with_nested_values():
    args = parse_settings(
        "{'model_path': 'Qwen/Qwen3-8B', 'tp_size': 1, 'cuda_graph_config': "
        "{'decode': {'backend': 'full', 'bs': [1, 2, 4]}}, 'disable_piecewise_cuda_graph': True}"
    )
    assert args["cuda_graph_config"]["decode"]["bs"] == [1, 2, 4]
    assert args["disable_piecewise_cuda_graph"] is True


def test_cut_short_dump_keeps_the_items_before_the_cut():
    args = parse_settings("ServerArgs(model_path='m', tp_size=4, dtype='au")
    assert args == {"model_path": "m", "tp_size": 4}
    assert parse_settings("{'model_path': 'm', 'port': 30000, 'host': '0.0") == {
        "model_path": "m",
        "port": 30000,
    }


def test_object_reprs_are_kept_as_text_and_garbage_is_empty():
    args = parse_settings("ServerArgs(model_path='m', device=torch.device('cuda'))")
    assert args["device"] == "torch.device('cuda')"
    assert parse_settings("not a dump") == {}
    assert parse_settings("ServerArgs(") == {}


def test_a_dump_of_plain_values_leaves_nothing_for_the_collector():
    # Read at every start, restart and catch-up of a dashboard left open for days.
    plain = ["m", 2, 0.88, None, False, True, "{}"]
    dump = "ServerArgs(" + ", ".join(f"k{i}={plain[i % 7]!r}" for i in range(70)) + ")"
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        args = parse_settings(dump)
        gc.collect()
        left = len(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert len(args) == 70 and args["k1"] == 2 and args["k3"] is None
    assert left == 0  # ast.literal_eval left its inner functions in a cycle per value
