// elementwise.S — element-wise worker codelets of the kernel library:
//
//     vtx_binary_f32        out = in0 OP in1 over rows x cols, in1 strided or broadcast
//     vtx_binary_f32_split  the same on one row, one record for the six workers
//     vtx_binary_f32_split_rows
//                           the same on rows, one record for the six workers
//     vtx_unary_f32         out = F(in)
//     vtx_unary_f32_split   the same, one record for the six workers
//     vtx_cast_f32_to_f16   out = (f16) in
//     vtx_cast_f32_to_f16_sr  the same, rounded stochastically
//     vtx_cast_f16_to_f32   out = (f32) in
//     vtx_scaled_add_f32    out = x + scale y (f32v2axpy), x, y, out f32
//     vtx_scaled_add_f16    the same with x and out f16, y f32
//     vtx_scaled_add_f16_sr the same, out rounded stochastically
//     vtx_copy              n bytes
//     vtx_fill              n bytes of zeros
//
// Records, alignment, the "apart" condition of the fast loops and the
// arithmetic are in elementwise.h (the record word offsets are repeated
// here as .equ); the bit-exact models are in elementwise_model.c.
// Calling convention: abi.h (one record per worker, $m13 its address).
//
// Every worker instruction is written as a bundle ({ main ; fnop } or
// { nop ; aux }): a bundle issues in one slot like a lone instruction, and
// keeping every issue 8 bytes long keeps every branch target and rpt body
// 8-byte aligned without padding (ISA2 §2.5.1; rpt body alignment, exec.h).
//
// Loops.  Two shapes serve every codelet:
//
//  (1) The lag-3 pace loop (one bundle per pair of elements), for the ops
//      that are one f32v2 instruction (binary add/sub/mul/max/min; unary
//      relu and abs; copy has its own lag-1 form).  Pair b is loaded by
//      bundle b into register set L(b mod 2), computed by bundle b + 2 from
//      L(b mod 2) into R(b mod 2) (the load of pair b + 2 into the same L is
//      written only after the aux half has read it), and stored by bundle
//      b + 3 from R(b mod 2) (the store reads its register before the
//      bundle's aux half writes the other R).  Two register sets make the
//      rpt body two bundles; the store stream runs three pairs (24 bytes)
//      behind the loads, so in place (out = in0) the load and the store of
//      one bundle differ in address bit 3: different memory elements in
//      region 1 (ISA2 §2.8.11.1).  Bundles 0-2 fill (loads only); the loop
//      runs P bundles for P pairs (floor(P / 2) rpt iterations, one more
//      bundle when P is odd); its loads run 3 pairs past the last pair and
//      the odd last element (lane 0 of pair P) is computed by the last
//      bundle and stored with st32.  The streams are tested "apart" at run
//      time (ew_apart, elementwise.h); if not, the single-access loop runs.
//
//  (2) The single-access loop: one ld64step / st64step per operand per
//      pair, the aux work of the pair spread over the same bundles.  The
//      first bundle of a pair's body stores the previous pair's result
//      (read before that bundle's aux half overwrites it) and the last
//      loads the next pair (written after its aux half has read the old
//      one), so the loads of pair j + 1 and the store of pair j - 1 ride
//      in the main slots of pair j's arithmetic.  The first pair's body runs
//      without the store (peeled); one st64step ends the loop; an odd last
//      element runs through the body once more and is stored with st32.
//      No instruction makes two accesses, so no placement can conflict.
//
//  rpt counts at most 4095 (ISA2 rpt), so a loop runs in blocks of up to
//  4095 iterations (min, sub, rpt, brnz per block: EW_RPT_HEAD/TAIL).
//
// Timing (one worker issue every 6 tile cycles, ISA2 §2.3; a bundle holding
// an instruction of latency L worker cycles (ISA2 Table 4.1: f32div,
// f32exp, f32oox 3, f32oorx 4, f32sqrt, f32tanh, f32sigm 5, f32ln 6) takes
// L issue slots of its worker).  Worker cycles per pair of elements in the
// inner loop, so tile cycles per element with six workers = that / 2:
//
//     binary add/sub/mul/max/min    1 (pace, apart)   3 (single access; 2 broadcast)
//     binary div                    7 contiguous, 6 broadcast (two f32div)
//     binary, other column steps    4 per element (6 for div)
//     relu, abs                     1 (pace, apart)   2 (single access)
//     neg, scale-shift              2
//     exp 6, log 12, sqrt 10, rsqrt 8, reciprocal 6, tanh 10, sigmoid 10
//     erf 32, gelu_erf 36, gelu_tanh 18
//     floor 8, ceil 10 (f32int, f32cmpgt, f32fromi32 a lane, elementwise.h)
//     casts 2 (1.5 four elements a loop, the last n mod 4 at 2); copy per
//     8 bytes: 1 (pace), 2 (single access), 4 (words);
//     fill per 8 bytes: 1
//
// Measured tile cycles per element on one GC200 tile, 24,000 elements split
// evenly over six workers (binary: one row of 4000 per worker), tensors
// apart in region 1 (tests/test_codelets_elementwise.c, "per-element
// cost"); the excess over the loop's rate is the set-up (binary: about 100
// issues a row, three of them apart tests of 15 issues each) and the end:
//
//     binary add/sub/mul/max/min  0.525 contiguous   0.516 broadcast scalar
//     binary div                  3.513 contiguous   3.011 broadcast scalar
//     relu, abs                   0.511              neg, scale-shift  1.006, 1.007
//     exp, reciprocal             3.006              rsqrt             4.006
//     sqrt, tanh, sigmoid         5.006              log               6.006
//     erf                        16.007              gelu_erf         18.007
//     gelu_tanh                   9.008
//     floor                       4.006              ceil              5.007
//     cast f32->f16, f16->f32     1.005              copy              0.510 per 4 bytes
//
// The single-access loops (streams not apart) run at the rates of the
// table above: e.g. in-place add of six rows of 2000 shared 1, 0, 0, 2, 0,
// 3 over the workers takes 19,658 tile cycles in region 1 and 55,352 in
// region 0 (tests/test_codelets_elementwise.c, "binary: in place").
//
// A record whose op or function is out of range stops its worker with
// trap ELEMENTWISE_TRAP_BAD_OP (the compiler never writes one).

    // ---- record layouts (elementwise.h) -----------------------------------
    .equ BINARY_F32_V_IN0, 0
    .equ BINARY_F32_V_IN1, 1
    .equ BINARY_F32_V_OUT, 2
    .equ BINARY_F32_V_ROWS, 3
    .equ BINARY_F32_V_COLS, 4
    .equ BINARY_F32_V_ROW_STEP, 5
    .equ BINARY_F32_V_IN1_ROW_STEP, 6
    .equ BINARY_F32_V_IN1_COL_STEP, 7
    .equ BINARY_F32_V_OP, 8
    .equ BINARY_F32_SPLIT_V_CHUNK, 9
    .equ ELEMENTWISE_BINARY_OPS, 6
    .equ ELEMENTWISE_BINARY_V2_OPS, 5

    .equ UNARY_F32_V_IN, 0
    .equ UNARY_F32_V_OUT, 1
    .equ UNARY_F32_V_N, 2
    .equ UNARY_F32_V_FN, 3
    .equ UNARY_F32_V_A, 4
    .equ UNARY_F32_V_B, 5
    .equ UNARY_F32_SPLIT_V_CHUNK, 6
    .equ ELEMENTWISE_UNARY_FNS, 16

    .equ CAST_V_IN, 0
    .equ CAST_V_OUT, 1
    .equ CAST_V_N, 2

    .equ SCALED_ADD_V_X, 0
    .equ SCALED_ADD_V_Y, 1
    .equ SCALED_ADD_V_OUT, 2
    .equ SCALED_ADD_V_N, 3
    .equ SCALED_ADD_V_SCALE, 4

    .equ COPY_V_SRC, 0
    .equ COPY_V_DST, 1
    .equ COPY_V_BYTES, 2
    .equ FILL_V_DST, 0
    .equ FILL_V_BYTES, 1

    .equ ELEMENTWISE_TRAP_BAD_OP, 0x45
    .equ EW_RPT_MAX, 4095                 // rpt's largest count
    .equ EW_LAG_BYTES, 24                 // lag-3 loop: store 3 pairs behind the loads

    // Constant pairs (ld64 index = pair number): A&S 7.1.26 and GELU.
    .equ EW_K_P, 0
    .equ EW_K_A5, 1
    .equ EW_K_A4, 2
    .equ EW_K_A3, 3
    .equ EW_K_A2, 4
    .equ EW_K_A1, 5
    .equ EW_K_TINY, 6
    .equ EW_K_NEG_TINY, 7
    .equ EW_K_BIG, 8
    .equ EW_K_ONE, 9
    .equ EW_K_HALF, 10
    .equ EW_K_INV_SQRT2, 11
    .equ EW_K_GELU_K, 12
    .equ EW_K_GELU_S, 13
    .equ EW_K_MINUS_ONE, 14

