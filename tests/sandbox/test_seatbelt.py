from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.sandbox.fakes import config, policy
from tests.sandbox.golden import check_golden
from wiggum.sandbox.policy import PathKind, Policy
from wiggum.sandbox.sbcheck import check_profile, parse
from wiggum.sandbox.seatbelt import (
    SANDBOX_EXEC,
    build_sandbox_exec_argv,
    canonical,
    quote,
    render_profile,
)

MAC_HOME = Path("/Users/ada")
MAC_PROJECT = MAC_HOME / "code/app"
SCRATCH = Path("/private/var/folders/xy/abc/T/wiggum-0123")
MAC_SYSTEM = {
    Path(d): "dir"
    for d in (
        "/usr",
        "/bin",
        "/sbin",
        "/System",
        "/Library",
        "/Applications",
        "/opt",
        "/private/etc",
        "/dev",
    )
}


def mac_policy(
    project: Path = MAC_PROJECT,
    extra: dict[Path, PathKind] | None = None,
    values: dict[str, object] | None = None,
) -> Policy:
    kinds = {
        **MAC_SYSTEM,
        **(extra or {}),
        MAC_HOME / ".claude": "dir",
        MAC_HOME / ".claude.json": "file",
        MAC_HOME / ".ssh": "dir",
        SCRATCH: "dir",
        project / ".git": "dir",
        project / ".git/hooks": "dir",
        project / ".git/config": "file",
        project / "ralph.toml": "file",
        project / ".wiggum": "dir",
    }
    return policy(
        config(**(values or {})),
        system="darwin",
        home=MAC_HOME,
        project=project,
        kinds=kinds,
        scratch=SCRATCH,
    )


def policy_strings(p: Policy) -> list[str]:
    entries = [*p.system, *p.read_only, *p.writable, *p.protected, *p.hidden]
    return [canonical(e.path) for e in entries]


def test_golden_default_profile() -> None:
    check_golden("seatbelt-default.sb", render_profile(mac_policy()))


def test_golden_network_off_with_paths() -> None:
    p = mac_policy(
        extra={
            MAC_HOME / ".config": "dir",
            MAC_HOME / ".config/gcloud": "dir",
            Path("/tmp/cache"): "dir",
        },
        values={
            "sandbox.network": False,
            "sandbox.readOnlyPaths": ("~/.config",),
            "sandbox.allowPaths": ("/tmp/cache",),
            "sandbox.denyPaths": ("~/.config/gcloud", "secrets"),
        },
    )
    check_golden("seatbelt-network-off.sb", render_profile(p))


PROFILES = {
    "default": lambda: mac_policy(),
    "network off": lambda: mac_policy(values={"sandbox.network": False}),
    "quotes and spaces": lambda: mac_policy(MAC_HOME / 'code/my "quoted" app'),
    "backslash": lambda: mac_policy(MAC_HOME / "code/back\\slash"),
    "non-ascii": lambda: mac_policy(MAC_HOME / "code/プロジェクト/émoji-🚀"),
    "semicolon and parens": lambda: mac_policy(MAC_HOME / "code/a;b (c)"),
}


@pytest.mark.parametrize("name", PROFILES)
def test_structure_of_every_generated_profile(name: str) -> None:
    p = PROFILES[name]()
    profile = render_profile(p)
    assert check_profile(profile, policy_strings(p)) == []


def test_hidden_and_protected_denials_come_after_allowances() -> None:
    p = mac_policy(
        extra={MAC_HOME / ".config": "dir", MAC_HOME / ".config/gcloud": "dir"},
        values={
            "sandbox.readOnlyPaths": ("~/.config",),
            "sandbox.denyPaths": ("~/.config/gcloud",),
        },
    )
    assert [e.path for e in p.hidden] == [MAC_HOME / ".config/gcloud"]
    forms = [f for f in parse(render_profile(p)) if isinstance(f, list)]

    def text(form: object) -> str:
        return repr(form)

    last_allow = max(i for i, f in enumerate(forms) if text(f[0]).find("'allow'") >= 0)
    hidden = next(i for i, f in enumerate(forms) if ".config/gcloud" in text(f))
    protected = next(i for i, f in enumerate(forms) if "ralph.toml" in text(f))
    assert last_allow < protected < hidden  # in Seatbelt the last matching rule wins


def test_network_rules_follow_policy() -> None:
    assert "(allow network*)" in render_profile(mac_policy())
    assert "(allow network" not in render_profile(mac_policy(values={"sandbox.network": False}))


