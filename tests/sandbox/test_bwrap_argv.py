from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.fakes import BWRAP, HOME, PROJECT, config, policy
from tests.sandbox.golden import check_golden
from wiggum.sandbox.bwrap import BwrapInfo, build_bwrap_argv
from wiggum.sandbox.policy import Policy

COMMAND = ["claude", "-p"]


def argv(p: Policy, info: BwrapInfo = BWRAP) -> list[str]:
    return build_bwrap_argv(p, info, COMMAND)


def representative() -> Policy:
    cfg = config(
        **{
            "sandbox.allowPaths": ("./build", "~/.cache/pip"),
            "sandbox.readOnlyPaths": ("~/.gitconfig",),
            "sandbox.denyPaths": ("~/.ssh", "~/.cache/pip/secrets"),
            "agent.env": ("EXTRA",),
        }
    )
    return policy(
        cfg,
        kinds={
            PROJECT / "build": "dir",
            HOME / ".cache/pip": "dir",
            HOME / ".gitconfig": "file",
            HOME / ".claude": "dir",
            HOME / ".cache/pip/secrets": "file",
            HOME / ".local/bin": "dir",
            HOME / ".local/share/claude": "dir",
        },
        resolv_conf=Path("/run/systemd/resolve/stub-resolv.conf"),
        runtime_dirs=(HOME / ".local/bin", HOME / ".local/share/claude"),
    )


def test_golden_representative_policy() -> None:
    check_golden("bwrap-representative.txt", "\n".join(argv(representative())) + "\n")


def test_golden_network_off() -> None:
    p = policy(config(**{"sandbox.network": False}))
    check_golden("bwrap-network-off.txt", "\n".join(argv(p)) + "\n")


def pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_isolation_flags_always_present() -> None:
    args = argv(representative())
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--disable-userns",
    ):
        assert flag in args
    assert pairs(args, "--cap-drop") == ["ALL"]
    assert "--unshare-net" not in args  # network on
    assert args[args.index("--") + 1 :] == COMMAND
    assert pairs(args, "--chdir") == [str(PROJECT)]


def test_network_off_unshares_net_and_skips_resolv_conf() -> None:
    p = policy(
        config(**{"sandbox.network": False}),
        resolv_conf=Path("/run/systemd/resolve/stub-resolv.conf"),
    )
    args = argv(p)
    assert "--unshare-net" in args
    assert "/run/systemd/resolve/stub-resolv.conf" not in args


def test_resolv_conf_target_bound_when_network_on() -> None:
    args = argv(representative())
    assert "/run/systemd/resolve/stub-resolv.conf" in pairs(args, "--ro-bind")


def test_old_bwrap_without_disable_userns() -> None:
    old = BwrapInfo(Path("/usr/bin/bwrap"), (0, 6, 1), disable_userns=False)
    assert "--disable-userns" not in argv(representative(), old)


def test_masks_come_after_every_bind_they_cover() -> None:
    args = argv(representative())

    def last_index(flag: str, path: Path) -> int:
        return max(i for i, a in enumerate(args[:-1]) if a == flag and args[i + 1] == str(path))

    project_bind = last_index("--bind", PROJECT)
    home_tmpfs = last_index("--tmpfs", HOME)
    assert home_tmpfs < project_bind
    assert last_index("--ro-bind", PROJECT / "ralph.toml") > project_bind
    assert last_index("--ro-bind", PROJECT / ".git/hooks") > last_index("--bind", PROJECT / ".git")
    pip = last_index("--bind", HOME / ".cache/pip")
    assert args.index("/dev/null") > pip  # the secret file inside an allowed path is masked


def test_env_values_only_from_allow_list() -> None:
    args = argv(representative())
    names = pairs(args, "--setenv")
    assert "ANTHROPIC_API_KEY" in names and "AWS_SECRET_ACCESS_KEY" not in names
    assert "HOME" in names


@pytest.mark.parametrize("weird", ["with space", 'quote"s', "ünïcödé", "new\nline", "-dash"])
def test_paths_are_single_arguments(weird: str) -> None:
    project = Path("/home/ada/code") / weird
    p = policy(project=project)
    args = argv(p)
    assert str(project) in args  # never split, never quoted: argv needs no escaping
