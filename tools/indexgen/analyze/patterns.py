"""Recognize code patterns and idioms from a file summary.

Each detector looks at definitions (bases, decorators, griffe labels), imports and the
pattern findings recorded during extraction, and returns the places it matched.  Nothing is
reported that is not literally in the code.
"""

from __future__ import annotations

from indexgen.extract.model import FileSummary

_ENUM_BASES = {"Enum", "IntEnum", "Flag", "IntFlag", "StrEnum"}
_TYPED_BASES = {"NamedTuple": "Named tuples", "TypedDict": "Typed dicts", "Protocol": "Protocols"}


def _last(expr: str) -> str:
    return expr.split("(", 1)[0].rpartition(".")[2]


def detect(s: FileSummary) -> list[tuple[str, list[tuple[str, int]]]]:
    """All recognized patterns of a file.

    Args:
        s: Full summary of the file.

    Returns:
        ``(title, [(label, line), ...])`` pairs in a fixed order; patterns that were not found are
        left out.
    """
    found: dict[str, list[tuple[str, int]]] = {}

    def add(title: str, label: str, line: int) -> None:
        found.setdefault(title, []).append((label, line))

    by_name = {d.qualname: d for d in s.definitions}
    for d in s.definitions:
        decos = [_last(x) for x in d.decorators]
        if d.kind == "class":
            bases = [_last(b) for b in d.bases]
            if "dataclass" in decos or "dataclass" in d.labels:
                add("Dataclasses", d.qualname, d.lineno)
            if any(b in _ENUM_BASES for b in bases):
                add("Enumerations", d.qualname, d.lineno)
            if f"{d.qualname}.__enter__" in by_name or f"{d.qualname}.__aenter__" in by_name:
                add("Context manager classes", d.qualname, d.lineno)
            if "ABC" in bases or "metaclass=ABCMeta" in d.signature or "metaclass=abc.ABCMeta" in d.signature:
                add("Abstract base classes", d.qualname, d.lineno)
            if any(b.endswith("autograd.Function") or b == "Function" for b in d.bases):
                add("Custom autograd Functions", d.qualname, d.lineno)
            if any(b in ("nn.Module", "Module", "torch.nn.Module") for b in d.bases):
                add("nn.Module subclasses", d.qualname, d.lineno)
            if "Exception" in bases or any(b.endswith("Error") for b in bases):
                add("Exception classes", d.qualname, d.lineno)
            for b in bases:
                if b in _TYPED_BASES:
                    add(_TYPED_BASES[b], d.qualname, d.lineno)
            continue
        if "contextmanager" in decos or "asynccontextmanager" in decos:
            add("Context manager functions", d.qualname, d.lineno)
        if d.kind == "property":
            add("Properties", d.qualname, d.lineno)
        if "abstractmethod" in decos:
            add("Abstract methods", d.qualname, d.lineno)
        if "overload" in decos:
            add("Overloads", d.qualname, d.lineno)
        if {"cache", "lru_cache", "cached_property"} & set(decos):
            add("Memoization", d.qualname, d.lineno)
        if {"no_grad", "inference_mode", "enable_grad"} & set(decos):
            add("Grad-mode control", "@" + d.decorators[0], d.lineno)
        if "hook" in d.name.lower():
            add("Hook functions", d.qualname, d.lineno)
    generators: dict[str, int] = {}
    if any(f.category == "generator" for f in s.findings):
        funcs = sorted((d for d in s.definitions if d.kind != "class"),
                       key=lambda d: (d.start_lineno, -d.end_lineno))
        for f in s.findings:
            if f.category != "generator":
                continue
            owner = None
            for d in funcs:
                if d.start_lineno > f.lineno:
                    break
                if d.end_lineno >= f.lineno:
                    owner = d
            if owner is not None and owner.qualname not in generators:
                generators[owner.qualname] = owner.lineno
    for name, line in sorted(generators.items(), key=lambda x: x[1]):
        add("Generators", name, line)
    for f in s.findings:
        if f.category == "hook-registration":
            add("Hook registration", f.text, f.lineno)
        elif f.category == "grad-mode":
            add("Grad-mode control", f.text, f.lineno)
        elif f.category == "global-state":
            add("Module-global state", f.text, f.lineno)
    for imp in s.imports:
        label = (f"{imp.module}.{imp.name}" if imp.name else imp.module).lstrip(".")
        if imp.scope == "type-checking":
            add("Type-checking-only imports", label, imp.lineno)
        elif imp.scope == "function":
            add("Lazy imports", label, imp.lineno)
    if s.exports is not None:
        add("Explicit exports (__all__)", f"{len(s.exports)} names", _all_line(s))
    order = ["Dataclasses", "Enumerations", "Named tuples", "Typed dicts", "Protocols",
             "Abstract base classes", "Abstract methods", "Exception classes",
             "Context manager classes", "Context manager functions", "Properties",
             "Custom autograd Functions", "nn.Module subclasses", "Hook functions",
             "Hook registration", "Grad-mode control", "Generators", "Overloads", "Memoization",
             "Module-global state", "Type-checking-only imports", "Lazy imports",
             "Explicit exports (__all__)"]
    return [(title, sorted(found[title], key=lambda x: (x[1], x[0]))) for title in order
            if title in found]


def _all_line(s: FileSummary) -> int:
    line = s.identifiers.get("__all__")
    return line[0] if line else 1
