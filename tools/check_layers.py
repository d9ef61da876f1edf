#!/usr/bin/env python3
"""Fails when a module imports against the layer table at the top of src/lib.rs.

A module (a top-level file or folder of src/) may name `crate::X` only when X sits in a lower
layer, or is the module itself. Every reference counts, not only `use` lines, so a path
written inline in a function body is checked too.
"""
import pathlib
import re
import sys

src = pathlib.Path(__file__).resolve().parent.parent / "src"
layer_of = {}
for line in (src / "lib.rs").read_text().splitlines():
    m = re.match(r"^//! \| (\d+) \| ([^|]+) \|", line)
    if m:
        for name in re.findall(r"`([a-z_0-9]+)`", m.group(2)):
            layer_of[name] = int(m.group(1))
macro_owner = {}
if not layer_of:
    sys.exit("check_layers: no layer table found in src/lib.rs")

# `#[macro_export]` macros live at the crate root but belong to the module that defines them.
for path in src.rglob("*.rs"):
    owner = path.relative_to(src).parts[0].removesuffix(".rs")
    for name in re.findall(r"#\[macro_export\]\s*macro_rules!\s*([a-z_0-9]+)", path.read_text()):
        if owner in layer_of:
            layer_of.setdefault(name, layer_of[owner])
            macro_owner[name] = owner

declared = set(re.findall(r"^pub mod ([a-z_0-9]+);", (src / "lib.rs").read_text(), re.M))
problems = [f"src/lib.rs: module `{m}` has no layer in the table" for m in sorted(declared - set(layer_of))]

for path in sorted(src.rglob("*.rs")):
    rel = path.relative_to(src)
    if rel.as_posix() == "lib.rs":
        continue
    me = rel.parts[0].removesuffix(".rs")
    text = path.read_text()
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        if re.search(r"\bcrate::\{", code):
            problems.append(f"src/{rel}:{n}: `use crate::{{..}}` hides which modules are imported; import each one by path")
        for other in re.findall(r"\bcrate::([a-z_0-9]+)", code):
            if other == me or macro_owner.get(other) == me or other not in layer_of:
                continue
            if layer_of[other] >= layer_of.get(me, -1):
                problems.append(f"src/{rel}:{n}: `{me}` (layer {layer_of.get(me)}) imports `{other}` (layer {layer_of[other]})")
for p in problems:
    print(p)
if problems:
    sys.exit(f"check_layers: {len(problems)} import(s) against the layer table in src/lib.rs")
print(f"check_layers: {len(layer_of) - len(macro_owner)} modules, every import points down")
