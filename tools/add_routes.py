#!/usr/bin/env python3
"""Puts `route!(...)` at the top of every exported `nc_*` function whose first parameter is an
ncid (passthrough.md §5, §6): a call with an ncid that is not ours goes to the real netcdf-c
unchanged. Idempotent; run after adding exports (gen_ffi_matrix.py runs it too):
    python3 tools/add_routes.py
Functions taking two ncids and the open/close family route by hand (ffi/route.rs, ffi/cross.rs).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BY_HAND = {"nc_copy_att", "nc_copy_var", "nc_inq_type_equal", "nc_close", "nc_abort"}
EXPORT = re.compile(r'(#\[unsafe\(no_mangle\)\]\s*pub (?:unsafe )?extern "C" fn (\w+)\s*\(([^{}]*?)\)\s*->\s*c_int\s*\{\n)', re.S)


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) for p in out if p.strip()]


def process(path):
    text = path.read_text()

    def fix(m):
        head, name, params = m.group(1), m.group(2), m.group(3)
        ps = split_params(params)
        if not name.startswith("nc_") or name in BY_HAND or not ps or "ncid" not in ps[0][0]:
            return head
        rest = text[m.end():m.end() + 200]
        if rest.lstrip().startswith("route!("):
            return head
        names = ", ".join(n for n, _ in ps)
        types = ", ".join(" ".join(t.split()) for _, t in ps)
        return f"{head}    route!({name}({names}): ({types}));\n"

    new = EXPORT.sub(fix, text)
    if new != text:
        if "use crate::ffi::route::route;" not in new:
            # Bring the macro into scope after the module's first `use` line.
            new = re.sub(r"^(use [^\n]*\n)", r"\1use crate::ffi::route::route;\n", new, count=1, flags=re.M)
        path.write_text(new)
        return True
    return False


changed = [p.name for p in sorted((ROOT / "src/ffi").glob("*.rs")) if p.name != "route.rs" and process(p)]
if changed and "-q" not in sys.argv:
    print("routes added in:", ", ".join(changed))
