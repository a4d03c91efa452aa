// cycle_a.S — includes cycle_b.S, which includes this file again
        nop
        .include "cycle_b.S"
