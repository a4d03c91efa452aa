#!/usr/bin/env bash
# The subcommands as a user drives them: assemble, disassemble, run, list
# machines, and the errors each gives for bad input.
source "$(dirname "$0")/lib.sh"

cat > "$WORK/prog.S" <<'ASM'
    .text
__supervisor:
    setzi   $m1, worker
    setzi   $m2, result
    runall  $m1, $m2, $mzero
    sync    0
    exitz   $mzero
worker:
    get     $m0, $WSR
    and     $m0, $m0, 7
    setzi   $m3, 0
    add     $m4, $m0, 10
1:  add     $m3, $m3, $m4
    brnzdec $m0, 1b
    get     $m5, $VERTEX_BASE
    get     $m0, $WSR
    and     $m0, $m0, 7
    shl     $m0, $m0, 2           // delta is in bytes
    st32    $m3, $m5, $m0, 0
    exitz   $mzero
    .data
result:
    .space  24
ASM

expect 0 "" -- "$IPUSIM" asm "$WORK/prog.S" -o "$WORK/prog.elf"
check "asm wrote the executable" test -s "$WORK/prog.elf"
# worker k (0..5) sums (k+10) k+1 times: 10, 22, 36, 52, 70, 90
expect 0 "10 22 36 52 70 90" -- "$IPUSIM" run "$WORK/prog.elf" --dump result:6:u32
expect 0 "tile +cycles" -- "$IPUSIM" run "$WORK/prog.elf" --machine bow
expect 0 "instructions/s" -- "$IPUSIM" run "$WORK/prog.elf" --json "$WORK/run.json"
check "run --json is JSON with cycles" grep -q '"cycles"' "$WORK/run.json"

# Disassembly reassembles to the same executable.
expect 0 "" -- "$IPUSIM" disasm "$WORK/prog.elf" -o "$WORK/round.S"
check "disassembly has the runall" grep -q "runall" "$WORK/round.S"
expect 0 'runall \$m1, \$m2, \$mzero' -- "$IPUSIM" disasm "$WORK/prog.elf"
expect 0 "" -- "$IPUSIM" asm "$WORK/round.S" -o "$WORK/round.elf"
expect 0 "10 22 36 52 70 90" -- "$IPUSIM" run "$WORK/round.elf" --dump result:6:u32

expect 0 "bow2000" -- "$IPUSIM" machines
expect 0 "tile_clock_hz +1.85e\+09" -- "$IPUSIM" machines --show bow
expect 0 "overridden" -- "$IPUSIM" machines --show gc200 --set tile_clock_hz=1.5e9
# The pods: presets with their boards and the torus of boards.
expect 0 "ipu-pod16 +IPU-POD16: 4 IPU-M2000s, 16 x GC200 at 1.325 GHz" -- "$IPUSIM" machines
expect 0 "bow-pod64 +Bow Pod64: 16 Bow-2000s, 64 x Bow at 1.85 GHz" -- "$IPUSIM" machines
expect 0 "topology: 64 chips on 16 boards of 4 .* torus of 4 rows of 4.*: 0 2 4 2 2 4 6 4 4 6 8 6 2 4 6 4" -- \
    "$IPUSIM" machines --show ipu-pod64
expect 0 "tile_clock_hz +1.85e\+09" -- "$IPUSIM" machines --show bow-pod16
expect 0 "usage: ipusim run" -- "$IPUSIM" run --help

# Bad input: one clear message, non-zero exit, no output file left behind.
printf '    .text\n    f32addd $a0, $a1, $a2\n' > "$WORK/bad.S"
expect 1 "bad.S:2:5: error: unknown mnemonic 'f32addd'" -- "$IPUSIM" asm "$WORK/bad.S" -o "$WORK/bad.elf"
check "failed asm leaves no output" test ! -e "$WORK/bad.elf"
check "failed asm leaves no temporary" bash -c "! ls '$WORK' | grep -q tmp"
expect 1 "nosuch.elf: cannot open" -- "$IPUSIM" run "$WORK/nosuch.elf"
expect 1 "prog.S: not an ELF file|prog.S: .*ELF" -- "$IPUSIM" run "$WORK/prog.S"
expect 1 "unknown machine 'gc300'" -- "$IPUSIM" run "$WORK/prog.elf" --machine gc300
expect 1 "tile_clock_hz = 0 is out of range" -- "$IPUSIM" run "$WORK/prog.elf" --set tile_clock_hz=0
expect 1 "unknown machine parameter 'nope'" -- "$IPUSIM" run "$WORK/prog.elf" --set nope=1
expect 2 "unknown command 'frobnicate'" -- "$IPUSIM" frobnicate
expect 2 "unknown option '--bogus'" -- "$IPUSIM" run "$WORK/prog.elf" --bogus
expect 1 "no symbol 'nothere'" -- "$IPUSIM" run "$WORK/prog.elf" --dump nothere

