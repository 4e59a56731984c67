"""Why a sandbox cannot start here, and what to do about it.

`read_userns_facts` reads the kernel settings and container markers (I/O);
`diagnose_bwrap` turns bwrap's error output plus those facts into a cause and a fix (pure,
tested with captured real-world outputs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SYSCTLS = {
    name: f"/proc/sys/{folder}/{name}"
    for folder, name in (
        ("kernel", "apparmor_restrict_unprivileged_userns"),
        ("kernel", "unprivileged_userns_clone"),
        ("user", "max_user_namespaces"),
    )
}
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clearing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]"  # any other control character but \t and \n
)
_MOUNT_ERRORS = re.compile(r"Can't (mkdir|create file|find source path|bind mount)")
_DENIALS = re.compile(
    r"(Permission denied|Operation not permitted|Read-only file system|"
    r"deny\(\d+\)|Sandbox: .* deny)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class UsernsFacts:
    sysctls: dict[str, str]  # name -> value, for the files that exist
    container: str | None  # "docker", "podman", "lxc", "container" or None

    def value(self, name: str) -> str | None:
        return self.sysctls.get(name)


@dataclass(frozen=True)
class Diagnosis:
    cause: str
    fix: str


def read_userns_facts(read: Callable[[str], str | None] | None = None) -> UsernsFacts:
    read = read or _read_text
    sysctls = {
        name: value.strip() for name, path in SYSCTLS.items() if (value := read(path)) is not None
    }
    return UsernsFacts(sysctls, detect_container(read))


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def detect_container(read: Callable[[str], str | None]) -> str | None:
    if read("/.dockerenv") is not None:
        return "docker"
    if read("/run/.containerenv") is not None:
        return "podman"
    environ = read("/proc/1/environ") or ""
    if "container=" in environ:
        return environ.split("container=", 1)[1].split("\x00", 1)[0] or "container"
    cgroup = read("/proc/1/cgroup") or ""
    for marker in ("docker", "kubepods", "lxc", "containerd"):
        if marker in cgroup:
            return marker
    return None


def strip_control(text: str) -> str:
    """Remove terminal control sequences, so sandbox output cannot rewrite the user's screen."""
    return _CONTROL.sub("", text)


def find_denials(stderr: str, limit: int = 5) -> list[str]:
    """Lines of an agent's error output that look like the sandbox refused something."""
    lines = [strip_control(line).strip() for line in stderr.splitlines()]
    return [line for line in lines if _DENIALS.search(line)][:limit]


APPARMOR_FIX = (
    "Ubuntu 23.10+ restricts unprivileged user namespaces with AppArmor. Give bwrap its own "
    "AppArmor profile (recommended; Ubuntu 24.04 ships one as "
    "/etc/apparmor.d/bwrap-userns-restrict in apparmor >= 4.0.1: "
    "`sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict` or create a profile "
    "`abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) "
    "{ userns, }` in /etc/apparmor.d/bwrap and load it), or, for the whole machine, "
    "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (trade-off: every program "
    "may then create user namespaces again, which is how some kernel exploits start)."
)


def diagnose_bwrap(stderr: str, facts: UsernsFacts, *, setuid: bool = False) -> Diagnosis:
    """The most likely cause of a bwrap start-up failure, from its stderr and the facts."""
    text = strip_control(stderr)
    if facts.value("max_user_namespaces") == "0":
        return Diagnosis(
            "user namespaces are disabled (user.max_user_namespaces = 0)",
            "`sudo sysctl user.max_user_namespaces=15000` (persist it in /etc/sysctl.d/); "
            "trade-off: unprivileged programs may create user namespaces again.",
        )
    if facts.value("unprivileged_userns_clone") == "0":
        return Diagnosis(
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
            "`sudo sysctl kernel.unprivileged_userns_clone=1` (persist it in /etc/sysctl.d/), "
            "or install bwrap setuid root (`sudo chmod u+s $(command -v bwrap)`, weaker).",
        )
    if facts.value("apparmor_restrict_unprivileged_userns") == "1" and (
        "uid map" in text or "Permission denied" in text or "Operation not permitted" in text
    ):
        return Diagnosis(
            "AppArmor blocks unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns = 1)",
            APPARMOR_FIX,
        )
    if "Failed RTM_NEWADDR" in text or "loopback" in text:
        return Diagnosis(
            "bwrap cannot configure a network namespace here, which happens inside an "
            "unprivileged container" + _where(facts),
            "Run wiggum on the host, give the container the capability to create namespaces "
            "(e.g. `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`), "
            'or use sandbox.mode = "container" from the host.',
        )
    if "Can't mount proc" in text or "mount proc" in text:
        return Diagnosis(
            "bwrap cannot mount /proc, which happens inside a container whose /proc is "
            "partly masked" + _where(facts),
            "Run wiggum on the host, or start the container with "
            "`--security-opt systempaths=unconfined` (Docker) / `--security-opt unmask=ALL` "
            "(podman).",
        )
    if (
        "setting up uid map" in text
        or "No permissions to create" in text
        or ("Creating new namespace failed" in text)
    ):
        hint = " (bwrap is setuid root here)" if setuid else ""
        return Diagnosis(
            f"the kernel refused to create a user namespace{hint}" + _where(facts),
            "Check `sysctl user.max_user_namespaces` and, on Ubuntu, AppArmor's user "
            "namespace restriction; inside a container, run wiggum on the host instead. "
            "`wiggum doctor` shows the values it found.",
        )
    mount = next((line for line in text.splitlines() if _MOUNT_ERRORS.search(line)), None)
    if mount:
        return Diagnosis(
            f"bwrap could not set up a mount: {mount.strip()}",
            "Check that every path of the policy exists and belongs to you (run wiggum as the "
            "owner of the project); `wiggum sandbox explain` lists the paths.",
        )
    if facts.container:
        return Diagnosis(
            f"bwrap failed inside a {facts.container} container",
            "Sandboxes inside unprivileged containers usually cannot create namespaces; run "
            'wiggum on the host or use sandbox.mode = "container" there.',
        )
    first = next((line for line in text.splitlines() if line.strip()), "no error output")
    return Diagnosis(
        f"bwrap failed: {first}",
        "Run `wiggum sandbox explain` and try the printed command by hand; "
        "`wiggum doctor` checks the usual causes.",
    )


def _where(facts: UsernsFacts) -> str:
    return f" (this looks like a {facts.container} container)" if facts.container else ""
