#!/bin/sh
# Builds every ctests/c/t_*.c against include/ and the drop-in library (runpath to build/, so
# ours is loaded, not the system's libnetcdf.so.19) and runs it in a fresh scratch directory.
# One line per program, `ok N - t_atts` or `not ok N - t_atts` (its log follows);
# `T=<text>` (`make check-c T=t_atts`) runs only the programs whose name contains <text>.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/ctests"
mkdir -p "$out"
cc=${CC:-cc}
pass=0
fail=0
for src in "$top"/ctests/c/t_*.c; do
    name=$(basename "$src" .c)
    case "$name" in *"${T:-}"*) ;; *) continue ;; esac
    $cc -std=c11 -Wall -Werror -Wno-unused-but-set-variable -Wno-unused-parameter -D_GNU_SOURCE -I"$top/include" -I"$top/ctests" -o "$out/$name" "$src" -pthread \
        -L"$top/build" -lnetcdf -lm -Wl,-rpath,"$top/build"
    scratch=$(mktemp -d)
    if "$out/$name" "$scratch" > "$out/$name.log" 2>&1; then
        pass=$((pass + 1))
        echo "ok $((pass + fail)) - $name: $(tail -1 "$out/$name.log")"
    else
        fail=$((fail + 1))
        echo "not ok $((pass + fail)) - $name"
        cat "$out/$name.log"
    fi
    rm -rf "$scratch"
done
echo "C tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
