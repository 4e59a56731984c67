from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, RunWiggum
from wiggum import __version__

HOSTILE: dict[str, tuple[dict[str, str | bytes], list[str]]] = {
    "wrong type": (
        {"ralph.toml": '[loop]\nmaxIterations = "ten"\n'},
        ["ralph.toml:2", "loop.maxIterations", "expected an integer"],
    ),
    "unknown key": (
        {"ralph.toml": "[sandbox]\nallowPath = []\n"},
        ["ralph.toml:2", "sandbox.allowPath", "Did you mean `allowPaths`?"],
    ),
    "unknown section": (
        {"ralph.toml": "[sandbx]\nenabled = true\n"},
        ["ralph.toml:1", "sandbx", "Did you mean `sandbox`?"],
    ),
    "list item type": (
        {"ralph.toml": '[sandbox]\nallowPaths = [\n  "a",\n  3,\n]\n'},
        ["ralph.toml:4", "sandbox.allowPaths[1]", "expected a string"],
    ),
    "section as value": (
        {"ralph.toml": "sandbox = 1\n"},
        ["ralph.toml:1", "sandbox", "expected a table"],
    ),
    "bad choice": (
        {"ralph.toml": '[sandbox]\nmode = "firejail"\n'},
        ["ralph.toml:2", "sandbox.mode", "auto | bwrap"],
    ),
    "zero iterations": (
        {"ralph.toml": "[loop]\nmaxIterations = 0\n"},
        ["ralph.toml:2", "loop.maxIterations", "at least 1"],
    ),
    "alias twice": (
        {"ralph.toml": "[sandbox]\nnetwork = true\nallowNetwork = false\n"},
        ["ralph.toml:3", "sandbox.allowNetwork", "set twice"],
    ),
    "toml syntax": (
        {"ralph.toml": "[loop\nmaxIterations = 3\n"},
        ["ralph.toml:1", "not valid TOML"],
    ),
    "both files": (
        {"ralph.toml": "", "ralph.config.cjs": "module.exports = {};"},
        ["both ralph.toml and ralph.config.cjs"],
    ),
    "cjs require": (
        {"ralph.config.cjs": "module.exports = {\n  sandbox: require('./s'),\n};"},
        ["ralph.config.cjs:2", "sandbox", "require", "ralph.toml"],
    ),
    "cjs process.env": (
        {"ralph.config.cjs": "module.exports = {agent: {env: process.env}};"},
        ["ralph.config.cjs:1", "agent.env", "process.env"],
    ),
    "cjs wrong type": (
        {"ralph.config.cjs": "module.exports = {\n loop: {commit: 'yes'}};"},
        ["ralph.config.cjs:2", "loop.commit", "expected true or false"],
    ),
    "writable root": (
        {"ralph.toml": '[sandbox]\nallowPaths = ["/"]\n'},
        ["ralph.toml:2", "sandbox.allowPaths[0]", "root of the filesystem"],
    ),
    "writable home": (
        {"ralph.toml": '[sandbox]\nallowPaths = ["./ok", "~"]\n'},
        ["ralph.toml:2", "sandbox.allowPaths[1]", "whole home directory"],
    ),
    "readable root": (
        {"ralph.toml": '[sandbox]\nreadOnlyPaths = ["/"]\n'},
        ["ralph.toml:2", "sandbox.readOnlyPaths[0]", "root of the filesystem"],
    ),
    "readable home": (
        {"ralph.toml": '[sandbox]\nreadOnlyPaths = ["~"]\n'},
        ["ralph.toml:2", "sandbox.readOnlyPaths[0]", "home directory"],
    ),
    "writable dotdot": (
        {"ralph.toml": '[sandbox]\nallowPaths = ["../../.."]\n'},
        ["ralph.toml:2", "sandbox.allowPaths[0]", "resolves to"],
    ),
    "custom without command": (
        {"ralph.toml": '[agent]\npreset = "custom"\n'},
        ["ralph.toml:2", "agent.preset", "needs agent.command"],
    ),
    "ten megabytes": (
        {"ralph.toml": "# x\n" * (10 * 1024 * 256)},
        ["ralph.toml", "at most 1,048,576"],
    ),
    "invalid utf-8": (
        {"ralph.toml": b'[agent]\npreset = "cl\xffaude"\n'},
        ["ralph.toml:2", "not UTF-8", "0xff"],
    ),
    "empty file": ({"ralph.toml": "  \n"}, ["ralph.toml", "is empty"]),
    "nul in path": (
        {"ralph.toml": '[sandbox]\nallowPaths = ["a\\u0000b"]\n'},
        ["ralph.toml:2", "sandbox.allowPaths[0]", "NUL"],
    ),
    "a folder named ralph.toml": ({}, ["no ralph.toml or ralph.config.cjs"]),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_config_exit_2_names_file_and_key(
    name: str, tmp_path: Path, wiggum: RunWiggum
) -> None:
    files, expected = HOSTILE[name]
    project = tmp_path / "a" / "b" / "proj"
    project.mkdir(parents=True)
    for filename, content in files.items():
        target = project / filename
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    if name == "a folder named ralph.toml":
        (project / "ralph.toml").mkdir()
    result = wiggum("-C", str(project), "config", "validate")
    assert result.code == 2, result
    assert "Traceback" not in result.err
    for words in expected:
        assert words in result.err, (words, result.err)
    assert result.out == ""


def test_symlink_to_home_in_allow_paths_is_refused(
    tmp_path: Path, isolated_env: Path, wiggum: RunWiggum
) -> None:
    (tmp_path / "cache").symlink_to(isolated_env)
    (tmp_path / "ralph.toml").write_text('[sandbox]\nallowPaths = ["cache"]\n')
    result = wiggum("-C", str(tmp_path), "config", "validate")
    assert result.code == 2
    assert f"resolves to {isolated_env}" in result.err


def test_valid_config_validates(tmp_path: Path, wiggum: RunWiggum) -> None:
    (tmp_path / "ralph.toml").write_text('[sandbox]\nallowPaths = ["build"]\n')
    result = wiggum("-C", str(tmp_path), "config", "validate")
    assert (result.code, result.err) == (0, "")
    assert "valid (1 settings set" in result.out


def test_config_show_json_reports_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wiggum: RunWiggum
) -> None:
    (tmp_path / "ralph.toml").write_text("[loop]\n\nmaxIterations = 3\n")
    monkeypatch.setenv("WIGGUM_SANDBOX_NETWORK", "0")
    result = wiggum("-C", str(tmp_path), "--set", "loop.commit=true", "config", "show", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["version"] == 1
    assert data["config"]["loop"]["maxIterations"] == 3
    assert data["sources"]["loop.maxIterations"] == {
        "kind": "project",
        "label": str(tmp_path / "ralph.toml"),
        "line": 3,
    }
    assert data["sources"]["sandbox.network"] == {
        "kind": "env",
        "label": "WIGGUM_SANDBOX_NETWORK",
        "line": None,
    }
    assert data["sources"]["loop.commit"]["kind"] == "flag"
    assert data["sources"]["agent.preset"]["kind"] == "default"


def test_config_show_text_names_sources(tmp_path: Path, wiggum: RunWiggum) -> None:
    (tmp_path / "ralph.toml").write_text("[sandbox.limits]\nmemory = 1073741824\n")
    result = wiggum("-C", str(tmp_path), "config", "show")
    assert result.code == 0
    assert 'memory = "1G"' in result.out
    line = next(x for x in result.out.splitlines() if x.startswith("memory ="))
    assert f"# project ({tmp_path / 'ralph.toml'}:2)" in line
    assert "\x1b[" not in result.out  # no colour when not a terminal


def test_version_and_help(wiggum: RunWiggum) -> None:
    assert wiggum("--version").out.strip() == f"wiggum, version {__version__}"
    help_text = wiggum("--help").out
    assert "config" in help_text and "--set" in help_text


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["nonsense"],
        ["config", "show", "--nope"],
        ["-C", "/definitely/not/here", "config", "show"],
        ["--set", "loop=1", "config", "show"],
    ],
)
def test_usage_errors_exit_2(args: list[str], wiggum: RunWiggum) -> None:
    result = wiggum(*args)
    assert result.code == 2
    assert "Traceback" not in result.err
    assert result.err.strip()