# A simulated fault stops the program like a hardware exception: exit 3,
# naming tile, context, pc, source line and instruction.
cat > "$WORK/fault.S" <<'ASM'
__supervisor:
    setzi   $m1, worker
    setzi   $m2, 0
    run     $m1, $m2, $mzero
    sync    0
    exitz   $mzero
worker:
    setzi   $m0, 0x80004
    ld64    $a0:1, $m0, $mzero, 0
    exitz   $mzero
ASM
expect 0 "" -- "$IPUSIM" asm "$WORK/fault.S" -o "$WORK/fault.elf"
expect 3 "tile 0, worker 1, pc 0x4c018 \(.*fault.S:9.*\): misaligned access" -- "$IPUSIM" run "$WORK/fault.elf"

# A program too big for tile memory is refused: by the assembler when it
# cannot fit any tile, at load (naming tile, section and addresses) when it
# does not fit the machine it is run on.
printf '__supervisor:\n exitz $mzero\n .data\nbig:\n .space 700000\n' > "$WORK/big.S"
expect 1 "big.S:5:[0-9]+: error: '.space' size 700000 out of range" -- "$IPUSIM" asm "$WORK/big.S" -o "$WORK/big.elf"
printf '__supervisor:\n exitz $mzero\n .data\nbig:\n .space 420000\n' > "$WORK/big2.S"
expect 0 "" -- "$IPUSIM" asm "$WORK/big2.S" -o "$WORK/big2.elf"
expect 0 "completed|cycles" -- "$IPUSIM" run "$WORK/big2.elf" --machine gc200
expect 1 "tile 0: section .text \(4 bytes at 0x4c000\) does not fit in tile memory \(0x60000-0x9ffff\)" -- "$IPUSIM" run "$WORK/big2.elf" --machine gc2
expect 0 "" -- "$IPUSIM" asm "$WORK/big2.S" --machine gc2 -o "$WORK/big2_gc2.elf"
expect 1 "tile 0: section .data \(420000 bytes at 0x80000\) does not fit in tile memory \(0x60000-0x9ffff\)" -- "$IPUSIM" run "$WORK/big2_gc2.elf" --machine gc2

# Output to something that is not a regular file (a FIFO here, /dev/null in
# use) is written in place: the temporary-and-rename of ordinary outputs
# would replace it with a file.
mkfifo "$WORK/fifo"
cat "$WORK/fifo" > "$WORK/from_fifo" &
reader=$!
expect 0 "" -- "$IPUSIM" asm "$WORK/big2.S" -o "$WORK/fifo"
wait "$reader"
check "the FIFO is still a FIFO" test -p "$WORK/fifo"
check "the executable came through it" cmp -s "$WORK/from_fifo" "$WORK/big2.elf"
expect 1 "is a directory" -- "$IPUSIM" asm "$WORK/big2.S" -o "$WORK"

# Progress on a terminal (script(1) gives the command one), nothing when
# stderr is not one: the op lowered, then the superstep run with the
# program's count and the time left.
script -qc "'$IPUSIM' compile bert-base:s128:l4 -o '$WORK/b4.elf'" /dev/null > "$WORK/compile_tty.txt" 2>&1
check "compile on a terminal shows the op lowered" grep -aEq "lowering op [0-9]+ of [0-9]+" "$WORK/compile_tty.txt"
script -qc "'$IPUSIM' run '$WORK/b4.elf' --max-cycles 60000" /dev/null > "$WORK/run_tty.txt" 2>&1
check "run on a terminal shows the superstep, the cycles and the time left" \
    grep -aEq "superstep [0-9]+ of [0-9]+, [0-9.]+ M cycles \([0-9.e-]+ ms simulated\), [0-9.]+ host s, about [0-9]+ s left" \
    "$WORK/run_tty.txt"
"$IPUSIM" compile bert-base:s128:l4 -o "$WORK/b4b.elf" > "$WORK/compile_pipe.txt" 2>&1
"$IPUSIM" run "$WORK/b4.elf" --max-cycles 60000 > "$WORK/run_pipe.txt" 2>&1
check "no progress when stderr is not a terminal" \
    bash -c "! grep -aEq 'lowering op|superstep [0-9]+ of' '$WORK/compile_pipe.txt' '$WORK/run_pipe.txt'"

finish
