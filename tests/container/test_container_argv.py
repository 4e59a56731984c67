from __future__ import annotations

from pathlib import Path

from tests.sandbox.fakes import HOME, PROJECT, config, policy
from tests.sandbox.golden import check_golden
from wiggum.config.schema import ContainerConfig
from wiggum.sandbox.container import Engine, build_container_argv, cleanup_argv

PODMAN = Engine("podman", Path("/usr/bin/podman"), rootless=False)
ROOTLESS = Engine("podman", Path("/usr/bin/podman"), rootless=True)


def argv(
    settings: ContainerConfig, engine: Engine = PODMAN, values: dict[str, object] | None = None
) -> list[str]:
    p = policy(config(**(values or {})), kinds={HOME / ".claude": "dir"})
    return build_container_argv(p, engine, settings, ["claude", "-p"], name="wiggum-test")


def test_golden_image_with_gvisor() -> None:
    settings = ContainerConfig(image="docker.io/library/node:22", runtime="runsc")
    check_golden(
        "container-image.txt",
        "\n".join(
            argv(settings, values={"sandbox.network": False, "sandbox.limits.cpuSeconds": 600})
        )
        + "\n",
    )


def test_isolation_flags() -> None:
    args = argv(ContainerConfig(), values={"sandbox.network": False})
    assert args[1:5] == ["run", "--rm", "--init", "--name"]
    for flag in ("--read-only", "--rm", "--init"):
        assert flag in args
    assert args[args.index("--cap-drop") + 1] == "ALL"
    assert args[args.index("--security-opt") + 1] == "no-new-privileges"
    assert args[args.index("--network") + 1] == "none"
    assert args[-3:] == ["docker.io/library/debian:bookworm-slim", "claude", "-p"]


def test_network_on_uses_the_engine_default() -> None:
    assert "--network" not in argv(ContainerConfig(), values={"sandbox.network": True})


def test_mounts_follow_the_policy() -> None:
    args = argv(ContainerConfig())
    volumes = [args[i + 1] for i, a in enumerate(args) if a == "--volume"]
    assert f"{PROJECT}:{PROJECT}:rw" in volumes
    assert f"{PROJECT}/ralph.toml:{PROJECT}/ralph.toml:ro" in volumes
    assert f"{PROJECT}/.git:{PROJECT}/.git:rw" in volumes  # pinned: cannot be renamed
    assert f"{HOME}/.claude:{HOME}/.claude:rw" in volumes
    tmpfs = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    assert f"{PROJECT}/ralph.config.cjs:ro" in tmpfs  # missing: cannot be created
    assert not any(v.startswith(str(HOME) + ":") for v in volumes)  # never the whole home


def test_rootfs_hides_home_and_uses_rootfs() -> None:
    args = argv(ContainerConfig(rootfs="/"))
    assert args[-4:-2] == ["--rootfs", "/"]
    assert f"{HOME}:ro" in [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]


def test_user_mapping() -> None:
    assert "--user" in argv(ContainerConfig())
    rootless = argv(ContainerConfig(), ROOTLESS)
    assert rootless[rootless.index("--userns") + 1] == "keep-id"


def test_limits_as_engine_flags() -> None:
    args = argv(
        ContainerConfig(),
        values={
            "sandbox.limits.memory": "1G",
            "sandbox.limits.processes": 64,
            "sandbox.limits.fileSize": "10M",
        },
    )
    assert args[args.index("--memory") + 1] == str(1024**3)
    assert args[args.index("--pids-limit") + 1] == "64"
    ulimits = [args[i + 1] for i, a in enumerate(args) if a == "--ulimit"]
    assert "nproc=64:64" in ulimits and f"fsize={10 * 1024**2}:{10 * 1024**2}" in ulimits


def test_extra_flags_and_secrets_only_by_name() -> None:
    args = argv(ContainerConfig(extra_flags=("--runtime-flag", "ignore-cgroups")))
    assert "ignore-cgroups" in args
    envs = [args[i + 1] for i, a in enumerate(args) if a == "--env"]
    assert any(e.startswith("ANTHROPIC_API_KEY=") for e in envs)
    assert not any(e.startswith("AWS_SECRET_ACCESS_KEY=") for e in envs)


def test_cleanup_removes_the_named_container() -> None:
    assert cleanup_argv(PODMAN, "wiggum-x") == [
        "/usr/bin/podman",
        "rm",
        "--force",
        "--ignore",
        "wiggum-x",
    ]
