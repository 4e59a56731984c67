"""Start-up cost per iteration of each backend, measured in one run: raw `true`, bwrap, and
the container backend (podman with gVisor over the host's root filesystem, as on CI here).

    .venv/bin/python bench/container_startup.py [--runs N]

Each row is the spawn `run` performs per iteration (wiggum.proc), cleanup included.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wiggum.config.loader import load_config
from wiggum.proc import finish, start
from wiggum.sandbox.engine import prepare

CONTAINER = """
[sandbox.container]
engine = "podman"
runtime = "runsc"
rootfs = "/"
extraFlags = ["--runtime-flag", "network=none", "--runtime-flag", "ignore-cgroups",
              "--ulimit", "nofile=1024:1024"]
[sandbox.limits]
processes = 1024
"""


def spawn_ms(project: Path, runs: int) -> float:
    backend = prepare(load_config(project, os.environ), os.environ).selection.backend
    samples = []
    for _ in range(runs):
        launch = backend.launch(["true"])
        begin = time.perf_counter()
        process = start(launch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        process.wait()
        finish(launch)
        samples.append((time.perf_counter() - begin) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wiggum-bench-", dir="/var/tmp"))
    rows: dict[str, float] = {}
    try:
        for mode in ("off", "bwrap", "container"):
            project = root / mode
            project.mkdir()
            extra = CONTAINER if mode == "container" else ""
            (project / "ralph.toml").write_text(
                f'[sandbox]\nmode = "{mode}"\nenabled = {str(mode != "off").lower()}\n'
                f"network = false\n{extra}"
            )
            if mode == "bwrap" and not shutil.which("bwrap"):
                continue
            if mode == "container" and not (shutil.which("podman") and shutil.which("runsc")):
                continue
            rows[mode] = spawn_ms(project, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    names = {"off": "raw (no sandbox)", "bwrap": "bwrap", "container": "podman + gVisor"}
    base = rows.get("bwrap") or 1.0
    print(f"{'backend':24} {'median ms':>10} {'vs bwrap':>9}")
    for mode, value in rows.items():
        print(f"{names[mode]:24} {value:10.1f} {value / base:8.1f}x")
    print(f"runs={args.runs}, cpus={os.cpu_count()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