def test_paths_are_canonical() -> None:
    assert canonical("/tmp/x") == "/private/tmp/x"
    assert canonical("/var/folders/a") == "/private/var/folders/a"
    assert canonical("/etc") == "/private/etc"
    assert canonical("/Users/ada/tmp") == "/Users/ada/tmp"
    p = mac_policy(
        extra={Path("/tmp/cache"): "dir"}, values={"sandbox.allowPaths": ("/tmp/cache",)}
    )
    profile = render_profile(p)
    assert '(subpath "/private/tmp/cache")' in profile
    assert '"/tmp/cache"' not in profile


def test_renaming_a_protected_parent_is_denied() -> None:
    profile = render_profile(mac_policy())
    tail = profile.split("(deny file-write-unlink", 1)[1]
    assert f'(literal "{MAC_PROJECT}/.git")' in tail


def test_missing_protected_path_denied_as_literal_and_subpath() -> None:
    profile = render_profile(mac_policy())
    cjs = f"{MAC_PROJECT}/ralph.config.cjs"
    deny = profile.split(";; protected", 1)[1]
    assert f'(literal "{cjs}")' in deny and f'(subpath "{cjs}")' in deny


def test_argv_uses_absolute_sandbox_exec() -> None:
    argv = build_sandbox_exec_argv("(version 1)", ["claude", "-p"])
    assert argv == [SANDBOX_EXEC, "-p", "(version 1)", "claude", "-p"]
    assert SANDBOX_EXEC == "/usr/bin/sandbox-exec"


@given(st.text(st.characters(exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40))
def test_quote_round_trips_through_the_parser(text: str) -> None:
    (atom,) = parse(quote(text))
    assert not isinstance(atom, list) and atom.string and atom.text == text


def test_control_characters_are_refused() -> None:
    with pytest.raises(ValueError, match="control"):
        quote("a\nb")


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ('(version 1)\n(deny default)\n(allow file-read* (subpath "/a")', "unclosed"),
        ("(version 1)\n(deny default))", "unbalanced"),
        ('(version 1)\n(deny default)\n(allow file-reed* (subpath "/a"))', "unknown operation"),
        ('(version 1)\n(deny default)\n(allow file-read* (subpat "/a"))', "unknown filter"),
        ('(version 1)\n(deny default)\n(allow file-read* (subpath "/a\\q"))', "escape"),
        ("(version 1)\n(allow default)", "(deny default)"),
        ("(deny default)", "(version 1)"),
        ('(version 1)\n(deny default)\n(allow file-read* (subpath "/b"))', "missing"),
    ],
)
def test_checker_catches_broken_profiles(broken: str, problem: str) -> None:
    problems = check_profile(broken, ["/a"])
    assert any(problem in p for p in problems), problems


def test_home_is_not_readable_wholesale() -> None:
    profile = render_profile(mac_policy())
    assert f'(subpath "{MAC_HOME}")' not in profile
    assert f'(literal "{MAC_HOME}")' in profile  # only its metadata, to walk down to the project


def test_read_only_inside_writable_stays_read_only() -> None:
    profile = render_profile(
        mac_policy(
            extra={MAC_PROJECT / "vendor": "dir"}, values={"sandbox.readOnlyPaths": ("./vendor",)}
        )
    )
    deny = profile.split(";; read-only paths inside a writable one", 1)[1].split("\n\n")[0]
    assert f'(subpath "{MAC_PROJECT}/vendor")' in deny and "(deny file-write*" in deny


def test_host_unix_sockets_stay_closed_with_network_on() -> None:
    profile = render_profile(mac_policy())
    network = profile.split(";; network: on", 1)[1]
    assert "(deny network-outbound (remote unix-socket))" in network
    allowed = network.split("(deny network-outbound (remote unix-socket))", 1)[1]
    assert f'(remote unix-socket (subpath "{MAC_PROJECT}"))' in allowed
    assert str(MAC_HOME / ".ssh") not in allowed


def test_sandbox_exec_launch_gets_only_the_allow_listed_environment() -> None:
    from wiggum.sandbox.select import seatbelt_backend

    p = mac_policy()
    launch = seatbelt_backend(p).launch(["claude", "-p"])
    assert launch.env == dict(p.env)
    assert "AWS_SECRET_ACCESS_KEY" not in launch.env and "ANTHROPIC_API_KEY" in launch.env
    assert launch.argv[:2] == (SANDBOX_EXEC, "-p")
