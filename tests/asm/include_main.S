// include_main.S — .include relative to this file and through -I.
        .include "inc/defs.inc"
        .include "extra.inc"            // found through an include directory
        .text
        setzi   $m0, DEFS_VALUE
        setzi   $m1, EXTRA_VALUE
        INC_MACRO $m2
