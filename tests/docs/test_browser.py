"""The built site, served on localhost, read in headless Chromium at 1400x1000.

``test_reader_journey`` walks what a reader does: the home page renders (with its
generated figure), the navigation sidebar reaches an analysis page, a link of a keyword
index lands on its definition's anchor, and the search box finds ``fully_shard``.

``test_every_page_reads_well`` opens every page of the site and asserts what a reader
sees there, measured by the browser's layout engine (``reader_view.js``): no table wider
than the article column, no code block or figure reaching past the column without a
scrollbar of its own, no literal RST role or ````x```` pair in rendered prose, every
figure's text at least 9 px as shown, and on API pages each function's real signature
first. A screenshot of every failing page is kept under the test's temporary folder,
and its path is printed with the failure.

Set-up installs Debian's ``chromium`` and ``chromium-driver`` with apt when they are
missing. Without them (and without root to install them) the test fails: CI runs as
root, so a missing browser is a broken environment, not a reason to skip.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 30


def _ensure_chromium() -> None:
    if Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail(f"{CHROMIUM} / {CHROMEDRIVER} are missing and cannot be installed here "
                    "(need root and apt-get): apt-get install -y chromium chromium-driver",
                    pytrace=False)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium", "chromium-driver"]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        if proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}",
                        pytrace=False)
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.fail("apt-get installed chromium but /usr/bin/chromium or chromedriver is missing",
                    pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(site):
    """Serve the built site with ``python -m http.server`` on 127.0.0.1; yield its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(site.path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("http.server did not start", pytrace=False)
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def _chromium(profile: Path):
    """A headless Chromium driven by Selenium through Debian's chromedriver, with its own
    profile folder (two can run side by side)."""
    _ensure_chromium()
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager must never download
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        with contextlib.suppress(Exception):
            driver.save_screenshot(str(profile.parent / f"last-{profile.name}.png"))
        driver.quit()


@pytest.fixture
def browser(tmp_path):
    with _chromium(tmp_path / "chromium-profile") as driver:
        yield driver


def test_reader_journey(browser, server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_S)

    def shot(name: str) -> None:
        browser.save_screenshot(str(tmp_path / f"{name}.png"))

    # 1. The home page renders, including the generated timeline figure.
    browser.get(server)
    h1 = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "article h1")))
    assert h1.text.strip() == "fsdp-ref"
    assert "fsdp-ref" in browser.title
    figure = browser.find_element(By.CSS_SELECTOR, "img[src*='figures/timeline.svg']")
    wait.until(lambda d: d.execute_script("return arguments[0].complete && "
                                          "arguments[0].naturalWidth > 0", figure))
    shot("1-home")

    # 2. The navigation reaches an analysis page: Reference tab -> fsdp_ref/ -> api.py -> Analysis.
    browser.find_element(By.XPATH, "//nav[contains(@class,'md-tabs')]//a[normalize-space()='Reference']").click()
    wait.until(ec.url_contains("reference/"))

    def open_section(title: str) -> None:
        # A section with an index page is a link (it loads the page, expanded); one
        # without is a label that expands in place.
        entry = wait.until(ec.element_to_be_clickable((
            By.XPATH, "//nav[contains(@class,'md-nav--primary')]"
                      f"//*[self::a or self::label][normalize-space()='{title}']")))
        entry.click()

    open_section("fsdp_ref/")
    open_section("api.py")
    # With navigation.prune a collapsed file entry links straight to its first page
    # (Analysis); otherwise it expands and the Analysis link is clicked.
    if "api.py_docs/" not in browser.current_url:
        wait.until(ec.element_to_be_clickable((
            By.XPATH, "//nav[contains(@class,'md-nav--primary')]"
                      "//a[contains(@href,'api.py_docs')][normalize-space()='Analysis']"))).click()
    wait.until(ec.url_contains("src/fsdp_ref/api.py_docs/"))
    title = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "article h1"))).text
    assert "src/fsdp_ref/api.py" in title
    shot("2-analysis")

    # 3. A keyword link lands on its definition's anchor.
    keywords = browser.find_element(
        By.XPATH, "//nav[contains(@class,'md-nav--primary')]"
                  "//a[contains(@href,'api.py_kw')][normalize-space()='Keywords']")
    keywords.click()
    wait.until(ec.url_contains("api.py_kw/"))
    link = wait.until(ec.element_to_be_clickable((
        By.CSS_SELECTOR, "article a[href*='api.py_docs/#sym-']")))
    anchor = link.get_attribute("href").rsplit("#", 1)[1]
    link.click()
    wait.until(ec.url_contains(f"api.py_docs/#{anchor}"))
    target = wait.until(ec.presence_of_element_located((By.ID, anchor)))
    wait.until(lambda d: d.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return r.top >= 0 && r.top < window.innerHeight;", target))
    shot("3-keyword-anchor")

    # 4. Search finds fully_shard (lunr, in a web worker, offline).
    browser.get(server)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "label.md-search__icon, "
                                                            "input.md-search__input")))
    browser.find_element(By.CSS_SELECTOR, "input.md-search__input").click()
    box = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "input.md-search__input")))
    box.send_keys("fully_shard")
    wait.until(lambda d: any("fully_shard" in item.text for item in
                             d.find_elements(By.CSS_SELECTOR, ".md-search-result__item")))
    shot("4-search")

    # 5. Search finds a task page by a method name and the troubleshooting page by an
    #    error text as torch prints it (issue 32).
    for query, page in (("set_reduce_scatter_unused_params", "using/control-flow/"),
                        ("stream cannot be set when using native HSDP", "troubleshooting/")):
        box.clear()
        box.send_keys(query)
        # (read the links in one script: the results re-render while lunr answers)
        wait.until(lambda d, page=page: any(page in href for href in d.execute_script(
            "return [...document.querySelectorAll('.md-search-result a')].map(a => a.href)")))
    shot("5-search-task-pages")


