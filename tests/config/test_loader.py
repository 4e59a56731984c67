from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from wiggum.config.layers import parse_override
from wiggum.config.loader import find_project_file, load_config
from wiggum.config.schema import SETTINGS, Config, config_as_dict
from wiggum.errors import ConfigError, UsageError


def test_toml_and_cjs_examples_give_the_same_effective_config(isolated_env: Path) -> None:
    toml = load_config(REPO / "examples/toml", {})
    cjs = load_config(REPO / "examples/cjs", {})
    assert config_as_dict(toml.config) == config_as_dict(cjs.config)
    assert toml.config != Config()  # the example really sets things
    assert toml.config.sandbox.network is True and toml.config.sandbox.limits.memory == 6 * 1024**3
    assert cjs.sources["sandbox.network"].kind == "project"  # set through allowNetwork


def test_defaults_when_there_is_no_file(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, {})
    assert loaded.config == Config()
    assert loaded.project_file is None
    assert {s.kind for s in loaded.sources.values()} == {"default"}


def test_precedence_default_user_project_env_flag(tmp_path: Path, isolated_env: Path) -> None:
    user = isolated_env / ".config/wiggum/config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "[loop]\nmaxIterations = 2\niterationTimeout = 20\ncommit = true\n"
        "maxConsecutiveFailures = 7\n"
    )
    (tmp_path / "ralph.toml").write_text(
        "[loop]\nmaxIterations = 3\niterationTimeout = 30\ncommit = false\n"
    )
    env = {"WIGGUM_LOOP_MAX_ITERATIONS": "4", "WIGGUM_LOOP_ITERATION_TIMEOUT": "40"}
    flags = [parse_override("loop.maxIterations=5")]
    loaded = load_config(tmp_path, env, flags)
    loop = loaded.config.loop
    assert (loop.max_iterations, loop.iteration_timeout, loop.commit) == (5, 40, False)
    assert loop.max_consecutive_failures == 7
    kinds = {
        k: loaded.sources[f"loop.{k}"].kind
        for k in ("maxIterations", "iterationTimeout", "commit", "maxConsecutiveFailures", "prompt")
    }
    assert kinds == {
        "maxIterations": "flag",
        "iterationTimeout": "env",
        "commit": "project",
        "maxConsecutiveFailures": "user",
        "prompt": "default",
    }
    assert loaded.sources["loop.commit"].line == 4


def test_wiggum_config_variable_names_the_user_file(tmp_path: Path) -> None:
    custom = tmp_path / "mine.toml"
    custom.write_text('[agent]\npreset = "codex"\n')
    assert load_config(tmp_path, {"WIGGUM_CONFIG": str(custom)}).config.agent.preset == "codex"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path, {"WIGGUM_CONFIG": str(tmp_path / "missing.toml")})


def test_discovery_walks_upward_and_stops_at_the_nearest(tmp_path: Path) -> None:
    (tmp_path / "ralph.toml").write_text("[loop]\nmaxIterations = 9\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_file(deep) == tmp_path / "ralph.toml"
    (tmp_path / "a" / "ralph.config.cjs").write_text("module.exports = {};")
    assert find_project_file(deep) == tmp_path / "a" / "ralph.config.cjs"
    assert load_config(deep, {}).project_root == (tmp_path / "a").resolve()


def test_lists_from_a_higher_layer_replace_lower_ones(tmp_path: Path) -> None:
    (tmp_path / "ralph.toml").write_text('[sandbox]\ndenyPaths = ["~/.ssh"]\n')
    loaded = load_config(tmp_path, {"WIGGUM_SANDBOX_DENY_PATHS": '["~/.aws", "a,b"]'})
    assert loaded.config.sandbox.deny_paths == ("~/.aws", "a,b")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("loop.commit=yes", True),
        ("sandbox.allowNetwork=off", False),
        ("sandbox.limits.memory=512M", 512 * 1024**2),
        ("agent.env=A,B", ("A", "B")),
    ],
)
def test_overrides_parse_text(text: str, value: object) -> None:
    override = parse_override(text)
    assert override.value == value
    assert override.key in SETTINGS


@pytest.mark.parametrize("text", ["loop.maxIterations", "loop.nope=1", "loop.maxIterations=0"])
def test_bad_overrides_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_override(text)


def test_every_setting_has_a_unique_environment_variable() -> None:
    names = [spec.env_var for spec in SETTINGS.values()]
    assert len(names) == len(set(names))
    loaded = load_config(
        Path("/nonexistent-dir"),
        {s.env_var: _text(s.default) for s in SETTINGS.values() if s.default is not None},
    )
    assert config_as_dict(loaded.config) == config_as_dict(Config())


def _text(value: object) -> str:
    if isinstance(value, tuple):
        return json.dumps(list(value))
    return str(value).lower() if isinstance(value, bool) else str(value)
