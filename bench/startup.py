"""Start-up cost of wiggum's fast commands against a bare interpreter, measured in one run.

    .venv/bin/python bench/startup.py [--runs N]

Target (issue 2): `wiggum --version` and `wiggum --help` add at most 60 ms over
`python -c pass` with the same interpreter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_MS = 60.0


def time_command(argv: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    python = sys.executable
    script = str(Path(python).parent / "wiggum")
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import click'": [python, "-c", "import click"],
        "wiggum --version": [script, "--version"],
        "wiggum --help": [script, "--help"],
        "python -m wiggum --version": [python, "-m", "wiggum", "--version"],
    }
    for argv in commands.values():  # warm the page cache and .pyc files
        time_command(argv, 2)
    # Interleave the commands so that machine noise hits all of them alike.
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            samples[name] += time_command(argv, 1)
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':28} {'median ms':>10} {'min ms':>8} {'+ms vs bare':>12} {'ratio':>6}")
    worst = 0.0
    for name, values in samples.items():
        median = statistics.median(values)
        extra = median - base
        if name.startswith("wiggum"):
            worst = max(worst, extra)
        print(f"{name:28} {median:10.1f} {min(values):8.1f} {extra:12.1f} {median / base:6.2f}")
    verdict = "meets" if worst <= TARGET_MS else "MISSES"
    print(
        f"\nworst added start-up: {worst:.1f} ms ({verdict} the {TARGET_MS:.0f} ms target); "
        f"runs={args.runs}, cpus={os.cpu_count()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
