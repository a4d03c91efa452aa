/*
 * abi.h — how compiled programs call the kernel library (the codelets in
 * workloads/codelets/<group>.S).  This is the contract between the codelets and
 * the lowering in frontends/ (frontends/lower.c), in the spirit of Poplar's
 * vertices: the code of a codelet is the same on every tile and for every
 * use; what differs (operand addresses, sizes) is in a vertex record in
 * tile memory that the compiler writes.
 *
 * The library image.  Every codelet source, and the compiled program's
 * supervisor (workloads/codelets/supervisor.S), are assembled together once
 * (the sources are built into the binary, workloads/codelets/codelet_library.c) into
 * one image that is copied to every tile that runs compiled code: code from
 * 0x4C000 (region 0), and the library's own constant data, if any, where the
 * assembler places it.  The compiler allocates tensors around the image.
 * So a codelet must not rely on fixed data addresses: everything it touches
 * comes from its vertex record or its own constant tables (labels in its
 * own data section).
 *
 * Worker codelets (a vertex of a compute set):
 *   - entry label `vtx_<name>`, `.globl`, `.worker`, 8-byte aligned;
 *   - started with `runall $entry, $vbase, $step`: the worker's
 *     $VERTEX_BASE (mirrored in $m13) is the address of its vertex record;
 *   - the record is 32-bit words, 4-byte aligned; its layout is an enum of
 *     word offsets `<NAME>_V_*` and `<NAME>_V_WORDS` in the codelet group's
 *     header (e.g. workloads/codelets/elementwise.h), the same numbers as
 *     .equ in the .S file;
 *   - a record whose element (or row) count is 0 does nothing: six workers
 *     are always started, and a tile with less work gives the others 0;
 *   - it may use $m0-$m11 and $a0-$a13 freely, and ends with `exitz $mzero`;
 *   - $FP_CTL is 0 (round to nearest even, no exceptions enabled).
 * Supervisor codelets (work that needs the supervisor, e.g. $CWEI loads):
 *   - entry label `sv_<name>`, `.globl`, `.supervisor`, 8-byte aligned;
 *   - entered by the control program with $m1 = the address of its record
 *     and $m10 ($lr) = the return address; returns with `br $m10`;
 *   - may use $m0-$m8 and the CSRs it needs; must preserve $m9 and $m11
 *     (the control program's step pointer and base); must leave no worker
 *     running (end with `sync 0` after its last runall).
 *
 * Data:
 *   - tensors are little-endian f32, f16 or i32, row-major; every pointer
 *     in a record is 8-byte aligned unless the codelet's header says
 *     otherwise, and a tensor's bytes may be padded up to 8;
 *   - operands may lie anywhere in tile memory outside the library image
 *     (region 1 first; region 0 past the code's 16 KiB elements).  A codelet
 *     must be correct, and must never raise a memory conflict, for every
 *     placement that meets its stated alignment.  It may take a faster
 *     loop when the addresses allow (e.g. two dual-loaded operands in
 *     different memory elements): the condition is tested at run time and
 *     written in its header, so the compiler can aim for it;
 *   - an output may be the same tensor as an input (in place) when the
 *     header says so; partial overlaps are never allowed;
 *   - a codelet may read up to CODELET_READ_SLACK_BYTES past the end of an
 *     input (pipelined loads), never write past the end of an output, and
 *     the compiler leaves that slack after every tensor.
 *
 * Every codelet comes with a bit-exact C model (workloads/codelets/
 * <group>_model.c), a test against that model and against a reference with
 * a stated tolerance, exact cycle counts for small cases, and its measured
 * tile cycles per element in the .S header.
 */
#ifndef IPUSIM_CODELETS_ABI_H
#define IPUSIM_CODELETS_ABI_H

#define CODELET_WORKERS 6
/* Bytes a codelet may read past the end of an input. */
#define CODELET_READ_SLACK_BYTES 64u
/* Alignment of every pointer in a vertex record. */
#define CODELET_ALIGN_BYTES 8u

#endif