// ---- a split codelet's share ---------------------------------------------------
// This worker's part of a record the six share: units [\first, \first +
// \total) of \total, CHUNK (record word \chunk_word) a worker, worker w
// ($WSR) from w CHUNK, both cut at the record's count; ew_exit when the part
// is empty.  \tmp is clobbered.
    .macro EW_WORKER_SHARE first, tmp, total, chunk_word
    { get   \first, $WSR ; fnop }
    { ld32  \tmp, $m13, $mzero, \chunk_word ; fnop }
    { and   \first, \first, 7 ; fnop }
    { mul   \first, \first, \tmp ; fnop }
    { min   \first, \first, \total ; fnop }
    { add   \tmp, \first, \tmp ; fnop }
    { min   \tmp, \tmp, \total ; fnop }
    { sub   \total, \tmp, \first ; fnop }
    { brz   \total, ew_exit ; fnop }
    .endm

// ---- the streams of an ld2xst64pace lag-3 loop -----------------------------------
// Branches to \fail unless the two load streams $m6 and $m7 and the store
// stream $m8 (three pairs behind) can run the pace loop: $m7 in region 1
// (ld2xst64pace's second load), and each pair of streams apart (ew_apart).
// 47 issues when all hold.  Uses $m1-$m4, $m10.
    .macro EW_FAST_STREAMS fail
    { shr   $m1, $m7, 19 ; fnop }
    { brz   $m1, \fail ; fnop }              // ld2xst64pace: $m7 in region 1
    { mov   $m1, $m6 ; fnop }
    { mov   $m2, $m7 ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, \fail ; fnop }
    { mov   $m1, $m6 ; fnop }
    { add   $m2, $m8, -EW_LAG_BYTES ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, \fail ; fnop }
    { mov   $m1, $m7 ; fnop }
    { add   $m2, $m8, -EW_LAG_BYTES ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, \fail ; fnop }
    .endm

// ---- loop blocks -------------------------------------------------------------
// rpt over \cnt iterations of an \nb-bundle body, in blocks of <= 4095.
// \cnt ends at 0; label 7 is theirs.
    .macro EW_RPT_HEAD cnt, tmp, nb
7:
    { min   \tmp, \cnt, EW_RPT_MAX ; fnop }
    { sub   \cnt, \cnt, \tmp ; fnop }
    { rpt   \tmp, (\nb) - 1 ; fnop }
    .endm
    .macro EW_RPT_TAIL cnt
    { brnz  \cnt, 7b ; fnop }
    .endm

// ---- the lag-3 pace loop with one load stream (ldst64pace) ------------------
// out[i] = \op(in[i] [, \src2]) for \n elements; L0 = $a0:1, L1 = $a2:3,
// R0 = $a4:5, R1 = $a6:7.  Uses $m0-$m3, $m5; \in, \out, \n kept.
    .macro EW_LDST_LAG3 op, src2, in, out, n
    { add   $m1, \in, EW_LAG_BYTES ; fnop }
    { tapack $m0:1, $m1, $m1, \out ; fnop }
    { shr   $m3, \n, 1 ; fnop }
    { ld64  $a0:1, \in, $mzero, 0 ; fnop }
    { ld64  $a2:3, \in, $mzero, 1 ; fnop }
    .ifb \src2
    { ld64  $a0:1, \in, $mzero, 2 ; \op $a4:5, $a0:1 }
    .else
    { ld64  $a0:1, \in, $mzero, 2 ; \op $a4:5, $a0:1, \src2 }
    .endif
    { shr   $m5, $m3, 1 ; fnop }
    EW_RPT_HEAD $m5, $m2, 2
    .ifb \src2
    { ldst64pace $a2:3, $a4:5, $m0:1+=, $mzero, 0 ; \op $a6:7, $a2:3 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $mzero, 0 ; \op $a4:5, $a0:1 }
    .else
    { ldst64pace $a2:3, $a4:5, $m0:1+=, $mzero, 0 ; \op $a6:7, $a2:3, \src2 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $mzero, 0 ; \op $a4:5, $a0:1, \src2 }
    .endif
    EW_RPT_TAIL $m5
    { and   $m2, $m3, 1 ; fnop }
    { brz   $m2, 1f ; fnop }
    .ifb \src2
    { ldst64pace $a2:3, $a4:5, $m0:1+=, $mzero, 0 ; \op $a6:7, $a2:3 }
    .else
    { ldst64pace $a2:3, $a4:5, $m0:1+=, $mzero, 0 ; \op $a6:7, $a2:3, \src2 }
    .endif
    { nop ; mov $a4, $a6 }              // the odd last element's result, if any
1:
    { shl   $m1, $m3, 3 ; fnop }             // (after the loop: $m1 is half the packed pair)
    { and   $m2, \n, 1 ; fnop }
    { brz   $m2, 2f ; fnop }
    { st32  $a4, \out, $m1, 0 ; fnop }
2:
    .endm

// ---- the single-access pair loop -----------------------------------------------
// \fn \first, \arg is the body of one pair: $a0:1 holds the pair (f32) or
// $a0 the two f16 (kind 2); the result goes to $a4:5 (or $a4, kind 1); its
// first bundle stores the previous result unless \first, its last bundle
// loads the next input.  kind 0: f32 -> f32, 1: f32 -> f16, 2: f16 -> f32.
// In $m6, out $m8, elements $m9; $m0, $m2 are the in and out offsets (0 on
// entry); uses $m3, $m5, $m7.  Ends at the worker's exit.
    .macro EW_PAIR_LOOP fn, arg, kind
    .if \kind == 2
    { ld32step $a0, $m6, $m0+=, 1 ; fnop }
    .else
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    .endif
    { shr   $m7, $m9, 1 ; fnop }
    { brz   $m7, 1f ; fnop }
    \fn 1, \arg, \kind
    { add   $m7, $m7, -1 ; fnop }
    EW_RPT_HEAD $m7, $m5, (ew_pl_e\@ - ew_pl_b\@) / 8
ew_pl_b\@:
    \fn 0, \arg, \kind
ew_pl_e\@:
    EW_RPT_TAIL $m7
    .if \kind == 1
    { st32step $a4, $m8, $m2+=, 1 ; fnop }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; fnop }
    .endif
1:
    { and   $m3, $m9, 1 ; fnop }
    { brz   $m3, ew_exit ; fnop }
    .if \kind == 0
    \fn 1, \arg, \kind
    .elseif \kind == 1
    { nop ; f32tof16 $a4, $a0 }         // both halves: the pad element gets a copy
    .else
    { nop ; f16tof32 $a4, $a0 }
    .endif
    { st32  $a4, $m8, $m2, 0 ; fnop }
    { exitz $mzero ; fnop }
    .endm

