"""The docs a newcomer reads first stay navigable. The results are an index (docs/results.md) and one page per topic
(docs/results/<topic>.md), each opening with its current figures: every link anywhere in the markdown into the
results (the index, a page, a page's own headings) reaches its page and a heading there (GitHub's anchor for it), so
renaming a heading or moving an entry without its links fails here, not in a reader's browser; and a figure in a
page's current-figures table is one of that page's entries' figures."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results.md"
TOPICS = REPO / "docs" / "results"
LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")


def anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {anchor(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def markdown_files(root: Path = REPO) -> list[Path]:
    """The markdown a reader follows links in: the README, docs/ (the results' pages with it), models/, experiments/."""
    return [root / "README.md"] + [p for folder in ("docs", "models", "experiments")
                                   for p in sorted((root / folder).rglob("*.md"))]


def results_links(files: list[Path], root: Path = REPO) -> list[tuple[Path, str, Path, str]]:
    """(file, link as written, the file it reaches, anchor) for each link in ``files`` into docs/results.md or
    docs/results/ (a page's links to its own headings, ``#anchor``, included)."""
    found = []
    for path in files:
        for target, fragment in LINK.findall(path.read_text()):
            if target.startswith(("http:", "https:", "mailto:")):
                continue
            dest = path.resolve() if target == "" else (path.parent / target).resolve()
            rel = dest.relative_to(root.resolve() / "docs") if dest.is_relative_to(root.resolve() / "docs") else None
            if rel is not None and (rel == Path("results.md") or rel.parts[0] == "results"):
                found.append((path, f"{target}#{fragment}" if fragment else target, dest, fragment))
    return found


def broken(links: list[tuple[Path, str, Path, str]], root: Path = REPO) -> list[str]:
    """The links whose page is missing, or whose anchor is no heading of that page."""
    return [f"{path.relative_to(root)}: {written}" for path, written, dest, fragment in links
            if not dest.is_file() or (fragment and fragment not in anchors(dest.read_text()))]


def test_github_anchor_of_a_heading_with_punctuation():
    assert anchor(" 2026-11-24 (session 12): make run in 3:53, `flags` on 5 of 5 seeds ") == \
        "2026-11-24-session-12-make-run-in-353-flags-on-5-of-5-seeds"


def test_every_link_into_the_results_reaches_its_page_and_a_heading():
    links = results_links(markdown_files())
    into_pages = [written for path, written, dest, fragment in links if fragment and dest.parent == TOPICS]
    assert len(into_pages) >= 40, "the links into the results' topic pages are gone (or no longer seen here)"
    assert broken(links) == []


def test_a_broken_link_into_a_topic_page_is_caught(tmp_path):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "models").mkdir()
    (tmp_path / "experiments").mkdir()
    (tmp_path / "docs" / "results" / "pong.md").write_text(
        "# Pong\n\n## Pong, seed 0\n\nsee [it](#pong-seed-0) and [gone](#pong-seed-2)\n")
    (tmp_path / "docs" / "results.md").write_text("[Pong](results/pong.md), [Atari](results/atari.md)\n")
    (tmp_path / "docs" / "usage.md").write_text(
        "[ok](results/pong.md#pong-seed-0) [renamed](results/pong.md#pong-seed-1) [elsewhere](usage.md#x)\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/results/pong.md#pong-seed-0) [moved](docs/results.md#pong-seed-0) [web](https://x.org/results.md#a)\n")
    links = results_links(markdown_files(tmp_path), tmp_path)
    assert len(links) == 8  # usage.md's link to itself and the web link are not the results'
    assert broken(links, tmp_path) == ["README.md: docs/results.md#pong-seed-0",
                                       "docs/results/pong.md: #pong-seed-2", "docs/results.md: results/atari.md",
                                       "docs/usage.md: results/pong.md#pong-seed-1"]


def test_the_index_links_every_topic_page_and_each_but_atari_opens_with_its_current_figures():
    pages = sorted(TOPICS.glob("*.md"))
    assert {"speed.md", "pong.md", "atari.md", "mujoco.md", "moving-dot.md"} <= {p.name for p in pages}
    linked = {dest for path, written, dest, fragment in results_links([RESULTS]) if dest.parent == TOPICS}
    assert linked == {p.resolve() for p in pages}
    for page in pages:
        if page.name != "atari.md":
            assert current_figures(page.read_text())[0], f"{page.name} opens with no table of its current figures"


def current_figures(text: str) -> tuple[str, str]:
    """A page's current-figures table (its rows, without their links) and its entries (all after the first entry's
    heading: the first ## heading after "## Current figures")."""
    if "\n## Current figures\n" not in text:
        return "", text
    top, entries = text.split("\n## Current figures\n", 1)[1].split("\n## ", 1)
    rows = [re.sub(r"\[[^\]]*\]\([^)]*\)", "", line) for line in top.splitlines() if line.startswith("|")]
    return "\n".join(rows), entries


