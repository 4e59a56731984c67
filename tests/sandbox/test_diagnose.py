"""Diagnoses from captured real-world bwrap failures and kernel settings."""

from __future__ import annotations

import pytest

from wiggum.sandbox.diagnose import (
    UsernsFacts,
    detect_container,
    diagnose_bwrap,
    find_denials,
    read_userns_facts,
    strip_control,
)

UBUNTU_2404 = UsernsFacts(
    {"apparmor_restrict_unprivileged_userns": "1", "max_user_namespaces": "63672"}, None
)
DEBIAN_OFF = UsernsFacts({"unprivileged_userns_clone": "0", "max_user_namespaces": "63672"}, None)
NO_NS = UsernsFacts({"max_user_namespaces": "0"}, None)
DOCKER = UsernsFacts({"max_user_namespaces": "63672"}, "docker")
PLAIN = UsernsFacts({"max_user_namespaces": "63672"}, None)

# stderr as printed by bwrap in each situation (collected from bug reports and machines)
UID_MAP = "bwrap: setting up uid map: Permission denied\n"
NO_PERMS = (
    "bwrap: No permissions to creating new namespace, likely because the kernel does "
    "not allow non-privileged user namespaces. On e.g. debian this can be enabled with "
    "'sysctl kernel.unprivileged_userns_clone=1'.\n"
)
RTM = "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n"
PROC = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"
CLONE = "bwrap: Creating new namespace failed: Operation not permitted\n"


@pytest.mark.parametrize(
    ("stderr", "facts", "cause", "fix"),
    [
        (UID_MAP, UBUNTU_2404, "AppArmor", "apparmor_restrict_unprivileged_userns=0"),
        (CLONE, UBUNTU_2404, "AppArmor", "bwrap-userns-restrict"),
        (NO_PERMS, DEBIAN_OFF, "unprivileged_userns_clone = 0", "unprivileged_userns_clone=1"),
        (CLONE, NO_NS, "max_user_namespaces = 0", "user.max_user_namespaces=15000"),
        (RTM, DOCKER, "unprivileged container", "seccomp=unconfined"),
        (PROC, DOCKER, "mount /proc", "systempaths=unconfined"),
        (UID_MAP, PLAIN, "refused to create a user namespace", "max_user_namespaces"),
        (
            "bwrap: execvp agent: No such file or directory\n",
            DOCKER,
            "docker container",
            "on the host",
        ),
        (
            "bwrap: something new\n",
            PLAIN,
            "bwrap failed: bwrap: something new",
            "wiggum sandbox explain",
        ),
    ],
)
def test_diagnosis(stderr: str, facts: UsernsFacts, cause: str, fix: str) -> None:
    diagnosis = diagnose_bwrap(stderr, facts)
    assert cause in diagnosis.cause
    assert fix in diagnosis.fix


def test_setuid_bwrap_is_mentioned() -> None:
    assert "setuid" in diagnose_bwrap(UID_MAP, PLAIN, setuid=True).cause


def test_facts_are_read_from_proc_files() -> None:
    files = {
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1",
        "/proc/sys/user/max_user_namespaces": "100",
        "/run/.containerenv": "",
    }
    facts = read_userns_facts(files.get)
    assert facts.value("apparmor_restrict_unprivileged_userns") == "1"
    assert facts.value("unprivileged_userns_clone") is None
    assert facts.container == "podman"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"/.dockerenv": ""}, "docker"),
        ({"/proc/1/environ": "PATH=/bin\x00container=lxc\x00"}, "lxc"),
        ({"/proc/1/cgroup": "0::/kubepods/besteffort/pod1"}, "kubepods"),
        ({"/proc/1/cgroup": "0::/init.scope"}, None),
    ],
)
def test_container_detection(files: dict[str, str], expected: str | None) -> None:
    assert detect_container(files.get) == expected


def test_control_characters_are_stripped() -> None:
    hostile = "ok\x1b[2J\x1b]0;title\x07 done\r\n\x9bX"
    assert strip_control(hostile) == "ok done\nX"


def test_denials_found_and_cleaned() -> None:
    stderr = (
        "building...\ncat: /home/u/.ssh/id_rsa: Permission denied\n"
        "touch: cannot touch 'ralph.toml': Read-only file system\x1b[0m\nfine\n"
    )
    assert find_denials(stderr) == [
        "cat: /home/u/.ssh/id_rsa: Permission denied",
        "touch: cannot touch 'ralph.toml': Read-only file system",
    ]
