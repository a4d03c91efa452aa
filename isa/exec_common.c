/*
 * exec_common.c — what all instruction semantics share: raising a
 * simulated exception.
 */
#include "exec.h"

#include <stdio.h>

static const char *const exception_names[] = {
    [ISA_EXC_NONE] = "none",
    [ISA_EXC_INVALID_INSTR] = "invalid instruction",
    [ISA_EXC_INVALID_OPERAND] = "invalid operand",
    [ISA_EXC_FETCH] = "instruction fetch",
    [ISA_EXC_MEM_RANGE] = "bad address",
    [ISA_EXC_MEM_ALIGN] = "misaligned access",
    [ISA_EXC_MEM_CONFLICT] = "memory conflict",
    [ISA_EXC_MEM_REGION] = "access not allowed in region",
    [ISA_EXC_RPT] = "bad repeat block",
    [ISA_EXC_FP] = "floating-point exception",
    [ISA_EXC_BREAK] = "breakpoint",
    [ISA_EXC_EXCHANGE] = "bad exchange",
    [ISA_EXC_RUN] = "bad worker control",
    [ISA_EXC_UNIMPLEMENTED] = "unimplemented instruction",
};

const char *isa_exception_name(enum isa_exception exc)
{
    if ((unsigned)exc < sizeof exception_names / sizeof exception_names[0] && exception_names[exc])
        return exception_names[exc];
    return "unknown exception";
}

enum isa_flow isa_raise(isa_tile_state *t, const isa_context *c, const isa_insn *in,
                        enum isa_exception exc, uint32_t address, const char *fmt, ...)
{
    isa_fault *f = &t->fault;
    f->exception = (uint8_t)exc;
    f->context = c->id;
    f->pc = c->pc;
    f->word = in ? in->word : 0;
    f->address = address;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return ISA_FLOW_FAULT;
}
