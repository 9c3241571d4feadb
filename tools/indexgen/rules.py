"""Tables that classify calls into performance, safety and pattern findings.

Each rule names a call by the last component of its dotted name; some generic names
(``reduce``, ``gather``, ``empty``...) only count when the receiver is a known module such as
``torch.distributed`` or ``torch``.  The tables are data so that tests and readers can see at a
glance what indexgen looks for.
"""

from __future__ import annotations

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
     "mkdir", "chmod", "chown", "symlink", "link", "truncate"}
)
_PATH_FILE = frozenset(
    {"read_text", "write_text", "read_bytes", "write_bytes", "unlink", "mkdir", "rmdir",
     "touch", "symlink_to"}
)
_SHUTIL = frozenset({"rmtree", "copy", "copy2", "copyfile", "copytree", "move", "make_archive"})
_NETWORK_MODULES = frozenset({"socket", "requests", "urllib.request", "http.client", "httpx"})
_NETWORK_NAMES = frozenset({"urlopen", "create_connection", "TCPStore", "HTTPConnection",
                            "HTTPSConnection"})

#: Every call name that may produce a finding; calls with other last components are skipped fast.
CANDIDATE_NAMES = frozenset().union(
    _COLLECTIVES_ALWAYS, _COLLECTIVES_DIST, _STREAM, _EVENT_ALWAYS, _EVENT_ON_EVENT, _SYNC,
    _ALLOC_TORCH, _ALLOC_ANY, _EVAL_BUILTINS, _PICKLE_NAMES, _SUBPROCESS, _OS_SHELL, _OS_FILE,
    _PATH_FILE, _SHUTIL, _NETWORK_NAMES,
    {"open", "load", "import_module", "__import__", "get", "post", "put", "delete", "request",
     "socket", "Session", "connect", "mkstemp", "mkdtemp", "NamedTemporaryFile",
     "TemporaryDirectory"},
)


def classify_call(
    text: str, keywords: dict[str, str], aliases: dict[str, str]
) -> tuple[str, str] | None:
    """Classify one call expression.

    Args:
        text: Dotted name of the called expression as written (``dist.all_reduce``); a leading
            ``?.`` stands for a receiver that is not a plain name (``f().wait``).
        keywords: Keyword argument name -> its value as written (``weights_only`` -> ``True``).
        aliases: Bound name -> absolute module or object it refers to, from the file's imports
            (``dist`` -> ``torch.distributed``, ``load`` -> ``pickle.load``).

    Returns:
        ``(category, note)`` or None when the call is not interesting.
    """
    receiver, _, last = text.rpartition(".")
    head = text.split(".", 1)[0]
    # Resolve the receiver (or a bare imported name) to what it was imported as.
    full = text
    if head in aliases:
        full = aliases[head] + text[len(head):]
    full_receiver = full.rpartition(".")[0]
    if not receiver and last in aliases:
        full_receiver = aliases[last].rpartition(".")[0]
        last = aliases[last].rpartition(".")[2] or last

    is_dist = full_receiver.startswith("torch.distributed") or receiver in _DIST_RECEIVERS
    if last in _COLLECTIVES_ALWAYS or (last in _COLLECTIVES_DIST and is_dist):
        return ("collective", "")
    low_receiver = receiver.lower()
    if last in _EVENT_ALWAYS or (last in _EVENT_ON_EVENT and "event" in low_receiver):
        return ("event", "")
    if last in _STREAM and (receiver or full_receiver):
        return ("stream", "")
    if last in _SYNC and receiver:
        if last == "cpu" and keywords:
            return None
        return ("synchronization", "")
    if last in _ALLOC_ANY and receiver:
        return ("allocation", "")
    if last in _ALLOC_TORCH and full_receiver == "torch":
        return ("allocation", "")
    if last in _EVAL_BUILTINS and not receiver and not full_receiver:
        return ("eval", "")
    if last == "__import__" and not receiver:
        return ("dynamic-import", "")
    if last == "import_module" and full_receiver == "importlib":
        return ("dynamic-import", "")
    if last in _PICKLE_NAMES and full_receiver in _PICKLE_MODULES:
        return ("deserialization", "")
    if last == "load" and full_receiver == "torch":
        value = keywords.get("weights_only")
        if value is None:
            return ("deserialization", "torch.load without weights_only")
        if value != "True":
            return ("deserialization", f"torch.load with weights_only={value}")
        return None
    if full_receiver == "subprocess" and last in _SUBPROCESS:
        return ("subprocess", "")
    if full_receiver == "os" and last in _OS_SHELL:
        return ("subprocess", "")
    if last == "open" and not receiver and not full_receiver:
        return ("file", "")
    if last == "open" and full_receiver in ("io", "os", "codecs", "gzip", "bz2", "lzma"):
        return ("file", "")
    if full_receiver == "os" and last in _OS_FILE:
        return ("file", "")
    if full_receiver == "shutil" and last in _SHUTIL:
        return ("file", "")
    if full_receiver == "tempfile":
        return ("file", "")
    if last in _PATH_FILE and receiver and full_receiver not in ("os", "shutil"):
        return ("file", "")
    if full_receiver in _NETWORK_MODULES or last in _NETWORK_NAMES:
        return ("network", "")
    return None
