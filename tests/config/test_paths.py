from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wiggum.config.paths import resolve_user_path, writable_path_danger

segment = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
relative = st.lists(segment | st.just("."), min_size=1, max_size=5).map("/".join)

fixture_settings = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@fixture_settings
@given(raw=relative)
def test_plain_relative_path_stays_in_project(tmp_path: Path, raw: str) -> None:
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True, exist_ok=True)
    resolved = resolve_user_path(raw, project.resolve(), tmp_path / "home")
    assert resolved.is_relative_to(project.resolve())
    # Never a string-prefix sibling such as /work/proj-other.
    assert resolved == project.resolve() or resolved.parent.is_relative_to(project.resolve())


@fixture_settings
@given(raw=relative, ups=st.integers(min_value=1, max_value=4))
def test_dotdot_is_resolved_before_validation(tmp_path: Path, raw: str, ups: int) -> None:
    project = (tmp_path / "a" / "b" / "proj").resolve()
    project.mkdir(parents=True, exist_ok=True)
    written = "/".join([".."] * ups + [raw])
    resolved = resolve_user_path(written, project, tmp_path / "home")
    assert ".." not in resolved.parts
    assert resolved == Path(os.path.normpath(project / written))


def test_symlink_is_resolved_to_its_target(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    (project / "innocent").symlink_to(home)
    resolved = resolve_user_path("innocent", project, home)
    assert resolved == home
    assert writable_path_danger(resolved, project, home) == "it is your whole home directory"


def test_tilde_means_the_given_home(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert resolve_user_path("~/.cache", tmp_path, home) == home / ".cache"
    assert resolve_user_path("~", tmp_path, home) == home


def test_danger_rules() -> None:
    home, project = Path("/home/u"), Path("/home/u/code/mono/pkg")
    assert writable_path_danger(Path("/"), project, home)
    assert writable_path_danger(Path("/home"), project, home)
    assert writable_path_danger(home / "code", project, home)  # above the project's parent
    assert writable_path_danger(home / "code/mono", project, home) is None  # the parent
    assert writable_path_danger(project / "build", project, home) is None
    assert writable_path_danger(Path("/var/cache/x"), project, home) is None


@given(st.lists(segment, min_size=0, max_size=4))
def test_no_ancestor_of_home_is_ever_acceptable(parts: list[str]) -> None:
    home = Path("/home/u")
    project = home / "p" / "q"
    for ancestor in (home, *home.parents):
        assert writable_path_danger(ancestor, project, home) is not None
    candidate = Path("/srv", *parts)
    assert writable_path_danger(candidate, project, home) is None