def figures_not_in_an_entry(text: str) -> list[str]:
    """The numbers of a page's current-figures table that none of its entries writes (as a whole number)."""
    table, entries = current_figures(text)
    return sorted({n for n in re.findall(r"\d+(?:[.,:]\d+)*", table)
                   if not re.search(r"(?<![\d.,:])" + re.escape(n) + r"(?!\d|[.,:]\d)", entries)})


def test_every_figure_of_a_current_figures_table_is_in_an_entry_of_its_page():
    assert {page.name: figures_not_in_an_entry(page.read_text()) for page in sorted(TOPICS.glob("*.md"))
            if figures_not_in_an_entry(page.read_text())} == {}


def test_a_figure_no_entry_of_its_page_has_is_caught():
    page = ("# Pong\n\n## Current figures\n\n| run | end | entry |\n| --- | --- | --- |\n"
            "| seed 0 | +19.02 at 5.02M | [session 22](#s22) |\n| seed 1 | +19.4 at 2.8M | [session 20](#s20) |\n\n"
            "## s22\n\nseed 0 reached +19.02 at 5.02M agent steps.\n\n## s20\n\nseed 1 reached +19.04 at 2.82M.\n")
    assert figures_not_in_an_entry(page) == ["19.4", "2.8"]


DESIGN = REPO / "docs" / "design.md"


MAPPED = ("drlhp", "pref_interface", "envs", "floyd")  # every module of these is named in the map
NAMED = re.compile(r"[\w.-]+(?:/[\w.-]+)*(?:\.py|/)")  # a backticked file or folder: `loop.py`, `a2c/`, `run/cli.py`


def module_map(text: str) -> list[tuple[list[str], list[str]]]:
    """Each row of design.md's newcomer's map, its "## Modules" table: (its places, the backticked paths of its first
    column; the files and folders it names, the backticked ``*.py`` and ``folder/`` of its other columns)."""
    section = re.split(r"^## Modules *$", text, maxsplit=1, flags=re.M)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            first, rest = line.split(" | ", 1)
            rows.append((re.findall(r"`([^`]+)`", first),
                         [t for t in re.findall(r"`([^`]+)`", rest) if NAMED.fullmatch(t)]))
    return rows


def map_problems(rows: list[tuple[list[str], list[str]]], root: Path = REPO) -> list[str]:
    """What the map gets wrong against the tree: each place or named file that is not there, and each module of
    ``MAPPED`` (but an ``__init__.py``) that no row names. A name is read from the checkout's root where it starts
    with a top-level folder (``drlhp/run/cli.py``, ``bench/``), else in its row's folder (``loop.py`` in the
    ``drlhp/policy/`` row: drlhp/policy/loop.py; the row's first place is its folder, or a file's folder); so each
    folder's modules are named in its own row."""
    tops = {p.name for p in root.iterdir()}
    named = set()
    for places, names in rows:
        named.update(places)
        first = places[0]  # the row's folder: its first place, or that file's folder ("" at the root)
        folder = first if first.endswith("/") else first.rpartition("/")[0] + "/" if "/" in first else ""
        named.update(name if name.split("/")[0] in tops else folder + name for name in names)
    gone = [f"{n}: not there" for n in sorted(named) if not (root / n).exists()]
    modules = [str(p.relative_to(root)) for package in MAPPED for p in sorted((root / package).rglob("*.py"))
               if p.name != "__init__.py" and "__pycache__" not in p.parts]
    return gone + [f"{m}: not in the map" for m in modules if m not in named]


def test_the_module_map_names_every_module_and_nothing_that_is_not_there():
    rows = module_map(DESIGN.read_text())
    assert ["drlhp/policy/a2c/"] in [places for places, _ in rows]
    assert map_problems(rows) == []


def test_a_stale_or_incomplete_module_map_is_caught(tmp_path):
    for name in ("drlhp/__init__.py", "drlhp/policy/loop.py", "drlhp/policy/a2c/__init__.py",
                 "drlhp/policy/a2c/trainer.py", "envs/atari.py", "envs/new.py", "bench/x.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    for package in ("pref_interface", "floyd"):
        (tmp_path / package).mkdir()
    text = ("## Modules\n| place | holds |\n|---|---|\n"
            "| `drlhp/policy/`, `drlhp/gone.py` | the loop (`loop.py`), `a2c/` (`trainer.py`), `RunConfig`, `x.md` |\n"
            "| `envs/` | Atari (`atari.py`; see `drlhp/policy/loop.py`, `bench/`) |\n"
            "## Next\n| `envs/new.py` |")
    rows = module_map(text)
    assert rows == [(["drlhp/policy/", "drlhp/gone.py"], ["loop.py", "a2c/", "trainer.py"]),
                    (["envs/"], ["atari.py", "drlhp/policy/loop.py", "bench/"])]
    assert map_problems(rows, tmp_path) == [
        "drlhp/gone.py: not there", "drlhp/policy/trainer.py: not there",  # a2c's file, named in the policy's row
        "drlhp/policy/a2c/trainer.py: not in the map", "envs/new.py: not in the map"]
