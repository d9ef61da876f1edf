#!/usr/bin/env python3
"""Fails when a module imports against the layer tables at the top of core/src/lib.rs (the
core crate) and src/lib.rs (the C ABI crate), when files import each other in a circle, or when
a file glob-imports a sibling.

A module (a top-level file or folder of a crate's src/) may name `crate::X` only when X sits
in a lower layer, or is the module itself. The ABI crate re-exports the core's modules under
their own names, so one table of layers covers both crates. Every reference counts, not only `use` lines, so a path
written inline in a function body is checked too.

Inside the modules, the same references (`crate::a::b`, `super::x`, `self::y`, brace lists
included, and paths through a name a `use` brought in; test modules left out) make a graph of files; a circle in it (a strongly connected
component of more than one file) fails, except the ones listed in KNOWN_CYCLES, which may only
shrink. `use super::<sibling>::*` fails: it hides which items a file takes from the other.

Sizes a newcomer can read: no source file over MAX_FILE_LINES lines and no function over
MAX_FN_LINES lines anywhere in the workspace (generated files named in GENERATED excepted; the
functions in KNOWN_LONG may only shrink); a long one is split into its phases.

The C layer stays thin: in src/ffi/, only the real-library adapter, the netCDF-2 wrappers and the
generated matrices call our own nc_* exports as functions (KNOWN_NC_CALLERS may only shrink).
"""
import pathlib
import re
import sys

top = pathlib.Path(__file__).resolve().parent.parent
CRATES = [top / "core" / "src", top / "src"]
layer_of = {}
for src in CRATES:
    for line in (src / "lib.rs").read_text().splitlines():
        m = re.match(r"^//! \| (\d+) \| ([^|]+) \|", line)
        if m:
            for name in re.findall(r"`([a-z_0-9]+)`", m.group(2)):
                layer_of[name] = int(m.group(1))
macro_owner = {}
if not layer_of:
    sys.exit("check_layers: no layer table found in core/src/lib.rs or src/lib.rs")
problems = []
file_count, cycle_files, cycles_all = 0, 0, []


def show(path):
    return path.relative_to(top).as_posix()


