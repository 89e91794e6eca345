"""Bytes -> lines: tqdm \r frames, glued records, bad UTF-8, huge lines, escapes."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sgwatch.core.linesplit import LineSplitter, sanitize

WELL_FORMED = "[2026-01-01 10:00:00 TP0] Load weight begin. avail mem=78.00 GB"


def split_all(data: bytes, chunk: int | None = None, max_line: int = 64 * 1024) -> list[str]:
    s = LineSplitter(max_line=max_line)
    out: list[str] = []
    step = chunk or max(len(data), 1)
    for i in range(0, len(data), step):
        out += s.feed(data[i : i + step])
    return out + s.flush()


def test_cr_and_lf_both_end_a_fragment_and_crlf_counts_once():
    data = b"a\r\nb\rc\nd\n\re\r\n"
    assert split_all(data) == ["a", "b", "c", "d", "e"]
    assert split_all(data, chunk=1) == ["a", "b", "c", "d", "e"]


def test_blank_lines_between_newlines_are_kept():
    assert split_all(b"x\n\ny\n") == ["x", "", "y"]


def test_unterminated_last_line_comes_out_at_flush_only():
    s = LineSplitter()
    assert s.feed(b"done\npartial bar 1/3") == ["done"]
    assert s.flush() == ["partial bar 1/3"]


def test_glued_sglang_record_is_split_off():
    bar = "Capturing batches (bs=160 avail_mem=10.92 GB):   0%|          | 0/23 [00:00<?, ?it/s]"
    rec = "[2025-09-11 10:25:47 TP3] Config file not found"
    assert split_all(f"{bar}{rec}\n".encode()) == [bar, rec]


def test_glued_python_logging_record_is_split_off():
    bar = "Capturing batches (avail_mem=0.00 GB):   0%|     | 0/4 [00:00<?, ?it/s]"
    rec = "2025-05-02 16:14:34,907 - INFO - flashinfer.jit: Loading JIT ops"
    assert split_all(f"{bar}{rec}\n".encode()) == [bar, rec]


def test_invalid_utf8_is_replaced_and_split_characters_decode_whole():
    assert split_all(b"ok \xff\xfe end\n") == ["ok \ufffd\ufffd end"]
    assert split_all("déjà ✓\n".encode(), chunk=1) == ["déjà ✓"]


def test_terminal_control_sequences_are_neutralised():
    hostile = b"\x1b[31mred\x1b[0m \x1b]0;owned\x07title \x1b[2J\x07bell\x00nul\ttab\n"
    assert split_all(hostile) == ["red title bell\x00nul\ttab".replace("\x00", "")]


def test_long_line_is_cut_and_the_next_line_survives():
    data = b"x" * 10_000_000 + b"\n" + WELL_FORMED.encode() + b"\n"
    for chunk in (None, 65536):
        lines = split_all(data, chunk=chunk)
        assert len(lines) == 2
        assert lines[0].startswith("x" * 1000) and lines[0].endswith(
            f"…[{10_000_000 - 64 * 1024} chars cut]"
        )
        assert len(lines[0]) < 64 * 1024 + 40
        assert lines[1] == WELL_FORMED


def test_memory_stays_bounded_while_an_endless_line_streams():
    s = LineSplitter(max_line=1000)
    for _ in range(1000):
        assert s.feed(b"y" * 10_000) == []
    assert len(s._pending) <= 1000


ALPHABET = st.sampled_from(["a", "Z", " ", "é", "✓", "\r", "\n", "\r\n", "[20", "%|", "]"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=200).map("".join), st.integers(1, 17))
def test_chunking_never_changes_the_lines(text, chunk):
    data = text.encode()
    assert split_all(data, chunk=chunk) == split_all(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 400), st.integers(8, 200))
def test_arbitrary_bytes_never_raise_and_never_swallow_the_next_line(garbage, chunk, max_line):
    data = garbage + b"\n" + WELL_FORMED.encode() + b"\n"
    lines = split_all(data, chunk=chunk, max_line=max(max_line, len(WELL_FORMED)))
    assert WELL_FORMED in lines
    for line in lines:
        assert "\n" not in line and "\r" not in line and "\x1b" not in line
        assert sanitize(line) == line


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.sampled_from(["\r", "\n", "\x1b[1;33m", "\x1b]8;;", "\x07", "\x9b"]), max_size=60)
)
def test_control_sequences_and_interleaved_cr_lf_never_lose_a_line(noise):
    data = ("".join(noise) + "\n" + WELL_FORMED + "\r\n").encode()
    assert WELL_FORMED in split_all(data, chunk=3)


def test_cut_count_belongs_to_the_long_line_not_the_one_before_it():
    s = LineSplitter(max_line=100)
    assert s.feed(b"short line\n" + b"L" * 1000) == ["short line"]
    assert s.feed(b"LL\nnext\n") == ["L" * 100 + " …[902 chars cut]", "next"]
