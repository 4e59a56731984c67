from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wiggum.loop.records import write_atomically
from wiggum.loop.runner import substitute
from wiggum.loop.stream import OutputPump, TerminalFilter

PROMISE = "<promise>COMPLETE</promise>"
PROMPT = f"Work.\nWhen done, output {PROMISE}\n"


def pump_all(chunks: list[bytes]) -> tuple[OutputPump, bytes, bytes]:
    log, term = io.BytesIO(), io.BytesIO()
    pump = OutputPump(log, term, PROMISE, PROMPT)
    for chunk in chunks:
        pump.feed(chunk)
    pump.finish()
    return pump, log.getvalue(), term.getvalue()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@pytest.mark.parametrize(
    ("output", "seen"),
    [
        (f"all done\n{PROMISE}\n", True),
        (f"final answer: {PROMISE}", True),  # no trailing newline
        (f"When done, output {PROMISE}\n", False),  # the prompt's own line, echoed
        (f"   When done, output {PROMISE}   \n", False),
        ("<promise>COMPLETE</promise\n", False),
        ("nothing here\n", False),
    ],
)
def test_promise_detection(output: str, seen: bool) -> None:
    assert pump_all([output.encode()])[0].promise_seen is seen


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=8))
def test_promise_found_whatever_the_chunking(cuts: list[int]) -> None:
    data = b"x" * 3000 + b"\nwork\n" + PROMISE.encode() + b"\nbye\n"
    pump, log, _ = pump_all(split(data, cuts))
    assert pump.promise_seen
    assert log == data


@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_log_gets_every_byte_and_terminal_filter_is_chunking_independent(
    data: bytes, cuts: list[int]
) -> None:
    _, log, term = pump_all(split(data, cuts))
    _, _, whole = pump_all([data])
    assert log == data
    assert term == whole


def test_terminal_filter_drops_control_strings_keeps_colours() -> None:
    data = b"\x1b[31mred\x1b[0m \x1b]0;evil title\x07ok \x1b]52;c;ZXZpbA==\x1b\\\x1bPdcs\x1b\\end"
    assert TerminalFilter()(data) == b"\x1b[31mred\x1b[0m ok end"


def test_terminal_filter_across_chunks() -> None:
    filt = TerminalFilter()
    parts = [b"a\x1b", b"]0;ti", b"tle\x1b", b"\\b\x1b[1m", b"c"]
    assert b"".join(filt(p) for p in parts) == b"ab\x1b[1mc"


def test_substitute_prompt() -> None:
    assert substitute(["a", "-p", "{prompt}"], "hi") == (["a", "-p", "hi"], False)
    assert substitute(["a", "--x={prompt}!"], "hi") == (["a", "--x=hi!"], False)
    assert substitute(["a", "-p"], "hi") == (["a", "-p"], True)


def test_atomic_write_never_leaves_a_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "run.json"
    write_atomically(target, json.dumps({"v": 1}))

    def crash(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", crash)
    with pytest.raises(OSError):
        write_atomically(target, json.dumps({"v": 2}))
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
