#!/usr/bin/env bash
# Options, names and output paths checked before any work: a mistake in
# them ends in one message and its exit status (1 bad input, 2 bad command
# line, 3 the cycle limit) before a program is compiled or simulated, and
# leaves nothing in the output folder.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every output a failing command is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

# only_message STATUS MESSAGE -- COMMAND...: as fails, and MESSAGE is the
# only line on stderr.
only_message() {
    local status=$1 message=$2
    shift 3
    local err rc
    err=$("$@" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne "$status" ] || [ "$err" != "$message" ]; then
        echo "FAIL: $* -> exit $rc (expected $status), stderr:"
        echo "$err" | head -5 | sed 's/^/  /'
        echo "  expected only: $message"
        FAILED=$((FAILED + 1))
        return
    fi
    PASSED=$((PASSED + 1))
}

# A compiled matmul (with a tensor map) and a hand-written program.
"$IPUSIM" compile matmul:64x64x64 -o mm.elf >/dev/null 2>&1 || { echo "FAIL: matmul does not compile"; exit 1; }
printf '__supervisor:\n    setzi $m0, 3\n1:  brnzdec $m0, 1b\n    exitz $mzero\n    .data\nx:  .word 1, 2\n' > good.S
"$IPUSIM" asm good.S -o good.elf >/dev/null 2>&1 || { echo "FAIL: good.S does not assemble"; exit 1; }
RANDOM_NOTE="ipusim: input 'a' not given (--input a=FILE): f16, uniform random values in [-1, 1)"

# ---------------------------------------------------------------- names and paths before the run
# A name the program does not have: found after loading, before the run
# (no report on stdout, no inputs made up).
fails 1 "ipusim: --output nope: mm.elf has no tensor 'nope'" -- "$IPUSIM" run mm.elf --output "nope=$OUT/x.bin"
out=$("$IPUSIM" run mm.elf --output "nope=$OUT/x.bin" 2>/dev/null)
check "--output of an unknown tensor: the run does not start (no report)" test -z "$out"
fails 1 "ipusim: --output nope: good.elf has no tensor 'nope' (it has no tensor map: use a stream number)" -- \
    "$IPUSIM" run good.elf --output "nope=$OUT/x.bin"
fails 1 "ipusim: --dump: no symbol 'nosuch' in mm.elf" -- "$IPUSIM" run mm.elf --dump nosuch --json "$OUT/r.json"
fails 1 "ipusim: --dump: no symbol 'x' on tile 3 in good.elf" -- "$IPUSIM" run good.elf --dump x@3
fails 1 "ipusim: --input nope: mm.elf has no input tensor 'nope'" -- "$IPUSIM" run mm.elf --input nope=mm.elf
# Output paths that cannot be written: before loading.
fails 1 "ipusim: --trace: /nonexistent/x.json: cannot create: No such file or directory" -- \
    "$IPUSIM" run mm.elf --trace /nonexistent/x.json
fails 1 "ipusim: /nonexistent/x.json: cannot create: No such file or directory" -- \
    "$IPUSIM" run mm.elf --json /nonexistent/x.json
fails 1 "ipusim: $OUT: is a directory" -- "$IPUSIM" run mm.elf --json "$OUT"
fails 1 "ipusim: --output c: $OUT/no/c.bin: cannot create: No such file or directory" -- \
    "$IPUSIM" run mm.elf --output "c=$OUT/no/c.bin"
out=$("$IPUSIM" run mm.elf --json /nonexistent/x.json 2>&1 >/dev/null)
check "--json into a missing folder: no inputs made up, no run" test "$(wc -l <<<"$out")" -eq 1
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$WORK/ro" && chmod a-w "$WORK/ro"
    fails 1 "ipusim: $WORK/ro/r.json: cannot create: Permission denied" -- "$IPUSIM" run good.elf --json "$WORK/ro/r.json"
fi
# compile -o where nothing can be created: before the model is compiled.
fails 1 "ipusim: /proc/x.elf: cannot create: No such file or directory" -- \
    "$IPUSIM" compile matmul:64x64x64 -o /proc/x.elf
fails 1 "ipusim: $OUT: is a directory" -- "$IPUSIM" compile matmul:64x64x64 -o "$OUT"
out=$("$IPUSIM" compile matmul:64x64x64 -o /proc/x.elf 2>&1)
check "compile -o /proc/x.elf: nothing compiled (no report)" test "$(wc -l <<<"$out")" -eq 1
fails 1 "ipusim: /nonexistent/c.json: cannot create: No such file or directory" -- \
    "$IPUSIM" compare good.elf --json /nonexistent/c.json
