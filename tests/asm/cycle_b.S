// cycle_b.S — see cycle_a.S
        .include "cycle_a.S"
