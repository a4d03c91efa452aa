/* TEMPORARY scaffolding while the executors are written: weak defaults. */
#include <stdio.h>
#include "exec.h"
#define ISA_INSN(id, mn, ops, major, funct, pipe, cost, flags) \
    __attribute__((weak)) enum isa_flow isa_exec_##id(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    { return isa_raise(t, c, in, ISA_EXC_UNIMPLEMENTED, 0, "%s is not implemented", mn); }
#include "isa.def"
#undef ISA_INSN