#: Runs queries through the site's own search worker (lunr, as material configures it)
#: and returns, per query, the result groups' best locations in the order shown. The
#: messages are material's: 0 sets the index up (answered by 1), 2 is a query (answered
#: by 3, whose items are the result groups, one per page, best section first).
SEARCH_WORKER_JS = """
const queries = arguments[0], done = arguments[arguments.length - 1];
const config = JSON.parse(document.getElementById("__config").textContent);
const base = new URL(config.base, location.href);
const worker = new Worker(new URL(config.search, base));
const out = {};
let i = -1;
worker.onerror = e => done({error: String(e.message)});
worker.onmessage = ev => {
  if (i >= 0) out[queries[i]] = ev.data.data.items.map(group => group[0].location);
  i += 1;
  if (i < queries.length) worker.postMessage({type: 2, data: queries[i]});
  else { worker.terminate(); done(out); }
};
fetch(new URL("search/search_index.json", base)).then(r => r.json()).then(index =>
  worker.postMessage({type: 0, data: {...index, options: {suggest: false}}}));
"""


def test_search_ranks_the_answering_page_first(browser, server):
    """For every error text and method name of ``search_queries.QUERIES``, the site's
    search (its own worker, in the browser) lists an answering hand-written page, and no
    generated page (API, reference, upstream) above it."""
    from tests.docs.search_queries import QUERIES, is_generated

    browser.get(server)
    browser.set_script_timeout(WAIT_S * 4)
    ranked = browser.execute_async_script(SEARCH_WORKER_JS, [q for q, _ in QUERIES])
    assert "error" not in ranked, ranked
    problems = []
    for query, pages in QUERIES:
        results = [loc.split("#")[0] for loc in ranked[query]]
        first = next((i for i, loc in enumerate(results) if loc.startswith(pages)), None)
        above = results if first is None else results[:first]
        generated = [loc for loc in above if is_generated(loc)]
        if first is None or generated:
            problems.append(f"{query!r}: answering page {pages} at "
                            f"{'not found' if first is None else first + 1}; "
                            f"generated above it: {generated[:4]}; top: {results[:5]}")
    assert not problems, "\n".join(problems)


READER_VIEW = (Path(__file__).parent / "reader_view.js").read_text(encoding="utf-8")


