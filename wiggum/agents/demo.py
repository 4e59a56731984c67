"""wiggum's built-in demo agent: deterministic, offline, and honest about what it does.

It reads the prompt on stdin, then does one step of real work per iteration: it ticks the
first unchecked item (`- [ ] ...`) of `TODO.md` in the current folder and writes
`done/NN-<slug>.md` for it. When nothing is left, it prints the completion promise named in
the prompt (`<promise>...</promise>`). It imports nothing but the standard library, so it runs
inside the sandbox with only the interpreter visible (`python -I demo.py`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TODO = Path("TODO.md")
ITEM = re.compile(r"^(\s*[-*] )\[ \] (.+)$")
PROMISE = re.compile(r"<promise>.*?</promise>")
DEFAULT_PROMISE = "<promise>COMPLETE</promise>"


def slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:40] or "item"


def main() -> int:
    prompt = sys.stdin.read()
    found = PROMISE.search(prompt)
    promise = found.group() if found else DEFAULT_PROMISE
    print(f"demo agent: read a prompt of {len(prompt.splitlines())} lines")
    if not TODO.is_file():
        print("demo agent: there is no TODO.md here; nothing to do", file=sys.stderr)
        return 1
    lines = TODO.read_text(encoding="utf-8").splitlines()
    done = sum(1 for line in lines if line.lstrip().startswith(("- [x]", "* [x]")))
    for index, line in enumerate(lines):
        match = ITEM.match(line)
        if match is None:
            continue
        task = match.group(2).strip()
        out = Path("done") / f"{done + 1:02d}-{slug(task)}.md"
        out.parent.mkdir(exist_ok=True)
        out.write_text(f"# {task}\n\nDone by the wiggum demo agent.\n", encoding="utf-8")
        lines[index] = f"{match.group(1)}[x] {match.group(2)}"
        TODO.write_text("\n".join(lines) + "\n", encoding="utf-8")
        left = sum(1 for item in lines if ITEM.match(item))
        print(f"demo agent: did {task!r} -> {out} ({left} left)")
        return 0
    print("demo agent: every item of TODO.md is done")
    print(promise)
    return 0


if __name__ == "__main__":
    sys.exit(main())
