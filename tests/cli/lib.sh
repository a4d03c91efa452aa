# lib.sh — helpers for the command-line tests: run ipusim as a user would
# and check exit status, output and files.
set -u
IPUSIM=${1:?usage: $0 PATH/TO/ipusim}
CLI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)   # this folder (onnx_proto.py)
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

# refused STATUS MATCH WANT COMMAND...: exit status STATUS; the first line
# of stdout+stderr is WANT (MATCH "exact") or matches the extended regex WANT
# (MATCH "regex"); no panic; $OUT (the folder the caller points every output
# at) is still empty.
refused() {
    local status=$1 match=$2 want=$3
    shift 3
    local out rc first left ok=1
    out=$("$@" 2>&1)
    rc=$?
    first=$(head -n 1 <<<"$out")
    left=$(ls -A "$OUT")
    if [ "$match" = exact ]; then [ "$first" = "$want" ] || ok=0
    else grep -Eq -- "$want" <<<"$first" || ok=0; fi
    if [ "$rc" -ne "$status" ] || [ "$ok" -eq 0 ] || grep -q "panic" <<<"$out" || [ -n "$left" ]; then
        echo "FAIL: $*"
        echo "  exit $rc (expected $status)"
        echo "  got:      $first"
        if [ "$match" = exact ]; then echo "  expected: $want"; else echo "  expected: /$want/"; fi
        [ -z "$left" ] || echo "  left in $OUT: $left"
        FAILED=$((FAILED + 1))
        rm -rf "${OUT:?}"/* "$OUT"/.[!.]* 2>/dev/null
        return
    fi
    PASSED=$((PASSED + 1))
}

# fails STATUS MESSAGE -- COMMAND...: refused with exactly MESSAGE.
fails() { local status=$1 message=$2; shift 3; refused "$status" exact "$message" "$@"; }
# fails_like STATUS REGEX -- COMMAND...: refused with a first line matching REGEX
# (for messages that name things still settling).
fails_like() { local status=$1 regex=$2; shift 3; refused "$status" regex "$regex" "$@"; }

check() { # check DESCRIPTION COMMAND...: a shell condition
    local what=$1
    shift
    if "$@"; then PASSED=$((PASSED + 1)); else echo "FAIL: $what"; FAILED=$((FAILED + 1)); fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
