"""sandbox.limits applied to the real sandboxed process tree, each with a control arm."""

from __future__ import annotations

import os

import pytest

from tests.sandbox.test_escape import SKIP
from tests.sandbox.world import World, world

__all__ = ["world"]
pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

FORK = (
    "import os, signal, time\n"
    "children = []\n"
    "for _ in range(60):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid == 0:\n"
    "        time.sleep(30)\n"
    "        os._exit(0)\n"
    "    children.append(pid)\n"
    "print(len(children))\n"
    "for pid in children:\n"
    "    os.kill(pid, signal.SIGKILL)\n"
)
ALLOCATE = "b = bytearray(300 * 1024 * 1024); print('allocated')"
SPIN = "import time\nend = time.time() + 2.5\nwhile time.time() < end: pass\nprint('done')"


def limited(world: World, **limits: str | int) -> None:
    body = "\n".join(
        f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in limits.items()
    )
    world.set_config(f"[sandbox]\nnetwork = false\n[sandbox.limits]\n{body}\n")


def test_file_size(world: World) -> None:
    limited(world, fileSize="1M")
    world.sh("head -c 3000000 /dev/zero > big", sandboxed=True)
    assert (world.project / "big").stat().st_size <= 1024 * 1024
    world.sh("head -c 3000000 /dev/zero > big", sandboxed=False)
    assert (world.project / "big").stat().st_size == 3000000


def test_memory(world: World) -> None:
    limited(world, memory="128M")
    assert "allocated" not in world.python(ALLOCATE, sandboxed=True).out
    assert "allocated" in world.python(ALLOCATE, sandboxed=False).out


def test_processes(world: World) -> None:
    if world.runner.uid is None and os.geteuid() == 0:
        pytest.skip("the kernel does not apply RLIMIT_NPROC to root; shown as an ordinary user")
    limited(world, processes=20)
    inside = int(world.python(FORK, sandboxed=True).out.strip() or 0)
    assert inside < 20, inside
    assert int(world.python(FORK, sandboxed=False).out.strip()) == 60


def test_cpu_seconds(world: World) -> None:
    limited(world, cpuSeconds=1)
    assert "done" not in world.python(SPIN, sandboxed=True).out
    assert "done" in world.python(SPIN, sandboxed=False).out