def check_crate(src):
    global file_count

    # `#[macro_export]` macros live at the crate root but belong to the module that defines them.
    for path in src.rglob("*.rs"):
        owner = path.relative_to(src).parts[0].removesuffix(".rs")
        for name in re.findall(r"#\[macro_export\]\s*macro_rules!\s*([a-z_0-9]+)", path.read_text()):
            if owner in layer_of:
                layer_of.setdefault(name, layer_of[owner])
                macro_owner[name] = owner

    declared = set(re.findall(r"^pub mod ([a-z_0-9]+);", (src / "lib.rs").read_text(), re.M))
    problems.extend(f"{show(src / 'lib.rs')}: module `{m}` has no layer in the table" for m in sorted(declared - set(layer_of)))

    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        if rel.as_posix() == "lib.rs":
            continue
        me = rel.parts[0].removesuffix(".rs")
        text = path.read_text()
        for n, line in enumerate(text.splitlines(), 1):
            code = line.split("//", 1)[0]
            if re.search(r"\bcrate::\{", code):
                problems.append(f"{show(src)}/{rel}:{n}: `use crate::{{..}}` hides which modules are imported; import each one by path")
            for other in re.findall(r"\bcrate::([a-z_0-9]+)", code):
                if other == me or macro_owner.get(other) == me or other not in layer_of:
                    continue
                if layer_of[other] >= layer_of.get(me, -1):
                    problems.append(f"{show(src)}/{rel}:{n}: `{me}` (layer {layer_of.get(me)}) imports `{other}` (layer {layer_of[other]})")
    # ---- file-level cycles and sibling globs --------------------------------------------------

    # Circles not yet taken apart (review-3, step 2); a circle may lose files, never gain any.
    KNOWN_CYCLES = [
        # Empty: every folder's files import in one direction. A circle added here must say why,
        # and the list may only shrink.
    ]

    modules = {}
    for path in src.rglob("*.rs"):
        parts = list(path.relative_to(src).parts)
        if parts[-1] == "lib.rs":
            parts = []
        elif parts[-1] == "mod.rs":
            parts = parts[:-1]
        else:
            parts[-1] = parts[-1][:-3]
        modules[tuple(parts)] = path


    def module_of(segments):
        """The deepest module a path names (items inside a file belong to the file)."""
        for k in range(len(segments), 0, -1):
            if tuple(segments[:k]) in modules:
                return tuple(segments[:k])
        return None


    graph = {}
    for mod, path in modules.items():
        text = path.read_text()
        tests = re.search(r"#\[cfg\(test\)\]\s*mod tests", text)
        if tests:
            text = text[: tests.start()]
        text = re.sub(r"//[^\n]*", "", text)
        is_dir = path.name in ("mod.rs", "lib.rs")
        rel = path.relative_to(src).as_posix()
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r"\s*(pub(\([a-z]+\))? )?use super::([a-z_0-9]+)::\*;", line)
            if m and module_of(list(mod[:-1] if not is_dir else mod[:-1]) + [m.group(3)]) is not None:
                problems.append(f"{show(src)}/{rel}:{n}: `use super::{m.group(3)}::*` hides what this file takes from its sibling; name the items")
        edges = set()
        siblings_root = mod[:-1] if is_dir else mod[:-1]

        def add(base, rest):
            segments = list(base) + [x for x in rest.split("::") if x and x != "*"]
            target = module_of(segments)
            if target is not None and target != mod:
                edges.add(target)

        for m in re.finditer(r"\b(crate|super|self)::(\{[^}]*\}|[A-Za-z_0-9:]+)", text):
            head, rest = m.group(1), m.group(2)
            base = () if head == "crate" else (mod if head == "self" else siblings_root)
            while rest.startswith("super::"):
                base, rest = base[:-1], rest[len("super::"):]
            if rest.startswith("{"):
                for item in rest[1:-1].split(","):
                    if item.strip():
                        add(base, item.strip().split(" as ")[0])
            else:
                add(base, rest)
        # Paths through names a `use` brought in (`use crate::format::{v2, v3};` then
        # `v2::read::read(..)`) count as the path they stand for.
        aliases = {}
        for um in re.finditer(r"\buse\s+(crate|super|self)::([^;]+);", text):
            head, body = um.group(1), re.sub(r"\s*::\s*", "::", re.sub(r"\s+", " ", um.group(2)).strip())
            base = () if head == "crate" else (mod if head == "self" else siblings_root)
            while body.startswith("super::"):
                base, body = base[:-1], body[len("super::"):]
            if "{" in body:
                prefix, inner = body.split("{", 1)
                if "{" in inner:
                    continue
                items = [i.strip() for i in inner.rstrip("}").split(",")]
            else:
                prefix, items = "", [body]
            prefix_segments = [x for x in prefix.split("::") if x]
            for item in filter(None, items):
                path_text, _, alias = item.partition(" as ")
                segments = [x for x in path_text.split("::") if x]
                if segments == ["self"]:
                    segments = []
                full = list(base) + prefix_segments + segments
                name = alias or (full[-1] if full else "")
                if name and name != "*" and re.fullmatch(r"[a-z_][a-z_0-9]*", name):
                    aliases[name] = full
        for m in re.finditer(r"(?<![:\w])([a-z_][a-z_0-9]*)::([A-Za-z_0-9:]+)", text):
            if m.group(1) in aliases and m.group(1) not in ("crate", "super", "self"):
                add(tuple(aliases[m.group(1)]), m.group(2))
        graph[mod] = edges

    # Tarjan's strongly connected components, iteratively.
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add("::".join(w) or "crate")
                        if w == v:
                            break
                    if len(component) > 1:
                        cycles.append(component)
    for c in cycles:
        if not any(c <= known for known in KNOWN_CYCLES):
            problems.append(f"files import each other in a circle: {', '.join(sorted(c))}")


    file_count += len(modules)
    cycles_all.extend(cycles)


for crate_src in CRATES:
    check_crate(crate_src)
cycles = cycles_all

# ---- sizes --------------------------------------------------------------------------------

