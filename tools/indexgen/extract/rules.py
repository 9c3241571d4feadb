"""Tables that classify calls into performance, safety and pattern findings.

Each rule names a call by the last component of its dotted name; some generic names
(``reduce``, ``gather``, ``empty``...) only count when the receiver is a known module such as
``torch.distributed`` or ``torch``.  The tables are data so that tests and readers can see at a
glance what indexgen looks for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from indexgen.extract.model import FileSummary, Finding

#: Finding categories shown in "Performance Considerations", in display order.
PERFORMANCE_CATEGORIES = ("collective", "stream", "event", "synchronization", "allocation")
#: Finding categories shown in "Security & Safety", in display order.
SECURITY_CATEGORIES = ("eval", "deserialization", "subprocess", "file", "network", "dynamic-import")

#: Human titles for every finding category.
TITLES = {
    "collective": "Collective communication",
    "stream": "Stream operations",
    "event": "Event operations",
    "synchronization": "Host synchronizations and blocking waits",
    "allocation": "Tensor allocations (size not known statically)",
    "eval": "eval / exec / compile of code",
    "deserialization": "Unsafe deserialization (pickle, torch.load)",
    "subprocess": "Subprocesses and shell commands",
    "file": "File system access",
    "network": "Network access",
    "dynamic-import": "Dynamic imports",
}

# Names that are collectives whatever the receiver.
_COLLECTIVES_ALWAYS = frozenset(
    {
        "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor",
        "all_gather_object", "all_gather_coalesced", "_allgather_base", "allgather",
        "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "reducescatter",
        "all_to_all", "all_to_all_single", "batch_isend_irecv", "isend", "irecv", "barrier",
        "monitored_barrier", "broadcast_object_list", "scatter_object_list",
        "gather_object", "all_gather_tensor", "all_reduce_tensor", "all_to_all_single_autograd",
        "reduce_scatter_tensor_coalesced", "all_gather_into_tensor_coalesced", "wait_tensor",
        "all_gather_single", "reduce_scatter_single",
    }
)
# Generic names that are collectives only on a distributed receiver.
_COLLECTIVES_DIST = frozenset({"broadcast", "reduce", "gather", "scatter", "send", "recv"})
_DIST_RECEIVERS = frozenset({"dist", "torch.distributed", "c10d", "funcol", "_c10d", "pg"})

_STREAM = frozenset(
    {"Stream", "current_stream", "default_stream", "wait_stream", "record_stream", "set_stream",
     "stream", "StreamContext"}
)
_EVENT_ALWAYS = frozenset({"Event", "record_event", "wait_event", "elapsed_time"})
_EVENT_ON_EVENT = frozenset({"record", "wait", "query", "synchronize"})
_SYNC = frozenset({"synchronize", "item", "tolist", "wait", "cpu"})

_ALLOC_TORCH = frozenset(
    {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "cat", "stack",
     "empty_strided", "tensor"}
)
_ALLOC_ANY = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "new_empty",
     "new_zeros", "new_ones", "new_full", "new_empty_strided", "new_tensor", "resize_", "clone",
     "alloc_storage"}
)

_EVAL_BUILTINS = frozenset({"eval", "exec", "compile"})
_PICKLE_MODULES = frozenset({"pickle", "cPickle", "dill", "marshal", "_pickle", "cloudpickle"})
_PICKLE_NAMES = frozenset({"load", "loads", "Unpickler"})
_SUBPROCESS = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
)
_OS_SHELL = frozenset(
    {"system", "popen", "execv", "execve", "execvp", "execl", "execlp", "spawnv", "spawnl",
     "startfile"}
)
_OS_FILE = frozenset(
    {"remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "makedirs",
     "mkdir", "chmod", "chown", "symlink", "link", "truncate", "scandir", "listdir", "walk",
     "stat", "lstat", "access", "readlink", "utime", "fwalk"}
)
# os.path functions that ask the file system (the others only compute with strings).
_OS_PATH_FILE = frozenset(
    {"exists", "lexists", "isfile", "isdir", "islink", "ismount", "getsize", "getmtime",
     "getatime", "getctime", "realpath", "samefile"}
)
# pathlib.Path methods that touch the file system, called on any object.
_PATH_FILE = frozenset(
    {"read_text", "write_text", "read_bytes", "write_bytes", "unlink", "mkdir", "rmdir",
     "touch", "symlink_to", "open", "exists", "is_file", "is_dir", "is_symlink", "iterdir",
     "glob", "rglob", "stat", "lstat", "samefile", "readlink", "hardlink_to"}
)
_SHUTIL = frozenset({"rmtree", "copy", "copy2", "copyfile", "copytree", "move", "make_archive"})
_NETWORK_MODULES = frozenset({"socket", "requests", "urllib.request", "http.client", "httpx"})
_NETWORK_NAMES = frozenset({"urlopen", "create_connection", "TCPStore", "HTTPConnection",
                            "HTTPSConnection"})

#: Every call name that may produce a finding; calls with other last components are skipped fast.
CANDIDATE_NAMES = frozenset().union(
    _COLLECTIVES_ALWAYS, _COLLECTIVES_DIST, _STREAM, _EVENT_ALWAYS, _EVENT_ON_EVENT, _SYNC,
    _ALLOC_TORCH, _ALLOC_ANY, _EVAL_BUILTINS, _PICKLE_NAMES, _SUBPROCESS, _OS_SHELL, _OS_FILE,
    _OS_PATH_FILE, _PATH_FILE, _SHUTIL, _NETWORK_NAMES,
    {"open", "load", "import_module", "__import__", "get", "post", "put", "delete", "request",
     "socket", "Session", "connect", "mkstemp", "mkdtemp", "NamedTemporaryFile",
     "TemporaryDirectory", "glob", "iglob", "ZipFile", "TarFile"},
)


#: A call worth classifying: (dotted callee as written, line, keyword name -> value text).
Candidate = tuple[str, int, dict[str, str]]


# -- the rules -----------------------------------------------------------------------------
@dataclass(frozen=True)
class CallSite:
    """One call as the rules see it.

    Attributes:
        receiver: What the call's name is looked up on, as written (``dist`` in
            ``dist.all_reduce``; '' for a bare name).
        full_receiver: The same after resolving the file's import aliases
            (``torch.distributed``); for a bare imported name, the module it came from.
        keywords: Keyword argument name -> its value as written.
    """

    receiver: str
    full_receiver: str
    keywords: dict[str, str]


def _any(c: CallSite) -> bool:
    return True


def _distributed(c: CallSite) -> bool:
    return c.full_receiver.startswith("torch.distributed") or c.receiver in _DIST_RECEIVERS


def _event_object(c: CallSite) -> bool:
    return "event" in c.receiver.lower()


def _some_receiver(c: CallSite) -> bool:
    return bool(c.receiver or c.full_receiver)


def _written_receiver(c: CallSite) -> bool:
    return bool(c.receiver)


def _bare(c: CallSite) -> bool:
    return not c.receiver and not c.full_receiver


def _bare_as_written(c: CallSite) -> bool:
    return not c.receiver


def _module(*names: str) -> Callable[[CallSite], bool]:
    modules = frozenset(names)

    def test(c: CallSite) -> bool:
        return c.full_receiver in modules

    test.__name__ = f"module in {sorted(modules)}"
    return test


def _object_not_os(c: CallSite) -> bool:
    return bool(c.receiver) and c.full_receiver not in ("os", "shutil", "os.path")


def _no_keywords(keywords: dict[str, str]) -> str | None:
    """``x.cpu()`` copies to the host and waits; with keyword arguments it is left out."""
    return None if keywords else ""


def _torch_load(keywords: dict[str, str]) -> str | None:
    """``torch.load`` unpickles unless ``weights_only=True``."""
    value = keywords.get("weights_only")
    if value is None:
        return "torch.load without weights_only"
    if value != "True":
        return f"torch.load with weights_only={value}"
    return None


#: The keyword the walk gives an import call whose one module the source names
#: (``__import__("pydoc")``, a constant): a lazy import of a fixed module, not a dynamic one.
FIXED_MODULE = "<fixed>"


def _computed(keywords: dict[str, str]) -> str | None:
    return None if FIXED_MODULE in keywords else ""


@dataclass(frozen=True)
class CallRule:
    """One row of :data:`CALL_RULES`.

    Attributes:
        category: Finding category (a key of :data:`TITLES`).
        names: Last names of the call that the rule matches; None matches any name.
        where: Condition on the receiver (see :class:`CallSite`).
        note: Given the call's keywords, the note to show, or None when the call is harmless
            after all (``torch.load(..., weights_only=True)``); None here means no note.
        by_name: Whether the rule knows the call by its name alone, on any object
            (pathlib's ``write_text``): a project may define a method of that name, and the
            global pass drops the finding where the call graph resolves the call to project
            definitions only (:func:`indexgen.analyze.walks.projects_own`).
    """

    category: str
    names: frozenset[str] | None
    where: Callable[[CallSite], bool]
    note: Callable[[dict[str, str]], str | None] | None = None
    by_name: bool = False


#: The rules in the order they are tried; the first whose names and condition match decides.
CALL_RULES: tuple[CallRule, ...] = (
    CallRule("collective", _COLLECTIVES_ALWAYS, _any),
    CallRule("collective", _COLLECTIVES_DIST, _distributed),
    CallRule("event", _EVENT_ALWAYS, _any),
    CallRule("event", _EVENT_ON_EVENT, _event_object),
    CallRule("stream", _STREAM, _some_receiver),
    CallRule("synchronization", _SYNC - {"cpu"}, _written_receiver),
    CallRule("synchronization", frozenset({"cpu"}), _written_receiver, _no_keywords),
    CallRule("allocation", _ALLOC_ANY, _written_receiver),
    CallRule("allocation", _ALLOC_TORCH, _module("torch")),
    CallRule("eval", _EVAL_BUILTINS, _bare),
    CallRule("dynamic-import", frozenset({"__import__"}), _bare_as_written, _computed),
    CallRule("dynamic-import", frozenset({"import_module"}), _module("importlib"), _computed),
    CallRule("deserialization", _PICKLE_NAMES, _module(*_PICKLE_MODULES)),
    CallRule("deserialization", frozenset({"load"}), _module("torch"), _torch_load),
    CallRule("subprocess", _SUBPROCESS, _module("subprocess")),
    CallRule("subprocess", _OS_SHELL, _module("os")),
    CallRule("file", frozenset({"open"}), _bare),
    CallRule("file", frozenset({"open"}), _module("io", "os", "codecs", "gzip", "bz2", "lzma",
                                                  "tarfile", "shelve", "dbm")),
    CallRule("file", frozenset({"ZipFile", "TarFile"}), _module("zipfile", "tarfile")),
    CallRule("file", _OS_FILE, _module("os")),
    CallRule("file", _OS_PATH_FILE, _module("os.path", "posixpath", "ntpath")),
    CallRule("file", frozenset({"glob", "iglob"}), _module("glob")),
    CallRule("file", _SHUTIL, _module("shutil")),
    CallRule("file", None, _module("tempfile")),
    CallRule("file", _PATH_FILE, _object_not_os, by_name=True),
    CallRule("network", None, _module(*_NETWORK_MODULES)),
    CallRule("network", _NETWORK_NAMES, _any),
)


def call_site(text: str, keywords: dict[str, str], aliases: dict[str, str]) -> tuple[str, CallSite]:
    """Split a call into its last name and a :class:`CallSite`, resolving import aliases.

    Args:
        text: Dotted name of the called expression as written (``dist.all_reduce``).
        keywords: Keyword argument name -> its value as written.
        aliases: Bound name -> absolute module or object it refers to (``dist`` ->
            ``torch.distributed``, ``load`` -> ``pickle.load``).

    Returns:
        ``(last name, call site)``; a bare imported name is replaced by its original name.
    """
    receiver, _, last = text.rpartition(".")
    head = text.split(".", 1)[0]
    full = aliases[head] + text[len(head):] if head in aliases else text
    full_receiver = full.rpartition(".")[0]
    if not receiver and last in aliases:
        full_receiver = aliases[last].rpartition(".")[0]
        last = aliases[last].rpartition(".")[2] or last
    return last, CallSite(receiver, full_receiver, keywords)


def classify_call(
    text: str, keywords: dict[str, str], aliases: dict[str, str]
) -> tuple[str, str, bool] | None:
    """Classify one call expression with :data:`CALL_RULES`.

    Args:
        text: Dotted name of the called expression as written (``dist.all_reduce``); a
            receiver that is not a plain name shows as ``(...)`` (``f().wait``).
        keywords: Keyword argument name -> its value as written (``weights_only`` -> ``True``).
        aliases: Bound name -> absolute module or object it refers to, from the file's imports
            (``dist`` -> ``torch.distributed``, ``load`` -> ``pickle.load``).

    Returns:
        ``(category, note, by_name)`` (``by_name``: see :class:`CallRule`) or None when the
        call is not interesting.
    """
    last, site = call_site(text, keywords, aliases)
    for rule in CALL_RULES:
        if (rule.names is None or last in rule.names) and rule.where(site):
            if rule.note is None:
                return (rule.category, "", rule.by_name)
            note = rule.note(keywords)
            return None if note is None else (rule.category, note, rule.by_name)
    return None


def import_aliases(summary: FileSummary) -> dict[str, str]:
    """Bound name -> the absolute module or object it refers to, from the file's imports."""
    aliases: dict[str, str] = {}
    for imp in summary.imports:
        if imp.name:
            aliases[imp.bound_name] = f"{imp.module}.{imp.name}" if imp.module else imp.name
        elif imp.alias:
            aliases[imp.alias] = imp.module
        else:
            head = imp.module.split(".")[0]
            aliases[head] = head
    return aliases


def classify_calls(summary: FileSummary, calls: list[Candidate]) -> None:
    """Add a finding to ``summary`` for every call that :func:`classify_call` matches."""
    aliases = import_aliases(summary)
    for text, line, kws in calls:
        result = classify_call(text, kws, aliases)
        if result:
            summary.findings.append(Finding(result[0], line, text, result[1]))
            if result[2]:  # known by its name alone: anchored by calls.attribute
                summary.by_name.append(("", line, text, result[0]))
