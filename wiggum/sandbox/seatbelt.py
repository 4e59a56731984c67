"""Seatbelt (macOS `sandbox-exec`): a policy rendered as a `(deny default)` profile.

The profile is built from the same `Policy` as the bwrap argv. Facts it relies on (see
docs/sandbox.md for the sources):

- When several rules match, the *last* one wins, whatever their specificity. The profile
  therefore goes from general to specific: base allowances, reads, writes, network, then the
  protected and hidden denials, which must override every allowance above them.
- Seatbelt matches the kernel-resolved path (`/tmp/x` is `/private/tmp/x`); a rule written
  with the unresolved spelling silently never matches. Policy paths are already resolved;
  `canonical` also maps the three macOS links for paths given by hand.
- Strings use Scheme syntax: backslash and double quote are escaped (backslash first), UTF-8
  passes through, control characters are refused.
- A path-based deny can be side-stepped by renaming a parent folder, so every folder between
  a writable root and a protected or hidden path is denied `file-write-unlink` too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from wiggum.sandbox.policy import Entry, Policy

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_PRIVATE_LINKS = ("/tmp", "/var", "/etc")
_DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx", "/dev/dtracehelper")
_DEVICES_RO = ("/dev/random", "/dev/urandom")

# Mach services a command-line program needs: user and group lookup, logging, preferences,
# power assertions, and Launch Services. Everything else stays closed.
MACH_BASE = (
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.PowerManagement.control",
    "com.apple.bsd.dirhelper",
    "com.apple.lsd.mapdb",
    "com.apple.coreservices.launchservicesd",
)
# With network on: DNS configuration and TLS certificate checks.
MACH_NETWORK = (
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.SecurityServer",
    "com.apple.trustd.agent",
    "com.apple.ocspd",
)


def canonical(path: Path | str) -> str:
    """The path as Seatbelt sees it: `/tmp/x` -> `/private/tmp/x`."""
    text = str(PurePosixPath(path))
    for link in _PRIVATE_LINKS:
        if text == link or text.startswith(link + "/"):
            return "/private" + text
    return text


def quote(text: str) -> str:
    """A Seatbelt string literal for `text`."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError(f"a sandbox path cannot contain control characters: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _literal(path: Path | str) -> str:
    return f"(literal {quote(canonical(path))})"


def _path_filters(entries: Iterable[Entry]) -> list[str]:
    """A file is matched exactly; a folder, or a path that does not exist yet (which may be
    created as either), by itself and everything below it."""
    out = []
    for entry in entries:
        out.append(_literal(entry.path))
        if entry.kind in ("dir", "missing"):
            out.append(f"(subpath {quote(canonical(entry.path))})")
    return out


def _rule(action: str, operations: str, filters: Sequence[str]) -> list[str]:
    if not filters:
        return []
    return [f"({action} {operations}", *(f"    {f}" for f in filters[:-1]), f"    {filters[-1]})"]


def _ancestors(paths: Iterable[Path]) -> list[str]:
    """The links /tmp, /var, /etc themselves (a lookup through a link checks the link) and
    every folder above the given paths, so programs can walk down to them (stat, realpath,
    getcwd) without being able to list or read anything else those folders hold."""
    seen: dict[str, None] = dict.fromkeys(_PRIVATE_LINKS)
    for path in paths:
        for parent in reversed(PurePosixPath(canonical(path)).parents):
            if str(parent) != "/":
                seen.setdefault(str(parent))
    return [f"(literal {quote(p)})" for p in seen]


def _between(paths: Iterable[Path], roots: Sequence[Path]) -> list[str]:
    """The folders between each path and the writable root that contains it (anti-rename)."""
    out: dict[str, None] = {}
    for path in paths:
        root = next((r for r in roots if path != r and path.is_relative_to(r)), None)
        for parent in path.parents if root else ():
            if parent == root:
                break
            out.setdefault(_literal(parent))
    return list(out)


