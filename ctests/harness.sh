# Shared by the shell test suites (sourced after `top` is set): paths, a scratch directory
# removed at exit, and the pass/fail counters with their helpers.
build="$top/build"
pre="$build/libnczarr_preload.so"
scratch=$(mktemp -d)
# Background servers a suite starts go into $pids; they are stopped at exit.
pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; rm -rf "$scratch"; }
trap cleanup EXIT
# A free loopback port, for servers the suites start.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*"; }
same() { # name file1 file2
    if diff -u "$2" "$3" > "$scratch/diff.txt"; then ok; else bad "$1"; head -30 "$scratch/diff.txt"; fi
}
