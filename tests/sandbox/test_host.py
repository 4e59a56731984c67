"""Host facts gathered from a real (temporary) filesystem."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_worktree
from wiggum.agents.presets import PRESETS
from wiggum.config.schema import Config
from wiggum.sandbox.host import collect_host, git_dirs, runtime_dirs


def test_runtime_dirs_of_a_native_install_in_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    versions = home / ".local/share/claude/versions"
    versions.mkdir(parents=True)
    real = versions / "1.0.0"
    real.write_bytes(b"\x7fELF")
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/claude").symlink_to(real)
    assert runtime_dirs(home / ".local/bin/claude", home) == (home / ".local/bin", versions)


def test_runtime_dirs_of_a_node_script_include_its_node(tmp_path: Path) -> None:
    prefix = tmp_path / "home/.nvm/versions/node/v20"
    (prefix / "bin").mkdir(parents=True)
    package = prefix / "lib/node_modules/@openai/codex/bin"
    package.mkdir(parents=True)
    node = prefix / "bin/node"
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    script = package / "codex.js"
    script.write_text(f"#!{node}\nconsole.log(1)\n")
    (prefix / "bin/codex").symlink_to(script)
    dirs = runtime_dirs(prefix / "bin/codex", tmp_path / "home")
    assert dirs == (prefix / "bin", package.parent, prefix)  # the whole package, and node


def test_git_dirs_of_a_real_worktree(tmp_path: Path) -> None:
    main, tree = make_worktree(tmp_path)
    assert git_dirs(tree) == (main / ".git/worktrees/tree", main / ".git")
    assert git_dirs(main) == ()


def test_collect_host_removes_stale_masks_and_resolves_paths(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "ralph.config.cjs").mkdir(parents=True)  # left by a killed run
    (project / "ralph.toml").write_text("")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    facts = collect_host(Config(), PRESETS["claude"], project, {"PATH": "/usr/bin"}, home=home)
    assert not (project / "ralph.config.cjs").exists()
    assert facts.resolved["~/.claude"] == home / ".claude"
    assert facts.kind(home / ".claude") == "dir"
    assert facts.kind(project / "ralph.toml") == "file"
    assert facts.kind(project / ".git") == "missing"
    assert facts.environ["PATH"] == "/usr/bin"


def test_runtime_dirs_never_expose_home_or_shared_prefixes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".local/bin").mkdir(parents=True)
    for folder in ("bin", ".local/bin"):
        agent = home / folder / "agent"
        agent.write_bytes(b"\x7fELF")
        dirs = runtime_dirs(agent, home)
        assert dirs == (agent.parent,)  # not home, not ~/.local (keyrings live under it)
