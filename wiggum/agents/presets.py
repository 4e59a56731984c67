"""What each supported agent is: its command, its needs, and where it keeps its login.

A preset is data. The sandbox policy reads `auth_paths` (writable, so OAuth tokens can be
refreshed), `env` (variables passed through when set) and `requires_network`; the loop reads
`argv`. `{prompt}` in `argv` is replaced by the prompt text; without it the prompt goes to
the agent's standard input.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

DEMO_AGENT = Path(__file__).resolve().with_name("demo.py")


@dataclass(frozen=True)
class AgentPreset:
    name: str
    argv: tuple[str, ...]  # argv[0] is looked up on PATH
    requires_network: bool
    auth_paths: tuple[str, ...] = ()  # ~-relative files or folders the agent must write
    env: tuple[str, ...] = ()  # variables the agent reads, passed in when set
    summary: str = ""
    read_only: tuple[str, ...] = ()  # absolute paths the agent needs to read
    # Settings inside the login folders that can make the agent run commands (hooks, notify,
    # MCP servers) the next time you start it outside wiggum: kept read-only when they exist.
    config_files: tuple[str, ...] = ()
    install_hint: str = ""

    @property
    def binary(self) -> str:
        return self.argv[0] if self.argv else ""


PRESETS: dict[str, AgentPreset] = {
    preset.name: preset
    for preset in (
        AgentPreset(
            "claude",
            # Permission prompts are skipped because the OS sandbox is the boundary.
            ("claude", "-p", "--dangerously-skip-permissions", "--output-format", "text"),
            requires_network=True,
            auth_paths=("~/.claude", "~/.claude.json", "~/.config/claude"),
            env=(
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_MODEL",
                "CLAUDE_CONFIG_DIR",
                "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX",
            ),
            summary="Claude Code, headless (claude -p)",
            install_hint="npm install -g @anthropic-ai/claude-code, then run `claude` once to "
            "log in",
            config_files=("~/.claude/settings.json", "~/.claude/settings.local.json"),
        ),
        AgentPreset(
            "codex",
            # Codex's own sandbox is turned off: a sandbox nested in ours cannot start.
            ("codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "-"),
            requires_network=True,
            auth_paths=("~/.codex",),
            env=("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"),
            summary="OpenAI Codex CLI (codex exec)",
            install_hint="npm install -g @openai/codex, then `codex login`",
            config_files=("~/.codex/config.toml",),
        ),
        AgentPreset(
            "opencode",
            ("opencode", "run", "{prompt}"),
            requires_network=True,
            auth_paths=("~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode"),
            env=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_CONFIG"),
            summary="opencode (opencode run)",
            install_hint="npm install -g opencode-ai, then `opencode auth login`",
            config_files=("~/.config/opencode/opencode.json", "~/.config/opencode/config.json"),
        ),
        AgentPreset(
            "gemini",
            ("gemini", "--yolo", "--prompt", "{prompt}"),
            requires_network=True,
            auth_paths=("~/.gemini",),
            env=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"),
            summary="Gemini CLI (gemini --prompt)",
            install_hint="npm install -g @google/gemini-cli, then run `gemini` once to log in",
            config_files=("~/.gemini/settings.json",),
        ),
        AgentPreset(
            "demo",
            # This interpreter in isolated mode: the script needs only the standard library.
            (sys.executable, "-I", str(DEMO_AGENT)),
            requires_network=False,
            summary="wiggum's built-in offline demo agent (ticks TODO.md items)",
            read_only=(str(DEMO_AGENT.parent),),
        ),
        AgentPreset(
            "custom",
            (),
            requires_network=True,
            summary="any command (agent.command)",
            install_hint="check agent.command in the project's config",
        ),
    )
}
