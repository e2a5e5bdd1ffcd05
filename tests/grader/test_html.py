"""The HTML reports: what each page holds (parsed with the standard library), the
pictures as valid SVG, the pages without matplotlib, and both pages opened in a real
headless Chromium (skipped, never passed, where no Chromium can start)."""
from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.report import html, plots
from grader.config.rubric import PerfCase
from grader.results import PerfResult, SubmissionResult
from test_reports import SECRET_N, sample

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

TASKS = ["warp-scan", "reduce", "scan"]


class Page(HTMLParser):
    """The parts of a page the tests look at: the tags in order, the images, the links,
    the rows of each table and the text of each <pre>."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[dict[str, str]] = []
        self.links: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.pres: list[str] = []
        self._cell: list[str] | None = None
        self._pre: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "img":
            self.images.append(a)
        elif tag == "a":
            self.links.append(a.get("href", ""))
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "pre":
            self._pre = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "pre" and self._pre is not None:
            self.pres.append("".join(self._pre))
            self._pre = None

    def handle_data(self, data):
        for part in (self._cell, self._pre):
            if part is not None:
                part.append(data)


def _svg(uri: str) -> ET.Element:
    prefix = "data:image/svg+xml;base64,"
    assert uri.startswith(prefix), uri[:60]
    return ET.fromstring(base64.b64decode(uri[len(prefix):]))


def timed_sample() -> SubmissionResult:
    """The sample result with its scan timed at four sizes, as a sweep of the grade."""
    result = sample(measured=True)
    scan = result.tasks[2]
    first = scan.perf[0]
    scan.perf = [dataclasses.replace(first, case=PerfCase("scan", "add-i32", n, 256),
                                     reference_ms=first.reference_ms * n / (1 << 26),
                                     student_ms=first.student_ms * n / (1 << 26))
                 for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26)]
    return result


def test_the_submission_page_holds_the_verdicts_the_failures_and_the_picture():
    result = timed_sample()
    page_text = html.submission_page(result)
    page = Page(page_text)
    assert page_text.startswith("<!doctype html>") and "<script" not in page_text
    tasks, timing = page.tables
    assert tasks[0][:3] == ["task", "file", "verdict"] and len(tasks) == 1 + len(result.tasks)
    # The sample's four tasks (any task the manifest adds comes after them, not submitted).
    assert [row[2] for row in tasks[1:5]] == ["wrong", "forbidden", "correct", "not attempted"]
    assert tasks[3][0] == '3: scan <all> & "sizes"'            # escaped, read back whole
    assert "alice <&>" not in page_text and "alice &lt;&amp;&gt;" in page_text
    # The visible failing case with its reproduce command; the hidden one by number only.
    failures = "\n".join(page.pres)
    assert "reproduce: build/scanlab run --task warp-scan --n 1000" in failures
    assert str(SECRET_N) not in page_text
    assert [row[1] for row in timing[1:]] == [f"scan add-i32 n={n}" for n in
                                              (1 << 20, 1 << 22, 1 << 24, 1 << 26)]
    (picture,) = page.images
    assert picture["alt"] == "GB/s of each timed case: yours, the reference, the baselines"
    assert _svg(picture["src"]).tag.endswith("svg")


def test_a_page_with_nothing_timed_says_why_and_draws_nothing():
    page_text = html.submission_page(sample(measured=False))
    assert not Page(page_text).images
    assert "Not measured: " in page_text and "not measured (no GPU)" in page_text
    assert "CPU emulator (no GPU): performance not measured" in page_text


def test_without_matplotlib_the_pages_say_so_and_keep_their_tables(monkeypatch):
    monkeypatch.setattr(plots, "_pyplot", lambda: None)
    page_text = html.submission_page(timed_sample())
    assert plots.MISSING in page_text and not Page(page_text).images
    assert len(Page(page_text).tables) == 2
    class_text = html.class_page([timed_sample()], {}, TASKS)
    assert plots.MISSING in class_text and not Page(class_text).images


def _class() -> tuple[list[SubmissionResult], dict[str, str]]:
    results = []
    for i, name in enumerate(["carol", "alice", "bob"]):
        r = timed_sample()
        r.name, r.origin, r.score = name, f"subs/{name}", 30.0 + 20 * i
        results.append(r)
    links = {r.origin: f"submissions/{r.name}/report.html" for r in results}
    return results, links


def test_the_class_page_draws_the_class_and_links_every_submission():
    results, links = _class()
    page = Page(html.class_page(results, links, TASKS))
    assert [i["alt"] for i in page.images] == ["score histogram", "verdicts per task",
                                               "GB/s per task across the class"]
    assert all(_svg(i["src"]).tag.endswith("svg") for i in page.images)
    assert page.links == [links[f"subs/{n}"] for n in ("alice", "bob", "carol")]   # sorted by name
    rows = page.tables[0][1:]
    assert [row[0] for row in rows] == ["alice", "bob", "carol"]
    assert [row[2] for row in rows] == ["50.00 / 100", "70.00 / 100", "30.00 / 100"]


# ---- In a real browser ------------------------------------------------------------

# Injected into a copy of the page (the pages themselves carry no script): records any
# error, then on load each image's state and laid-out size, into an attribute of <html>
# that --dump-dom prints.
CHECKER = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || (e.target && e.target.outerHTML && e.target.outerHTML.slice(0, 80)))), true);
window.addEventListener('load', () => {
  const images = [...document.images].map(i => ({alt: i.alt, complete: i.complete,
    natural: [i.naturalWidth, i.naturalHeight], shown: [i.getBoundingClientRect().width, i.getBoundingClientRect().height]}));
  document.documentElement.setAttribute('data-check', JSON.stringify({errors: window.__errors, images}));
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("no Chromium here (tools/install_deps.sh installs Debian's chromium-headless-shell)")


def _open(browser: str, page: Path, screenshot: Path) -> dict:
    checked = page.with_name("checked-" + page.name)
    checked.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>\n" + CHECKER, 1),
                       encoding="utf-8")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
              "--window-size=1280,2000"]
    try:
        dom = subprocess.run(common + ["--dump-dom", checked.as_uri()], capture_output=True,
                             text=True, timeout=120)
        shot = subprocess.run(common + [f"--screenshot={screenshot}", page.as_uri()],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"Chromium could not start here: {e}")
    found = re.search(r'data-check="([^"]*)"', dom.stdout)
    if dom.returncode != 0 or found is None or shot.returncode != 0:
        pytest.skip(f"Chromium could not start here (exit {dom.returncode}): {dom.stderr[-300:]}")
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_both_pages_render_in_headless_chromium_with_their_pictures(tmp_path):
    browser = _chromium()
    results, links = _class()
    pages = {"report.html": html.submission_page(results[0]),
             "class.html": html.class_page(results, links, TASKS)}
    expected = {"report.html": 1, "class.html": 3}
    for name, text in pages.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        shot = tmp_path / (name + ".png")
        check = _open(browser, path, shot)
        assert check["errors"] == [], (name, check["errors"])
        assert len(check["images"]) == expected[name], check
        for image in check["images"]:
            assert image["complete"], (name, image)
            assert min(image["natural"]) > 100 and min(image["shown"]) > 100, (name, image)
        assert _png_size(shot) == (1280, 2000)


def test_class_verdict_colours_are_fixed_and_counts_are_whole(tmp_path):
    """Issue 59: class.html coloured "build failed" green and an optional bonus's "not
    attempted" red (matplotlib's colour cycle, in the order verdicts appeared), and its
    count axes had ticks like 0.5 of a submission."""
    pytest.importorskip("matplotlib")
    a = sample(measured=False)                       # task 2 forbidden, task 4 not attempted
    b = sample(measured=False)
    b.name = "bob"
    b.tasks[0] = dataclasses.replace(b.tasks[0], status="build_failed")
    pictures = plots.class_pictures([a, b], [t.name for t in a.tasks])
    fills = {m.lower() for m in re.findall(r"fill:\s*(#[0-9a-fA-F]{6})", ET.tostring(_svg(pictures["verdicts"]),
                                                                                      encoding="unicode"))}
    colors = plots.VERDICT_COLORS
    present = {tr.verdict for r in (a, b) for tr in r.tasks}
    assert {"build_failed", "not_attempted", "forbidden"} <= present
    for v in present:
        assert colors[v] in fills, v
    assert colors["build_failed"] not in (colors["correct"],) and colors["not_attempted"] != colors["wrong"]
    # Green is the correct verdict's only; the reds are for failing ones, not for a bonus left alone.
    greens = [v for v, c in colors.items() if c == "#2e7d32"]
    assert greens == ["correct"] and colors["not_attempted"].startswith("#bd")
    assert all(float(x).is_integer() for x in plots._integer_ticks().tick_values(0, 1))