// Unary bodies (EW_PAIR_LOOP's \fn): x in $a0:1, the result in $a4:5.
    .macro EW_U_TWO first, op, kind        // one scalar instruction per lane
    .if \first
    { nop ; \op $a4, $a0 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; \op $a4, $a0 }
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; \op $a5, $a1 }
    .endm

    .macro EW_U_V2 first, op, kind         // one f32v2 instruction with $azeros or none
    .if \first
    .ifc \op, f32v2abs
    { nop ; f32v2abs $a4:5, $a0:1 }
    .else
    { nop ; \op $a4:5, $a0:1, $azeros }
    .endif
    .else
    .ifc \op, f32v2abs
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2abs $a4:5, $a0:1 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; \op $a4:5, $a0:1, $azeros }
    .endif
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    .endm

    .macro EW_U_SCALE_SHIFT first, arg, kind   // $a6:7 = a, $a8:9 = b
    .if \first
    { nop ; f32v2mul $a4:5, $a0:1, $a6:7 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2mul $a4:5, $a0:1, $a6:7 }
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2add $a4:5, $a4:5, $a8:9 }
    .endm

    // gelu_tanh: $a6:7 = 0.044715, $a8:9 = 1, $a10:11 = sqrt(2/pi), $a12:13 = 1/2.
    .macro EW_U_GELU_TANH first, arg, kind
    .if \first
    { nop ; f32v2mul $a2:3, $a0:1, $a0:1 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2mul $a2:3, $a0:1, $a0:1 }
    .endif
    { nop ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { nop ; f32v2add $a2:3, $a2:3, $a8:9 }
    { nop ; f32v2mul $a2:3, $a2:3, $a0:1 }
    { nop ; f32v2mul $a2:3, $a2:3, $a10:11 }
    { nop ; f32tanh $a2, $a2 }
    { nop ; f32tanh $a3, $a3 }
    { nop ; f32v2add $a2:3, $a2:3, $a8:9 }
    { nop ; f32v2mul $a4:5, $a0:1, $a12:13 }
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2mul $a4:5, $a4:5, $a2:3 }
    .endm

    // The A&S 7.1.26 core on |z| in $a2:3 (the first bundle computed it):
    // w = z^2 -> $a4:5, t -> $a6:7, then r = 1 - poly(t) e^-w -> $a8:9.
    // $a10:11 = 1, $a12:13 streams the constants ($m4 = ew_consts), each
    // loaded one bundle ahead of its use; leaves $a12:13 = 2^126 and
    // the sign of x (clamped) in $a2:3, to be multiplied by it.
    .macro EW_ERF_CORE
    { ld64  $a12:13, $m4, $mzero, EW_K_P ; f32v2mul $a4:5, $a2:3, $a2:3 }
    { ld64  $a12:13, $m4, $mzero, EW_K_A5 ; f32v2mul $a6:7, $a2:3, $a12:13 }
    { nop ; f32v2add $a6:7, $a6:7, $a10:11 }
    { nop ; f32oox $a6, $a6 }
    { nop ; f32oox $a7, $a7 }
    { ld64  $a12:13, $m4, $mzero, EW_K_A4 ; f32v2mul $a8:9, $a6:7, $a12:13 }
    { ld64  $a12:13, $m4, $mzero, EW_K_A3 ; f32v2add $a8:9, $a8:9, $a12:13 }
    { nop ; f32v2mul $a8:9, $a8:9, $a6:7 }
    { ld64  $a12:13, $m4, $mzero, EW_K_A2 ; f32v2add $a8:9, $a8:9, $a12:13 }
    { nop ; f32v2mul $a8:9, $a8:9, $a6:7 }
    { ld64  $a12:13, $m4, $mzero, EW_K_A1 ; f32v2add $a8:9, $a8:9, $a12:13 }
    { nop ; f32v2mul $a8:9, $a8:9, $a6:7 }
    { ld64  $a12:13, $m4, $mzero, EW_K_TINY ; f32v2add $a8:9, $a8:9, $a12:13 }
    { nop ; f32v2mul $a8:9, $a8:9, $a6:7 }
    { nop ; f32v2sub $a4:5, $azeros, $a4:5 }
    { nop ; f32exp $a4, $a4 }
    { nop ; f32exp $a5, $a5 }
    { nop ; f32v2mul $a8:9, $a8:9, $a4:5 }
    { nop ; f32v2sub $a8:9, $a10:11, $a8:9 }
    // sign(x) = max(min(x, 2^-126), -2^-126) * 2^126 -> $a2:3
    { ld64  $a12:13, $m4, $mzero, EW_K_NEG_TINY ; f32v2min $a2:3, $a0:1, $a12:13 }
    { ld64  $a12:13, $m4, $mzero, EW_K_BIG ; f32v2max $a2:3, $a2:3, $a12:13 }
    .endm

    .macro EW_U_ERF first, arg, kind
    .if \first
    { nop ; f32v2abs $a2:3, $a0:1 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2abs $a2:3, $a0:1 }
    .endif
    EW_ERF_CORE
    { nop ; f32v2mul $a2:3, $a2:3, $a12:13 }
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2mul $a4:5, $a8:9, $a2:3 }
    .endm

    // gelu_erf: $a12:13 = 1/sqrt 2 on entry to every pair (reloaded at its end).
    .macro EW_U_GELU_ERF first, arg, kind
    .if \first
    { nop ; f32v2mul $a2:3, $a0:1, $a12:13 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2mul $a2:3, $a0:1, $a12:13 }
    .endif
    { nop ; f32v2abs $a2:3, $a2:3 }
    EW_ERF_CORE
    { ld64  $a12:13, $m4, $mzero, EW_K_HALF ; f32v2mul $a2:3, $a2:3, $a12:13 }
    { nop ; f32v2mul $a8:9, $a8:9, $a2:3 }
    { ld64  $a12:13, $m4, $mzero, EW_K_INV_SQRT2 ; f32v2mul $a4:5, $a0:1, $a12:13 }
    { nop ; f32v2add $a8:9, $a8:9, $a10:11 }
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2mul $a4:5, $a4:5, $a8:9 }
    .endm

    // floor (elementwise.h): r = f32int(x) in $a2:3, the masks r > x in
    // $a6:7 become -1.0 / +0.0 (f32fromi32), r + d, then the min with x
    // for floor(-0) = -0.
    .macro EW_FLOOR_CORE
    { nop ; f32int $a3, $a1 }
    { nop ; f32cmpgt $a6, $a2, $a0 }
    { nop ; f32cmpgt $a7, $a3, $a1 }
    { nop ; f32fromi32 $a6, $a6 }
    { nop ; f32fromi32 $a7, $a7 }
    { nop ; f32v2add $a2:3, $a2:3, $a6:7 }
    .endm

    .macro EW_U_FLOOR first, arg, kind
    .if \first
    { nop ; f32int $a2, $a0 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32int $a2, $a0 }
    .endif
    EW_FLOOR_CORE
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2min $a4:5, $a2:3, $a0:1 }
    .endm

    // ceil(x) = -floor(-x): $a10:11 = -1, both lanes.
    .macro EW_U_CEIL first, arg, kind
    .if \first
    { nop ; f32v2mul $a0:1, $a0:1, $a10:11 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32v2mul $a0:1, $a0:1, $a10:11 }
    .endif
    { nop ; f32int $a2, $a0 }
    EW_FLOOR_CORE
    { nop ; f32v2min $a4:5, $a2:3, $a0:1 }
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2mul $a4:5, $a4:5, $a10:11 }
    .endm

    // Casts: kind 1 (f32 pair -> two f16 in $a4), kind 2 (two f16 -> f32 pair).
    .macro EW_CAST_BODY first, arg, kind
    .if \kind == 1
    .if \first
    { nop ; f32v2tof16 $a4, $a0:1 }
    .else
    { st32step $a4, $m8, $m2+=, 1 ; f32v2tof16 $a4, $a0:1 }
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    .else
    .if \first
    { nop ; f16v2tof32 $a4:5, $a0 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f16v2tof32 $a4:5, $a0 }
    .endif
    { ld32step $a0, $m6, $m0+=, 1 ; fnop }
    .endif
    .endm

    .section .text.elementwise, "ax"

// ---- shared pieces -------------------------------------------------------------
    .align 8
    .worker
ew_exit:
    { exitz $mzero ; fnop }
ew_bad_op:
    { trap  ELEMENTWISE_TRAP_BAD_OP ; fnop }

