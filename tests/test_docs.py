"""Invariants between the code and the user documentation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from wiggum.config.render import format_value
from wiggum.config.schema import SECTIONS, SETTINGS

CONFIG_DOC = (REPO / "docs/configuration.md").read_text(encoding="utf-8")
ROWS = {
    match.group(1): match.group(0)
    for match in re.finditer(r"^\| `([\w.]+)` \|.*$", CONFIG_DOC, re.MULTILINE)
}


@pytest.mark.parametrize("key", SETTINGS)
def test_every_key_is_documented_with_its_default_and_variable(key: str) -> None:
    spec = SETTINGS[key]
    row = ROWS.get(key)
    assert row is not None, f"{key} has no row in docs/configuration.md"
    assert f"`{spec.env_var}`" in row
    assert f"`{format_value(key, spec.default)}`" in row, "documented default is stale"


def test_no_documented_key_is_missing_from_the_schema() -> None:
    assert set(ROWS) <= set(SETTINGS)


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_has_a_heading(section: str) -> None:
    assert f"### `[{section}]`" in CONFIG_DOC


def test_the_two_format_examples_in_the_docs_agree(tmp_path: Path) -> None:
    from wiggum.config.loader import load_config
    from wiggum.config.schema import config_as_dict

    toml = re.search(r"```toml\n(.*?)```", CONFIG_DOC, re.DOTALL)
    cjs = re.search(r"```js\n(.*?)```", CONFIG_DOC, re.DOTALL)
    assert toml and cjs
    (tmp_path / "t").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "t/ralph.toml").write_text(toml.group(1))
    (tmp_path / "c/ralph.config.cjs").write_text(cjs.group(1))
    from_toml = config_as_dict(load_config(tmp_path / "t", {}).config)
    assert from_toml == config_as_dict(load_config(tmp_path / "c", {}).config)
    assert from_toml["sandbox"]["limits"]["memory"] == 6 * 1024**3


AGENTS_DOC = (REPO / "docs/agents.md").read_text(encoding="utf-8")


def test_preset_lists_agree() -> None:
    from wiggum.agents.presets import PRESETS
    from wiggum.cli import _PRESET_NAMES
    from wiggum.config.schema import AGENT_PRESETS

    assert tuple(PRESETS) == AGENT_PRESETS == _PRESET_NAMES


@pytest.mark.parametrize("name", ["claude", "codex", "opencode", "gemini"])
def test_every_preset_is_documented_as_it_is(name: str) -> None:
    from wiggum.agents.presets import PRESETS

    preset = PRESETS[name]
    row = next(line for line in AGENTS_DOC.splitlines() if line.startswith(f"| `{name}` |"))
    assert f"`{' '.join(preset.argv)}`" in row
    for path in preset.auth_paths:
        assert f"`{path}`" in row
    for var in preset.env:
        assert f"`{var}`" in row
    assert ("| yes |" in row) is preset.requires_network


def test_stop_reasons_are_documented() -> None:
    from wiggum.loop.runner import STOP_REASONS

    run_doc = (REPO / "docs/run.md").read_text(encoding="utf-8")
    for reason in STOP_REASONS:
        assert f"| `{reason}` |" in run_doc
