#!/usr/bin/env bash
# The catalogue of bad inputs (tests/BAD_INPUTS.md) through the command
# line: each ends in one clear message and a non-zero exit status (1: bad
# input or option, 2: bad command line, 3: simulated fault), never in a
# crash, and leaves no output file, not even a temporary.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every output a failing command is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

# second_line_is LINE -- COMMAND...: the line after the message (a fault's
# instruction, a usage line).
second_line_is() {
    local line=$1
    shift 2
    local got
    got=$("$@" 2>&1 | sed -n 2p)
    if [ "$got" != "$line" ]; then
        echo "FAIL: $* -> second line '$got', expected '$line'"
        FAILED=$((FAILED + 1))
        return
    fi
    PASSED=$((PASSED + 1))
}

asm_ok() { # asm_ok NAME SOURCE: NAME.S and NAME.elf in $WORK
    printf '%b' "$2" > "$1.S"
    "$IPUSIM" asm "$1.S" -o "$1.elf" >/dev/null 2>&1 || { echo "FAIL: $1.S does not assemble"; FAILED=$((FAILED + 1)); }
}

patch_byte() { # patch_byte FILE OFFSET HEXBYTE
    printf "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ---------------------------------------------------------------- executables
asm_ok good '__supervisor:\n    setzi $m0, 3\n1:  brnzdec $m0, 1b\n    exitz $mzero\n    .data\nx:  .word 1, 2\n'
size=$(stat -c %s good.elf)

: > empty.elf
fails 1 "ipusim: empty.elf: empty file" -- "$IPUSIM" run empty.elf --json "$OUT/r.json"
printf 'hello\n' > text.elf
fails 1 "ipusim: text.elf: not an ELF file (no ELF magic number)" -- "$IPUSIM" run text.elf
fails 1 "ipusim: missing.elf: cannot open: No such file or directory" -- "$IPUSIM" run missing.elf
fails 1 "ipusim: $OUT: is a directory" -- "$IPUSIM" run "$OUT"
head -c 10 good.elf > cut10.elf
fails 1 "ipusim: cut10.elf: truncated: the ELF identification needs 16 bytes but the file has 10 bytes" -- \
    "$IPUSIM" run cut10.elf
head -c 40 good.elf > cut40.elf
fails 1 "ipusim: cut40.elf: truncated: the ELF header needs 64 bytes but the file has 40 bytes" -- \
    "$IPUSIM" disasm cut40.elf -o "$OUT/x.S"
shoff=$(od -An -t u8 -j 40 -N 8 good.elf | tr -d ' ')
head -c 100 good.elf > cut100.elf
fails 1 "ipusim: cut100.elf: truncated: the section header table at byte $shoff is past the end of the file (100 bytes)" -- \
    "$IPUSIM" run cut100.elf --json "$OUT/r.json"
head -c $((size - 1)) good.elf > cutend.elf
fails 1 "ipusim: cutend.elf: truncated: the section header table ends at byte $size but the file has $((size - 1)) bytes" -- \
    "$IPUSIM" run cutend.elf
# A damaged model record (compile's .ipusim.model section): refused before the run
"$IPUSIM" compile matmul:64x64x64 -o model_ok.elf >/dev/null 2>&1 || echo "FAIL: compile matmul:64x64x64"
python3 -c '
import sys
b = open("model_ok.elf", "rb").read()
assert b.count(b"model_macs=262144\n") == 1
open("model_bad.elf", "wb").write(b.replace(b"model_macs=262144\n", b"model_macs=26214x\n"))'
fails 1 "ipusim: model_bad.elf: section .ipusim.model: line 2: model_macs: '26214x' is not a decimal count" -- \
    "$IPUSIM" run model_bad.elf --json "$OUT/r.json"
# Every other length, in steps: exit 1 with the file named, never a crash.
bad_lengths=0
for ((n = 0; n < size; n += 7)); do
    head -c "$n" good.elf > cut.elf
    msg=$("$IPUSIM" run cut.elf 2>&1)
    rc=$?
    if [ "$rc" -ne 1 ] || [[ "$msg" != "ipusim: cut.elf: "* ]]; then
        bad_lengths=$((bad_lengths + 1))
        echo "  truncated at $n: exit $rc: $msg" | head -2
    fi
done
check "every truncation ends in exit 1 naming the file" test "$bad_lengths" -eq 0

# Another machine's ELF: ipusim itself.
machine_no=$(od -An -t u2 -j 18 -N 2 "$IPUSIM" | tr -d ' ')
fails 1 "ipusim: $IPUSIM: not an ipusim executable (e_machine $machine_no, expected 0x4950)" -- "$IPUSIM" run "$IPUSIM"
cp good.elf x86.elf && patch_byte x86.elf 18 3e && patch_byte x86.elf 19 00
fails 1 "ipusim: x86.elf: not an ipusim executable (e_machine 62, expected 0x4950)" -- "$IPUSIM" disasm x86.elf
cp good.elf elf32.elf && patch_byte elf32.elf 4 01
fails 1 "ipusim: elf32.elf: ELF32 file; ipusim executables are ELF64" -- "$IPUSIM" run elf32.elf
cp good.elf msb.elf && patch_byte msb.elf 5 02
fails 1 "ipusim: msb.elf: big-endian ELF file; ipusim executables are little-endian" -- "$IPUSIM" run msb.elf
cp good.elf v2.elf && patch_byte v2.elf 48 02
fails 1 "ipusim: v2.elf: executable format version 2, this ipusim reads version 1" -- "$IPUSIM" run v2.elf
cp good.elf noshdr.elf && patch_byte noshdr.elf 58 28
fails 1 "ipusim: noshdr.elf: section header size 40, expected 64" -- "$IPUSIM" run noshdr.elf

# ---------------------------------------------------------------- assembly
# Each: the message, exit 1, and neither the output nor a temporary.
asm_fails() { # asm_fails NAME SOURCE MESSAGE
    printf '%b' "$2" > "$1.S"
    fails 1 "$3" -- "$IPUSIM" asm "$1.S" -o "$OUT/$1.elf"
}
asm_fails syntax '    add $m0, $m1,\n' "syntax.S:1:18: error: expected an operand after ',', found end of line"
asm_fails comma '    add $m0 $m1 $m2\n' \
    "comma.S:1:13: error: expected ',' or end of statement after operand 1 of 'add', found '\$m1'"
asm_fails string '    .ascii "abc\n' "string.S:1:12: error: unterminated string"
asm_fails mnemonic '    f32addd $a0, $a1, $a2\n' "mnemonic.S:1:5: error: unknown mnemonic 'f32addd' (did you mean 'f32add'?)"
asm_fails imm_u20 '    setzi $m0, 0x100000\n' \
    "imm_u20.S:1:16: error: immediate 1048576 out of range for setzi: unsigned 20-bit (0..1048575)"
asm_fails imm_s16 '    add $m0, $m1, 70000\n' \
    "imm_s16.S:1:19: error: immediate 70000 out of range for add: signed 16-bit (-32768..32767)"
asm_fails bundle '    nop\n    { ld32 $a0, $mzero, $mzero, 0 ; f32add $a1, $a2, $a3 }\n' \
    "bundle.S:2:5: error: bundle at 0x4c004 is not 8-byte aligned"
asm_fails rpt_align '    nop\n    nop\n    rpt $m0, 0\n    nop\n' \
    "rpt_align.S:3:5: error: 'rpt' body at 0x4c00c is not 8-byte aligned (the rpt must be at an address 4 past a multiple of 8)"
asm_fails rpt_ctrl '    nop\n    rpt $m0, 0\n    { br $m1 ; fnop }\n' \
    "rpt_ctrl.S:3:7: error: 'rpt' body may not contain control instruction 'br' (the rpt is at line 2)"
asm_fails supervisor '    .supervisor\n    f32add $a0, $a1, $a2\n' \
    "supervisor.S:2:5: error: 'f32add' cannot be executed by the supervisor (.supervisor is in effect)"
asm_fails big_data '__supervisor:\n exitz $mzero\n .data\nbig:\n .space 700000\n' \
    "big_data.S:5:9: error: '.space' size 700000 out of range (0..638976)"
asm_fails big_code '.rept 60000\n nop\n.endr\n' \
    "big_code.S:2:2: error: section .text (240000 bytes) does not fit in the free region 0 of tile 0"
printf '    nop\n    .include "cycle_b.S"\n' > cycle_a.S
printf '    .include "cycle_a.S"\n' > cycle_b.S
fails 1 "cycle_b.S:1:5: error: include cycle: 'cycle_a.S' -> 'cycle_b.S' -> 'cycle_a.S'" -- \
    "$IPUSIM" asm cycle_a.S -o "$OUT/cycle.elf"
fails 1 "missing.S: error: cannot read: No such file or directory" -- "$IPUSIM" asm missing.S -o "$OUT/m.elf"
# Several errors: one line each, the first first.
printf '    foo\n    nop\n    bar $m0\n' > two.S
fails 1 "two.S:1:5: error: unknown mnemonic 'foo'" -- "$IPUSIM" asm two.S -o "$OUT/two.elf"
second_line_is "two.S:3:5: error: unknown mnemonic 'bar' (did you mean 'br'?)" -- "$IPUSIM" asm two.S -o "$OUT/two.elf"
# A failed assembly leaves an existing output as it was.
printf 'old\n' > "$WORK/keep.elf"
"$IPUSIM" asm mnemonic.S -o "$WORK/keep.elf" >/dev/null 2>&1
check "failed asm leaves the old output untouched" test "$(cat "$WORK/keep.elf")" = old
# Output that cannot be written.
fails 1 "ipusim: $OUT/no/such/dir/x.elf: cannot create: No such file or directory" -- \
    "$IPUSIM" asm good.S -o "$OUT/no/such/dir/x.elf"
mkdir -p "$WORK/adir.elf"
fails 1 "ipusim: $WORK/adir.elf: is a directory" -- "$IPUSIM" asm good.S -o "$WORK/adir.elf"
check "a failed rename leaves no temporary" test -z "$(ls -A "$WORK/adir.elf")"
check "a failed rename leaves no temporary beside it" bash -c "! ls '$WORK' | grep -q 'adir.elf.tmp'"

# ---------------------------------------------------------------- loading
asm_ok big '__supervisor:\n exitz $mzero\n .data\nbig:\n .space 420000\n'
fails 1 "ipusim: big.elf: tile 0: section .text (4 bytes at 0x4c000) does not fit in tile memory (0x60000-0x9ffff): needs up to 0x4c003" -- \
    "$IPUSIM" run big.elf --machine gc2 --json "$OUT/r.json"
"$IPUSIM" asm big.S --machine gc2 -o big_gc2.elf >/dev/null 2>&1 || { echo "FAIL: big.S does not assemble for gc2"; FAILED=$((FAILED + 1)); }
fails 1 "ipusim: big_gc2.elf: tile 0: section .data (420000 bytes at 0x80000) does not fit in tile memory (0x60000-0x9ffff): needs up to 0xe689f" -- \
    "$IPUSIM" run big_gc2.elf --machine gc2 --json "$OUT/r.json"
asm_ok far '    .tile 1500\n__supervisor:\n    exitz $mzero\n'
fails_like 1 "^ipusim: far.elf: tile 1500 is beyond the 1472 tiles of machine gc200( |$)" -- \
    "$IPUSIM" run far.elf --json "$OUT/r.json"

# ---------------------------------------------------------------- machine options
fails 1 "ipusim: machine parameter tile_clock_hz = 0 is out of range (1e+08..4e+09 Hz)" -- \
    "$IPUSIM" run good.elf --set tile_clock_hz=0 --json "$OUT/r.json"
fails 1 "ipusim: --set tile_clock_hz: 'fast' is not a number" -- "$IPUSIM" run good.elf --set tile_clock_hz=fast
fails 1 "ipusim: --set expects name=value, got 'tile_clock_hz'" -- "$IPUSIM" run good.elf --set tile_clock_hz
fails 1 "ipusim: unknown machine parameter 'nope' (\`ipusim machines\` lists them)" -- "$IPUSIM" machines --set nope=1
fails 1 "ipusim: unknown machine 'gc300' (known: gc2, gc200, bow, m2000, bow2000, ipu-pod16, bow-pod16, ipu-pod64, bow-pod64, ipu-pod128, bow-pod128, ipu-pod256, bow-pod256)" -- \
    "$IPUSIM" machines --show gc300 --json "$OUT/m.json"
fails 1 "ipusim: machine parameter tile_memory_bytes = 1000 is out of range (65536..1.04858e+06 B)" -- \
    "$IPUSIM" run good.elf --set tile_memory_bytes=1000
# Tile memory comes in 16 KiB pages: a size between them is a user error.
out=$("$IPUSIM" run good.elf --set tile_memory_bytes=65537 2>&1)
rc=$?
check "tile_memory_bytes=65537 is refused with exit 1, not a panic" \
    bash -c "[ $rc -eq 1 ] && ! grep -q panic <<<'$out' && grep -q 'tile_memory_bytes' <<<'$out'"
printf '{"preset": "bow", "params": {"tile_clock_hz": -1}}' > neg.json
fails 1 "ipusim: neg.json: machine parameter tile_clock_hz = -1 is out of range (1e+08..4e+09 Hz)" -- \
    "$IPUSIM" run good.elf --config neg.json
printf '{"preset": ' > broken.json
fails 1 "ipusim: broken.json:1:12: not valid JSON (truncated?)" -- \
    "$IPUSIM" run good.elf --config broken.json
printf '{"extra": 1}' > extra.json
fails 1 "ipusim: extra.json: unknown key 'extra' (expected \"preset\" and \"params\")" -- "$IPUSIM" machines --config extra.json
fails 1 "ipusim: nosuch.json: cannot open: No such file or directory" -- "$IPUSIM" run good.elf --config nosuch.json
fails 2 "ipusim run: --max-cycles: '0' is not a positive number" -- "$IPUSIM" run good.elf --max-cycles 0
fails 2 "ipusim run: --threads: '0' is not a thread count (1..1024)" -- "$IPUSIM" run good.elf --threads 0
fails 2 "ipusim bench: --seconds: '0' is not a duration in seconds (0..3600]" -- \
    "$IPUSIM" bench --seconds 0 --json "$OUT/b.json"
# A record to compare with is checked before the benchmarks run.
fails 1 "ipusim: nosuch.json: cannot open: No such file or directory" -- "$IPUSIM" bench --compare nosuch.json
fails 1 "ipusim: extra.json: not an ipusim bench record (written by \`ipusim bench --record\`)" -- \
    "$IPUSIM" bench --compare extra.json --record "$OUT/b.json"
fails 2 "ipusim run: unknown option '--bogus'" -- "$IPUSIM" run good.elf --bogus
second_line_is "usage: ipusim run PROG.elf [--machine NAME] [--set PARAM=VALUE]... [--config FILE.json]" -- \
    "$IPUSIM" run good.elf --bogus
fails 2 "ipusim: unknown command 'frobnicate'" -- "$IPUSIM" frobnicate

# ---------------------------------------------------------------- simulated faults
# Exit 3; the message names tile, context, pc, source line and symbol; the
# instruction follows on the next line.
prologue='__supervisor:\n    setzi   $m1, worker\n    setzi   $m2, 0x80000\n    run     $m1, $m2, $mzero\n    sync    0\n    exitz   $mzero\n    .align 8\nworker:\n'
fault() { # fault NAME SOURCE MESSAGE INSTRUCTION
    asm_ok "$1" "$2"
    fails 3 "ipusim: simulated exception: $3" -- "$IPUSIM" run "$1.elf"
    [ -z "$4" ] || second_line_is "    $4" -- "$IPUSIM" run "$1.elf"
}
fault bad_address "$prologue"'    ld32    $m0, $mzero, $mzero, 0\n    exitz   $mzero\n' \
    "tile 0, worker 1, pc 0x4c018 (bad_address.S:9, in worker+0x0): bad address: ld32 at 0x0: address outside tile memory (0x4c000-0xe7fff)" \
    'ld32 $m0, $mzero, $mzero, 0'
fault misaligned "$prologue"'    setzi   $m1, 0x80002\n    ld32    $m0, $m1, $mzero, 0\n    exitz   $mzero\n' \
    "tile 0, worker 1, pc 0x4c01c (misaligned.S:10, in worker+0x4): misaligned access: ld32 at 0x80002: address not 4-byte aligned" \
    'ld32 $m0, $m1, $mzero, 0'
fault conflict "$prologue"'    add     $m0, $m13, 0\n    add     $m1, $m13, 16\n    ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0\n    exitz   $mzero\n' \
    "tile 0, worker 1, pc 0x4c020 (conflict.S:11, in worker+0x8): memory conflict: ld2x64pace at 0x80000 and 0x80010: both accesses hit memory element 13" \
    'ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0b0000'
fault ld128_region0 "$prologue"'    setzi   $m0, 0x50000\n    ld128   $a0:3, $m0, $mzero, 0\n    exitz   $mzero\n' \
    "tile 0, worker 1, pc 0x4c01c (ld128_region0.S:10, in worker+0x4): access not allowed in region: ld128 at 0x50000: a 128-bit load must be in the interleaved region 1 (from 0x80000)" \
    'ld128 $a0:3, $m0, $mzero, 0'
fault illegal '__supervisor:\n    .word 0x7f7f7f7f\n    exitz $mzero\n' \
    "tile 0, supervisor, pc 0x4c000 (in __supervisor+0x0): invalid instruction: no instruction has this encoding" \
    '.word 0x7f7f7f7f // invalid instruction'
fault worker_only '__supervisor:\n    f32add $a0, $a1, $a2\n    exitz $mzero\n' \
    "tile 0, supervisor, pc 0x4c000 (worker_only.S:2, in __supervisor+0x0): invalid instruction: f32add cannot run on the supervisor" \
    'f32add $a0, $a1, $a2'
fault trap '__supervisor:\n    trap 5\n    exitz $mzero\n' \
    "tile 0, supervisor, pc 0x4c000 (trap.S:2, in __supervisor+0x0): breakpoint: trap 5" 'trap 5'
# An exchange from outside tile memory.  (The lone-tile case, xsend with no
# chip program, is in test_bad_input.c: `ipusim run` always runs a chip.)
asm_ok exchange '__supervisor:\n    xsend $m0, $m1, $m2\n    exitz $mzero\n'
fails_like 3 "^ipusim: simulated exception: tile 0, supervisor, pc 0x4c000 \(exchange.S:2, in __supervisor\+0x0\): (bad address|bad exchange): xsend" -- \
    "$IPUSIM" run exchange.elf
second_line_is '    xsend $m0, $m1, $m2' -- "$IPUSIM" run exchange.elf
fault fetch '__supervisor:\n    setzi $m0, 0x60000\n    br $m0\n' \
    "tile 0, supervisor, pc 0x60000: instruction fetch: pc 0x60000 is outside the tile's code (0x4c000-0x4c007)" ''
fault workers_left '__supervisor:\n    setzi $m1, worker\n    run $m1, $mzero, $mzero\n    exitz $mzero\n    .align 8\nworker:\n1:  bri 1b\n' \
    "tile 0, supervisor, pc 0x4c008 (workers_left.S:4, in __supervisor+0x8): bad worker control: exitz: the supervisor ends the program while worker 1 still runs (sync 0 first)" \
    'exitz $mzero'
asm_ok forever '__supervisor:\n1:  bri 1b\n'
fails 3 "ipusim: tile 0 did not finish within 1000 cycles (--max-cycles)" -- "$IPUSIM" run forever.elf --max-cycles 1000

# An interrupted run leaves the old report as it was, and no temporary.
printf 'old report\n' > "$OUT/report.json"
timeout -s INT 1 "$IPUSIM" run forever.elf --json "$OUT/report.json" >/dev/null 2>&1
rc=$?
check "an interrupted run was interrupted (exit $rc)" test "$rc" -ne 0
check "an interrupted run leaves the old report" test "$(cat "$OUT/report.json")" = "old report"
check "an interrupted run leaves no temporary" test "$(ls -A "$OUT")" = report.json
rm -f "$OUT/report.json"

# A faulting run still writes its report, whole, saying so.
"$IPUSIM" run trap.elf --json "$OUT/fault.json" >/dev/null 2>&1
check "a faulting run's report is complete and says fault" grep -q '"status":.*"fault"' "$OUT/fault.json"
check "...and leaves no temporary" test "$(ls -A "$OUT")" = fault.json
rm -f "$OUT/fault.json"

finish
