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
