"""Calls that call the function they are handed, with what else they are handed.

``pool.submit(work, job)`` runs ``work(job)``; ``map(each, jobs)`` runs ``each`` on every
element of ``jobs``; ``sorted(jobs, key=rank)`` runs ``rank`` on them too;
``fut.add_done_callback(done)`` runs ``done(fut)``.  The call graph
lists ``work``, ``each`` and ``rank`` under *Passes as a callback* (the call hands them
on), but what the outside function then hands them is no call of the tree, so their
parameters would get nothing from this call site (:func:`indexgen.analyze.flows.call_sites`
joins what a call hands to the callees the call graph found for it).  :func:`applied` says,
for the calls of :data:`APPLY`, which of the call's arguments is the function called and
what it is handed: the flows then read this call site as one of that function.

The calls are known by their last name, as written (``pool.submit``: a pool made by
``with ThreadPoolExecutor() as pool`` is of no type the build reads), and only where the
call reaches no function of the tree (``flows.call_sites`` checks that): a ``submit`` of
the tree's own is read as the code it is.
"""

from __future__ import annotations

from indexgen.analyze.paths import KEYWORD
from indexgen.extract.arguments import closing_at

#: The last name of a call -> the slot of the function it calls, and what it hands it:
#: ``args``, the positional arguments after that one, in order (``Executor.submit``,
#: ``loop.run_in_executor(executor, fn, *args)``, ``asyncio.to_thread``,
#: ``loop.call_soon``/``call_later``/``call_at``, ``weakref.finalize(obj, fn, *args)``);
#: ``each``, an element of each of them (``map``, ``Executor.map``, ``Pool.imap``,
#: ``filter``); ``key``, an element of the first argument (``sorted``, ``min``, ``max``);
#: ``own``, an element of the receiver (``xs.sort(key=rank)``); ``done``, the receiver
#: itself (a future's ``add_done_callback(cb)`` and ``then(cb)`` call ``cb(future)``);
#: ``packed``, the items of a literal ``args=`` and ``kwargs=`` (``threading.Thread``,
#: ``multiprocessing.Process``, ``threading.Timer``, ``Pool.apply_async``), and ``rank``
#: the same after the process's number (``torch.multiprocessing.spawn(fn, args=(a,))``
#: runs ``fn(i, a)``, as ``start_processes`` does).
APPLY = {
    "submit": ("0", "args"), "to_thread": ("0", "args"), "call_soon": ("0", "args"),
    "call_soon_threadsafe": ("0", "args"), "call_later": ("1", "args"),
    "call_at": ("1", "args"), "run_in_executor": ("1", "args"), "finalize": ("1", "args"),
    "map": ("0", "each"), "imap": ("0", "each"), "imap_unordered": ("0", "each"),
    "filter": ("0", "each"), "sorted": ("key", "key"), "min": ("key", "key"),
    "max": ("key", "key"), "sort": ("key", "own"), "add_done_callback": ("0", "done"),
    "then": ("0", "done"), "Thread": ("target", "packed"), "Process": ("target", "packed"),
    "Timer": ("1", "packed"), "apply_async": ("0", "packed"), "spawn": ("0", "rank"),
    "start_processes": ("0", "rank"),
}


def applied(text: str, items: dict[str, str]) -> tuple[str, dict[str, str]] | None:
    """For a call written ``text`` that hands ``items`` (slot -> path, a flow record's:
    :func:`indexgen.analyze.flows.slots`), the path of the function it calls and what it
    hands that function (slot -> path, in the caller), or None when it is no call of
    :data:`APPLY` or hands no function where that one calls it."""
    receiver, _, name = text.rpartition(".")
    rule = APPLY.get(name)
    if rule is None or rule[0] not in items:
        return None
    slot, how = rule
    if how == "done":
        return items[slot], ({"0": receiver} if receiver else {})
    if how == "key" or how == "own":
        of = items.get("0") if how == "key" else receiver
        return items[slot], ({"0": f"next(iter({of}))"} if of else {})
    if how == "packed" or how == "rank":
        shift = how == "rank"
        return items[slot], {
            (str(int(s[5:]) + shift) if s[0] == "a" else s[7:]): path
            for s, path in items.items() if s.startswith(("args.", "kwargs."))}
    first = int(slot) + 1
    later = sorted((int(s) - first, path) for s, path in items.items()
                   if s.isdigit() and int(s) >= first)
    if how == "each":
        return items[slot], {str(i): f"next(iter({path}))" for i, path in later}
    return items[slot], {str(i): path for i, path in later}


def partial_arguments(source: str) -> tuple[str, list[str | None], dict[str, str]] | None:
    """For a local name's source written ``=functools.partial(f, a, _, k=v)`` (or
    ``=partial(...)``), the path of ``f``, the paths of the positional arguments it binds
    (None: not written) and its keywords; None for any other source, or where an argument
    is unpacked (``*args``: how many it binds is not written)."""
    head, paren, rest = source[1:].partition("(")
    if source[0] != "=" or not paren or head.rpartition(".")[2] != "partial" \
            or closing_at(source, len(head) + 1) != len(source) - 1:
        return None
    parts: list[str] = []
    depth, start = 0, 0
    body = rest[:-1]
    for i, ch in enumerate(body):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and not depth:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    if not parts[0] or any(p[:1] == "*" for p in parts):
        return None
    positional: list[str | None] = []
    keywords: dict[str, str] = {}
    for part in parts[1:]:
        keyword = KEYWORD.match(part)
        if keyword is not None:
            keywords[keyword.group(1)] = part[keyword.end():]
        else:
            positional.append(None if part == "_" or part[:1] == "#" else part)
    return parts[0], positional, keywords
