"""The estimators behind every ETA: a bar's time left, and a warmup's time to ready."""

from sgwatch.core.eta import Earlier, bar_eta, bar_rate, ready_eta


def frames(first_s: float, each_s: float, done: int) -> list[tuple[float, int]]:
    """tqdm's whole-second elapsed clock of a bar whose first item takes `first_s`."""
    return [(0.0, 0)] + [(float(int(first_s + each_s * (n - 1))), n) for n in range(1, done + 1)]


def test_a_slow_first_item_does_not_inflate_the_time_left():
    # 50 shapes: the first compiles for 30 s, each other takes 1 s (49 s after it).
    marks = frames(30.0, 1.0, 10)
    truth = 40.0
    assert abs(bar_eta(marks, 50) - truth) <= 0.25 * truth
    # The bar's average rate (tqdm's own estimate) is far off: 39 s for 10 items.
    elapsed = marks[-1][0]
    assert elapsed * (50 - 10) / 10 > 3 * truth


def test_a_steady_bar_gives_its_rate_and_the_time_left():
    marks = frames(2.0, 2.0, 20)
    assert abs(bar_rate(marks) - 0.5) < 0.05
    assert abs(bar_eta(marks, 36) - 32.0) < 3.0


def test_no_estimate_before_an_item_is_done():
    assert bar_eta([(0.0, 0)], 10) is None
    assert bar_eta([], 10) is None
    assert bar_eta([(3.0, 1)], None) is None
    assert bar_eta([(0.0, 0), (30.0, 1)], 50) is None  # the first item alone says little
    assert bar_rate([(0.0, 0), (3.0, 1)]) == 1 / 3.0  # the only rate there is


def test_items_done_within_one_tick_fall_back_to_the_whole_bar():
    marks = [(0.0, 0), (5.0, 1), (5.0, 2), (5.0, 3)]
    assert bar_rate(marks) == 3 / 5.0


def test_the_fit_evens_out_the_whole_second_clock():
    # 0.4 s an item after a 5 s first item; tqdm prints whole seconds.
    marks = frames(5.0, 0.4, 12)
    assert abs(bar_rate(marks) - 2.5) < 0.3
    two_points = (12 - 6) / (marks[-1][0] - marks[6][0])  # a rate from the window's ends
    assert abs(two_points - 2.5) > abs(bar_rate(marks) - 2.5)


def run(flags: set[str], warmup: float, **phases: float) -> Earlier:
    return Earlier(frozenset(flags), phases, warmup)


BASE = {"--model-path=Q", "--tp=2"}
PIECEWISE = BASE | {"--enforce-piecewise-cuda-graph"}


def test_time_to_ready_is_the_nearest_commands_phases_still_ahead():
    earlier = [
        run(BASE, 60, starting=5, loading_weights=20, allocating_kv_cache=5, warming_up=30),
        run(BASE, 64, starting=5, loading_weights=22, allocating_kv_cache=5, warming_up=32),
        run(BASE, 62, starting=5, loading_weights=24, allocating_kv_cache=5, warming_up=28),
    ]
    eta = ready_eta(
        frozenset(BASE), earlier, {"starting": 5, "loading_weights": 10}, "loading_weights"
    )
    assert eta.seconds == 22 - 10 + 5 + 30
    assert (eta.runs, eta.flags_apart) == (3, 0)
    assert eta.basis == "from 3 earlier runs of this command"


def test_a_phase_the_flag_diff_adds_is_counted_from_a_run_that_had_it():
    earlier = [
        run(BASE, 50, starting=5, loading_weights=20, capturing_graphs=10, warming_up=15),
        run(PIECEWISE, 95, starting=5, loading_weights=20, capturing_graphs=10, compiling=45,
            warming_up=15),
    ]  # fmt: skip
    now = PIECEWISE | {"--enable-single-batch-overlap"}
    eta = ready_eta(
        frozenset(now), earlier, {"starting": 5, "loading_weights": 20}, "loading_weights"
    )
    # Nearest is the piecewise run (1 flag apart): its compile phase is ahead.
    assert eta.seconds == 10 + 45 + 15
    assert eta.basis == "from 1 earlier run of this model (1 flag apart)"
    # The other way: without piecewise graphs the nearest run never compiled.
    eta = ready_eta(frozenset(BASE), earlier, {"starting": 5}, "starting")
    assert eta.seconds == 20 + 10 + 15


def test_a_phase_entered_now_that_the_nearest_runs_lacked():
    earlier = [
        run(BASE, 50, starting=5, capturing_graphs=10, warming_up=15),
        run(PIECEWISE, 95, starting=5, capturing_graphs=10, compiling=45, warming_up=15),
    ]
    spent = {"starting": 5, "capturing_graphs": 10, "compiling": 5}
    eta = ready_eta(frozenset(BASE), earlier, spent, "compiling")
    assert eta.seconds == 40 + 15


def test_a_run_over_its_time_in_a_phase_expects_no_less_than_nothing_there():
    earlier = [run(BASE, 30, starting=5, loading_weights=10, warming_up=15)]
    eta = ready_eta(
        frozenset(BASE), earlier, {"starting": 5, "loading_weights": 25}, "loading_weights"
    )
    assert eta.seconds == 15


def test_records_without_phases_give_the_whole_warmup_less_the_time_spent():
    earlier = [run(BASE, 80), run(BASE, 100)]
    eta = ready_eta(
        frozenset(BASE), earlier, {"starting": 10, "loading_weights": 20}, "loading_weights"
    )
    assert eta.seconds == 90 - 30


def test_no_earlier_runs_no_estimate():
    assert ready_eta(frozenset(BASE), [], {}, "starting") is None


def test_a_changed_value_is_one_flag_apart():
    now = frozenset(BASE | {"--port=30001"})
    earlier = [run(BASE | {"--port=30000"}, 60, starting=5, warming_up=55)]
    eta = ready_eta(now, earlier, {"starting": 5}, "starting")
    assert eta.flags_apart == 1 and eta.basis.endswith("(1 flag apart)")
