# Shared by the shell test suites (sourced after `top` is set): paths, a scratch directory
# removed at exit, the pass/fail counters with their helpers, and the case filter.
#
# Every check prints one line, `ok N - <case>: <what>` or `not ok N - <case>: <what>`, and the
# suite ends with its "N passed, M failed" line. A suite names its cases with `case_ NAME`
# (one per numbered part); `T=<text>` (`make check-v3 T=nccopy`) runs only the cases whose
# name contains <text>, plus the set-up every case needs.
# NCZARR_BUILD: test another build of the libraries (a debug build while developing).
build="${NCZARR_BUILD:-$top/build}"
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
case_name=""
ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - ${case_name:+$case_name: }${1:-passed}"; }
bad() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - ${case_name:+$case_name: }$*"; }
# `case_ NAME`: the checks that follow belong to case NAME; false when `T` filters it out.
case_() {
    case_name="$1"
    case "$1" in *"${T:-}"*) return 0 ;; esac
    return 1
}
same() { # name file1 file2
    if diff -u "$2" "$3" > "$scratch/diff.txt"; then ok "$1"; else bad "$1"; head -30 "$scratch/diff.txt"; fi
}