fails 1 "ipusim: /nonexistent/b.json: cannot create: No such file or directory" -- \
    "$IPUSIM" bench --seconds 0.01 --no-model --no-memory --json /nonexistent/b.json
fails 1 "ipusim: /nonexistent/m.json: cannot create: No such file or directory" -- \
    "$IPUSIM" validate --micro --json /nonexistent/m.json

# ---------------------------------------------------------------- the cycle limit
# One message, exit 3, whatever else was asked for.
only_message 3 "$RANDOM_NOTE
ipusim: tile 0 did not finish within 100 cycles (--max-cycles)" -- \
    "$IPUSIM" run mm.elf --max-cycles 100 --output "0=$OUT/s.bin"
only_message 3 "$RANDOM_NOTE
ipusim: tile 0 did not finish within 100 cycles (--max-cycles)" -- \
    "$IPUSIM" run mm.elf --max-cycles 100 --output "c=$OUT/c.bin" --json "$OUT/r.json" --dump "__supervisor@0:4"
rm -f "$OUT"/*

# ---------------------------------------------------------------- numbers: no sign, no wrap
# usage_error OPTION-MESSAGE -- COMMAND...: exit 2, the message, the usage next.
usage_error() {
    local message=$1
    shift 2
    fails 2 "$message" -- "$@"
    local second
    second=$("$@" 2>&1 | sed -n 2p)
    check "$* -> the usage follows" test "${second#usage: }" != "$second"
}
for v in -5 99999999999999999999 -18446744073709551615 " 5" +5; do
    usage_error "ipusim run: --max-cycles: '$v' is not a positive number" -- "$IPUSIM" run good.elf --max-cycles "$v"
done
usage_error "ipusim debug: --max-cycles: '-1' is not a positive number" -- "$IPUSIM" debug good.elf --max-cycles -1
for v in -1 99999999999999999999 -18446744073709551615; do
    usage_error "ipusim run: --threads: '$v' is not a thread count (1..1024)" -- "$IPUSIM" run good.elf --threads "$v"
    usage_error "ipusim compile: --tiles: '$v' is not a tile count" -- \
        "$IPUSIM" compile matmul:64x64x64 --tiles "$v" -o "$OUT/x.elf"
    usage_error "ipusim validate: --threads: expected a number from 1 to 1024, got '$v'" -- \
        "$IPUSIM" validate --micro --threads "$v"
done
usage_error "ipusim compile: --replicas: not a count of chips (1..64)" -- \
    "$IPUSIM" compile matmul:64x64x64 --replicas -18446744073709551615 -o "$OUT/x.elf"
usage_error "ipusim compile: --pipeline: not a count of chips (1..64)" -- \
    "$IPUSIM" compile matmul:64x64x64 --pipeline 99999999999999999999 -o "$OUT/x.elf"
usage_error "ipusim run: --trace-tiles: expected TILE or FIRST-LAST, got '-4294967295'" -- \
    "$IPUSIM" run good.elf --trace-tiles -4294967295
usage_error "ipusim run: --dump: bad count in 'x:99999999999999999999'" -- \
    "$IPUSIM" run good.elf --dump x:99999999999999999999
usage_error "ipusim run: --dump: bad tile in 'x@-4294967295'" -- "$IPUSIM" run good.elf --dump x@-4294967295
usage_error "ipusim compare: --items: 'inf' is not a positive number" -- "$IPUSIM" compare good.elf --items inf
usage_error "ipusim compare: --input expects STREAM=FILE, got '-18446744073709551615=good.elf'" -- \
    "$IPUSIM" compare good.elf --input -18446744073709551615=good.elf
usage_error "ipusim bench: --seq: '-2' is not an even sequence length (2..512)" -- "$IPUSIM" bench --seq -2
usage_error "ipusim bench: --seconds: '' is not a duration in seconds (0..3600]" -- "$IPUSIM" bench --seconds ''
usage_error "ipusim debug: --input: expected STREAM=FILE or TENSOR=FILE, got 'a'" -- "$IPUSIM" debug missing.elf --input a
# A stream number that wraps round is not a stream: read as a tensor name.
fails 1 "ipusim: --output -18446744073709551615: mm.elf has no tensor '-18446744073709551615'" -- \
    "$IPUSIM" run mm.elf --output "-18446744073709551615=$OUT/x.bin"

# ---------------------------------------------------------------- standard output that cannot be written
if [ -w /dev/full ]; then
    NOSPACE="ipusim: cannot write standard output: No space left on device"
    for cmd in "run good.elf" "run mm.elf --max-cycles 100" "machines" "machines --show gc2" "--help" "--version" \
               "run --help" "disasm good.elf" "compile matmul:8x8x8 -o $OUT/m.elf" "debug good.elf --batch"; do
        # shellcheck disable=SC2086
        err=$("$IPUSIM" $cmd 2>&1 >/dev/full </dev/null)
        rc=$?
        want=1
        [ "$cmd" = "disasm good.elf" ] && NOSPACE_NOW="ipusim: error writing the disassembly" || NOSPACE_NOW=$NOSPACE
        check "ipusim $cmd > /dev/full: exit $rc, says '$NOSPACE_NOW'" \
            test "$rc" -eq "$want" -a "$(tail -n 1 <<<"$err")" = "$NOSPACE_NOW"
    done
    rm -f "$OUT"/*
fi

# ---------------------------------------------------------------- one tensor or one file twice
usage_error "ipusim run: --input a: given twice (mm.elf and good.elf)" -- \
    "$IPUSIM" run mm.elf --input a=mm.elf --input a=good.elf
usage_error "ipusim run: --input 3: given twice (mm.elf and good.elf)" -- \
    "$IPUSIM" run good.elf --input 3=mm.elf --input 0x3=good.elf
usage_error "ipusim run: --json and --trace write the same file '$OUT/../out/r.json'" -- \
    "$IPUSIM" run mm.elf --json "$OUT/r.json" --trace "$OUT/../out/r.json"
usage_error "ipusim run: --output c and --output 0 write the same file './out/c.bin'" -- \
    "$IPUSIM" run mm.elf --output "c=out/c.bin" --output "0=./out/c.bin"
usage_error "ipusim run: --output a and --output c write the same file 'out/x.bin'" -- \
    "$IPUSIM" run mm.elf --output "a=out/x.bin" --output "c=out/x.bin"
ln -s "$OUT" outlink
usage_error "ipusim run: --json and --output c write the same file 'outlink/r.json'" -- \
    "$IPUSIM" run mm.elf --json "$OUT/r.json" --output "c=outlink/r.json"
printf 'old\n' > old.json && ln old.json hard.json
usage_error "ipusim run: --json and --trace write the same file 'hard.json'" -- \
    "$IPUSIM" run mm.elf --json old.json --trace hard.json
usage_error "ipusim compare: --json and --chart write the same file 'out/c.json'" -- \
    "$IPUSIM" compare good.elf --json out/c.json --chart out/c.json
usage_error "ipusim bench: --json and --record write the same file 'out/b.json'" -- \
    "$IPUSIM" bench --json out/b.json --record ./out/b.json

# ---------------------------------------------------------------- compile options against the machine
fails 1 "ipusim: matmul:64x64x64: --tiles 2000: a chip of machine gc200 has 1472 tiles" -- \
    "$IPUSIM" compile matmul:64x64x64 --tiles 2000 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:64x64x64: --tiles 1300: a chip of machine gc2 has 1216 tiles" -- \
    "$IPUSIM" compile matmul:64x64x64 --machine gc2 --tiles 1300 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:64x64x64: --tiles 2000: a chip of machine gc200 has 1472 tiles" -- \
    "$IPUSIM" validate --model matmul:64x64x64 --tiles 2000
fails 1 "ipusim: nosuch.onnx: 5 replicas on a machine of 4 chips" -- \
    "$IPUSIM" compile nosuch.onnx --machine m2000 --replicas 5 -o "$OUT/x.elf"

# ---------------------------------------------------------------- ONNX node tests: none there
mkdir -p notests/other
fails 1 "ipusim: notests: no ONNX node tests (test_* folders) found" -- "$IPUSIM" validate --onnx-tests notests
mkdir -p notests/test_x
fails 1 "ipusim: validate --onnx-tests: no test in notests matches 'zzz'" -- \
    "$IPUSIM" validate --onnx-tests notests --filter zzz

# ---------------------------------------------------------------- built-in model specs
fails 1 "ipusim: matmul:-1x2x2: M is -1: a size must be a positive integer" -- \
    "$IPUSIM" compile matmul:-1x2x2 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:2x2x-3: N is -3: a size must be a positive integer" -- \
    "$IPUSIM" compile matmul:2x2x-3 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:99999999999x2x2: M is 99999999999: at most 1048576 for a built-in model" -- \
    "$IPUSIM" compile matmul:99999999999x2x2 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:1x1048576x1024: K x N is 1073741824 weights: at most 268435456 for a built-in model" -- \
    "$IPUSIM" compile matmul:1x1048576x1024 -o "$OUT/x.elf"
fails 1 "ipusim: matmul:+2x2x2: expected matmul:MxKxN[:f16|:f32] with M, K, N positive" -- \
    "$IPUSIM" compile matmul:+2x2x2 -o "$OUT/x.elf"
fails 1 "ipusim: bert-base:s0: expected bert-base[:sSEQ][:lLAYERS] (SEQ even, 2..512; LAYERS 1..24): SEQ is 0" -- \
    "$IPUSIM" compile bert-base:s0 -o "$OUT/x.elf"
fails 1 "ipusim: bert-large:s8:l-2: expected bert-large[:sSEQ][:lLAYERS] (SEQ even, 2..512; LAYERS 1..24): LAYERS is -2" -- \
    "$IPUSIM" compile bert-large:s8:l-2 -o "$OUT/x.elf"
fails 1 "ipusim: resnet50:b0: expected resnet50[:bN][:sSIZE] with a batch N of 1..64 and an image SIZE a multiple of 32 in 32..224: N is 0" -- \
    "$IPUSIM" compile resnet50:b0 -o "$OUT/x.elf"
fails 1 "ipusim: resnet50:conv1:b-1: expected resnet50:LAYER[:bN] with a batch N of 1..64: N is -1" -- \
    "$IPUSIM" compile resnet50:conv1:b-1 -o "$OUT/x.elf"

# ---------------------------------------------------------------- --dump past tile memory: nothing printed
fails 1 "ipusim: --dump x: 99999999999 elements of x32 from 0x80000 run past the end of tile 0's memory (0x4c000-0xe7fff): at most 106496" -- \
    "$IPUSIM" run good.elf --dump x:99999999999
out=$("$IPUSIM" run good.elf --dump x:99999999999 2>/dev/null)
check "--dump x:99999999999: nothing printed" test -z "$out"

# ---------------------------------------------------------------- figures labelled as what they count
"$IPUSIM" compile matmul:8x8x8:f32 -o mm32.elf >/dev/null 2>&1
expect 0 "input 'a' not given \(--input a=FILE\): f32, uniform random values in \[-1, 1\)" -- "$IPUSIM" run mm32.elf
expect 0 "MB received by tiles from other tiles a replica \(a broadcast counted at each receiver\)" -- \
    "$IPUSIM" compile matmul:8x8x8 -o "$WORK/m8.elf"
expect 0 " amp_issued_% exch_sent_bytes " -- "$IPUSIM" run mm32.elf
expect 0 "amp_issued_macs +amp_issued_%" -- "$IPUSIM" run good.elf
"$IPUSIM" run mm32.elf --json r.json >/dev/null 2>&1
check "--json units: exchange_bytes and amp_utilisation say what they count" \
    grep -q '"exchange_bytes":.*a broadcast counted once' r.json
# The model's MACs (8 x 8 x 8 = 512), recorded by compile, beside the AMP's issued ones
expect 0 "^AMP: [0-9.e+]+ MACs issued, [0-9.]+% of the peak; matmul:8x8x8:f32 asks for 512 \(its matmuls and convolutions\): useful [0-9.]+% of the peak, [0-9.]+ MACs issued for each" -- \
    "$IPUSIM" run mm32.elf
check "--json: amp.model_macs and useful_utilisation = issued x model / issued MACs" python3 -c '
import json, sys
a = json.load(open("r.json"))["amp"]
sys.exit(not (a["model_macs"] == 512 and a["model"] == "matmul:8x8x8:f32" and a["issued_macs"] >= 512 and
              abs(a["useful_utilisation"] - a["issued_utilisation"] * 512 / a["issued_macs"]) < 1e-12))'
# Every JSON file a command writes is one document ending in a newline (one writer, cli_write_json)
"$IPUSIM" machines --json m.json >/dev/null 2>&1
"$IPUSIM" compare mm32.elf --machines gc200,bow --json c.json >/dev/null 2>&1
for f in r.json m.json c.json; do
    check "$f ends in a newline" test "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n'
    check "$f is one JSON document" python3 -c "import json; json.load(open('$f'))"
done
# An assembled program records no model: the AMP line has no useful figure
check "no model MACs without a record" bash -c "! \"$IPUSIM\" run good.elf 2>&1 | grep -q 'asks for'"

finish
