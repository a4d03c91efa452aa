#!/usr/bin/env bash
# Configurations, presets and the machine an executable names
# (tests/BAD_INPUTS.md): a config file is one JSON object with each key
# once; --machine, --set and --config apply in command-line order and never
# silently undo one another; an executable records the machine it was
# compiled for, and a machine that cannot hold it is refused before loading.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every output a failing command is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

printf '__supervisor:\n    exitz $mzero\n' > good.S
"$IPUSIM" asm good.S -o good.elf >/dev/null 2>&1 || { echo "FAIL: good.S does not assemble"; exit 1; }

# ---------------------------------------------------------------- config file syntax
printf '{"preset":"gc200"} xyz' > trailing.json
fails 1 "ipusim: trailing.json:1:20: text after the end of the JSON object" -- \
    "$IPUSIM" run good.elf --config trailing.json --json "$OUT/r.json"
printf '{"params":{"tile_clock_hz":1e9,"tile_clock_hz":2e9}}' > dup_param.json
fails 1 "ipusim: dup_param.json: parameter \"tile_clock_hz\" appears twice in \"params\"" -- \
    "$IPUSIM" run good.elf --config dup_param.json --json "$OUT/r.json"
printf '{"preset":"gc2","preset":"gc200"}' > dup_key.json
fails 1 "ipusim: dup_key.json: key \"preset\" appears twice" -- "$IPUSIM" machines --config dup_key.json
printf '{"preset": "gc2"' > truncated.json
fails 1 "ipusim: truncated.json:1:17: not valid JSON (truncated?)" -- \
    "$IPUSIM" run good.elf --config truncated.json --json "$OUT/r.json"
printf '{"preset": "gc2",\n  "params": {"x": }}' > bad_value.json
fails 1 "ipusim: bad_value.json:2:19: not valid JSON" -- "$IPUSIM" machines --config bad_value.json
printf '{"preset": "gc2"}\0' > nul.json
fails 1 "ipusim: nul.json:1:18: NUL byte in a JSON config file" -- "$IPUSIM" machines --config nul.json
printf '{"params": {"tile_memory_bytes": 65537}}' > pages.json
fails 1 "ipusim: pages.json: machine parameter tile_memory_bytes = 65537 must be a multiple of 16384 (whole 16 KiB memory elements)" -- \
    "$IPUSIM" run good.elf --config pages.json --json "$OUT/r.json"
fails 1 "ipusim: machine parameter tile_memory_bytes = 65537 must be a multiple of 16384 (whole 16 KiB memory elements)" -- \
    "$IPUSIM" run good.elf --set tile_memory_bytes=65537 --json "$OUT/r.json"
printf '{"preset": "gc2", "params": {"tile_clock_hz": 1e9}}\n\n' > fine.json
expect 0 "^machine gc2 \(modified\)" -- "$IPUSIM" machines --config fine.json

# ---------------------------------------------------------------- order and conflicts
printf '{"preset": "gc200"}' > gc200.json
printf '{"preset": "gc2"}' > gc2.json
printf '{"params": {"tile_clock_hz": 1e9}}' > clock.json
fails 1 "ipusim: gc200.json: \"preset\": \"gc200\" conflicts with --machine gc2 (name one machine)" -- \
    "$IPUSIM" run good.elf --machine gc2 --config gc200.json --json "$OUT/r.json"
fails 1 "ipusim: --machine gc2 conflicts with \"preset\": \"gc200\" in gc200.json (name one machine)" -- \
    "$IPUSIM" run good.elf --config gc200.json --machine gc2 --json "$OUT/r.json"
fails 1 "ipusim: --machine bow conflicts with --machine gc2 (name one machine)" -- \
    "$IPUSIM" run good.elf --machine gc2 --machine bow --json "$OUT/r.json"
fails 1 "ipusim: gc2.json: \"preset\": \"gc2\" comes after parameters set on gc200 and would undo them (choose the machine before --set)" -- \
    "$IPUSIM" run good.elf --set tile_clock_hz=2e9 --config gc2.json --json "$OUT/r.json"
fails 1 "ipusim: --machine gc2 comes after parameters set on gc200 and would undo them (choose the machine before --set)" -- \
    "$IPUSIM" machines --set tile_clock_hz=2e9 --machine gc2
# Command-line order: the later value of a parameter wins.
clock() { "$IPUSIM" machines "$@" 2>&1 | awk '$1 == "tile_clock_hz" { print $2 }'; }
check "--set then a config's params: the config's value" test "$(clock --set tile_clock_hz=2e9 --config clock.json)" = 1e+09
check "a config's params then --set: the --set value" test "$(clock --config clock.json --set tile_clock_hz=2e9)" = 2e+09
check "--set then a config naming the same preset keeps the --set" \
    test "$(clock --set tile_clock_hz=2e9 --config gc200.json)" = 2e+09
