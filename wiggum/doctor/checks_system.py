"""Checks of the machine itself: platform, Python, and the container engines."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from wiggum.doctor.model import DoctorContext, Result, Status
from wiggum.sandbox.diagnose import detect_container


def check_os(ctx: DoctorContext) -> Result:
    names = {"linux": "Linux", "darwin": "macOS"}
    name = names.get(ctx.system)
    release = platform.mac_ver()[0] if ctx.system == "darwin" else platform.release()
    if name is None:
        return Result(
            "platform.os",
            Status.FAIL,
            f"{ctx.system} is not supported",
            "wiggum's sandboxes need Linux or macOS.",
            "On Windows, run wiggum inside WSL2 with bubblewrap.",
        )
    return Result("platform.os", Status.OK, f"{name} {release} ({ctx.machine})")


def check_wsl(ctx: DoctorContext) -> Result:
    if ctx.system != "linux":
        return Result("platform.wsl", Status.SKIP, "not Linux")
    release = (ctx.read("/proc/sys/kernel/osrelease") or "").strip()
    if "microsoft" not in release.lower():
        return Result("platform.wsl", Status.OK, "not WSL")
    if "wsl2" in release.lower() or "microsoft-standard" in release.lower():
        return Result("platform.wsl", Status.OK, "WSL2: bubblewrap works here", f"kernel {release}")
    return Result(
        "platform.wsl",
        Status.FAIL,
        "WSL1 cannot run Linux sandboxes",
        f"kernel {release}: WSL1 has no user namespaces",
        "Convert the distribution to WSL2: `wsl --set-version <distro> 2`.",
    )


def check_container(ctx: DoctorContext) -> Result:
    found = detect_container(ctx.read)
    if found is None:
        return Result("platform.container", Status.OK, "not inside a container")
    return Result(
        "platform.container",
        Status.WARN,
        f"this looks like a {found} container",
        "Namespace sandboxes inside a container often cannot start (no user namespaces, "
        "masked /proc); the bwrap probe below says whether this one can.",
        "If the probe fails, run wiggum on the host.",
    )


def check_python(ctx: DoctorContext) -> Result:
    version = ".".join(map(str, sys.version_info[:3]))
    return Result("platform.python", Status.OK, f"Python {version} ({sys.executable})")


def check_engines(ctx: DoctorContext) -> Result:
    wanted = _container_mode(ctx)
    found = []
    for engine in ("podman", "docker"):
        path = ctx.which(engine)
        if path is None:
            continue
        info = ctx.run([path, "info", "--format", "{{json .}}"], ctx.command_timeout * 2)
        reachable = info.ok
        found.append(f"{engine} ({'reachable' if reachable else 'engine not reachable'})")
        if reachable:
            return Result(
                "container.engine",
                Status.OK,
                f"{engine} is installed and reachable",
                ", ".join(found),
            )
    status = Status.FAIL if wanted else Status.SKIP
    summary = "no reachable container engine" if found else "no container engine installed"
    return Result(
        "container.engine",
        status,
        summary,
        ", ".join(found) or "",
        "Install podman (`sudo apt-get install podman`) or start the Docker engine."
        if wanted
        else "",
    )


def check_runsc(ctx: DoctorContext) -> Result:
    path = ctx.which("runsc")
    wants = _container_runtime(ctx) == "runsc"
    if path is None:
        status = Status.FAIL if wants else Status.SKIP
        return Result(
            "container.runsc",
            status,
            "gVisor (runsc) is not installed",
            "",
            "`sudo apt-get install runsc` (Debian) or see gvisor.dev." if wants else "",
        )
    version = ctx.run([path, "--version"], ctx.command_timeout)
    first = (version.out.splitlines() or ["version unknown"])[0]
    return Result("container.runsc", Status.OK, f"gVisor runsc: {first}", path)


def check_image(ctx: DoctorContext) -> Result:
    from wiggum.config.loader import LoadedConfig

    if not _container_mode(ctx) or not isinstance(ctx.loaded, LoadedConfig):
        return Result("container.image", Status.SKIP, 'sandbox.mode is not "container"')
    settings = ctx.loaded.config.sandbox.container
    if settings.rootfs:
        kind = "dir" if Path(settings.rootfs).is_dir() else "missing"
        status = Status.OK if kind == "dir" else Status.FAIL
        return Result(
            "container.image",
            status,
            f"root filesystem {settings.rootfs} "
            f"({'present' if kind == 'dir' else 'missing'}; no image needed)",
            fix="" if kind == "dir" else "Fix sandbox.container.rootfs.",
        )
    image = settings.image
    for engine in ("podman", "docker"):
        path = ctx.which(engine)
        if path and ctx.run([path, "image", "inspect", image], ctx.command_timeout * 2).ok:
            return Result("container.image", Status.OK, f"{image} is present ({engine})")
    return Result(
        "container.image",
        Status.FAIL,
        f"{image} is not present locally",
        "",
        f"`podman pull {image}` (or docker pull), or set sandbox.container.image.",
    )


def _container_mode(ctx: DoctorContext) -> bool:
    from wiggum.config.loader import LoadedConfig

    return isinstance(ctx.loaded, LoadedConfig) and ctx.loaded.config.sandbox.mode == "container"


def _container_runtime(ctx: DoctorContext) -> str:
    from wiggum.config.loader import LoadedConfig

    if not isinstance(ctx.loaded, LoadedConfig):
        return ""
    return ctx.loaded.config.sandbox.container.runtime
