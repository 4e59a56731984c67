from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wiggum.config.cjs import parse_cjs
from wiggum.errors import ConfigError

REALISTIC = """\
// comment before
'use strict';
/* block
   comment */
module.exports = {
  agent: { preset: 'codex', env: ["OPENAI_API_KEY",], },
  "loop": {
    maxIterations: 0x10, // hex is fine
    completionPromise: 'it\\'s done \\u2714',
  },
  sandbox: {
    allowPaths: [
      './a',
      "b c",
    ],
    limits: { memory: '2G', cpuSeconds: -1, },
  },
};
"""


def test_realistic_literal_parses_with_lines() -> None:
    doc = parse_cjs(REALISTIC)
    assert doc.data == {
        "agent": {"preset": "codex", "env": ["OPENAI_API_KEY"]},
        "loop": {"maxIterations": 16, "completionPromise": "it's done \u2714"},
        "sandbox": {
            "allowPaths": ["./a", "b c"],
            "limits": {"memory": "2G", "cpuSeconds": -1},
        },
    }
    assert doc.lines[("agent", "preset")] == 6
    assert doc.lines[("loop", "maxIterations")] == 8
    assert doc.lines[("sandbox", "allowPaths", 1)] == 14
    assert doc.lines[("sandbox", "limits", "cpuSeconds")] == 16


@pytest.mark.parametrize(
    ("source", "line", "words"),
    [
        ("module.exports = require('./base.cjs');", 1, "require"),
        ("module.exports = {\n  agent: { env: process.env.KEYS },\n};", 2, "process.env"),
        ("const base = {};\nmodule.exports = { ...base };", 1, "declarations"),
        ("module.exports = {\n  ...base,\n};", 2, "spread"),
        ("module.exports = { loop: { maxIterations: 5 + 5 } };", 1, "expressions"),
        ("module.exports = { f() { return 1 } };", 1, "methods"),
        ("module.exports = { sandbox: { enabled: () => true } };", 1, "functions"),
        ("module.exports = { loop: { prompt: `${dir}/P.md` } };", 1, "template"),
        ("module.exports = { agent };", 1, "shorthand"),
        ("module.exports = {};\nconsole.log('hi');", 2, "after the exported object"),
        ("export default { agent: {} };", 1, "ES module"),
        ("module.exports = { a: 1, a: 2 };", 1, "defined twice"),
        ("module.exports = { a: [1,,2] };", 1, "empty slot"),
        ("module.exports = { a: 'open };", 1, "never closed"),
        ("/* nothing but a comment", 1, "never closed"),
        ("module.exports = [1, 2];", 1, "object literal"),
        ("module.exports = { [key]: 1 };", 1, "computed"),
        ("module.exports = { a: NaN };", 1, "NaN"),
        ("// only a comment\n", 2, "empty"),
    ],
)
def test_code_is_refused_with_line_and_hint(source: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_cjs(source)
    (problem,) = info.value.problems
    assert problem.line == line
    assert words in problem.message
    assert "ralph.toml" in info.value.hint


def test_escapes_and_continuations() -> None:
    doc = parse_cjs("module.exports = {a: 'x\\\ny', b: '\\x41\\u{1F600}\\t', c: `multi\nline`};")
    assert doc.data == {"a": "xy", "b": "A\U0001f600\t", "c": "multi\nline"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_any_json_object_parses_to_itself(data: dict[str, Any]) -> None:
    # JSON is a subset of the accepted literal syntax: the parser must agree with json.
    assert parse_cjs(f"module.exports = {json.dumps(data)};").data == data
