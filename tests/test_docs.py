"""The docs a newcomer reads first stay navigable: every in-page link of docs/results.md's topic index reaches a
heading (GitHub's anchor for it), so renaming a heading without its link fails here, not in a reader's browser."""
from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results.md"


def anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {anchor(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def test_github_anchor_of_a_heading_with_punctuation():
    assert anchor(" 2026-11-24 (session 12): make run in 3:53, `flags` on 5 of 5 seeds ") == \
        "2026-11-24-session-12-make-run-in-353-flags-on-5-of-5-seeds"


def test_every_link_of_the_results_index_reaches_a_heading():
    text = RESULTS.read_text()
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert len(links) >= 6, "the topic index at the top of docs/results.md is gone"
    missing = sorted(set(links) - anchors(text))
    assert not missing, f"links in docs/results.md that reach no heading: {missing}"


def test_a_link_to_a_renamed_heading_is_caught():
    text = "## Pong, seed 0\n\nsee [it](#pong-seed-0) and [gone](#pong-seed-1)\n"
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links - anchors(text) == {"pong-seed-1"}


REPO = RESULTS.parents[1]
DESIGN = REPO / "docs" / "design.md"


def module_map(text: str) -> list[str]:
    """The places (backticked paths) in the first column of design.md's newcomer's map, its "## Modules" table."""
    section = re.split(r"^## Modules *$", text, maxsplit=1, flags=re.M)[1].split("\n## ", 1)[0]
    return [place for line in section.splitlines() if line.startswith("| `")
            for place in re.findall(r"`([^`]+)`", line.split(" | ")[0])]


def unmapped(places: list[str], root: Path = REPO) -> list[str]:
    """Places of the map that do not exist, and entries of drlhp/'s top level (but its __init__) that the map
    does not name (a folder as ``drlhp/policy/``)."""
    missing = [p for p in places if not (root / p).exists()]
    top = [f"drlhp/{p.name}{'/' if p.is_dir() else ''}" for p in sorted((root / "drlhp").iterdir())
           if p.name not in ("__init__.py", "__pycache__")]
    return missing + [p for p in top if p not in places]


def test_the_module_map_names_every_folder_of_drlhp_and_nothing_that_is_not_there():
    places = module_map(DESIGN.read_text())
    assert "drlhp/policy/" in places and unmapped(places) == []


def test_a_stale_or_incomplete_module_map_is_caught(tmp_path):
    (tmp_path / "drlhp" / "policy").mkdir(parents=True)
    (tmp_path / "drlhp" / "new").mkdir()
    (tmp_path / "drlhp" / "__init__.py").write_text("")
    text = ("## Modules\n| place | holds |\n|---|---|\n| `drlhp/policy/`, `drlhp/gone.py` | x |\n"
            "## Next\n| `drlhp/new/` |")
    assert module_map(text) == ["drlhp/policy/", "drlhp/gone.py"]
    assert unmapped(module_map(text), tmp_path) == ["drlhp/gone.py", "drlhp/new/"]
