#!/usr/bin/env bash
# `ipusim validate --micro`: the microbenchmarks of validation/micro/ held
# against published figures (validation/micro.h).  --quick runs the on-chip
# ones on one column of tiles, so the whole set takes about a second.
source "$(dirname "$0")/lib.sh"

expect 0 "30 benchmarks: 30 within their band, 0 not" -- "$IPUSIM" validate --micro --quick --json "$WORK/micro.json"
# Figures worked out in the programs' headers.  Per tile: 6 workers x 1000
# bundles in 6051 cycles (ld2x64pace: 16 B each); the exchange of all
# tiles: 1472 x 64 KiB in 16607 cycles at 1.325 GHz, each tile on its own
# bus; the IPU-Link hop: 212 cycles; the host link: 2 MiB in 133.15 us.
expect 0 "memory_ld2x64pace +gc200 +15\.87 +16 B/cycle/tile +-0\.84 +2% +PASS" -- \
    "$IPUSIM" validate --micro --quick --filter memory_ld2x64pace
expect 0 "exchange_all_tiles +gc200 +7\.697 +7\.802 TB/s +-1\.34 +5% +PASS" -- \
    "$IPUSIM" validate --micro --quick --filter exchange_all
expect 0 "exchange_all_tiles +gc2 +7\.678 " -- "$IPUSIM" validate --micro --quick --filter exchange_all
expect 0 "exchange_latency_far +gc2 +157 " -- "$IPUSIM" validate --micro --filter latency_far
# The AMP's rate is each chip's own: GC2 has one engine set, half GC200's
# MACs a cycle (before, the executor ran every preset at GC200's rate and
# GC2 showed 249 TFLOPS f16 against its 124.5).
expect 0 "amp_f16_chip +gc2 +124\.[0-9]+ +124\.5 TFLOPS .* PASS" -- "$IPUSIM" validate --micro --quick --filter amp_f16
expect 0 "amp_f32_chip +gc2 +31\.[0-9]+ +31\.1 TFLOPS .* PASS" -- "$IPUSIM" validate --micro --quick --filter amp_f32
expect 0 "ipu_link_latency +m2000 +160 +160 ns" -- "$IPUSIM" validate --micro --filter ipu_link
expect 0 "ipu_link_bandwidth +m2000 +26\.87 +27\.2 GB/s" -- "$IPUSIM" validate --micro --filter ipu_link
expect 0 "host_read +m2000 +15\.75 +16 GB/s" -- "$IPUSIM" validate --micro --filter host_
# A GC2 sits on a PCIe card, not behind a gateway: its own x16 link.
expect 0 "host_read +gc2 +30\.55 +31\.5 GB/s" -- "$IPUSIM" validate --micro --filter host_
check "--json is written" test -s "$WORK/micro.json"
check "--json names the published figure" grep -q '"published":	47.5' "$WORK/micro.json"
check "--json says how a figure is derived" grep -q '"figure":	"TILES x BYTES' "$WORK/micro.json"
if command -v python3 > /dev/null; then
    check "--json parses as JSON" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['failed'] == 0 and len(d['benchmarks']) == 30" "$WORK/micro.json"
fi

# A program whose figure is outside its band: 20 extra cycles per
# superstep make the on-chip sync 110 cycles, 22 % above PopLibs' 90.
mkdir -p "$WORK/micro"
printf '.macro TILE t\n.tile \\t\n__supervisor:\n.rept 100\n.rept 20\nnop\n.endr\nsync 1\n.endr\nexitz $mzero\n.endm\n.set T, 0\n.rept TILES\nTILE T\n.set T, T + 1\n.endr\n' > "$WORK/micro/sync_cost.S"
expect 1 "sync_internal +gc200 +110 +90 cycles +\+22\.22 +10% +FAIL" -- \
    "$IPUSIM" validate --micro --quick --micro-dir "$WORK/micro" --filter sync_internal
# A program that is missing: the row says why, the exit status is 1.
expect 1 "exchange_one_tile +gc200 .* ERROR .*exchange_one_tile.S" -- \
    "$IPUSIM" validate --micro --micro-dir "$WORK/micro" --filter exchange_one
expect 1 "validate --micro: no benchmark matches 'nosuch'" -- "$IPUSIM" validate --micro --filter nosuch
expect 2 "--threads: expected a number from 1 to 1024, got 'x'" -- "$IPUSIM" validate --micro --threads x
expect 2 "unknown argument '--bogus'" -- "$IPUSIM" validate --micro --bogus

finish