def test_unexpected_error_exit_3_with_log(
    monkeypatch: pytest.MonkeyPatch, isolated_env: Path, wiggum: RunWiggum
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("wiggum.config.loader.load_config", boom)
    result = wiggum("config", "show")
    assert result.code == 3
    assert "Traceback" not in result.err
    log = Path(result.err.split("traceback is in ")[1].split()[0])
    assert log.is_relative_to(isolated_env)
    assert "simulated bug" in log.read_text()


def test_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch, wiggum: RunWiggum) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("wiggum.config.loader.load_config", interrupted)
    assert wiggum("config", "show").code == 130


def test_console_script_and_module_entry_points(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    for cmd in ([sys.executable, "-m", "wiggum"], [str(Path(sys.executable).parent / "wiggum")]):
        done = subprocess.run(
            [*cmd, "-C", str(REPO / "examples/toml"), "config", "validate"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        bad = subprocess.run(
            [*cmd, "--bogus"], capture_output=True, text=True, env=env, check=False
        )
        assert bad.returncode == 2


def test_fast_commands_do_not_import_heavy_modules() -> None:
    code = (
        "import sys; from wiggum.__main__ import main; main(['--version']); main(['--help']);"
        "heavy = {'copier', 'questionary', 'rich', 'platformdirs', 'tomllib'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
