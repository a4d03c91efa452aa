// sync_cost_external.S — the cost of a barrier across chips: tile 0 of each
// of the 4 chips of an M2000 / Bow-2000 runs 100 empty supersteps with
// sync 2.
//
//   ipusim asm validation/micro/sync_cost_external.S -o sync_cost_external.elf
//   ipusim run sync_cost_external.elf --machine m2000
//
// Figure: time per superstep = 1 cycle + sync_external_ps_per_hop (30 ns)
// x 1 hop (one board), rounded up to the clock: 41 cycles (30.9 ns) at
// 1.325 GHz, 57 cycles (30.8 ns) at 1.85 GHz: the same time on both
// machines, as it does not depend on the tile clock.  Published: PopLibs
// assumes 15 ns x hops x 2 (poplibs_test/Util.cpp).
        .macro  TILE t
        .tile   \t
        .text
__supervisor:
        .rept   100
        sync    2
        .endr
        exitz   $mzero
        .endm

        TILE    0
        TILE    1472
        TILE    2944
        TILE    4416
