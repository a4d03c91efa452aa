#!/usr/bin/env bash
# `ipusim run` on system programs: the per-chip and per-superstep report,
# host streams through files, --json, --trace, --threads, and the errors a
# BSP program can stop with.
source "$(dirname "$0")/lib.sh"

# Tile 0 reads 32 bytes from host stream 0, sends them to tile 1 (sync 1
# between), tile 1 writes them to host stream 1.
cat > "$WORK/echo.S" <<'ASM'
    .tile 0
__supervisor:
    setzi   $m0, buf
    setzi   $m1, 32
    setzi   $m2, 0x80000
    shl     $m2, $m2, 12            // host stream 0
    xrecv   $m0, $m1, $m2
    sync    1
    setzi   $m2, 1
    xsend   $m0, $m1, $m2
    sync    1
    exitz   $mzero
    .data
buf: .space 32

    .tile 1
__supervisor:
    sync    1
    setzi   $m0, buf
    setzi   $m1, 32
    setzi   $m2, 0
    xrecv   $m0, $m1, $m2
    sync    1
    setzi   $m2, 0x80000
    shl     $m2, $m2, 12
    or      $m2, $m2, 1             // host stream 1
    xsend   $m0, $m1, $m2
    sync    3
    exitz   $mzero
    .data
buf: .space 32
ASM
expect 0 "" -- "$IPUSIM" asm "$WORK/echo.S" -o "$WORK/echo.elf"
printf 'thirty-two bytes of host input!!' > "$WORK/in.bin"
expect 0 "chip +tiles +steps +cycles" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --output 1="$WORK/out.bin"
check "host output equals host input" cmp -s "$WORK/in.bin" "$WORK/out.bin"
expect 0 "ended_by" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --supersteps
expect 0 "host_bytes" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --machine bow
expect 0 "thirty-two|0x72696874" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --dump buf@1:2:x32

# The same results on 1 and 2 host threads: the JSON reports differ only
# in the host's own figures.
expect 0 "\(1 host thread, " -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --threads 1 --json "$WORK/t1.json"
expect 0 "2 host threads" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --threads 2 --json "$WORK/t2.json"
strip() { grep -Ev 'host_seconds|per_host_second|host_threads|tile_batches' "$1"; }
check "--threads 1 and 2 give the same report" diff <(strip "$WORK/t1.json") <(strip "$WORK/t2.json")
check "--json has supersteps with units" grep -q '"exchange_cycles"' "$WORK/t1.json"
check "--json names its units" grep -q '"\*_ps":' "$WORK/t1.json"
check "--json has the host bytes" grep -q '"host_bytes":	64' "$WORK/t1.json"

# The trace: Chrome trace event JSON, a process per chip.
expect 0 "" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/in.bin" --trace "$WORK/trace.json" --trace-tiles 0-1
check "trace is trace event JSON" grep -q '"traceEvents"' "$WORK/trace.json"
check "trace has a chip process" grep -q '"process_name".*"chip 0' "$WORK/trace.json"
check "trace has supersteps" grep -q '"name":"superstep 1","ph":"X"' "$WORK/trace.json"
check "trace has the running-tiles counter" grep -q '"running tiles","ph":"C"' "$WORK/trace.json"
check "trace has host transfers" grep -q '"name":"host in 0"' "$WORK/trace.json"
check "trace has tile tracks" grep -q '"name":"tile 1"' "$WORK/trace.json"
check "trace closes its array" bash -c "tail -1 '$WORK/trace.json' | grep -q '^\]}'"
if command -v python3 > /dev/null; then
    check "trace parses as JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/trace.json"
    check "report parses as JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/t1.json"
fi

