"""wiggum init: the wizard driven by key presses, every flag, safety, and what it renders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tests.conftest import RunWiggum
from wiggum.agents.presets import PRESETS
from wiggum.config.cjs import parse_cjs
from wiggum.config.loader import load_config
from wiggum.config.schema import config_as_dict
from wiggum.scaffold import render as render_module
from wiggum.scaffold.answers import Answers
from wiggum.scaffold.init import InitRequest, run_init

HAS_BWRAP = shutil.which("bwrap") is not None
DOWN, ENTER = "\x1b[B", "\r"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my project ünï"  # spaces and non-ASCII on purpose
    folder.mkdir()
    return folder


def init(project: Path, *args: str, wiggum: RunWiggum) -> Any:
    return wiggum("-C", str(project), "init", *args)


def answers_in(project: Path) -> dict[str, Any]:
    return config_as_dict(load_config(project, {}).config)


# --- the wizard, answered by key presses -----------------------------------------------------


def test_wizard_by_key_presses(project: Path) -> None:
    env = {"PATH": "/nonexistent"}  # no agent on PATH: the default agent is the demo
    with create_pipe_input() as pipe:
        keys = [
            DOWN + ENTER,  # agent: the default (demo, nothing on PATH), one down: custom
            "\x7f" * 10 + "my-agent --yes {prompt}" + ENTER,  # its command
            DOWN + ENTER,  # format: cjs
            "y",  # sandbox on (confirm answers on the key)
            ENTER,  # backend: auto
            "n",  # network off
            "build, .cache" + ENTER,  # writable
            ENTER,  # read-only: none
            ENTER,  # deny: the defaults
            "\x7f\x7f" + "7" + ENTER,  # max iterations
            "y",  # write
        ]
        pipe.send_text("".join(keys))
        request = InitRequest(
            project, env, interactive=True, io={"input": pipe, "output": DummyOutput()}
        )
        messages: list[str] = []
        assert run_init(request, messages.append) == 0
    assert (project / "ralph.config.cjs").is_file() and not (project / "ralph.toml").exists()
    config = answers_in(project)
    assert config["agent"]["preset"] == "custom"
    assert config["agent"]["command"] == ["my-agent", "--yes", "{prompt}"]
    assert config["sandbox"]["network"] is False
    assert config["sandbox"]["allowPaths"] == ["build", ".cache"]
    assert config["loop"]["maxIterations"] == 7
    assert "create" in messages[0] and "ralph.config.cjs" in messages[0]


def test_ctrl_c_in_the_wizard_writes_nothing(project: Path) -> None:
    with create_pipe_input() as pipe:
        pipe.send_text(ENTER + "\x03")  # agent chosen, then Ctrl-C at the format question
        request = InitRequest(
            project, {}, interactive=True, io={"input": pipe, "output": DummyOutput()}
        )
        with pytest.raises(KeyboardInterrupt):
            run_init(request, print)
    assert list(project.iterdir()) == []


def test_interrupt_while_writing_restores_everything(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "ralph.toml").write_text("# mine\n")
    original = render_module._write
    calls = []

    def flaky(target: Path, content: bytes) -> None:
        calls.append(target)
        if len(calls) == 3:
            raise KeyboardInterrupt
        original(target, content)

    monkeypatch.setattr(render_module, "_write", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_init(InitRequest(project, {}, yes=True, force=True), print)
    assert (project / "ralph.toml").read_text() == "# mine\n"
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == ["ralph.toml"]


# --- flags and safety --------------------------------------------------------------------------


def test_no_terminal_and_no_yes_refuses(project: Path, wiggum: RunWiggum) -> None:
    result = init(project, wiggum=wiggum)
    assert result.code == 2 and "pass --yes" in result.err
    assert list(project.iterdir()) == []


def test_every_flag(project: Path, wiggum: RunWiggum) -> None:
    result = init(
        project,
        "--yes",
        "--agent",
        "custom",
        "--command",
        "agent run '{prompt}'",
        "--format",
        "toml",
        "--sandbox",
        "--mode",
        "bwrap",
        "--no-network",
        "--allow-path",
        "build",
        "--allow-path",
        "~/.cache/x",
        "--read-only-path",
        "~/.gitconfig",
        "--deny-path",
        "~/.ssh",
        "--max-iterations",
        "5",
        "--iteration-timeout",
        "60",
        wiggum=wiggum,
    )
    assert result.code == 0, result.err
    config = answers_in(project)
    assert config["agent"] == {
        "preset": "custom",
        "command": ["agent", "run", "{prompt}"],
        "args": [],
        "requiresNetwork": False,
        "env": [],
    }
    sandbox = config["sandbox"]
    assert (sandbox["enabled"], sandbox["mode"], sandbox["network"]) == (True, "bwrap", False)
    assert sandbox["allowPaths"] == ["build", "~/.cache/x"]
    assert sandbox["readOnlyPaths"] == ["~/.gitconfig"] and sandbox["denyPaths"] == ["~/.ssh"]
    assert (config["loop"]["maxIterations"], config["loop"]["iterationTimeout"]) == (5, 60)


def test_no_sandbox_flag(project: Path, wiggum: RunWiggum) -> None:
    assert init(project, "--yes", "--no-sandbox", wiggum=wiggum).code == 0
    sandbox = answers_in(project)["sandbox"]
    assert sandbox["enabled"] is False and sandbox["mode"] == "off"


def test_existing_config_is_never_overwritten_without_force(
    project: Path, wiggum: RunWiggum
) -> None:
    mine = b"# my careful edits\n[loop]\nmaxIterations = 99\n"
    (project / "ralph.toml").write_bytes(mine)
    result = init(project, "--yes", wiggum=wiggum)
    assert result.code == 1
    assert "ralph.toml" in result.err and "Nothing was written" in result.err
    assert (project / "ralph.toml").read_bytes() == mine
    assert sorted(p.name for p in project.iterdir()) == ["ralph.toml"]  # no half project
    forced = init(project, "--yes", "--force", wiggum=wiggum)
    assert forced.code == 0 and (project / "ralph.toml").read_bytes() != mine


def test_dry_run_writes_nothing(project: Path, wiggum: RunWiggum) -> None:
    result = init(project, "--yes", "--dry-run", wiggum=wiggum)
    assert result.code == 0 and "create" in result.out and "ralph.toml" in result.out
    assert list(project.iterdir()) == []


def test_the_other_format_already_present_is_refused(project: Path, wiggum: RunWiggum) -> None:
    (project / "ralph.config.cjs").write_text("module.exports = {};")
    result = init(project, "--yes", "--format", "toml", "--force", wiggum=wiggum)
    assert result.code == 2 and "ralph.config.cjs already exists" in result.err


def test_git_repository_or_not(project: Path, wiggum: RunWiggum) -> None:
    assert "not a git repository" in init(project, "--yes", wiggum=wiggum).out
    other = project.parent / "repo"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    result = init(other, "--yes", wiggum=wiggum)
    assert result.code == 0 and "not a git repository" not in result.out


def test_previous_answers_are_offered_again(project: Path, wiggum: RunWiggum) -> None:
    init(project, "--yes", "--agent", "codex", "--max-iterations", "3", wiggum=wiggum)
    (project / "ralph.toml").unlink()
    assert init(project, "--yes", wiggum=wiggum).code == 0
    config = answers_in(project)
    assert config["agent"]["preset"] == "codex" and config["loop"]["maxIterations"] == 3


def test_user_config_prefills(project: Path, isolated_env: Path, wiggum: RunWiggum) -> None:
    user = isolated_env / ".config/wiggum/config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[agent]\npreset = "gemini"\n[sandbox]\nnetwork = true\n')
    assert init(project, "--yes", wiggum=wiggum).code == 0
    data = tomllib.loads((project / "ralph.toml").read_text())
    assert data["agent"]["preset"] == "gemini" and data["sandbox"]["network"] is True


def test_demo_project_runs(project: Path, wiggum: RunWiggum) -> None:
    assert init(project, "--yes", "--agent", "demo", wiggum=wiggum).code == 0
    assert (project / "TODO.md").is_file()
    assert (project / ".wiggum/.gitignore").read_text().splitlines()[-1] == "*"
    prompt = (project / ".ralph/PROMPT.md").read_text()
    assert "<promise>COMPLETE</promise>" in prompt and "TODO.md" in prompt
    # The promise never stands alone on a line of the prompt, or it would count as an echo.
    assert "<promise>COMPLETE</promise>" not in [line.strip() for line in prompt.splitlines()]


# --- everything rendered is valid --------------------------------------------------------------

MATRIX = [
    (agent, fmt, sandbox)
    for agent in PRESETS
    for fmt in ("toml", "cjs")
    for sandbox in (True, False)
]


@pytest.fixture(scope="module")
def rendered(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[tuple[str, str, bool], Path]]:
    out = {}
    for agent, fmt, sandbox in MATRIX:
        folder = tmp_path_factory.mktemp(f"{agent}-{fmt}-{sandbox}")
        flags = {
            "agent": agent,
            "format": fmt,
            "sandbox": sandbox,
            "mode": None if sandbox else "off",
            "command": ("my-agent",),
        }
        run_init(InitRequest(folder, {}, flags=flags, yes=True), lambda _: None)
        out[(agent, fmt, sandbox)] = folder
    yield out


@pytest.mark.parametrize(("agent", "fmt", "sandbox"), MATRIX)
def test_matrix_renders_validates_and_explains(
    rendered: dict[tuple[str, str, bool], Path],
    wiggum: RunWiggum,
    agent: str,
    fmt: str,
    sandbox: bool,
) -> None:
    folder = rendered[(agent, fmt, sandbox)]
    validate = wiggum("-C", str(folder), "config", "validate")
    assert validate.code == 0, validate.err
    if sandbox and not HAS_BWRAP:
        pytest.skip("bubblewrap is not installed")
    explain = wiggum("-C", str(folder), "sandbox", "explain", "--json")
    assert explain.code == 0, explain.err
    assert json.loads(explain.out)["backend"] == ("bwrap" if sandbox else "none")


@pytest.mark.parametrize("agent", list(PRESETS))
def test_both_formats_give_the_same_config(
    rendered: dict[tuple[str, str, bool], Path], agent: str
) -> None:
    for sandbox in (True, False):
        toml = load_config(rendered[(agent, "toml", sandbox)], {}).config
        cjs = load_config(rendered[(agent, "cjs", sandbox)], {}).config
        assert config_as_dict(toml) == config_as_dict(cjs)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
@pytest.mark.parametrize("agent", list(PRESETS))
def test_rendered_cjs_requires_in_node_like_it_parses(
    rendered: dict[tuple[str, str, bool], Path], agent: str
) -> None:
    path = rendered[(agent, "cjs", True)] / "ralph.config.cjs"
    node = subprocess.run(
        ["node", "-e", f"process.stdout.write(JSON.stringify(require({json.dumps(str(path))})))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(node.stdout) == parse_cjs(path.read_text()).data


def test_answers_with_quotes_survive_both_formats(tmp_path: Path) -> None:
    weird = Answers(agent="custom", command=("a'b", 'c"d', "é\\n"), allow_paths=("x'y",))
    for fmt in ("toml", "cjs"):
        folder = tmp_path / fmt
        folder.mkdir()
        flags = {**{k: v for k, v in vars(weird).items()}, "format": fmt}
        run_init(InitRequest(folder, {}, flags=flags, yes=True), lambda _: None)
        config = load_config(folder, {}).config
        assert config.agent.command == ("a'b", 'c"d', "é\\n")
        assert config.sandbox.allow_paths == ("x'y",)


# --- from a built wheel ------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_init_from_an_installed_wheel(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(repo)],
        check=True,
        capture_output=True,
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin/python"
    (wheel,) = wheels.glob("wiggum-*.whl")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    # The dependencies come from this test's environment (no network needed), through a .pth
    # line: it adds the folder without running the editable-install hook that lives there.
    site = next((venv / "lib").glob("python3*/site-packages"))
    deps = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "deps.pth").write_text(deps + "\n")
    project = tmp_path / "fresh project"
    project.mkdir()
    env = {"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path)}
    where = subprocess.run(
        [str(python), "-c", "import wiggum; print(wiggum.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=tmp_path,  # not the checkout, whose wiggum/ would shadow the installed one
    ).stdout
    assert where.startswith(str(venv)), where  # the installed copy, not this checkout
    done = subprocess.run(
        [str(venv / "bin/wiggum"), "-C", str(project), "init", "--yes"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (project / "ralph.toml").is_file() and (project / ".ralph/PROMPT.md").is_file()
