"""What the sandbox costs, measured in one run against baselines from the same run.

    .venv/bin/python bench/sandbox_overhead.py [--runs N] [--srt PATH]

Rows:
- `true` started directly (the floor);
- the bwrap command line written out by hand (the argv `run` uses, `prlimit` for the limits
  included, started with subprocess.run, nothing of wiggum around it), and the same without
  the `prlimit` prefix (what the limits cost);
- wiggum's spawn as `run` performs it per iteration (wiggum.proc: own session, rlimits,
  mount-point clean-up);
- `wiggum sandbox exec -- true` end to end (interpreter start-up, config, the real probe);
- optionally Anthropic's sandbox runtime (`srt`) running `true`, as a peer.
Plus the in-process cost of building the policy and the argv.

Targets (issue 3): building policy + argv under 5 ms; wiggum's per-iteration spawn at most
20% over the hand-written bwrap command.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wiggum.agents.presets import PRESETS
from wiggum.config.loader import load_config
from wiggum.proc import remove_mount_points, start
from wiggum.sandbox.bwrap import build_bwrap_argv, detect_bwrap
from wiggum.sandbox.host import collect_host
from wiggum.sandbox.policy import build_policy
from wiggum.sandbox.select import select_backend


def timed(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        begin = time.perf_counter()
        action()
        samples.append((time.perf_counter() - begin) * 1000)
    return samples


def make_project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="wiggum-bench-", dir="/var/tmp"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "ralph.toml").write_text("[sandbox]\nnetwork = false\n")
    (root / ".wiggum").mkdir()
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--srt", help="path to srt (@anthropic-ai/sandbox-runtime) to compare")
    args = parser.parse_args()
    info = detect_bwrap(os.environ)
    if info is None:
        print("bubblewrap is not installed; nothing to measure")
        return 1
    project = make_project()
    try:
        return measure(project, args.runs, args.srt or shutil.which("srt"))
    finally:
        shutil.rmtree(project, ignore_errors=True)


def measure(project: Path, runs: int, srt: str | None) -> int:
    environ = dict(os.environ)
    loaded = load_config(project, environ)
    preset = PRESETS[loaded.config.agent.preset]
    info = detect_bwrap(environ)
    assert info is not None
    host = collect_host(loaded.config, preset, project, environ)

    def build() -> list[str]:
        policy = build_policy(loaded.config, preset, host, project)
        return build_bwrap_argv(policy, info, ["true"])

    build_ms = timed(build, runs * 20)
    collect_ms = timed(lambda: collect_host(loaded.config, preset, project, environ), runs)

    selection = select_backend(
        enabled=True,
        mode="bwrap",
        required=True,
        system="linux",
        policy=build_policy(loaded.config, preset, host, project),
        environ=environ,
    )
    launch = selection.backend.launch(["true"])
    hand_written = list(launch.argv)
    bare_bwrap = hand_written[hand_written.index(str(info.path)) :]  # without prlimit
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}

    def wiggum_spawn() -> None:
        process = start(launch, **quiet)
        process.wait()
        remove_mount_points(launch.mount_points)

    def cli() -> None:
        subprocess.run(
            [sys.executable, "-m", "wiggum", "-C", str(project), "sandbox", "exec", "--", "true"],
            check=True,
            **quiet,
        )

    rows: dict[str, Callable[[], object]] = {
        "true, started directly": lambda: subprocess.run(["true"], check=True),
        "bwrap argv by hand": lambda: subprocess.run(
            hand_written, check=True, cwd=project, **quiet
        ),
        "bwrap argv by hand, no limits": lambda: subprocess.run(
            bare_bwrap, check=True, cwd=project, **quiet
        ),
        "wiggum spawn (per iteration)": wiggum_spawn,
        "wiggum sandbox exec -- true": cli,
    }
    if srt:
        settings = project / "srt-settings.json"
        settings.write_text(
            '{"network": {"allowedDomains": [], "deniedDomains": []}, '
            '"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}'
        )
        rows["srt (sandbox-runtime) true"] = lambda: subprocess.run(
            [srt, "--settings", str(settings), "true"], check=True, cwd=project, **quiet
        )
    for action in rows.values():
        timed(action, 3)  # warm up
    samples: dict[str, list[float]] = {name: [] for name in rows}
    heavy = {"wiggum sandbox exec -- true", "srt (sandbox-runtime) true"}
    for index in range(runs):  # interleaved, so noise hits every row alike
        for name, action in rows.items():
            if name in heavy and index % 5:
                continue  # slow rows: a fifth of the runs is plenty
            samples[name] += timed(action, 1)

    print(
        f"policy + argv build: median {statistics.median(build_ms):.3f} ms "
        f"(target < 5 ms); host facts (I/O, once per run): "
        f"median {statistics.median(collect_ms):.2f} ms"
    )
    raw = statistics.median(samples["bwrap argv by hand"])
    print(f"\n{'spawn of `true`':32} {'median ms':>10} {'min ms':>8} {'vs bwrap':>9}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:32} {median:10.2f} {min(values):8.2f} {median / raw:8.2f}x")
    ratio = statistics.median(samples["wiggum spawn (per iteration)"]) / raw
    verdict = "meets" if ratio <= 1.2 else "MISSES"
    print(
        f"\nwiggum's per-iteration spawn is {ratio:.2f}x the hand-written bwrap command "
        f"({verdict} the 1.20x target); runs={runs}, cpus={os.cpu_count()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