check "--machine, --set, the same --machine again keeps the --set" \
    test "$(clock --machine gc2 --set tile_clock_hz=2e9 --machine gc2)" = 2e+09

# ---------------------------------------------------------------- the machine an executable names
"$IPUSIM" compile matmul:16x16x16 --machine m2000 -o m2000.elf >/dev/null 2>&1 || echo "FAIL: compile for m2000"
"$IPUSIM" compile matmul:16x16x16 --machine m2000 --replicas 1 -o one_chip.elf >/dev/null 2>&1 || echo "FAIL: compile --replicas 1"
expect 0 "^m2000.elf on m2000 \(4 chips x 1472 tiles" -- "$IPUSIM" run m2000.elf
fails 1 "ipusim: m2000.elf: compiled for m2000 (4 chips x 1472 tiles); gc200 has 1 chip" -- \
    "$IPUSIM" run m2000.elf --machine gc200 --json "$OUT/r.json"
# disasm shows the recorded machine.
expect 0 "" -- "$IPUSIM" disasm m2000.elf -o "$WORK/m2000.S"
check "disasm's text shows the machine" grep -q "^// .ipusim.machine: preset=m2000$" "$WORK/m2000.S"
# ... and the model: 16 x 16 x 16 MACs for each of its 4 replicas
check "disasm's text shows the model" grep -q "^// .ipusim.model: model=matmul:16x16x16$" "$WORK/m2000.S"
check "the model's MACs count every replica" grep -q "^// .ipusim.model: model_macs=16384$" "$WORK/m2000.S"
expect 0 "matmul:16x16x16 asks for 4096 \(its matmuls" -- "$IPUSIM" run one_chip.elf
# --set with no machine named edits the machine the executable was compiled for.
expect 0 "^m2000.elf on m2000 \(modified\) \(4 chips x 1472 tiles, tile clock 2 GHz" -- \
    "$IPUSIM" run m2000.elf --set tile_clock_hz=2e9
echo '{"params": {"tile_clock_hz": 1.5e9}}' > clock.json
expect 0 "^m2000.elf on m2000 \(modified\) \(4 chips x 1472 tiles, tile clock 1.5 GHz" -- \
    "$IPUSIM" run m2000.elf --config clock.json
expect 0 "^m2000.elf on m2000 \(modified\) \(4 chips" -- "$IPUSIM" run m2000.elf --machine m2000 --set tile_clock_hz=2e9
fails 1 "ipusim: m2000.elf: compiled for m2000 (4 chips x 1472 tiles); bow has 1 chip" -- \
    "$IPUSIM" compare m2000.elf --machines m2000,bow --json "$OUT/c.json"
fails 1 "ipusim: m2000.elf: compiled for m2000 (4 chips x 1472 tiles); gc200 has 1 chip" -- \
    "$IPUSIM" debug m2000.elf --machine gc200 --batch
expect 0 "" -- bash -c "echo quit | '$IPUSIM' debug m2000.elf --batch"
# A program piped in is read whole first: it too runs on the machine it was
# compiled for, and a machine that cannot hold it is refused before loading.
expect 0 "^/dev/stdin on m2000 \(4 chips x 1472 tiles" -- bash -c "cat m2000.elf | '$IPUSIM' run /dev/stdin"
fails 1 "ipusim: /dev/stdin: compiled for m2000 (4 chips x 1472 tiles); gc200 has 1 chip" -- \
    bash -c "cat m2000.elf | '$IPUSIM' run /dev/stdin --machine gc200 --json '$OUT/r.json'"
fails 1 "ipusim: /dev/stdin: compiled for m2000 (4 chips x 1472 tiles); bow has 1 chip" -- \
    bash -c "cat m2000.elf | '$IPUSIM' compare /dev/stdin --machines m2000,bow"
fails 1 "ipusim: /dev/stdin: compiled for m2000 (4 chips x 1472 tiles); gc200 has 1 chip" -- \
    bash -c "cat m2000.elf | '$IPUSIM' debug /dev/stdin --machine gc200 --batch"
expect 0 "^one_chip.elf on gc200 \(1 chip" -- "$IPUSIM" run one_chip.elf --machine gc200
fails 1 "ipusim: one_chip.elf: compiled for m2000 (4 chips x 1472 tiles) and uses 1 chip; gc2 has 262144 bytes of tile memory, the program's layout needs 638976" -- \
    "$IPUSIM" run one_chip.elf --machine gc2 --json "$OUT/r.json"
# An assembled executable names no machine: gc200, as before.
expect 0 "^good.elf on gc200 \(1 chip" -- "$IPUSIM" run good.elf
printf '    .tile 1500\n__supervisor:\n    exitz $mzero\n' > far.S
"$IPUSIM" asm far.S -o far.elf >/dev/null 2>&1
fails 1 "ipusim: far.elf: tile 1500 is beyond the 1472 tiles of machine gc200 (1 chip x 1472 tiles)" -- \
    "$IPUSIM" run far.elf --json "$OUT/r.json"

finish
