from __future__ import annotations

import pytest

from wiggum.config.toml_source import locate_keys, parse_toml
from wiggum.errors import ConfigError

TEXT = '''\
# a comment with allowPaths = [ in it
[agent]
preset = "claude"   # trailing comment
"args" = ["a", 'b']
prompt_text = """
mode = "fake key inside a multi-line string"
"""

[sandbox]
network.extra = 1
allowPaths = [
  "one",   # comment between items
  "two]",

  "three",
]
limits = { memory = "1G", processes = 3 }

[sandbox.container]
image = 'x'
'''


def test_every_key_and_item_gets_its_line() -> None:
    lines = locate_keys(TEXT)
    assert lines[("agent",)] == 2
    assert lines[("agent", "preset")] == 3
    assert lines[("agent", "args", 1)] == 4
    assert ("agent", "mode") not in lines  # inside the multi-line string
    assert lines[("sandbox", "network", "extra")] == 10
    assert lines[("sandbox", "allowPaths", 0)] == 12
    assert lines[("sandbox", "allowPaths", 1)] == 13
    assert lines[("sandbox", "allowPaths", 2)] == 15
    assert lines[("sandbox", "limits", "processes")] == 17
    assert lines[("sandbox", "container", "image")] == 20


def test_syntax_error_names_the_line_without_tomllib_suffix() -> None:
    with pytest.raises(ConfigError) as info:
        parse_toml("[loop]\nmaxIterations = = 3\n")
    (problem,) = info.value.problems
    assert problem.line == 2
    assert "not valid TOML" in problem.message
    assert "(at line" not in problem.message


@pytest.mark.parametrize("text", ['a = "unterminated', "a = [1, 2", "[x", "a = {b = 1"])
def test_scanner_never_hangs_on_broken_text(text: str) -> None:
    locate_keys(text)  # returns partial results rather than looping or raising
