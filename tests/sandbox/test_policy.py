from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.sandbox.fakes import HOME, PROJECT, config, host, policy
from wiggum.agents.presets import PRESETS
from wiggum.errors import ConfigError
from wiggum.sandbox.policy import Entry, build_policy


def paths(entries: tuple[Entry, ...]) -> list[Path]:
    return [e.path for e in entries]


def test_defaults_project_writable_home_hidden_system_read_only() -> None:
    p = policy(kinds={HOME / ".claude": "dir", HOME / ".claude.json": "file"})
    assert paths(p.writable) == [PROJECT, HOME / ".claude", HOME / ".claude.json"]
    assert paths(p.system) == [Path("/usr"), Path("/etc"), Path("/opt")]
    assert (Path("/bin"), "usr/bin") in p.system_links
    assert p.network is True and p.cwd == PROJECT and p.home == HOME


def test_missing_auth_paths_are_not_bound() -> None:
    assert paths(policy().writable) == [PROJECT]


def test_protected_paths_existing_and_missing() -> None:
    p = policy()
    protected = {e.path: e.kind for e in p.protected}
    assert protected[PROJECT / "ralph.toml"] == "file"
    assert protected[PROJECT / "ralph.config.cjs"] == "missing"  # cannot be created
    assert protected[PROJECT / ".wiggum"] == "dir"
    assert protected[PROJECT / ".git/hooks"] == "dir"
    assert protected[PROJECT / ".git/config"] == "file"
    assert p.pinned == (PROJECT / ".git",)  # so .git cannot be renamed aside
    assert protected[PROJECT / ".git/modules"] == "missing"  # submodules' hooks live there
    assert set(p.masked_missing()) == {PROJECT / "ralph.config.cjs", PROJECT / ".git/modules"}


def test_project_without_git_gets_git_masked() -> None:
    p = policy(kinds={PROJECT / ".git": "missing"})
    assert Entry(PROJECT / ".git", "missing") in p.protected
    assert PROJECT / ".git/hooks" not in paths(p.protected)


def test_existing_shell_startup_files_in_writable_folders_are_protected() -> None:
    cfg = config(**{"sandbox.allowPaths": ("~/scratch",)})
    p = policy(
        cfg,
        kinds={
            HOME / "scratch": "dir",
            HOME / "scratch/.bashrc": "file",
            PROJECT / ".zshenv": "file",
        },
    )
    assert {HOME / "scratch/.bashrc", PROJECT / ".zshenv"} <= set(paths(p.protected))
    assert HOME / "scratch/.profile" not in paths(p.protected)


def test_deny_paths_masked_only_where_exposed() -> None:
    cfg = config(
        **{
            "sandbox.readOnlyPaths": ("~/.config",),
            "sandbox.denyPaths": ("~/.ssh", "~/.config/gcloud", "secrets/key"),
        }
    )
    p = policy(
        cfg,
        kinds={
            HOME / ".config": "dir",
            HOME / ".config/gcloud": "dir",
            HOME / ".ssh": "dir",
            PROJECT / "secrets": "missing",
        },
    )
    hidden = {e.path: e.kind for e in p.hidden}
    assert HOME / ".ssh" not in hidden  # home is an empty tmpfs: nothing to hide
    assert hidden[HOME / ".config/gcloud"] == "dir"
    # A missing path inside the project is masked at its topmost missing ancestor.
    assert hidden[PROJECT / "secrets"] == "missing"


def test_missing_paths_outside_writable_folders_need_no_mask() -> None:
    cfg = config(
        **{"sandbox.readOnlyPaths": ("~/.config",), "sandbox.denyPaths": ("~/.config/absent",)}
    )
    p = policy(cfg, kinds={HOME / ".config": "dir"})
    assert p.hidden == ()  # it cannot be created in a read-only folder


def test_deny_path_that_hides_the_project_is_refused() -> None:
    cfg = config(**{"sandbox.denyPaths": ("~/code",)})
    with pytest.raises(ConfigError, match=r"hides the project itself"):
        policy(cfg)


def test_environment_is_an_allow_list() -> None:
    cfg = config(**{"agent.env": ("EXTRA_TOKEN",)})
    facts = host(cfg)
    facts = replace(facts, environ={**facts.environ, "EXTRA_TOKEN": "t"})
    p = build_policy(cfg, PRESETS["claude"], facts, PROJECT)
    env = dict(p.env)
    assert env["ANTHROPIC_API_KEY"] == "sk-secret"  # the preset asks for it
    assert env["EXTRA_TOKEN"] == "t"  # the config asks for it
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HOME"] == str(HOME) and env["TMPDIR"] == "/tmp"


def test_worktree_git_dir_writable_but_its_hooks_and_config_protected() -> None:
    common = HOME / "code/main/.git"
    gitdir = common / "worktrees/app"
    p = policy(
        git_dirs=(gitdir, common),
        kinds={
            PROJECT / ".git": "file",
            gitdir: "dir",
            common: "dir",
            common / "hooks": "dir",
            common / "config": "file",
            gitdir / "config": "missing",
        },
    )
    assert {gitdir, common} <= set(paths(p.writable))
    assert {common / "hooks", common / "config"} <= set(paths(p.protected))


def test_network_and_limits_follow_config() -> None:
    p = policy(config(**{"sandbox.network": False, "sandbox.limits.processes": 64}))
    assert p.network is False and p.limits.processes == 64


def test_macos_scratch_dir_is_writable_and_tmpdir() -> None:
    scratch = Path("/private/var/folders/xy/T/wiggum-abc")
    p = policy(system="darwin", scratch=scratch, kinds={scratch: "dir"})
    assert scratch in paths(p.writable)
    assert dict(p.env)["TMPDIR"] == str(scratch)


def test_a_writable_folder_holding_a_repository_gets_its_git_protected() -> None:
    mono = PROJECT.parent  # a monorepo root, allowed so the agent can use git
    p = policy(
        config(**{"sandbox.allowPaths": ("..",)}),
        kinds={
            mono: "dir",
            mono / ".git": "dir",
            mono / ".git/hooks": "dir",
            mono / ".git/config": "file",
        },
    )
    protected = set(paths(p.protected))
    assert {mono / ".git/hooks", mono / ".git/config", mono / ".git/modules"} <= protected


def test_a_worktree_pointer_file_is_protected() -> None:
    p = policy(kinds={PROJECT / ".git": "file"})
    assert Entry(PROJECT / ".git", "file") in p.protected


def test_existing_agent_settings_are_read_only_inside_the_writable_login_folder() -> None:
    p = policy(kinds={HOME / ".claude": "dir", HOME / ".claude/settings.json": "file"})
    assert HOME / ".claude" in paths(p.writable)
    assert Entry(HOME / ".claude/settings.json", "file") in p.protected
    assert HOME / ".claude/settings.local.json" not in paths(p.protected)  # missing: left