def render_profile(policy: Policy) -> str:
    visible = [e.path for e in (*policy.system, *policy.read_only, *policy.writable)]
    writable_roots = [e.path for e in policy.writable]
    masked = [e.path for e in (*policy.protected, *policy.hidden)]
    sections = [
        ["(version 1)", "(deny default)"],
        [
            ";; processes: run programs; signal and inspect only this sandbox's processes",
            "(allow process-exec)",
            "(allow process-fork)",
            "(allow signal (target same-sandbox))",
            "(allow process-info* (target same-sandbox))",
            "(allow sysctl-read)",
            "(allow pseudo-tty)",
            "(allow ipc-posix-sem)",
            "(allow ipc-posix-shm)",
            "(allow user-preference-read)",
            *_rule("allow", "mach-lookup", [f"(global-name {quote(s)})" for s in MACH_BASE]),
        ],
        [
            ";; devices",
            *_rule(
                "allow",
                "file-read* file-write-data file-ioctl",
                [_literal(d) for d in _DEVICES_RW] + ['(regex #"^/dev/ttys[0-9]+$")'],
            ),
            *_rule(
                "allow", "file-read*", [_literal(d) for d in _DEVICES_RO] + ['(subpath "/dev/fd")']
            ),
        ],
        [
            ";; the way down to every visible path: metadata only, no listing",
            '(allow file-read* (literal "/"))',
            *_rule(
                "allow",
                "file-read-metadata",
                _ancestors(visible),
            ),
        ],
        [
            ";; read-only: system folders, readOnlyPaths, the agent's runtime",
            *_rule(
                "allow",
                "file-read* file-map-executable",
                _path_filters([*policy.system, *policy.read_only]),
            ),
        ],
        [
            ";; writable: the project, allowPaths, the agent's login files, a private TMPDIR",
            *_rule(
                "allow",
                "file-read* file-write* file-map-executable",
                _path_filters(policy.writable),
            ),
        ],
        [
            ";; read-only paths inside a writable one stay read-only",
            *_rule("deny", "file-write*", _path_filters(policy.read_only)),
        ],
        _network(policy),
        [
            ";; protected: read-only although inside a writable path, so the agent cannot",
            ";; loosen its own sandbox; a path that does not exist yet cannot be created",
            *_rule("deny", "file-write*", _path_filters(policy.protected)),
        ],
        [
            ";; hidden: neither readable nor writable, whatever allows it above",
            *_rule("deny", "file-read* file-write* network-outbound", _path_filters(policy.hidden)),
        ],
        [
            ";; folders above protected and hidden paths cannot be renamed away",
            *_rule("deny", "file-write-unlink", _between(masked, writable_roots)),
        ],
    ]
    return "\n\n".join("\n".join(s) for s in sections if s) + "\n"


def _network(policy: Policy) -> list[str]:
    if not policy.network:
        return [";; network: off (nothing allows it)"]
    sockets = [
        f"(remote unix-socket (subpath {quote(canonical(e.path))}))"
        for e in policy.writable
        if e.kind == "dir"
    ]
    sockets.append('(remote unix-socket (path-literal "/private/var/run/mDNSResponder"))')
    return [
        ";; network: on",
        "(allow network*)",
        "(allow system-socket)",
        *_rule("allow", "mach-lookup", [f"(global-name {quote(s)})" for s in MACH_NETWORK]),
        ";; but not the unix sockets of the host (ssh-agent, Docker): connecting to one is a",
        ";; network operation in Seatbelt, not a file one; only those in writable paths, and DNS",
        "(deny network-outbound (remote unix-socket))",
        *_rule("allow", "network-outbound", sockets),
    ]


def build_sandbox_exec_argv(profile: str, command: Sequence[str]) -> list[str]:
    """`sandbox-exec -p PROFILE CMD...`: the profile travels in the argv, so no temporary
    file can be swapped between being written and being read."""
    return [SANDBOX_EXEC, "-p", profile, *command]
