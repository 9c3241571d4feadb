"""A build or check with nothing to compute, by the stat cache or by the manifest.

The stat cache (:mod:`indexgen.run.statcache`) lets a rebuild on the machine that made the
pages read no file at all (:func:`stat_cache_report`), but a fresh clone has no stat cache
and new modification times on every file: there, before this step, a build or an
``indexgen check`` in CI hashed every source, found each one unchanged, and still ran the
whole global pass (about 10 s for torch) only to find every context as the manifest
recorded it.

What the global pass makes of a file depends on the compact summaries of all the sources,
the test files, indexgen's own code and the settings, and nothing else the build reads.  The
manifest records indexgen's code and the settings (:func:`indexgen.run.manifest.cached_files`
is empty when either differs), each source's hash, and each test file's hash.  When the
sources are the same files with the same hashes, and so are the test files, every context is
the one the manifest recorded and so is every page that was written from it: only the pages
on disk need comparing with their recorded hashes.  :func:`settled_pages` does that and
gives what the report of the full build would say (no file parsed, none rendered); when
anything differs it gives None and the build runs every step.

The Python that runs the build is not among those inputs, as it is not for the stat cache:
the standard library's attributes, which the call graph checks, come from it (see the user
guide's *Keeping the pages in sync*).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from indexgen.extract.discover import SourceFile
from indexgen.layout import MANIFEST_NAME
from indexgen.run import manifest as mf
from indexgen.run import pageio
from indexgen.run.pageio import Report
from indexgen.run.statcache import StatCache


def stat_cache_report(cache: StatCache, files: int, notes: list[str]) -> Report:
    """The last build's report, as the stat cache keeps it, of ``files`` sources with this
    build's ``notes``, when the stat cache shows that no source, test file or page changed
    since (:meth:`~indexgen.run.statcache.StatCache.unchanged`): nothing is read."""
    last = cache.data.get("report", {})
    return Report(files=files, notes=list(notes),
                  not_analyzed=[tuple(x) for x in last.get("not_analyzed", [])],
                  empty=last.get("empty", 0), kept=[tuple(x) for x in last.get("kept", [])])


def hashes_of_tests(tests: list[SourceFile]) -> dict[str, str] | None:
    """The hash of every test file of the build, or None when one cannot be read."""
    found = {}
    for test in tests:
        try:
            found[test.relpath] = pageio.sha(test.path.read_bytes())
        except OSError:
            return None
    return found


def settled_pages(previous: dict, cached: dict[str, dict], keys: Collection[str],
                  hashes: dict[str, str], tests: list[SourceFile],
                  expected_pages: Callable[[str], set[str]],
                  page_is: Callable[[str, str], bool], shown: Callable[[str], str]
                  ) -> tuple[dict[str, str], list[tuple[str, str, str]], int] | None:
    """What a build or check reports that the manifest shows has nothing to do (see the
    module's docstring), its pages compared with their recorded hashes: every page's status
    (unchanged, the manifest's too), and what the recorded summaries say of the analysis
    (:func:`~indexgen.run.pageio.outcomes`: the files not analyzed, how many are empty).
    None when a source, a test file or a page differs from what the manifest records.

    Args:
        previous: The manifest, as read.
        cached: Its entries that this build's code and settings may reuse
            (:func:`~indexgen.run.manifest.cached_files`).
        keys: The keys of the build's sources.
        hashes: The hash of each source that ``cached`` has an entry for
            (:meth:`~indexgen.run.plan.Plan.hash_sources`).
        tests: The build's test files.
        expected_pages: The pages of a source, by its key.
        page_is: Whether a page holds the content with a hash.
        shown: A source's path as the report shows it, by its key.
    """
    if not cached or cached.keys() != keys:
        return None
    for key, entry in cached.items():
        if not entry.get("sha256") or entry["sha256"] != hashes.get(key) \
                or not isinstance(entry.get("summary"), dict):
            return None
    recorded_tests = previous.get("tests")
    if not isinstance(recorded_tests, dict) or recorded_tests != hashes_of_tests(tests):
        return None
    pages = mf.written_pages(previous)
    expected = set().union(*(expected_pages(key) for key in cached))
    if not expected <= pages.keys() or not all(
            page_is(page, digest) for page, digest in sorted(pages.items())):
        return None
    not_analyzed, empty = pageio.outcomes(
        ((key, e["summary"].get("status"), e["summary"].get("error", ""))
         for key, e in sorted(cached.items())), shown)
    return dict.fromkeys([*pages, MANIFEST_NAME], pageio.UNCHANGED), not_analyzed, empty
