"""The built-in demo agent, end to end, under the real sandbox; as root and as an ordinary
user (who cannot use root's interpreter, so runs wiggum with the system Python)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click
import platformdirs
import pytest

import wiggum
from tests.sandbox.test_escape import SKIP
from tests.sandbox.world import SYSTEM_PYTHON, Runner, runners

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

TODO = "# Demo\n\n- [ ] parse the input\n- [ ] add tests\n- [x] already done\n- [ ] write docs\n"
PROMPT = (
    "Tick one item of TODO.md per iteration.\n"
    "When all are done, print <promise>COMPLETE</promise>\n"
)


@pytest.fixture(params=runners(), ids=lambda r: r.name.replace(" ", "-"))
def runner(request: pytest.FixtureRequest) -> Runner:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def base() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="wiggum-demo-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_demo_agent_completes_under_bwrap(runner: Runner, base: Path) -> None:
    home, project = base / "home", base / "home/demo"
    (project / ".ralph").mkdir(parents=True)
    (project / "ralph.toml").write_text('[agent]\npreset = "demo"\n[sandbox]\nnetwork = false\n')
    (project / ".ralph/PROMPT.md").write_text(PROMPT)
    (project / "TODO.md").write_text(TODO)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    if runner.uid is None:
        command = [sys.executable, "-m", "wiggum"]
        env["PYTHONPATH"] = str(Path(wiggum.__file__).parent.parent)
    else:  # the system Python with a copy of what `run` imports
        lib = base / "pylib"
        for module in (wiggum, click, platformdirs):
            source = Path(module.__file__ or "").parent
            shutil.copytree(source, lib / source.name)
        command, env["PYTHONPATH"] = [SYSTEM_PYTHON, "-m", "wiggum"], str(lib)
    runner.chown(base)
    done = subprocess.run(
        runner.wrap([*command, "-C", str(project), "run", "--sandbox"]),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The work is in the project ...
    assert (project / "TODO.md").read_text().count("[x]") == 4
    assert sorted(p.name for p in (project / "done").iterdir()) == [
        "02-parse-the-input.md",
        "03-add-tests.md",
        "04-write-docs.md",
    ]
    # ... the record says what happened ...
    (record_path,) = project.glob(".wiggum/runs/*/run.json")
    record = json.loads(record_path.read_text())
    assert record["stopReason"] == "completed" and record["backend"] == "bwrap"
    assert [i["exitCode"] for i in record["iterations"]] == [0, 0, 0, 0]
    assert [i["promiseSeen"] for i in record["iterations"]] == [False, False, False, True]
    # ... and the logs hold the agent's output, iteration by iteration.
    logs = sorted(record_path.parent.glob("iteration-*.log"))
    assert len(logs) == 4
    assert "did 'parse the input'" in logs[0].read_text()
    assert logs[3].read_text().splitlines()[-1] == "<promise>COMPLETE</promise>"
    assert done.stdout.count("demo agent: did") == 3
    # Nothing was left in the project by the sandbox's masks.
    assert sorted(p.name for p in project.iterdir()) == [
        ".git",
        ".ralph",
        ".wiggum",
        "TODO.md",
        "done",
        "ralph.toml",
    ]
