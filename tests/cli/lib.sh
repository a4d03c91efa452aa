# lib.sh — helpers for the command-line tests: run ipusim as a user would
# and check exit status, output and files.
set -u
IPUSIM=${1:?usage: $0 PATH/TO/ipusim}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PASSED=0
FAILED=0

# expect STATUS PATTERN -- COMMAND...: run, check the exit status and that
# stdout+stderr match the extended regex PATTERN.
expect() {
    local status=$1 pattern=$2
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$status" ]; then
        echo "FAIL: $* -> exit $rc, expected $status"; echo "$out" | head -20
        FAILED=$((FAILED + 1)); return
    fi
    if ! grep -Eq -- "$pattern" <<<"$out"; then
        echo "FAIL: $* -> output does not match /$pattern/"; echo "$out" | head -20
        FAILED=$((FAILED + 1)); return
    fi
    PASSED=$((PASSED + 1))
}

check() { # check DESCRIPTION COMMAND...: a shell condition
    local what=$1
    shift
    if "$@"; then PASSED=$((PASSED + 1)); else echo "FAIL: $what"; FAILED=$((FAILED + 1)); fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
