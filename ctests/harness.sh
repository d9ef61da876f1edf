# Shared by the shell test suites (sourced after `top` is set): paths, a scratch directory
# removed at exit, and the pass/fail counters with their helpers.
build="$top/build"
pre="$build/libnczarr_preload.so"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*"; }
same() { # name file1 file2
    if diff -u "$2" "$3" > "$scratch/diff.txt"; then ok; else bad "$1"; head -30 "$scratch/diff.txt"; fi
}