# Errors.
expect 3 "xrecv of 32 bytes from host stream 0: no data was given for input stream 0" -- "$IPUSIM" run "$WORK/echo.elf"
expect 3 "only 4 bytes are left" -- bash -c "printf abcd > '$WORK/short.bin'; '$IPUSIM' run '$WORK/echo.elf' --input 0='$WORK/short.bin'"
expect 1 "--input 0: .*nosuch.bin" -- "$IPUSIM" run "$WORK/echo.elf" --input 0="$WORK/nosuch.bin"
expect 2 "--input: expected STREAM=FILE" -- "$IPUSIM" run "$WORK/echo.elf" --input "$WORK/in.bin"
expect 2 "--trace-tiles: expected TILE or FIRST-LAST" -- "$IPUSIM" run "$WORK/echo.elf" --trace-tiles 5-2

printf '.tile 0\n__supervisor:\n sync 1\n exitz $mzero\n.tile 3\n__supervisor:\n exitz $mzero\n' > "$WORK/dead.S"
expect 0 "" -- "$IPUSIM" asm "$WORK/dead.S" -o "$WORK/dead.elf"
expect 3 "deadlock: sync 1 \(chip 0\) waits for 1 of 2 tiles.*" -- "$IPUSIM" run "$WORK/dead.elf"
expect 3 "tile 3 ended its program at pc 0x4c000 \(.*dead.S:7\)" -- "$IPUSIM" run "$WORK/dead.elf"

# Four chips: one row each.
printf '' > "$WORK/four.S"
for c in 0 1 2 3; do
    printf '.tile %d\n__supervisor:\n setzi $m0, %d\n1: brnzdec $m0, 1b\n sync 2\n exitz $mzero\n' $((c * 1472)) $((100 * c + 50)) >> "$WORK/four.S"
done
expect 0 "" -- "$IPUSIM" asm "$WORK/four.S" -o "$WORK/four.elf"
expect 0 "4 chips x 1472 tiles.*4 tiles with code on 4 chips" -- "$IPUSIM" run "$WORK/four.elf" --machine m2000
expect 0 "   3      1     2 " -- "$IPUSIM" run "$WORK/four.elf" --machine bow2000
expect 1 "tile 1472 is beyond the 1472 tiles of machine gc200 \(1 chip x 1472 tiles\)" -- "$IPUSIM" run "$WORK/four.elf"

# The validation microbenchmarks keep assembling and keep their figures
# (the numbers are worked out in each file's header).
M="$(dirname "$0")/../../validation/micro"
for f in exchange_one_tile exchange_all_tiles exchange_latency sync_cost sync_cost_external; do
    expect 0 "" -- "$IPUSIM" asm "$M/$f.S" -o "$WORK/$f.elf"
done
# 64 KiB at 4 B/cycle: superstep 1 is 104 + 59 + 16384 + 90 = 16637 cycles.
expect 0 "   0     1   sync 1           91      16637 " -- "$IPUSIM" run "$WORK/exchange_one_tile.elf"
expect 0 "^  16728$" -- "$IPUSIM" run "$WORK/exchange_one_tile.elf" --dump done@1:1:u32
# Latency: arrival = 105 + latency: 59 in an island, 165 to the last column.
expect 0 "^  164$" -- "$IPUSIM" run "$WORK/exchange_latency.elf" --dump arrived@1:1:u32
expect 0 "^  186$" -- "$IPUSIM" run "$WORK/exchange_latency.elf" --dump arrived@44:1:u32
expect 0 "^  226$" -- "$IPUSIM" run "$WORK/exchange_latency.elf" --dump arrived@92:1:u32
expect 0 "^  270$" -- "$IPUSIM" run "$WORK/exchange_latency.elf" --dump arrived@1471:1:u32
# 100 barriers of 91 cycles and the exitz.
expect 0 "   0   1472   101         9101 " -- "$IPUSIM" run "$WORK/sync_cost.elf"
expect 0 "   3      1   101         4101 " -- "$IPUSIM" run "$WORK/sync_cost_external.elf" --machine m2000
expect 0 "   3      1   101         5701 " -- "$IPUSIM" run "$WORK/sync_cost_external.elf" --machine bow2000
expect 0 "exch_sent_bytes" -- "$IPUSIM" run "$WORK/exchange_all_tiles.elf"

finish