// ew_apart: $m1 = nonzero when two streams stepping together from $m1 and
// $m2 never touch one memory element (elementwise.h): |p - q| >= 32 KiB,
// or both in region 1 (address bit 19 set: 0x80000-0xfffff) and address
// bit 3 differs.  Called with `call $m10`; uses $m2-$m4.
ew_apart:
    { sub   $m3, $m1, $m2 ; fnop }
    { sub   $m4, $mzero, $m3 ; fnop }
    { max   $m3, $m3, $m4 ; fnop }
    { shr   $m3, $m3, 15 ; fnop }
    { min   $m4, $m1, $m2 ; fnop }
    { shr   $m4, $m4, 19 ; fnop }
    { xor   $m1, $m1, $m2 ; fnop }
    { shr   $m1, $m1, 3 ; fnop }
    { and   $m1, $m1, $m4 ; fnop }
    { or    $m1, $m1, $m3 ; fnop }
    { br    $m10 ; fnop }

// ---- vtx_binary_f32 --------------------------------------------------------------
// Per row: $m6 = in0 row, $m7 = in1 row, $m8 = out row, $m9 = rows left.
    .globl vtx_binary_f32
vtx_binary_f32:
    { ld32  $m9, $m13, $mzero, BINARY_F32_V_ROWS ; fnop }
    { ld32  $m0, $m13, $mzero, BINARY_F32_V_OP ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { cmpult $m1, $m0, ELEMENTWISE_BINARY_OPS ; fnop }
    { brz   $m1, ew_bad_op ; fnop }
    { ld32  $m6, $m13, $mzero, BINARY_F32_V_IN0 ; fnop }
    { ld32  $m7, $m13, $mzero, BINARY_F32_V_IN1 ; fnop }
    { ld32  $m8, $m13, $mzero, BINARY_F32_V_OUT ; fnop }
ew_bin_row:
    { ld32  $m5, $m13, $mzero, BINARY_F32_V_COLS ; fnop }
ew_bin_row_cols:
    // Choose the row's loop: $m0 = op, $m11 = the table of loops, $m5 = cols.
    { ld32  $m0, $m13, $mzero, BINARY_F32_V_OP ; fnop }
    { ld32  $m2, $m13, $mzero, BINARY_F32_V_IN1_COL_STEP ; fnop }
    { setzi $m11, ew_tab_bin_general ; fnop }
    { or    $m1, $m6, $m8 ; fnop }
    { and   $m1, $m1, 4 ; fnop }
    { brnz  $m1, ew_bin_go ; fnop }          // in0/out row not 8-aligned: by element
    { brz   $m2, ew_bin_bcast ; fnop }
    { cmpeq $m1, $m2, 4 ; fnop }
    { brz   $m1, ew_bin_go ; fnop }          // another column step: by element
    { and   $m1, $m7, 4 ; fnop }
    { brnz  $m1, ew_bin_go ; fnop }          // in1 row not 8-aligned: by element
    { setzi $m11, ew_tab_bin_safe_contig ; fnop }
    { cmpult $m1, $m0, ELEMENTWISE_BINARY_V2_OPS ; fnop }
    { brz   $m1, ew_bin_go ; fnop }
    EW_FAST_STREAMS ew_bin_go
    { setzi $m11, ew_tab_bin_fast_contig ; fnop }
    { bri   ew_bin_go ; fnop }
ew_bin_bcast:
    { setzi $m11, ew_tab_bin_safe_bcast ; fnop }
    { cmpult $m1, $m0, ELEMENTWISE_BINARY_V2_OPS ; fnop }
    { brz   $m1, ew_bin_go ; fnop }
    { mov   $m1, $m6 ; fnop }
    { add   $m2, $m8, -EW_LAG_BYTES ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, ew_bin_go ; fnop }
    { setzi $m11, ew_tab_bin_fast_bcast ; fnop }
ew_bin_go:
    { shl   $m1, $m0, 2 ; fnop }
    { ld32  $m1, $m11, $m1, 0 ; fnop }
    { mov   $m4, $m5 ; fnop }
    { br    $m1 ; fnop }
ew_bin_next_row:
    { ld32  $m1, $m13, $mzero, BINARY_F32_V_ROW_STEP ; fnop }
    { ld32  $m2, $m13, $mzero, BINARY_F32_V_IN1_ROW_STEP ; fnop }
    { add   $m6, $m6, $m1 ; fnop }
    { add   $m8, $m8, $m1 ; fnop }
    { add   $m7, $m7, $m2 ; fnop }
    { add   $m9, $m9, -1 ; fnop }
    { brnz  $m9, ew_bin_row ; fnop }
    { exitz $mzero ; fnop }

// Every row loop is entered with $m4 = cols and returns to ew_bin_next_row.

// ---- vtx_binary_f32_split --------------------------------------------------------
// One record for the six workers (the compute set's vertex step is 0), of
// one row: worker w ($WSR) takes elements [w CHUNK, (w + 1) CHUNK) of it,
// cut at COLS, and runs them as vtx_binary_f32 runs a row.  The work split
// is the compiler's (CHUNK, even), the worker's share its own, as PopLibs'
// supervisor vertices split theirs.
    .globl vtx_binary_f32_split
vtx_binary_f32_split:
    { ld32  $m5, $m13, $mzero, BINARY_F32_V_COLS ; fnop }
    { ld32  $m0, $m13, $mzero, BINARY_F32_V_OP ; fnop }
    { cmpult $m3, $m0, ELEMENTWISE_BINARY_OPS ; fnop }
    { brz   $m3, ew_bad_op ; fnop }
    EW_WORKER_SHARE $m1, $m2, $m5, BINARY_F32_SPLIT_V_CHUNK     // its elements from $m1
    { ld32  $m2, $m13, $mzero, BINARY_F32_V_IN1_COL_STEP ; fnop }
    { ld32  $m6, $m13, $mzero, BINARY_F32_V_IN0 ; fnop }
    { ld32  $m7, $m13, $mzero, BINARY_F32_V_IN1 ; fnop }
    { ld32  $m8, $m13, $mzero, BINARY_F32_V_OUT ; fnop }
    { mul   $m2, $m2, $m1 ; fnop }
    { shl   $m1, $m1, 2 ; fnop }
    { add   $m6, $m6, $m1 ; fnop }
    { add   $m7, $m7, $m2 ; fnop }
    { add   $m8, $m8, $m1 ; fnop }
    { setzi $m9, 1 ; fnop }
    { bri   ew_bin_row_cols ; fnop }

// vtx_binary_f32_split_rows: the same split by rows: worker w takes rows
// [w CHUNK, (w + 1) CHUNK) cut at ROWS and runs them as vtx_binary_f32 does.
    .globl vtx_binary_f32_split_rows
vtx_binary_f32_split_rows:
    { ld32  $m9, $m13, $mzero, BINARY_F32_V_ROWS ; fnop }
    { ld32  $m0, $m13, $mzero, BINARY_F32_V_OP ; fnop }
    { cmpult $m3, $m0, ELEMENTWISE_BINARY_OPS ; fnop }
    { brz   $m3, ew_bad_op ; fnop }
    EW_WORKER_SHARE $m1, $m2, $m9, BINARY_F32_SPLIT_V_CHUNK     // its rows from $m1
    { ld32  $m2, $m13, $mzero, BINARY_F32_V_ROW_STEP ; fnop }
    { ld32  $m3, $m13, $mzero, BINARY_F32_V_IN1_ROW_STEP ; fnop }
    { ld32  $m6, $m13, $mzero, BINARY_F32_V_IN0 ; fnop }
    { ld32  $m7, $m13, $mzero, BINARY_F32_V_IN1 ; fnop }
    { ld32  $m8, $m13, $mzero, BINARY_F32_V_OUT ; fnop }
    { mul   $m2, $m2, $m1 ; fnop }
    { mul   $m3, $m3, $m1 ; fnop }
    { add   $m6, $m6, $m2 ; fnop }
    { add   $m7, $m7, $m3 ; fnop }
    { add   $m8, $m8, $m2 ; fnop }
    { bri   ew_bin_row ; fnop }

// Lag-3 loop, in1 contiguous: ld2xst64pace loads in0 (address 0) and in1
// (address 1, region 1), stores out (address 2).  L0 = $a0:3, L1 = $a4:7
// (in0 pair, in1 pair), R0 = $a8:9, R1 = $a10:11.
    .macro EW_BIN_FAST_CONTIG op
    { tapack $m0:1, $m6, $m7, $m8 ; fnop }
    { shr   $m3, $m4, 1 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; fnop }
    { ld2x64pace $a4:5, $a6:7, $m0:1+=, $mzero, 0 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; \op $a8:9, $a0:1, $a2:3 }
    { shr   $m5, $m3, 1 ; fnop }
    EW_RPT_HEAD $m5, $m2, 2
    { ld2xst64pace $a4:7, $a8:9, $m0:1+=, $mzero, 0 ; \op $a10:11, $a4:5, $a6:7 }
    { ld2xst64pace $a0:3, $a10:11, $m0:1+=, $mzero, 0 ; \op $a8:9, $a0:1, $a2:3 }
    EW_RPT_TAIL $m5
    { and   $m2, $m3, 1 ; fnop }
    { brz   $m2, 1f ; fnop }
    { ld2xst64pace $a4:7, $a8:9, $m0:1+=, $mzero, 0 ; \op $a10:11, $a4:5, $a6:7 }
    { nop ; mov $a8, $a10 }             // the odd last element's result, if any
1:
    { shl   $m1, $m3, 3 ; fnop }             // (after the loop: $m1 is half the packed pair)
    { and   $m2, $m4, 1 ; fnop }
    { brz   $m2, ew_bin_next_row ; fnop }
    { st32  $a8, $m8, $m1, 0 ; fnop }
    { bri   ew_bin_next_row ; fnop }
    .endm

// Lag-3 loop, in1 broadcast along the row: the scalar pair in $a12:13.
    .macro EW_BIN_FAST_BCAST op
    { ld32  $a12, $m7, $mzero, 0 ; fnop }
    { nop ; mov $a13, $a12 }
    EW_LDST_LAG3 \op, $a12:13, $m6, $m8, $m4
    { bri   ew_bin_next_row ; fnop }
    .endm

// Single-access loop: pair body (see EW_PAIR_LOOP; in1 offset $m1).
    .macro EW_BIN_SAFE_BODY first, op, bcast
    .ifc \op, f32div
    .if \first
    { nop ; f32div $a4, $a0, $a2 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; f32div $a4, $a0, $a2 }
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32div $a5, $a1, $a3 }
    .else
    .if \first
    { nop ; \op $a4:5, $a0:1, $a2:3 }
    .else
    { st64step $a4:5, $m8, $m2+=, 1 ; \op $a4:5, $a0:1, $a2:3 }
    .endif
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    .endif
    .if \bcast == 0
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    .endif
    .endm

    .macro EW_BIN_SAFE op, bcast
    { setzi $m0, 0 ; fnop }
    { setzi $m1, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    .if \bcast
    { ld32  $a2, $m7, $mzero, 0 ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; mov $a3, $a2 }
    .else
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    .endif
    { shr   $m3, $m4, 1 ; fnop }
    { brz   $m3, 1f ; fnop }
    EW_BIN_SAFE_BODY 1, \op, \bcast
    { add   $m5, $m3, -1 ; fnop }
    EW_RPT_HEAD $m5, $m10, (ew_bs_e\@ - ew_bs_b\@) / 8
ew_bs_b\@:
    EW_BIN_SAFE_BODY 0, \op, \bcast
ew_bs_e\@:
    EW_RPT_TAIL $m5
    { st64step $a4:5, $m8, $m2+=, 1 ; fnop }
1:
    { and   $m3, $m4, 1 ; fnop }
    { brz   $m3, ew_bin_next_row ; fnop }
    EW_BIN_SAFE_BODY 1, \op, \bcast
    { st32  $a4, $m8, $m2, 0 ; fnop }
    { bri   ew_bin_next_row ; fnop }
    .endm

// Element by element, any alignment and column step (\sop: the scalar op).
    .macro EW_BIN_GENERAL sop
    { ld32  $m2, $m13, $mzero, BINARY_F32_V_IN1_COL_STEP ; fnop }
    { mov   $m1, $m7 ; fnop }
    { setzi $m0, 0 ; fnop }
    { setzi $m3, 0 ; fnop }
    EW_RPT_HEAD $m4, $m5, 4
    { ld32step $a0, $m6, $m0+=, 1 ; fnop }
    { ld32  $a2, $m1, $mzero, 0 ; fnop }
    { add   $m1, $m1, $m2 ; \sop $a4, $a0, $a2 }
    { st32step $a4, $m8, $m3+=, 1 ; fnop }
    EW_RPT_TAIL $m4
    { bri   ew_bin_next_row ; fnop }
    .endm

ew_bin_fc_add:  EW_BIN_FAST_CONTIG f32v2add
ew_bin_fc_sub:  EW_BIN_FAST_CONTIG f32v2sub
ew_bin_fc_mul:  EW_BIN_FAST_CONTIG f32v2mul
ew_bin_fc_max:  EW_BIN_FAST_CONTIG f32v2max
ew_bin_fc_min:  EW_BIN_FAST_CONTIG f32v2min
ew_bin_fb_add:  EW_BIN_FAST_BCAST f32v2add
ew_bin_fb_sub:  EW_BIN_FAST_BCAST f32v2sub
ew_bin_fb_mul:  EW_BIN_FAST_BCAST f32v2mul
ew_bin_fb_max:  EW_BIN_FAST_BCAST f32v2max
ew_bin_fb_min:  EW_BIN_FAST_BCAST f32v2min
ew_bin_sc_add:  EW_BIN_SAFE f32v2add, 0
ew_bin_sc_sub:  EW_BIN_SAFE f32v2sub, 0
ew_bin_sc_mul:  EW_BIN_SAFE f32v2mul, 0
ew_bin_sc_max:  EW_BIN_SAFE f32v2max, 0
ew_bin_sc_min:  EW_BIN_SAFE f32v2min, 0
ew_bin_sc_div:  EW_BIN_SAFE f32div, 0
ew_bin_sb_add:  EW_BIN_SAFE f32v2add, 1
ew_bin_sb_sub:  EW_BIN_SAFE f32v2sub, 1
ew_bin_sb_mul:  EW_BIN_SAFE f32v2mul, 1
ew_bin_sb_max:  EW_BIN_SAFE f32v2max, 1
ew_bin_sb_min:  EW_BIN_SAFE f32v2min, 1
ew_bin_sb_div:  EW_BIN_SAFE f32div, 1
ew_bin_g_add:   EW_BIN_GENERAL f32add
ew_bin_g_sub:   EW_BIN_GENERAL f32sub
ew_bin_g_mul:   EW_BIN_GENERAL f32mul
ew_bin_g_max:   EW_BIN_GENERAL f32max
ew_bin_g_min:   EW_BIN_GENERAL f32min
ew_bin_g_div:   EW_BIN_GENERAL f32div

// ---- vtx_unary_f32 -----------------------------------------------------------------
// $m6 = in, $m8 = out, $m9 = n; $m0, $m2 = 0 (offsets) on entry to a function.
    .globl vtx_unary_f32
vtx_unary_f32:
    { ld32  $m9, $m13, $mzero, UNARY_F32_V_N ; fnop }
    { ld32  $m1, $m13, $mzero, UNARY_F32_V_FN ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { cmpult $m2, $m1, ELEMENTWISE_UNARY_FNS ; fnop }
    { brz   $m2, ew_bad_op ; fnop }
    { ld32  $m6, $m13, $mzero, UNARY_F32_V_IN ; fnop }
    { ld32  $m8, $m13, $mzero, UNARY_F32_V_OUT ; fnop }
ew_un_go:
    { setzi $m2, ew_tab_unary ; fnop }
    { shl   $m1, $m1, 2 ; fnop }
    { ld32  $m1, $m2, $m1, 0 ; fnop }
    { setzi $m0, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { br    $m1 ; fnop }

// vtx_unary_f32_split: one record for the six workers (the compute set's
// vertex step is 0): worker w ($WSR) takes elements [w CHUNK, (w + 1)
// CHUNK), cut at N (CHUNK even, the compiler's).
    .globl vtx_unary_f32_split
vtx_unary_f32_split:
    { ld32  $m9, $m13, $mzero, UNARY_F32_V_N ; fnop }
    { ld32  $m1, $m13, $mzero, UNARY_F32_V_FN ; fnop }
    { cmpult $m2, $m1, ELEMENTWISE_UNARY_FNS ; fnop }
    { brz   $m2, ew_bad_op ; fnop }
    EW_WORKER_SHARE $m3, $m4, $m9, UNARY_F32_SPLIT_V_CHUNK      // its elements from $m3
    { shl   $m3, $m3, 2 ; fnop }
    { ld32  $m6, $m13, $mzero, UNARY_F32_V_IN ; fnop }
    { ld32  $m8, $m13, $mzero, UNARY_F32_V_OUT ; fnop }
    { add   $m6, $m6, $m3 ; fnop }
    { add   $m8, $m8, $m3 ; fnop }
    { bri   ew_un_go ; fnop }

ew_un_relu:
    { mov   $m1, $m6 ; fnop }
    { add   $m2, $m8, -EW_LAG_BYTES ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, 5f ; fnop }
    EW_LDST_LAG3 f32v2max, $azeros, $m6, $m8, $m9
    { exitz $mzero ; fnop }
5:
    { setzi $m2, 0 ; fnop }
    EW_PAIR_LOOP EW_U_V2, f32v2max, 0
ew_un_abs:
    { mov   $m1, $m6 ; fnop }
    { add   $m2, $m8, -EW_LAG_BYTES ; fnop }
    { call  $m10, ew_apart ; fnop }
    { brz   $m1, 5f ; fnop }
    EW_LDST_LAG3 f32v2abs, , $m6, $m8, $m9
    { exitz $mzero ; fnop }
5:
    { setzi $m2, 0 ; fnop }
    EW_PAIR_LOOP EW_U_V2, f32v2abs, 0
ew_un_neg:      EW_PAIR_LOOP EW_U_TWO, f32neg, 0
ew_un_exp:      EW_PAIR_LOOP EW_U_TWO, f32exp, 0
ew_un_log:      EW_PAIR_LOOP EW_U_TWO, f32ln, 0
ew_un_sqrt:     EW_PAIR_LOOP EW_U_TWO, f32sqrt, 0
ew_un_rsqrt:    EW_PAIR_LOOP EW_U_TWO, f32oorx, 0
ew_un_recip:    EW_PAIR_LOOP EW_U_TWO, f32oox, 0
ew_un_tanh:     EW_PAIR_LOOP EW_U_TWO, f32tanh, 0
ew_un_sigmoid:  EW_PAIR_LOOP EW_U_TWO, f32sigm, 0
ew_un_erf:
    { setzi $m4, ew_consts ; fnop }
    { ld64  $a10:11, $m4, $mzero, EW_K_ONE ; fnop }
    EW_PAIR_LOOP EW_U_ERF, 0, 0
ew_un_gelu_erf:
    { setzi $m4, ew_consts ; fnop }
    { ld64  $a10:11, $m4, $mzero, EW_K_ONE ; fnop }
    { ld64  $a12:13, $m4, $mzero, EW_K_INV_SQRT2 ; fnop }
    EW_PAIR_LOOP EW_U_GELU_ERF, 0, 0
ew_un_gelu_tanh:
    { setzi $m4, ew_consts ; fnop }
    { ld64  $a6:7, $m4, $mzero, EW_K_GELU_K ; fnop }
    { ld64  $a8:9, $m4, $mzero, EW_K_ONE ; fnop }
    { ld64  $a10:11, $m4, $mzero, EW_K_GELU_S ; fnop }
    { ld64  $a12:13, $m4, $mzero, EW_K_HALF ; fnop }
    EW_PAIR_LOOP EW_U_GELU_TANH, 0, 0
ew_un_scale_shift:
    { ld32  $a6, $m13, $mzero, UNARY_F32_V_A ; fnop }
    { ld32  $a8, $m13, $mzero, UNARY_F32_V_B ; mov $a7, $a6 }
    { nop ; mov $a9, $a8 }
    EW_PAIR_LOOP EW_U_SCALE_SHIFT, 0, 0

ew_un_floor:    EW_PAIR_LOOP EW_U_FLOOR, 0, 0
ew_un_ceil:
    { setzi $m4, ew_consts ; fnop }
    { ld64  $a10:11, $m4, $mzero, EW_K_MINUS_ONE ; fnop }
    EW_PAIR_LOOP EW_U_CEIL, 0, 0

// ---- casts -------------------------------------------------------------------------
// vtx_cast_f32_to_f16_sr: the same cast rounded stochastically: the worker's
// $FP_CTL (run gives it the supervisor's $FP_ICTL) set to ESR alone, which
// makes each f32v2tof16 / f32tof16 take its rounding bits from this
// context's PRNG (ISA2 §2.13.6); the next run starts from $FP_ICTL again.
    .globl vtx_cast_f32_to_f16_sr
vtx_cast_f32_to_f16_sr:
    { nop ; setzi $a0, 0x80000 }           // FP_CTL.ESR, bit 19
    { nop ; uput  $FP_CTL, $a0 }
// f32 -> f16 four elements at a time: two 64-bit loads and one 64-bit
// store, the two conversions (pair by pair, in order: the stochastic
// variant's PRNG steps as the pair loop takes them) in the loads' aux
// slots, 3 bundles for 4 elements (2 a pair before); the loop loads the
// next quad ahead (16 bytes past the last quad at most, within the read
// slack).  The last n mod 4 elements take the pair loop.
    .globl vtx_cast_f32_to_f16
vtx_cast_f32_to_f16:
    { ld32  $m9, $m13, $mzero, CAST_V_N ; fnop }
    { ld32  $m6, $m13, $mzero, CAST_V_IN ; fnop }
    { ld32  $m8, $m13, $mzero, CAST_V_OUT ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { setzi $m0, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { shr   $m7, $m9, 2 ; fnop }
    { brz   $m7, ew_c32_pairs ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    { ld64step $a2:3, $m6, $m0+=, 1 ; fnop }
    { and   $m9, $m9, 3 ; fnop }
    EW_RPT_HEAD $m7, $m5, 3
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2tof16 $a4, $a0:1 }
    { ld64step $a2:3, $m6, $m0+=, 1 ; f32v2tof16 $a5, $a2:3 }
    { st64step $a4:5, $m8, $m2+=, 1 ; fnop }
    EW_RPT_TAIL $m7
    { add   $m0, $m0, -16 ; fnop }              // back to the first element left
    { brz   $m9, ew_exit ; fnop }
ew_c32_pairs:
    EW_PAIR_LOOP EW_CAST_BODY, 0, 1

// f16 -> f32 four elements at a time: one 64-bit load and two 64-bit
// stores, the two conversions in their aux slots, 3 bundles for 4 elements
// (2 a pair before); the loop loads the next quad one bundle ahead (8 bytes
// past the last quad at most, within the read slack).  The last n mod 4
// elements take the pair loop.
    .globl vtx_cast_f16_to_f32
vtx_cast_f16_to_f32:
    { ld32  $m9, $m13, $mzero, CAST_V_N ; fnop }
    { ld32  $m6, $m13, $mzero, CAST_V_IN ; fnop }
    { ld32  $m8, $m13, $mzero, CAST_V_OUT ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { setzi $m0, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { shr   $m7, $m9, 2 ; fnop }
    { brz   $m7, ew_c16_pairs ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    { and   $m9, $m9, 3 ; f16v2tof32 $a4:5, $a0 }
    EW_RPT_HEAD $m7, $m5, 3
    { st64step $a4:5, $m8, $m2+=, 1 ; f16v2tof32 $a6:7, $a1 }
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    { st64step $a6:7, $m8, $m2+=, 1 ; f16v2tof32 $a4:5, $a0 }
    EW_RPT_TAIL $m7
    { add   $m0, $m0, -8 ; fnop }               // back to the first element left
    { brz   $m9, ew_exit ; fnop }
ew_c16_pairs:
    EW_PAIR_LOOP EW_CAST_BODY, 0, 2

// ---- scaled add (popops' scaledAddTo) -------------------------------------------------
// out[i] = x[i] + scale * y[i] with f32v2axpy ($TAS = scale): the product
// rounded to f32, then the sum, as a Mul followed by an Add.  f32v2axpy
// gives the result of the previous issue's operands (ISA2 §3.7.3.5.5), so
// each loop runs one issue behind its loads.
//
// vtx_scaled_add_f32, lag-3 pace loop (x, y, out apart, y in region 1):
// bundle c loads pair c into L(c mod 2) (L0 = $a0:3, L1 = $a4:7: x pair,
// y pair) with ld2xst64pace, feeds pair c - 1 from the other L to the
// axpy, whose output (pair c - 2) goes to R(c mod 2) (R0 = $a8:9, R1 =
// $a10:11), and stores R((c + 1) mod 2), pair c - 3.  No register is
// written and read in one bundle.  Loads run 3 pairs past the last.
    .globl vtx_scaled_add_f32
vtx_scaled_add_f32:
    { ld32  $m9, $m13, $mzero, SCALED_ADD_V_N ; fnop }
    { ld32  $m6, $m13, $mzero, SCALED_ADD_V_X ; fnop }
    { ld32  $m7, $m13, $mzero, SCALED_ADD_V_Y ; fnop }
    { ld32  $m8, $m13, $mzero, SCALED_ADD_V_OUT ; fnop }
    { ld32  $a0, $m13, $mzero, SCALED_ADD_V_SCALE ; fnop }
    { brz   $m9, ew_exit ; uput $TAS, $a0 }
    EW_FAST_STREAMS ew_sa_single
    { tapack $m0:1, $m6, $m7, $m8 ; fnop }
    { shr   $m3, $m9, 1 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; fnop }
    { ld2x64pace $a4:5, $a6:7, $m0:1+=, $mzero, 0 ; f32v2axpy $a10:11, $a2:3, $a0:1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; f32v2axpy $a8:9, $a6:7, $a4:5 }
    { shr   $m5, $m3, 1 ; fnop }
    EW_RPT_HEAD $m5, $m2, 2
    { ld2xst64pace $a4:7, $a8:9, $m0:1+=, $mzero, 0 ; f32v2axpy $a10:11, $a2:3, $a0:1 }
    { ld2xst64pace $a0:3, $a10:11, $m0:1+=, $mzero, 0 ; f32v2axpy $a8:9, $a6:7, $a4:5 }
    EW_RPT_TAIL $m5
    { and   $m2, $m3, 1 ; fnop }
    { brz   $m2, 1f ; fnop }
    { ld2xst64pace $a4:7, $a8:9, $m0:1+=, $mzero, 0 ; f32v2axpy $a10:11, $a2:3, $a0:1 }
    { nop ; mov $a8, $a10 }             // the odd last element's result, if any
1:
    { and   $m2, $m9, 1 ; fnop }
    { brz   $m2, ew_exit ; fnop }
    { shl   $m1, $m3, 3 ; fnop }
    { st32  $a8, $m8, $m1, 0 ; fnop }
    { exitz $mzero ; fnop }

// Single-access loop, three bundles a pair: the axpy of pair j (its
// output pair j - 1) rides with the load of x j + 1, then y j + 1 is
// loaded and pair j - 1 stored.  The first pair's body stores nothing;
// a flushing axpy gives the last pair.  Loads run one pair past the last.
// Q = pairs (the odd last element counted as one).
ew_sa_single:
    { setzi $m0, 0 ; fnop }
    { setzi $m1, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    { add   $m3, $m9, 1 ; fnop }
    { shr   $m3, $m3, 1 ; fnop }
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2axpy $a4:5, $a2:3, $a0:1 }
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    { add   $m5, $m3, -1 ; fnop }
    EW_RPT_HEAD $m5, $m4, 3
    { ld64step $a0:1, $m6, $m0+=, 1 ; f32v2axpy $a4:5, $a2:3, $a0:1 }
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    { st64step $a4:5, $m8, $m2+=, 1 ; fnop }
    EW_RPT_TAIL $m5
    { and   $m3, $m9, 1 ; f32v2axpy $a4:5, $azeros, $azeros }
    { brnz  $m3, 2f ; fnop }
    { st64step $a4:5, $m8, $m2+=, 1 ; fnop }
    { exitz $mzero ; fnop }
2:
    { st32  $a4, $m8, $m2, 0 ; fnop }
    { exitz $mzero ; fnop }

// vtx_scaled_add_f16: x and out f16, y f32; out = f16(f32(x) + scale y)
// (f16v2tof32, f32v2axpy, f32v2tof16: exact widening, the product and the
// sum in f32, one rounding to f16).  Three bundles a pair, results stored
// two pairs behind the loads: pair j is widened with the load of x j + 1,
// fed to the axpy (out: pair j - 1) with the load of y j + 1, and pair
// j - 1 narrowed while pair j - 2 is stored.  Loads run two pairs past
// the last (x 8 bytes, y 16).  An odd count's last element: its word is
// written again with the element in both halves (the padding element gets
// a copy, as vtx_cast_f32_to_f16 gives it).
// vtx_scaled_add_f16_sr: the same rounded stochastically ($FP_CTL.ESR,
// as vtx_cast_f32_to_f16_sr): each f32v2tof16 advances the context's PRNG.
    .globl vtx_scaled_add_f16_sr
vtx_scaled_add_f16_sr:
    { nop ; setzi $a0, 0x80000 }           // FP_CTL.ESR, bit 19
    { nop ; uput  $FP_CTL, $a0 }
    .globl vtx_scaled_add_f16
vtx_scaled_add_f16:
    { ld32  $m9, $m13, $mzero, SCALED_ADD_V_N ; fnop }
    { ld32  $m6, $m13, $mzero, SCALED_ADD_V_X ; fnop }
    { ld32  $m7, $m13, $mzero, SCALED_ADD_V_Y ; fnop }
    { ld32  $m8, $m13, $mzero, SCALED_ADD_V_OUT ; fnop }
    { ld32  $a0, $m13, $mzero, SCALED_ADD_V_SCALE ; fnop }
    { brz   $m9, ew_exit ; uput $TAS, $a0 }
    { setzi $m0, 0 ; fnop }
    { setzi $m1, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { add   $m3, $m9, 1 ; fnop }
    { shr   $m3, $m3, 1 ; fnop }              // Q pairs
    { ld32step $a0, $m6, $m0+=, 1 ; fnop }
    { ld64step $a2:3, $m7, $m1+=, 1 ; fnop }
    // pair 0: widen, axpy (its output is stale)
    { ld32step $a0, $m6, $m0+=, 1 ; f16v2tof32 $a4:5, $a0 }
    { ld64step $a2:3, $m7, $m1+=, 1 ; f32v2axpy $a6:7, $a2:3, $a4:5 }
    // pair 1 (past the end when Q = 1): result 0 narrowed
    { ld32step $a0, $m6, $m0+=, 1 ; f16v2tof32 $a4:5, $a0 }
    { ld64step $a2:3, $m7, $m1+=, 1 ; f32v2axpy $a6:7, $a2:3, $a4:5 }
    { nop ; f32v2tof16 $a8, $a6:7 }
    { add   $m5, $m3, -1 ; fnop }
    EW_RPT_HEAD $m5, $m4, 3
    { ld32step $a0, $m6, $m0+=, 1 ; f16v2tof32 $a4:5, $a0 }
    { ld64step $a2:3, $m7, $m1+=, 1 ; f32v2axpy $a6:7, $a2:3, $a4:5 }
    { st32step $a8, $m8, $m2+=, 1 ; f32v2tof16 $a8, $a6:7 }
    EW_RPT_TAIL $m5
    { and   $m3, $m9, 1 ; fnop }
    { brz   $m3, 3f ; fnop }
    // the odd last element again, alone, before its word is written (x
    // is still there in place): x in $a0 (lane 0), y in $a2
    { ld32  $a0, $m6, $m2, 0 ; fnop }
    { shl   $m1, $m2, 1 ; fnop }
    { ld32  $a2, $m7, $m1, 0 ; f16tof32 $a4, $a0 }
    { nop ; mov $a3, $a2 }
    { nop ; mov $a5, $a4 }
    { nop ; f32v2axpy $a6:7, $a2:3, $a4:5 }
    { nop ; f32v2axpy $a6:7, $azeros, $azeros }
    { nop ; f32tof16 $a8, $a6 }
3:
    { st32step $a8, $m8, $m2+=, 1 ; fnop }    // pair Q - 1
    { exitz $mzero ; fnop }

// ---- vtx_copy -------------------------------------------------------------------------
// $m6 = src, $m8 = dst, $m9 = bytes left.
    .globl vtx_copy
vtx_copy:
    { ld32  $m6, $m13, $mzero, COPY_V_SRC ; fnop }
    { ld32  $m8, $m13, $mzero, COPY_V_DST ; fnop }
    { ld32  $m9, $m13, $mzero, COPY_V_BYTES ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { xor   $m1, $m6, $m8 ; fnop }
    { and   $m1, $m1, 4 ; fnop }
    { brnz  $m1, ew_copy_words ; fnop }      // 8-byte phases differ: word by word
    { and   $m1, $m6, 4 ; fnop }
    { brz   $m1, 1f ; fnop }
    // Both 4 mod 8: one word, then 8-byte pairs.
    { ld32  $m1, $m6, $mzero, 0 ; fnop }
    { st32  $m1, $m8, $mzero, 0 ; fnop }
    { add   $m6, $m6, 4 ; fnop }
    { add   $m8, $m8, 4 ; fnop }
    { add   $m9, $m9, -4 ; fnop }
1:
    { mov   $m1, $m6 ; fnop }
    { add   $m2, $m8, -8 ; fnop }
    { call  $m10, ew_apart ; fnop }
    { shr   $m3, $m9, 3 ; fnop }             // pairs
    { brz   $m1, ew_copy_single ; fnop }
    // Lag-1 pace loop: bundle b loads pair b into $a0:1 or $a2:3 (by its
    // parity) and stores pair b - 1 from the other; the store stream runs
    // 8 bytes behind (apart(src, dst - 8)).  Reads one pair past the end.
    { ld64  $a0:1, $m6, $mzero, 0 ; fnop }
    { add   $m1, $m6, 8 ; fnop }
    { tapack $m0:1, $m1, $m1, $m8 ; fnop }
    { shr   $m5, $m3, 1 ; fnop }
    EW_RPT_HEAD $m5, $m2, 2
    { ldst64pace $a2:3, $a0:1, $m0:1+=, $mzero, 0 ; fnop }
    { ldst64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; fnop }
    EW_RPT_TAIL $m5
    { and   $m2, $m3, 1 ; fnop }
    { brz   $m2, ew_copy_tail ; fnop }
    { ldst64pace $a2:3, $a0:1, $m0:1+=, $mzero, 0 ; fnop }
    { bri   ew_copy_tail ; fnop }
ew_copy_single:
    { setzi $m0, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    { mov   $m5, $m3 ; fnop }
    EW_RPT_HEAD $m5, $m4, 2
    { ld64step $a0:1, $m6, $m0+=, 1 ; fnop }
    { st64step $a0:1, $m8, $m2+=, 1 ; fnop }
    EW_RPT_TAIL $m5
ew_copy_tail:
    // A last word (bytes 4 mod 8) at offset 8 * pairs.
    { and   $m2, $m9, 4 ; fnop }
    { brz   $m2, ew_exit ; fnop }
    { shl   $m3, $m3, 3 ; fnop }
    { ld32  $m1, $m6, $m3, 0 ; fnop }
    { st32  $m1, $m8, $m3, 0 ; fnop }
    { exitz $mzero ; fnop }
ew_copy_words:
    { shr   $m5, $m9, 2 ; fnop }
    { setzi $m0, 0 ; fnop }
    { setzi $m2, 0 ; fnop }
    EW_RPT_HEAD $m5, $m3, 2
    { ld32step $m1, $m6, $m0+=, 1 ; fnop }
    { st32step $m1, $m8, $m2+=, 1 ; fnop }
    EW_RPT_TAIL $m5
    { exitz $mzero ; fnop }

// ---- constants and dispatch tables ---------------------------------------------------
    .section .data.elementwise, "aw"
    .align 8
ew_consts:                              // pairs, indexed by EW_K_*
    .word 0x3ea7ba05, 0x3ea7ba05        // p = 0.3275911
    .word 0x3f87dc22, 0x3f87dc22        // a5 = 1.061405429
    .word 0xbfba00e3, 0xbfba00e3        // a4 = -1.453152027
    .word 0x3fb5f0e3, 0x3fb5f0e3        // a3 = 1.421413741
    .word 0xbe91a98e, 0xbe91a98e        // a2 = -0.284496736
    .word 0x3e827906, 0x3e827906        // a1 = 0.254829592
    .word 0x00800000, 0x00800000        // 2^-126
    .word 0x80800000, 0x80800000        // -2^-126
    .word 0x7e800000, 0x7e800000        // 2^126
    .word 0x3f800000, 0x3f800000        // 1
    .word 0x3f000000, 0x3f000000        // 1/2
    .word 0x3f3504f3, 0x3f3504f3        // 1/sqrt(2)
    .word 0x3d372713, 0x3d372713        // 0.044715
    .word 0x3f4c422a, 0x3f4c422a        // sqrt(2/pi)
    .word 0xbf800000, 0xbf800000        // -1
ew_tab_unary:                           // by enum elementwise_unary_fn
    .word ew_un_relu, ew_un_neg, ew_un_abs, ew_un_exp, ew_un_log, ew_un_sqrt, ew_un_rsqrt
    .word ew_un_recip, ew_un_tanh, ew_un_sigmoid, ew_un_erf, ew_un_gelu_erf, ew_un_gelu_tanh
    .word ew_un_scale_shift, ew_un_floor, ew_un_ceil
ew_tab_bin_fast_contig:                 // by enum elementwise_binary_op
    .word ew_bin_fc_add, ew_bin_fc_sub, ew_bin_fc_mul, ew_bin_fc_max, ew_bin_fc_min
ew_tab_bin_fast_bcast:
    .word ew_bin_fb_add, ew_bin_fb_sub, ew_bin_fb_mul, ew_bin_fb_max, ew_bin_fb_min
ew_tab_bin_safe_contig:
    .word ew_bin_sc_add, ew_bin_sc_sub, ew_bin_sc_mul, ew_bin_sc_max, ew_bin_sc_min, ew_bin_sc_div
ew_tab_bin_safe_bcast:
    .word ew_bin_sb_add, ew_bin_sb_sub, ew_bin_sb_mul, ew_bin_sb_max, ew_bin_sb_min, ew_bin_sb_div
ew_tab_bin_general:
    .word ew_bin_g_add, ew_bin_g_sub, ew_bin_g_mul, ew_bin_g_max, ew_bin_g_min, ew_bin_g_div
    .text

// ---- vtx_fill --------------------------------------------------------------------------
// Zeros: $m8 = dst (8-byte aligned), $m9 = bytes (a multiple of 4), one
// st64step a pair (nothing else can conflict: a single store stream), then
// a last word.  W = 9 + P + 4 (a rpt block of P = bytes / 8 pairs) + 2, +3
// with a last word; a zero-byte record: 3.
    .globl vtx_fill
vtx_fill:
    { ld32  $m8, $m13, $mzero, FILL_V_DST ; fnop }
    { ld32  $m9, $m13, $mzero, FILL_V_BYTES ; fnop }
    { brz   $m9, ew_exit ; fnop }
    { nop ; setzi $a0, 0 }
    { nop ; setzi $a1, 0 }
    { shr   $m3, $m9, 3 ; fnop }
    { setzi $m2, 0 ; fnop }
    { mov   $m5, $m3 ; fnop }
    { brz   $m5, ew_fill_tail ; fnop }
    EW_RPT_HEAD $m5, $m4, 1
    { st64step $a0:1, $m8, $m2+=, 1 ; fnop }
    EW_RPT_TAIL $m5
ew_fill_tail:
    { and   $m2, $m9, 4 ; fnop }
    { brz   $m2, ew_exit ; fnop }
    { shl   $m3, $m3, 3 ; fnop }
    { st32  $mzero, $m8, $m3, 0 ; fnop }
    { exitz $mzero ; fnop }
