"""How host/tmux.py continues a pane's lines after those already sent: a piped line and
the same line as a capture shows it are one line; a capture whose history scrolled
is aligned on the last lines sent; a line begun before is drawn again as a frame."""

from sgwatch.core.linesplit import LineSplitter
from sgwatch.remote.host.tmux import Sent, catch_up, key


def sent_of(data: bytes) -> Sent:
    sent = Sent()
    sent.add(data)
    return sent


def test_a_piped_line_and_the_same_line_captured_have_one_key():
    piped = b"\x1b[?2004l\rCapturing 1/3\rCapturing 2/3\rCapturing 3/3\tdone\r\n"
    assert key(piped) == key(b"Capturing 3/3   done   ")
    assert key(b"n12\r\n") != key(b"n13")


def test_what_follows_is_the_lines_not_sent_yet():
    sent = sent_of(b"a\r\nb\r\nc\r\n")
    assert catch_up(sent, [b"a", b"b", b"c", b"d", b"e"]) == b"d\ne\n"
    assert catch_up(sent, [b"a", b"b", b"c"]) == b""


def test_a_history_scrolled_past_its_limit_is_aligned_on_the_last_lines_sent():
    sent = sent_of(b"".join(b"n%d\r\n" % i for i in range(1, 101)))
    scrolled = [b"n%d" % i for i in range(40, 121)]  # tmux dropped n1..n39 meanwhile
    assert catch_up(sent, scrolled) == b"".join(b"n%d\n" % i for i in range(101, 121))


def test_a_line_begun_before_is_drawn_again_as_a_frame_of_that_line():
    sent = sent_of(b"start\r\n\rbar 1/3")  # the link dropped mid-bar
    assert sent.request() == {"count": 1, "begun": True, "tail": [key(b"start")]}
    resumed = Sent(1, True, [key(b"start")])  # what the next host program is told
    more = catch_up(resumed, [b"start", b"bar 3/3", b"next"], b"$ ")
    assert more == b"\rbar 3/3\nnext\n$ "
    lines = LineSplitter().feed(b"start\r\n\rbar 1/3" + more + b"\n")
    assert lines == ["start", "bar 1/3", "bar 3/3", "next", "$ "]
