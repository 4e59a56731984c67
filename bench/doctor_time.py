"""How long `wiggum doctor` takes with every check, beside the raw probes it runs.

    .venv/bin/python bench/doctor_time.py [--runs N]

Target (issue 4): the full doctor finishes within 1.5 s here. Printed beside it, measured in
the same run: a bare interpreter, the bwrap probe command on its own, and `git status`.
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
from wiggum.sandbox.engine import build_for
from wiggum.sandbox.select import PROBE_COMMAND, Backend, make_backend


def timed(argv: list[str], runs: int, cwd: Path) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        begin = time.perf_counter()
        subprocess.run(
            argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append((time.perf_counter() - begin) * 1000)
    return statistics.median(samples), max(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wiggum-bench-", dir="/var/tmp"))
    try:
        (root / ".ralph").mkdir()
        (root / ".ralph/PROMPT.md").write_text("work\n")
        (root / "ralph.toml").write_text('[agent]\npreset = "demo"\n[sandbox]\nnetwork = false\n')
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        loaded = load_config(root, os.environ)
        _preset, _host, policy = build_for(loaded, os.environ)
        backend = make_backend("bwrap", policy, os.environ)
        rows = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "git status": ["git", "status", "--porcelain"],
            "wiggum doctor (all checks)": [sys.executable, "-m", "wiggum", "doctor"],
        }
        if isinstance(backend, Backend):
            rows["bwrap probe alone"] = list(backend.launch(PROBE_COMMAND).argv)
        print(f"{'command':30} {'median ms':>10} {'max ms':>8}")
        for name, argv in rows.items():
            median, worst = timed(argv, args.runs, root)
            print(f"{name:30} {median:10.1f} {worst:8.1f}")
            if name.startswith("wiggum doctor"):
                doctor = median
        verdict = "meets" if doctor <= 1500 else "MISSES"
        print(
            f"\nwiggum doctor: {doctor:.0f} ms median ({verdict} the 1.5 s target); "
            f"runs={args.runs}, cpus={os.cpu_count()}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
