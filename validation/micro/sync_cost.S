// sync_cost.S — the cost of a barrier: all TILES (1472) tiles run 100 empty
// supersteps (sync 1 back to back).
//
//   ipusim asm validation/micro/sync_cost.S -o sync_cost.elf
//   ipusim run sync_cost.elf
//
// Figure: cycles per superstep = 1 (the sync instruction) +
// sync_internal_cycles (90): 91, so the chip ends at about 100 x 91.
// Published: PopLibs' planners assume about 90 cycles per on-chip sync
// (POPLIBS CTCLossPlan.cpp).  sync_cost_external.S does the same with
// sync 2 across 4 chips.
        .ifndef TILES
        .equ    TILES, 1472             // 1216 on GC2
        .endif

        .macro  TILE t
        .tile   \t
        .text
__supervisor:
        .rept   100
        sync    1
        .endr
        exitz   $mzero
        .endm

        .set    T, 0
        .rept   TILES
        TILE    T
        .set    T, T + 1
        .endr