def _site_pages(site) -> list[str]:
    """Every page of the built site, as a URL path relative to the site root."""
    pages = []
    for html in sorted(site.path.rglob("index.html")):
        rel = html.parent.relative_to(site.path).as_posix()
        if rel == "search" or rel.startswith("assets"):
            continue
        pages.append("" if rel == "." else rel + "/")
    return pages


def _resolve(path: str):
    """The Python object documented under the mkdocstrings id ``path``, or None."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name, None)
        return obj
    return None


def _signature_problems(signatures: list[dict]) -> list[dict]:
    """Functions whose first signature on the page is not the implementation's."""
    problems = []
    for sig in signatures:
        obj = _resolve(sig["id"])
        if not callable(obj):
            problems.append({"check": "signature", "what": sig["id"],
                             "detail": "documented function not found in the code"})
            continue
        try:
            names = [n for n in inspect.signature(obj).parameters if n not in ("self", "cls")]
        except (TypeError, ValueError):
            continue  # a builtin without a signature: nothing to compare
        text, pos = sig["text"], 0
        for name in names:
            found = re.compile(rf"\b{re.escape(name)}\b").search(text, pos)
            if found is None:
                problems.append({"check": "signature", "what": sig["id"],
                                 "detail": f"first signature shown lacks {name!r} of "
                                           f"{inspect.signature(obj)}: {text.strip()[:120]!r}"})
                break
            pos = found.end()
    return problems


#: Browsers that check the pages side by side: loading a page is mostly one renderer
#: parsing the theme's script, so two browsers keep both cores of a two-core machine busy.
READERS = 2


def _read_pages(driver, server: str, pages: list[str], shots: Path) -> tuple[dict, dict]:
    """Check the layout of ``pages`` in one browser: ``({page: (screenshot, problems)},
    {api page: its signatures})``. The signatures are compared with the code afterwards,
    in the calling thread: resolving them imports modules, which two threads must not do
    at once."""
    # The search index (megabytes, loaded by every page) plays no part in the layout, nor
    # does the search worker that would read it (a Web Worker, which cannot touch the
    # page): starting it on every page was a sixth of each page's load here.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs",
                           {"urls": ["*search_index.json", "*/workers/search.*"]})
    driver.set_script_timeout(WAIT_S)
    failures, signatures = {}, {}
    for page in pages:
        driver.get(server + page)
        view = driver.execute_async_script(READER_VIEW)
        if page.startswith("api/"):
            signatures[page] = view["signatures"]
        if view["problems"]:
            shots.mkdir(exist_ok=True)
            shot = shots / ((re.sub(r"[^\w.-]+", "_", page.strip("/")) or "home") + ".png")
            driver.save_screenshot(str(shot))
            failures[page] = (shot, view["problems"])
    return failures, signatures


def test_every_page_reads_well(server, site, tmp_path):
    pages = _site_pages(site)
    assert len(pages) > 100 and "api/fsdp_ref/fully_shard/" in pages
    shots = tmp_path / "failing-pages"

    def read(k: int) -> tuple[dict, dict]:
        with _chromium(tmp_path / f"chromium-profile-{k}") as driver:
            return _read_pages(driver, server, pages[k::READERS], shots)

    with ThreadPoolExecutor(READERS) as readers:
        parts = list(readers.map(read, range(READERS)))
    failures = {page: found for part, _ in parts for page, found in part.items()}
    signatures = {page: found for _, part in parts for page, found in part.items()}
    assert sum(len(found) for found in signatures.values()) > 50
    for page, found in signatures.items():
        if problems := _signature_problems(found):
            shot, before = failures.get(page, (None, []))
            failures[page] = (shot, before + problems)
    report = []
    for page in sorted(failures, key=pages.index):
        shot, problems = failures[page]
        report.append(f"{page}  (screenshot: {shot})")
        report += [f"    {p['check']}: {p['what']}: {p['detail']}" for p in problems[:12]]
        if len(problems) > 12:
            report.append(f"    ... {len(problems) - 12} more")
    assert not failures, f"{len(failures)} of {len(pages)} pages:\n" + "\n".join(report)