MAX_FILE_LINES = 700
MAX_FN_LINES = 80
# Written by tools/gen_ffi_matrix.py: one export per type and shape, never edited by hand.
GENERATED = {"src/ffi/data_matrix.rs", "src/ffi/att_matrix.rs"}
# Functions over MAX_FN_LINES when the limit went workspace-wide, with their length then: each
# may only shrink (and leaves the list once under the limit); a new long function fails.
KNOWN_LONG = {
    # Empty: every function is at most MAX_FN_LINES long. One added here must say why, and the
    # list may only shrink.
}
SOURCES = CRATES + [top / "macros" / "src", top / "headers" / "src"]
for path in sorted(p for crate_src in SOURCES for p in crate_src.rglob("*.rs")):
    lines = path.read_text().splitlines()
    if show(path) in GENERATED:
        continue
    if len(lines) > MAX_FILE_LINES:
        problems.append(f"{show(path)}: {len(lines)} lines (at most {MAX_FILE_LINES}); split it by concern")
    for n, line in enumerate(lines):
        if line.startswith("#[cfg(test)]"):
            break
        m = re.match(r'^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const |async |unsafe |extern "C" )*fn (\w+)', line)
        if not m or line.rstrip().endswith(";"):
            continue
        end = next((k for k in range(n + 1, len(lines)) if lines[k] == m.group(1) + "}"), n)
        length, known = end - n + 1, KNOWN_LONG.get(f"{show(path)}:{m.group(2)}")
        if length > MAX_FN_LINES and (known is None or length > known):
            cap = f"at most {known}, and shrinking" if known else f"at most {MAX_FN_LINES}"
            problems.append(f"{show(path)}:{n + 1}: fn {m.group(2)} has {length} lines ({cap}); split it into its phases")

# ---- calls into our own C API from inside it ------------------------------------------------

# In src/ffi/, the C API is called as functions only by the adapter to the real library
# (real.rs), the netCDF-2 wrappers and the generated matrices; calls to the real library go
# through real_call!/also_real!. The files below called exports when the rule came, with their
# count then: each count may only shrink.
LITERALS = re.compile(r"""//[^\n]*|r(#*)"(?:.|\n)*?"\1|"(?:[^"\\]|\\.)*"|'(?:[^'\\\n]|\\[^']*)'""", re.S)
NC_CALLS_ALLOWED = {"src/ffi/real.rs", "src/ffi/v2.rs"} | GENERATED
KNOWN_NC_CALLERS = {
    "src/ffi/cross.rs": 18,  # nc_copy_var/att across the two worlds: compositions of routed calls
    # Exports answering through a sibling that routes to both worlds (the real library's and
    # ours): the multi-PE creates and opens, the integer chunk-cache setting, freeing strings
    # either library allocated, the plugin path and URL test of the tools' helpers.
    "src/ffi/lifecycle.rs": 2,
    "src/ffi/file.rs": 1,  # nc_delete_mp: through nc_delete, which the real nc_delete calls back
    "src/ffi/usertypes.rs": 1,
    "src/ffi/library.rs": 1,
    "src/ffi/filters.rs": 1,
    "src/ffi/tool_compat/pluginpath.rs": 1,
    "src/ffi/tool_compat/ncuri.rs": 1,
}
for path in sorted((top / "src" / "ffi").rglob("*.rs")):
    if show(path) in NC_CALLS_ALLOWED:
        continue
    text = path.read_text()
    tests = re.search(r"#\[cfg\(test\)\]\s*mod tests", text)
    text = text[: tests.start()] if tests else text
    # One pass, left to right, so a quote inside a comment, a string or a char literal starts
    # nothing (a lone '"' once hid most of a file from this rule).
    text = LITERALS.sub(lambda m: "" if m.group(0).startswith("//") else '""', text)
    text = re.sub(r"(?:real_call|also_real)!\(\s*nc_\w+", "", text)
    calls = [m for m in re.finditer(r"(?<![\w!])(?:[a-z_]+::)*(nc_[a-z0-9_]+)\(", text) if not text[: m.start()].rstrip().endswith("fn")]
    known = KNOWN_NC_CALLERS.get(show(path), 0)
    if len(calls) > known:
        names = ", ".join(sorted({m.group(1) for m in calls}))
        problems.append(f"{show(path)}: {len(calls)} calls of our own nc_* exports ({names}; at most {known}): "
                        "go through the core, or through real.rs for the real library")

for p in problems:
    print(p)
if problems:
    sys.exit(f"check_layers: {len(problems)} problem(s): imports against the layer tables, circles of files, sibling globs or sizes")
print(f"check_layers: {len(layer_of) - len(macro_owner)} modules, every import points down; "
      f"{file_count} files, {len(cycles)} circle(s) of files, all known ({sum(len(c) for c in cycles)} files; KNOWN_CYCLES); "
      f"no file over {MAX_FILE_LINES} lines, no function over {MAX_FN_LINES} but {len(KNOWN_LONG)} known and shrinking; "
      f"nc_* calls inside src/ffi only where allowed")
