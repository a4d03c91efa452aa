#!/usr/bin/env bash
# `ipusim debug PROG.elf --batch` as a user drives it: every debugger
# command (help lists them), its aliases and abbreviations, with scripts on
# stdin, and the exact answer each gives.  Three programs: a supervisor that
# calls a function each superstep and starts workers on a vertex state, a
# ring of four tiles that exchange, and a compiled matmul.  Cycles in the
# simulator are deterministic, so they are asserted; a run with stops ends
# with the cycles of `ipusim run`.
source "$(dirname "$0")/lib.sh"
cd "${WORK:?}" || exit 1

# ---- sessions ---------------------------------------------------------------
# A session is a list of commands, each followed by what its answer (the
# lines it printed up to the next prompt) must hold:
#   is TEXT      the whole answer is TEXT (lines joined by newlines)
#   has LINE     one line of the answer is exactly LINE
#   like REGEX   one line of the answer matches the extended REGEX
#   lacks REGEX  no line of the answer matches REGEX
# run_session NAME PROG [OPTION...] runs it (--batch, the commands on
# stdin, exit status 0 unless `status N` said otherwise) and checks each;
# then ANS[K] holds the answer of command K and SESSION_OUT the output.
session() { CMDS=(); WANTS=(); WANT_STATUS=0; }
cmd() { CMDS+=("$1"); }
want() { WANTS+=("${#CMDS[@]}"$'\x1f'"$1"$'\x1f'"$2"); }
is() { want is "$1"; }
has() { want has "$1"; }
like() { want like "$1"; }
lacks() { want lacks "$1"; }
status() { WANT_STATUS=$1; }

run_session() {
    local name=$1
    shift
    local out rc
    out=$(printf '%s\n' "${CMDS[@]}" | "$IPUSIM" debug "$@" --batch 2>&1)
    rc=$?
    SESSION_OUT=$out
    # ANS[k]: the answer of command k (1-based); ANS[0] the banner.
    ANS=()
    local k=0 line
    while IFS= read -r line; do
        if [[ $line == "(ipusim) "* ]]; then
            k=$((k + 1))
            if [ "${line#"(ipusim) "}" != "${CMDS[k - 1]}" ]; then
                echo "FAIL: $name: command $k echoed as '$line', expected '${CMDS[k - 1]}'"
                FAILED=$((FAILED + 1))
                return
            fi
            ANS[k]=""
        else
            ANS[k]+="$line"$'\n'
        fi
    done <<<"$out"
    if [ "$rc" -ne "$WANT_STATUS" ]; then
        echo "FAIL: $name: exit $rc, expected $WANT_STATUS"
        FAILED=$((FAILED + 1))
    else
        PASSED=$((PASSED + 1))
    fi
    local w n kind text answer ok
    for w in "${WANTS[@]}"; do
        n=${w%%$'\x1f'*}
        kind=${w#*$'\x1f'}
        text=${kind#*$'\x1f'}
        kind=${kind%%$'\x1f'*}
        answer=${ANS[n]-}
        answer=${answer%$'\n'}
        case $kind in
        is) [ "$answer" = "$text" ] && ok=1 || ok=0 ;;
        has) grep -qxF -- "$text" <<<"$answer" && ok=1 || ok=0 ;;
        like) grep -qE -- "$text" <<<"$answer" && ok=1 || ok=0 ;;
        lacks) grep -qE -- "$text" <<<"$answer" && ok=0 || ok=1 ;;
        esac
        if [ "$ok" -eq 1 ]; then
            PASSED=$((PASSED + 1))
        else
            echo "FAIL: $name: '${CMDS[n - 1]}' (command $n): expected ($kind)"
            sed 's/^/    /' <<<"$text"
            echo "  got:"
            sed 's/^/    /' <<<"$answer"
            FAILED=$((FAILED + 1))
        fi
    done
}

# The chip cycles `ipusim run` reports for PROG [OPTION...].
run_cycles() {
    "$IPUSIM" run "$@" | awk '/^chip +tiles/ { getline; print $4; exit }'
}

# ---- the programs -------------------------------------------------------------

# One tile: each superstep the supervisor calls bump (which counts in
# `counter` and returns with br $lr), then starts six workers on the vertex
# state at vstate: each reads the word, adds 3 and writes it back.  Three
# supersteps.
cat > calls.S <<'ASM'
 .tile 0
 .text
__supervisor:
 setzi $m8, 3
 setzi $m1, worker
 setzi $m2, vstate
loop:
 call $lr, bump
 runall $m1, $m2, $mzero
 sync 0
 sync 1
 add $m8, $m8, -1
 brnz $m8, loop
 exitz $mzero
bump:
 setzi $m4, counter
 ld32 $m3, $m4, $mzero, 0
 add $m3, $m3, 1
 st32 $m3, $m4, $mzero, 0
 br $lr
worker:
 ld32 $m0, $m13, $mzero, 0
 add $m0, $m0, 3
 st32 $m0, $m13, $mzero, 0
 exitz $mzero
 .data
counter: .word 0
vstate: .word 10, 0
consts: .float 1.5, -0.25
halves: .f16 2.5, -3
ASM

# Four tiles in a ring (test_debug.sh's two, twice): six workers count to 5
# and store, the supervisors send 16 bytes to the next tile and receive
# from the previous one, sync 1; twice.
{ cat "$CLI_DIR/ring_tile.S"; printf 'TILE 0, 1, 3\nTILE 1, 2, 0\nTILE 2, 3, 1\nTILE 3, 0, 2\n'; } > ring.S

"$IPUSIM" asm calls.S -o calls.elf >/dev/null || { echo "FAIL: cannot assemble calls.S"; exit 1; }
"$IPUSIM" asm ring.S -o ring.elf >/dev/null || { echo "FAIL: cannot assemble ring.S"; exit 1; }
"$IPUSIM" compile matmul:64x64x64 -o m.elf >/dev/null || { echo "FAIL: cannot compile matmul"; exit 1; }

# The matmul's input a[i][j] = (64 i + j) mod 2048 in f16 (exact).
bytes=""
for ((n = 0; n < 4096; n++)); do
    v=$((n % 2048)) bits=0
    if ((v)); then
        e=10
        while ((!(v >> e))); do e=$((e - 1)); done
        bits=$((((e + 15) << 10) | ((v << (10 - e)) & 0x3ff)))
    fi
    printf -v pair '\\x%02x\\x%02x' $((bits & 255)) $((bits >> 8))
    bytes+=$pair
done
printf "$bytes" > a.bin

calls_cycles=$(run_cycles calls.elf)
ring_cycles=$(run_cycles ring.elf)
m_cycles=$(run_cycles m.elf --input a=a.bin)
check "ipusim run: calls.elf takes 381 cycles" test "$calls_cycles" = 381
check "ipusim run: ring.elf takes 729 cycles" test "$ring_cycles" = 729
check "ipusim run: m.elf takes 8902 cycles" test "$m_cycles" = 8902

# ---- breakpoints, the frame, next / step / stepi / until / finish -----------

session
cmd 'break bump'
is 'Breakpoint 1: tile 0, pc 0x4c028 <bump> (calls.S:16)'
cmd 'run'
is 'Starting calls.elf on gc200 (1 tile with code).
Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4
   0x4c028:  setzi $m4, 0x80000'
cmd 'backtrace'
is '#0 tile 0, supervisor (running), pc 0x4c028 <bump> (calls.S:16)
#1 return address $lr 0x4c010 <loop+0x4> (calls.S:9) (if the code was called)
  cycle 4, superstep 0 of chip 0, paused (breakpoint)'
cmd 'bt'
has '#1 return address $lr 0x4c010 <loop+0x4> (calls.S:9) (if the code was called)'
cmd 'where'
has '#0 tile 0, supervisor (running), pc 0x4c028 <bump> (calls.S:16)'
cmd 'info frame'
is 'tile 0, supervisor (running), pc 0x4c028 <bump> (calls.S:16)
  in bump at 0x4c028
  $lr ($m10) 0x4c010 <loop+0x4> (calls.S:9)
  $sp ($m11) 0x0
  may issue from cycle 4 (the tile is at cycle 4)'
cmd 'print $lr'
is '$lr = 0x0004c010 (311312, 311312)'
cmd 'print/a $lr'
is '$lr = 0x4c010 <loop+0x4>'
cmd 'print $pc'
is '$pc = 0x0004c028 (311336, 311336)'
cmd 'print/x $m8'
is '$m8 = 0x3'
cmd 'p $m8 - 1'
is '$m8 - 1 = 2'
# next inside bump, then next 3 to its last line; step returns to the caller.
cmd 'next'
is 'tile 0, supervisor, pc 0x4c02c <bump+0x4> (calls.S:17), cycle 5
   0x4c02c:  ld32 $m3, $m4, $mzero, 0'
cmd 'n 3'
is 'tile 0, supervisor, pc 0x4c038 <bump+0x10> (calls.S:20), cycle 8
   0x4c038:  br $m10'
cmd 'step'
is 'tile 0, supervisor, pc 0x4c010 <loop+0x4> (calls.S:9), cycle 9
   0x4c010:  runall $m1, $m2, $mzero'
# finish on the supervisor: to the end of the superstep.
cmd 'finish'
is 'Run till the end of the superstep (the supervisor runs the tile'"'"'s program).
superstep 0 of chip 0 ended (sync 1) at cycle 126'
# stepi: the issue it made and what is next.
cmd 'stepi'
is 'tile 0, supervisor, pc 0x4c01c <loop+0x10> (calls.S:12), cycle 127
   0x4c01c:  add $m8, $m8, -1
next: pc 0x4c020 <loop+0x14> (calls.S:13)'
# A step that arrives at a breakpoint reports it; the next step issues there.
cmd 'si 2'
is 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130
   0x4c028:  setzi $m4, 0x80000'
cmd 'delete 1'
is 'Deleted breakpoint 1.'
cmd 'stepi 3'
like '^   0x4c030:  add \$m3, \$m3, 1$'
has 'next: pc 0x4c034 <bump+0xc> (calls.S:19)'
# finish again: superstep 1 ends at 252; next over the call of bump.
cmd 'step 2'
is 'tile 0, supervisor, pc 0x4c010 <loop+0x4> (calls.S:9), cycle 135
   0x4c010:  runall $m1, $m2, $mzero'
cmd 'fin'
has 'superstep 1 of chip 0 ended (sync 1) at cycle 252'
cmd 'until loop'
is 'tile 0, supervisor, pc 0x4c00c <loop> (calls.S:8), cycle 255
   0x4c00c:  call $m10, bump'
cmd 'next'
is 'tile 0, supervisor, pc 0x4c010 <loop+0x4> (calls.S:9), cycle 261
   0x4c010:  runall $m1, $m2, $mzero'
cmd 'print *(u32*)counter'
is '*(u32*)counter = 3'
# until LOCATION (TILE:ADDR) and until with no argument: past the loop's
# back edge, over the call in its body, to the line after it.
cmd 'until 0:0x4c020'
is 'tile 0, supervisor, pc 0x4c020 <loop+0x14> (calls.S:13), cycle 379
   0x4c020:  brnz $m8, loop'
cmd 'print $m8'
is '$m8 = 0x00000000 (0, 0)'
cmd 'u'
is 'tile 0, supervisor, pc 0x4c024 <loop+0x18> (calls.S:14), cycle 380
   0x4c024:  exitz $mzero'
cmd 'continue'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
cmd 'stats'
like "^  so far: 109 instructions, 109 issues, latest tile cycle $calls_cycles, 4 supersteps ended, "
has '  tile 0: cycle 381, 109 instructions (37 supervisor, 72 worker issues), 2 idle slot cycles, 0 exchange stall cycles, 3 syncs'
like "^  chip 0: $calls_cycles cycles \(0\.288 us\), 4 supersteps, compute 111, exchange 0, sync 270, wait 0 cycles"
cmd 'c'
is "error: the program is not running (it has ended; 'run' starts it again)"
cmd 'next'
is "error: next: the program is not running ('run' starts it)"
status 1
run_session "calls: break, frame, next/step/stepi/until/finish" calls.elf

# until from the start of the loop over the calls: until EXPR and until
# TILE:SYMBOL; next over a call that has a breakpoint where it returns.
session
cmd 'break 0:loop'
is 'Breakpoint 1: tile 0, pc 0x4c00c <loop> (calls.S:8)'
cmd 'break 0:0x4c010'
is 'Breakpoint 2: tile 0, pc 0x4c010 <loop+0x4> (calls.S:9)'
cmd 'r'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c00c <loop> (calls.S:8), cycle 3'
cmd 'next'
is 'Breakpoint 2, tile 0, supervisor, pc 0x4c010 <loop+0x4> (calls.S:9), cycle 9
   0x4c010:  runall $m1, $m2, $mzero'
cmd 'd 1 2'
is 'Deleted breakpoint 1.
Deleted breakpoint 2.'
cmd 'until $m3 == 2'
is 'The condition of until holds on tile 0 after the issue at pc 0x4c030
tile 0, supervisor, pc 0x4c034 <bump+0xc> (calls.S:19), cycle 133
   0x4c034:  st32 $m3, $m4, $mzero, 0'
cmd 'until $cycle >= 300'
like '^The condition of until holds on tile 0 after the issue at pc 0x4c01c$'
has 'tile 0, supervisor, pc 0x4c020 <loop+0x14> (calls.S:13), cycle 379'
cmd 'until 3 +'
is 'error: until: the expression is incomplete'
cmd 'c 2'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
status 1
run_session "calls: until EXPR, next to a breakpoint at the return" calls.elf

# until with no argument at the loop's back edge in its first superstep:
# round the loop (over the call in its body) until the line after it.
session
cmd 'break 0:0x4c020'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c020 <loop+0x14> (calls.S:13), cycle 127'
cmd 'delete 1'
cmd 'until'
is 'tile 0, supervisor, pc 0x4c024 <loop+0x18> (calls.S:14), cycle 380
   0x4c024:  exitz $mzero'
cmd 'print *(u32*)counter * 10 + $m8'
is '*(u32*)counter * 10 + $m8 = 30'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
run_session "calls: until past the loop of supersteps" calls.elf

# ---- workers: registers, contexts, finish, watchpoints, displays -----------

session
cmd 'break worker'
is 'Breakpoint 1: tile 0, pc 0x4c03c <worker> (calls.S:22)'
cmd 'run'
has 'Breakpoint 1, tile 0, worker 5, pc 0x4c03c <worker> (calls.S:22), cycle 10'
cmd 'delete 1'
cmd 'info registers'
has 'tile 0, worker 5 (running), pc 0x4c03c <worker> (calls.S:22)'
has '$m12 0x00000000   $m13 0x00080004   $m14 0x00000000   $m15 0x00000000'
like '^\$a0  0x00000000 0 +\$a1  0x00000000 0 '
has '$WSR 0x00000004   $VERTEX_BASE 0x00080004   $COUNT_L 0x0000000a'
cmd 'info registers w6'
has 'tile 0, worker 6 (running), pc 0x4c03c <worker> (calls.S:22)'
has '$WSR 0x00000005   $VERTEX_BASE 0x00080004   $COUNT_L 0x0000000a'
cmd 'i r sup'
has 'tile 0, supervisor (running), pc 0x4c014 <loop+0x8> (calls.S:10)'
like '^\$m0  0x00000000   \$m1  0x0004c03c   \$m2  0x00080004   \$m3  0x00000001$'
cmd 'info frame'
is 'tile 0, worker 5 (running), pc 0x4c03c <worker> (calls.S:22)
  in worker at 0x4c03c
  vertex state $VERTEX_BASE 0x80004 <vstate>
  $sp ($m11) 0x0
  may issue from cycle 10 (the tile is at cycle 10)'
cmd 'bt'
is '#0 tile 0, worker 5 (running), pc 0x4c03c <worker> (calls.S:22)
#1 started by the supervisor for the vertex state at 0x80004 <vstate>
  cycle 10, superstep 0 of chip 0, paused (breakpoint)'
cmd 'context'
is 'Context: worker 5 of tile 0.'
cmd 'tile'
is 'Tile 0 is selected.'
cmd 'ctx w6'
is 'tile 0, worker 6, pc 0x4c03c <worker> (calls.S:22), cycle 10
   0x4c03c:  ld32 $m0, $m13, $mzero, 0'
cmd 'context w7'
is "error: context needs sup or w1..w6, got 'w7'"
# Expressions with memory casts, on the worker's vertex state.
cmd 'print *(u32*)$m13'
is '*(u32*)$m13 = 10'
cmd 'print *(u32*)($m13 + 4) + 1'
is '*(u32*)($m13 + 4) + 1 = 1'
cmd 'print (f32)*(u32*)vstate / 4'
is '(f32)*(u32*)vstate / 4 = 2.5'
cmd 'print *(i32*)vstate - 20'
is '*(i32*)vstate - 20 = -10'
cmd 'print *(f32*)consts * 2'
is '*(f32*)consts * 2 = 3'
cmd 'print *(f16*)(halves + 2)'
is '*(f16*)(halves + 2) = -3'
cmd 'print/x *(u16*)halves'
is '*(u16*)halves = 0x4100'
cmd 'print &vstate'
is '&vstate = 0x80004 <vstate>'
cmd 'print vstate'
is '0x80004 <vstate>: 0x0000000a'
cmd 'print $tile + $context * 10'
is '$tile + $context * 10 = 60'
# next / step in worker 6, then finish: "Run till exit".
cmd 'next'
is 'tile 0, worker 6, pc 0x4c040 <worker+0x4> (calls.S:23), cycle 12
   0x4c040:  add $m0, $m0, 3'
cmd 'print $m0'
is '$m0 = 0x0000000a (10, 10)'
cmd 's'
is 'tile 0, worker 6, pc 0x4c044 <worker+0x8> (calls.S:24), cycle 18
   0x4c044:  st32 $m0, $m13, $mzero, 0'
cmd 'finish'
is 'Run till exit from worker 6 of tile 0.
Run till exit: worker 6 of tile 0 exited (its vertex returned) after the issue at pc 0x4c048
tile 0, supervisor, pc 0x4c014 <loop+0x8> (calls.S:10), cycle 30
   0x4c014:  sync 0'
cmd 'ctx'
is 'Context: supervisor of tile 0.'
cmd 'print *(u32*)vstate'
is '*(u32*)vstate = 13'
# watch SYMBOL (a change), rwatch SYMBOL (a read), their hits.
cmd 'watch vstate'
is 'Watchpoint 2: tile 0 0x80004 (4 bytes)'
cmd 'rwatch counter'
is 'Read watchpoint 3: tile 0 0x80000 (4 bytes)'
cmd 'c'
is 'Read watchpoint 3, tile 0 0x80000 (4 bytes): read of 4 bytes at 0x80000
by the issue at tile 0, supervisor, pc 0x4c02c <bump+0x4> (calls.S:17), cycle 132
   0x4c02c:  ld32 $m3, $m4, $mzero, 0'
cmd 'c'
is 'Watchpoint 2, tile 0 0x80004 (4 bytes) changed
  old: 0d 00 00 00
  new: 10 00 00 00
after the issue at tile 0, worker 5, pc 0x4c044 <worker+0x8> (calls.S:24), cycle 149
   0x4c044:  st32 $m0, $m13, $mzero, 0'
cmd 'c'
has 'by the issue at tile 0, supervisor, pc 0x4c02c <bump+0x4> (calls.S:17), cycle 258'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
2    watchpoint  keep tile 0 0x80004 (4 bytes)                 1
3    read watch  keep tile 0 0x80000 (4 bytes)                 2'
# display, display/x, info display, undisplay N / all.
cmd 'display/x *(u32*)vstate'
is '1: /x *(u32*)vstate = 0x10'
cmd 'display $superstep'
is '2: $superstep = 2'
cmd 'display'
is '1: /x *(u32*)vstate = 0x10
2: $superstep = 2'
cmd 'info display'
is 'Auto-display expressions now in effect:
Num Expression
1:  /x *(u32*)vstate
2:  $superstep'
cmd 'undisplay 1'
is 'Deleted display 1.'
cmd 'c'
is 'Watchpoint 2, tile 0 0x80004 (4 bytes) changed
  old: 10 00 00 00
  new: 13 00 00 00
after the issue at tile 0, worker 5, pc 0x4c044 <worker+0x8> (calls.S:24), cycle 275
   0x4c044:  st32 $m0, $m13, $mzero, 0
2: $superstep = 2'
cmd 'undisplay all'
is 'Deleted all displays.'
cmd 'info display'
is 'There are no auto-display expressions now.'
cmd 'delete all'
is 'Deleted all breakpoints.'
cmd 'info breakpoints'
is 'No breakpoints or watchpoints.'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
status 1
run_session "calls: workers, contexts, finish, watch/rwatch, display" calls.elf

# awatch: a read and a write; watch TILE:ADDR:BYTES.
session
cmd 'awatch vstate'
is 'Access watchpoint 1: tile 0 0x80004 (4 bytes)'
cmd 'w 0:0x80008:4'
is 'Watchpoint 2: tile 0 0x80008 (4 bytes)'
cmd 'run'
has 'Access watchpoint 1, tile 0 0x80004 (4 bytes): read of 4 bytes at 0x80004'
has 'by the issue at tile 0, worker 5, pc 0x4c03c <worker> (calls.S:22), cycle 11'
cmd 'c 6'
has 'Access watchpoint 1, tile 0 0x80004 (4 bytes): write of 4 bytes at 0x80004'
like '^by the issue at tile 0, worker 5, pc 0x4c044 <worker\+0x8> \(calls\.S:24\), cycle 23$'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    acc watch   keep tile 0 0x80004 (4 bytes)                 7
2    watchpoint  keep tile 0 0x80008 (4 bytes)                 0'
cmd 'delete 1'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
run_session "calls: awatch, watch TILE:ADDR:BYTES" calls.elf

# ---- conditions: break if, condition, tbreak, hit counts ---------------------

session
cmd 'break 0:bump if $m8 == 1'
is 'Breakpoint 1: tile 0, pc 0x4c028 <bump> (calls.S:16) if $m8 == 1'
cmd 'tbreak worker'
is 'Temporary breakpoint 2: tile 0, pc 0x4c03c <worker> (calls.S:22)'
cmd 'break superstep 1'
is 'Breakpoint 3: end of superstep 1'
cmd 'tb 0:0x4c020'
is 'Temporary breakpoint 4: tile 0, pc 0x4c020 <loop+0x14> (calls.S:13)'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              0
        stop only if $m8 == 1
2    breakpoint  del  tile 0, pc 0x4c03c (worker)              0
3    superstep   keep end of superstep 1                       0
4    breakpoint  del  tile 0, pc 0x4c020 (0:0x4c020)           0'
cmd 'run'
has 'Temporary breakpoint 2, tile 0, worker 5, pc 0x4c03c <worker> (calls.S:22), cycle 10'
cmd 'continue'
has 'Temporary breakpoint 4, tile 0, supervisor, pc 0x4c020 <loop+0x14> (calls.S:13), cycle 127'
# Both temporary breakpoints are gone; the condition skipped two calls.
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              0
        stop only if $m8 == 1
3    superstep   keep end of superstep 1                       0'
cmd 'c'
is 'Breakpoint 3, superstep 1 of chip 0 ended (sync 1) at cycle 252'
cmd 'c'
is 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 256
   0x4c028:  setzi $m4, 0x80000'
cmd 'print $m8'
is '$m8 = 0x00000001 (1, 1)'
cmd 'info breakpoints'
has '1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              1'
has '3    superstep   keep end of superstep 1                       1'
# condition N EXPR: the second run stops at the second call only.
cmd 'condition 1 $m8 == 2'
is 'Breakpoint 1 stops if $m8 == 2'
cmd 'delete 3'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              2
        stop only if $m8 == 2'
# condition N: the condition is removed; all three calls stop.
cmd 'condition 1'
is 'Breakpoint 1 now stops unconditionally.'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              2'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4'
cmd 'continue 2'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 256'
cmd 'info breakpoints'
has '1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              5'
cmd 'condition 9 1'
is 'error: no breakpoint number 9'
cmd 'condition 1 $m8 =='
is "error: condition '\$m8 ==': the expression is incomplete"
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
status 1
run_session "calls: break if, condition, tbreak, hits" calls.elf

# ---- memory and code: x/NFMT, disassemble ------------------------------------

session
cmd 'x/3x counter'
is '0x80000 <counter>: 0x00000000 0x0000000a 0x00000000'
cmd 'break 0:0x4c010'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c010 <loop+0x4> (calls.S:9), cycle 9'
cmd 'x/2x vstate'
is '0x80004 <vstate>: 0x0000000a 0x00000000'
cmd 'x/2d vstate - 4'
is '0x80000 <counter>: 1 10'
cmd 'x/2u counter'
is '0x80000 <counter>: 1 10'
cmd 'x/2f consts'
is '0x8000c <consts>: 1.5 -0.25'
cmd 'x/2h halves'
is '0x80014 <halves>: 2.5 -3'
cmd 'x/8b counter'
is '0x80000 <counter>: 01 00 00 00 0a 00 00 00'
cmd 'x counter'
is '0x80000 <counter>: 0x00000001'
cmd 'x/3i $pc'
is '=>b 0x4c010 <loop+0x4> (calls.S:9):  runall $m1, $m2, $mzero
    0x4c014 <loop+0x8> (calls.S:10):  sync 0
    0x4c018 <loop+0xc> (calls.S:11):  sync 1'
cmd 'x/2i bump'
is '    0x4c028 <bump> (calls.S:16):  setzi $m4, 0x80000
    0x4c02c <bump+0x4> (calls.S:17):  ld32 $m3, $m4, $mzero, 0'
cmd 'x/2i $lr + 24'
is '    0x4c028 <bump> (calls.S:16):  setzi $m4, 0x80000
    0x4c02c <bump+0x4> (calls.S:17):  ld32 $m3, $m4, $mzero, 0'
# disassemble: around the pc (=> and b marks), from ADDR, N instructions.
cmd 'disassemble'
is '    0x4c004 <__supervisor+0x4> (calls.S:5):  setzi $m1, 0x4c03c
    0x4c008 <__supervisor+0x8> (calls.S:6):  setzi $m2, 0x80004
    0x4c00c <loop> (calls.S:8):  call $m10, bump
=>b 0x4c010 <loop+0x4> (calls.S:9):  runall $m1, $m2, $mzero
    0x4c014 <loop+0x8> (calls.S:10):  sync 0
    0x4c018 <loop+0xc> (calls.S:11):  sync 1
    0x4c01c <loop+0x10> (calls.S:12):  add $m8, $m8, -1
    0x4c020 <loop+0x14> (calls.S:13):  brnz $m8, loop'
cmd 'disas worker 2'
is '    0x4c03c <worker> (calls.S:22):  ld32 $m0, $m13, $mzero, 0
    0x4c040 <worker+0x4> (calls.S:23):  add $m0, $m0, 3'
cmd 'disassemble 0x4c024 1'
is '    0x4c024 <loop+0x18> (calls.S:14):  exitz $mzero'
# print/FMT of numbers and C's operators.
cmd 'print/t 5'
is '5 = 101'
cmd 'print/o 8'
is '8 = 010'
cmd 'print/c 65'
is "65 = 65 'A'"
cmd 'print/d -1'
is '-1 = -1'
cmd 'print/f 1069547520'
is '1069547520 = 1.5'
cmd 'print (1 << 4) | 3'
is '(1 << 4) | 3 = 19'
cmd 'print 7 / 2 + 7 % 4'
is '7 / 2 + 7 % 4 = 6'
cmd 'print -7 >> 1'
is '-7 >> 1 = -4'
cmd 'print 3 > 2 && !0'
is '3 > 2 && !0 = 1'
cmd 'print ~0 ^ 5'
is '~0 ^ 5 = -6'
cmd 'print $mzero'
is '$mzero = 0x00000000 (0, 0)'
cmd 'print $a0'
is '$a0 = 0x00000000 (f32 0, f16 [0, 0])'
cmd 'print $WSR'
is '$WSR = 0x00000007 (7, 7)'
cmd 'print $cycle'
is '$cycle = 9'
cmd 'print 1/0'
is 'error: division by zero'
cmd 'print $bogus'
is "error: unknown register '\$bogus' (\$m0-\$m15, \$a0-\$a15, \$pc or a CSR such as \$FP_CTL)"
cmd 'print'
like '^error: '
cmd 'x/2q counter'
like '^error: '
status 1
run_session "calls: x/NFMT, disassemble, print/FMT" calls.elf

# ---- going back: goto, reverse-stepi, reverse-continue, reverse-next-superstep

session
cmd 'break 0:bump'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4'
cmd 'c'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130'
cmd 'next-superstep'
is 'superstep 1 of chip 0 ended (sync 1) at cycle 252'
# A breakpoint on the way ends next-superstep.
cmd 'ns'
is 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 256
   0x4c028:  setzi $m4, 0x80000'
cmd 'ns'
is 'superstep 2 of chip 0 ended (sync 1) at cycle 378'
cmd 'info supersteps'
is 'chip  step ended_by  start_cycle    end_cycle     cycles  busiest instructions
   0     0 sync 1              0          126        126        0           36
   0     1 sync 1            126          252        126        0           35
   0     2 sync 1            252          378        126        0           35'
cmd 'info checkpoints'
like '^4 checkpoints, [0-9.]+ MiB of host memory \(budget 1024 MiB\), one every 1 supersteps$'
has ' Num   supersteps   latest cycle             issues      own KiB'
like '^   0            0              0                  0 +[0-9.]+$'
like '^   1            1            126                 36 +[0-9.]+$'
like '^   3            3            378                106 +[0-9.]+$'
# goto superstep N: the memory, registers and cycle at that superstep's end.
cmd 'goto superstep 0'
is 'At the end of superstep 0 of chip 0 (sync 1) at cycle 126.'
cmd 'print *(u32*)vstate + *(u32*)counter * 100'
is '*(u32*)vstate + *(u32*)counter * 100 = 113'
cmd 'print $cycle'
is '$cycle = 126'
cmd 'print $superstep'
is '$superstep = 1'
cmd 'goto superstep 1'
is 'At the end of superstep 1 of chip 0 (sync 1) at cycle 252.'
cmd 'print *(u32*)vstate + *(u32*)counter * 100'
is '*(u32*)vstate + *(u32*)counter * 100 = 216'
cmd 'goto superstep 9'
like '^error: chip 0 has no superstep 9 \(it ran 4\)$'
# A fresh run to compare: reverse-stepi and reverse-continue.
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4'
cmd 'stepi 4'
is 'tile 0, supervisor, pc 0x4c034 <bump+0xc> (calls.S:19), cycle 8
   0x4c034:  st32 $m3, $m4, $mzero, 0
next: pc 0x4c038 <bump+0x10> (calls.S:20)'
cmd 'reverse-stepi'
is 'tile 0, supervisor, pc 0x4c030 <bump+0x8> (calls.S:18), cycle 7
   0x4c030:  add $m3, $m3, 1
next: pc 0x4c034 <bump+0xc> (calls.S:19)'
cmd 'print *(u32*)counter'
is '*(u32*)counter = 0'
cmd 'rsi 2'
is 'tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 5
   0x4c028:  setzi $m4, 0x80000
next: pc 0x4c02c <bump+0x4> (calls.S:17)'
cmd 'rsi 100'
is 'At the start of the run: tile 0 has issued nothing yet.'
cmd 'c 2'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130'
cmd 'info breakpoints'
has '1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              6'
cmd 'reverse-continue'
is 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4
   0x4c028:  setzi $m4, 0x80000'
cmd 'rc'
is 'No breakpoint stopped the run before; at the start of the run.'
cmd 'info breakpoints'
has '1    breakpoint  keep tile 0, pc 0x4c028 (0:bump)              6'
cmd 'delete 1'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
cmd 'reverse-next-superstep'
is 'At the end of superstep 2 of chip 0 (sync 1) at cycle 378.'
cmd 'rns'
is 'At the end of superstep 1 of chip 0 (sync 1) at cycle 252.'
cmd 'print *(u32*)counter'
is '*(u32*)counter = 2'
cmd 'rns'
is 'At the end of superstep 0 of chip 0 (sync 1) at cycle 126.'
cmd 'rns'
is 'At the start of the run.'
cmd 'goto superstep 2'
is 'At the end of superstep 2 of chip 0 (sync 1) at cycle 378.'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
cmd 'stats'
like "^  so far: 109 instructions, 109 issues, latest tile cycle $calls_cycles, 4 supersteps ended, "
status 1
run_session "calls: goto, reverse-stepi, reverse-continue, reverse-next-superstep" calls.elf --checkpoint-every 1

# Without checkpoints there is no going back.
session
cmd 'goto superstep 0'
is "error: goto: the program has not run yet ('run' starts it)"
cmd 'info checkpoints'
is 'Checkpoints are off (--checkpoint-every 0).'
cmd 'break superstep 0'
cmd 'run'
is 'Starting calls.elf on gc200 (1 tile with code).
Breakpoint 1, superstep 0 of chip 0 ended (sync 1) at cycle 126'
cmd 'goto superstep 0'
is 'error: goto: no checkpoints (they are off: --checkpoint-every 0)'
cmd 'reverse-stepi'
is 'error: reverse-stepi: no checkpoints (they are off: --checkpoint-every 0)'
cmd 'reverse-continue'
is 'error: reverse-continue: no checkpoints (they are off: --checkpoint-every 0)'
cmd 'reverse-next-superstep'
is 'error: reverse-next-superstep: no checkpoints (they are off: --checkpoint-every 0)'
cmd 'c'
is "The program ended: $calls_cycles cycles, 109 instructions, 4 supersteps."
status 1
run_session "calls: --checkpoint-every 0" calls.elf --checkpoint-every 0

# ---- four tiles: locations, tiles, exchange, supersteps --------------------

session
cmd 'info tiles'
is '    tile        cycle        pc  symbol                   status
*      0            0   0x4c000  __supervisor             not started
       1            0   0x4c000  __supervisor             not started
       2            0   0x4c000  __supervisor             not started
       3            0   0x4c000  __supervisor             not started'
cmd 'break 1:worker'
is 'Breakpoint 1: tile 1, pc 0x4c040 <worker> (ring.S:27)'
cmd 'break loop'
is 'Breakpoint 2: loop on 4 tiles'
cmd 'tile 3'
cmd 'b 0x4c02c'
is 'Breakpoint 3: tile 3, pc 0x4c02c <loop+0xc> (ring.S:21)'
cmd 'break superstep 1'
is 'Breakpoint 4: end of superstep 1'
cmd 'break cycle 100'
is 'Breakpoint 5: cycle 100'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
1    breakpoint  keep tile 1, pc 0x4c040 (1:worker)            0
2    breakpoint  keep loop on 4 tiles                          0
3    breakpoint  keep tile 3, pc 0x4c02c (0x4c02c)             0
4    superstep   keep end of superstep 1                       0
5    cycle       keep cycle 100                                0'
# Tiles run to their next sync while one is stopped: the stops come tile by
# tile in each superstep.
cmd 'run'
is 'Starting ring.elf on gc200 (4 tiles with code).
Breakpoint 2, tile 0, supervisor, pc 0x4c020 <loop> (ring.S:18), cycle 8
   0x4c020:  runall $m1, $m2, $m4'
cmd 'c'
is 'Breakpoint 5, tile 0 reached cycle 100
tile 0, supervisor, pc 0x4c024 <loop+0x4> (ring.S:19), cycle 100
   0x4c024:  sync 0'
cmd 'c 2'
is 'Breakpoint 2, tile 1, supervisor, pc 0x4c020 <loop> (ring.S:18), cycle 8
   0x4c020:  runall $m1, $m2, $m4
Breakpoint 1, tile 1, worker 4, pc 0x4c040 <worker> (ring.S:27), cycle 9
   0x4c040:  setzi $m0, 4'
cmd 'print $m13'
is '$m13 = 0x00080050 (524368, 524368)'
cmd 'delete 1'
cmd 'c 2'
has 'Breakpoint 2, tile 3, supervisor, pc 0x4c020 <loop> (ring.S:18), cycle 8'
cmd 'c'
is 'Breakpoint 3, tile 3, supervisor, pc 0x4c02c <loop+0xc> (ring.S:21), cycle 217
   0x4c02c:  xrecv $m6, $m4, $m7'
cmd 'info tiles'
is '    tile        cycle        pc  symbol                   status
       0          219   0x4c030  loop+0x10                arriving at sync 1
       1          219   0x4c030  loop+0x10                arriving at sync 1
       2          219   0x4c030  loop+0x10                arriving at sync 1
*      3          217   0x4c02c  loop+0xc                 paused (breakpoint)'
cmd 'info tiles 1 2'
is '    tile        cycle        pc  symbol                   status
       1          219   0x4c030  loop+0x10                arriving at sync 1
       2          219   0x4c030  loop+0x10                arriving at sync 1
  ... 1 more tile: info tiles 3 [COUNT]'
cmd 'info tiles 9'
is "error: info tiles: FIRST must be 0 to 3 (the tiles with code, counted), got '9'"
# info exchange before and after the xrecv issues.
cmd 'info exchange'
is 'tile 3: 1 send, 0 receives in the current phase
  send 16 bytes from 0x80000 to tile 0 (pc 0x4c028, cycle 112)'
cmd 'stepi'
has 'next: pc 0x4c030 <loop+0x10> (ring.S:22)'
cmd 'info exchange'
has 'tile 3: 1 send, 1 receive in the current phase'
has '  receive 16 bytes at 0x80010 from tile 2 (pc 0x4c02c, cycle 217)'
cmd 'tile 9'
is 'error: tile 9 has no code in ring.elf'
cmd 't 0'
is 'tile 0, supervisor, pc 0x4c030 <loop+0x10> (ring.S:22), cycle 219
   0x4c030:  sync 1'
cmd 'next-superstep'
is 'superstep 0 of chip 0 ended (sync 1) at cycle 366'
cmd 'x/4x rbuf'
is '0x80010 <rbuf>: 0x0000000a 0x00000003 0x00000003 0x00000003'
cmd 'tile 3'
cmd 'x/4d rbuf'
is '0x80010 <rbuf>: 9 2 2 2'
cmd 'info supersteps'
is 'chip  step ended_by  start_cycle    end_cycle     cycles  busiest instructions
   0     0 sync 1              0          366        366        0          364'
cmd 'delete 2'
cmd 'c'
has 'Breakpoint 3, tile 3, supervisor, pc 0x4c02c <loop+0xc> (ring.S:21), cycle 577'
cmd 'c'
is 'Breakpoint 4, superstep 1 of chip 0 ended (sync 1) at cycle 726'
cmd 'info breakpoints'
is 'Num  Type        Disp Where                                    Hits
3    breakpoint  keep tile 3, pc 0x4c02c (0x4c02c)             2
4    superstep   keep end of superstep 1                       1
5    cycle       keep cycle 100                                1'
cmd 'stats'
is 'ring.elf: 4 tiles, stopped
  so far: 704 instructions, 704 issues, latest tile cycle 726, 2 supersteps ended, 0 f16 + 0 f32 AMP MACs
  tile 3: cycle 726, 176 instructions (20 supervisor, 156 worker issues), 256 idle slot cycles, 208 exchange stall cycles, 1 syncs'
cmd 'x/2x counts+48'
is '0x80050 <counts+0x30>: 0x0000000a 0x00000000'
cmd 'c'
is "The program ended: $ring_cycles cycles, 716 instructions, 3 supersteps."
cmd 'stats'
like "^  so far: 716 instructions, 716 issues, latest tile cycle $ring_cycles, 3 supersteps ended, "
like "^  chip 0: $ring_cycles cycles \(0\.550 us\), 3 supersteps, "
status 1
run_session "ring: locations, tiles, exchange, supersteps" ring.elf

# A worker's loop: next goes round it, until goes past it; finish.
session
cmd 'break 1:0x4c048'
is 'Breakpoint 1: tile 1, pc 0x4c048 <worker+0x8> (ring.S:29)'
cmd 'run'
has 'Breakpoint 1, tile 1, worker 4, pc 0x4c048 <worker+0x8> (ring.S:29), cycle 21'
cmd 'delete 1'
cmd 'next'
is 'tile 1, worker 4, pc 0x4c044 <worker+0x4> (ring.S:28), cycle 22
   0x4c044:  add $m2, $m2, 1'
cmd 'next'
is 'tile 1, worker 4, pc 0x4c048 <worker+0x8> (ring.S:29), cycle 34
   0x4c048:  brnzdec $m0, 0x4c044'
cmd 'until'
is 'tile 1, worker 4, pc 0x4c04c <worker+0xc> (ring.S:30), cycle 94
   0x4c04c:  st32 $m2, $m13, $mzero, 0'
cmd 'print $m2'
is '$m2 = 0x00000005 (5, 5)'
cmd 'finish'
is 'Run till exit from worker 4 of tile 1.
Run till exit: worker 4 of tile 1 exited (its vertex returned) after the issue at pc 0x4c050
tile 1, supervisor, pc 0x4c024 <loop+0x4> (ring.S:19), cycle 106
   0x4c024:  sync 0'
cmd 'x/d counts+48'
is '0x80050 <counts+0x30>: 5'
cmd 'continue'
is "The program ended: $ring_cycles cycles, 716 instructions, 3 supersteps."
run_session "ring: next, until past a worker's loop, finish" ring.elf

# The checkpoints the run keeps, going back across the exchange.
session
cmd 'break 0:0x4c034'
cmd 'run'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c034 <loop+0x14> (ring.S:23), cycle 366'
cmd 'c'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c034 <loop+0x14> (ring.S:23), cycle 726'
cmd 'info checkpoints'
like '^3 checkpoints, [0-9.]+ MiB of host memory \(budget 1 MiB\), one every 1 supersteps$'
has ' Num   supersteps   latest cycle             issues      own KiB'
like '^   1            1            366                364 +[0-9.]+$'
like '^   2            2            726                704 +[0-9.]+$'
cmd 'rc'
is 'Breakpoint 1, tile 0, supervisor, pc 0x4c034 <loop+0x14> (ring.S:23), cycle 366
   0x4c034:  add $m8, $m8, -1'
cmd 'goto superstep 0'
is 'At the end of superstep 0 of chip 0 (sync 1) at cycle 366.'
cmd 'tile 1'
cmd 'x/4x rbuf'
is '0x80010 <rbuf>: 0x00000007 0x00000000 0x00000000 0x00000000'
cmd 'c'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c034 <loop+0x14> (ring.S:23), cycle 366'
cmd 'delete all'
cmd 'c'
is "The program ended: $ring_cycles cycles, 716 instructions, 3 supersteps."
run_session "ring: checkpoints, reverse-continue and goto across the exchange" ring.elf \
    --checkpoint-every 1 --checkpoint-budget 1

# ---- a compiled program: tensors, memory, many tiles ------------------------

session
cmd 'info tensors'
is 'a: f16 [64,64] input (transient), 64 pieces, first on tile 0 at 0x55d08
c: f16 [64,64] output, 512 pieces, first on tile 505 at 0x805c0'
cmd 'break superstep 3'
is 'Breakpoint 1: end of superstep 3'
cmd 'break superstep 0'
cmd 'run'
is 'Starting m.elf on gc200 (1017 tiles with code).
Breakpoint 2, superstep 0 of chip 0 ended (sync 1) at cycle 3527'
# The input, from its pieces on 64 tiles: a slice, 8 values a line.
cmd 'print a[1, 0:10]'
is 'a: f16 [64,64] input (transient: its memory holds it until its last reader), 10 elements shown
  [1,0] 64 65 66 67 68 69 70 71
  [1,8] 72 73'
cmd 'print a[40][3]'
is 'a[40][3] = 515'
cmd 'print a[63][63] + a[0][1]'
is 'a[63][63] + a[0][1] = 2048'
cmd 'print a[64][0]'
is "error: index 64 is out of range for dimension 0 of 'a' (size 64)"
cmd 'print a[0, 0:65]'
is 'error: slice 0:65 is out of range for dimension 1 (size 64)'
cmd 'c'
is 'Breakpoint 1, superstep 3 of chip 0 ended (sync 1) at cycle 5466'
cmd 'tile 7'
is 'tile 7, supervisor, pc 0x513c8 <ctl_sync_chip>, cycle 5466
   0x513c8:  sync 1'
cmd 'x/4i $pc'
is '=>  0x513c8 <ctl_sync_chip>:  sync 1
    0x513cc <ctl_sync_chip+0x4>:  add $m9, $m9, 4
    0x513d0 <ctl_sync_chip+0x8>:  ld32 $m1, $m9, $mzero, 0
    0x513d4 <ctl_sync_chip+0xc>:  br $m1'
cmd 'info tiles'
has '*      7         5466   0x513c8  ctl_sync_chip            runnable'
has '  ... 953 more tiles: info tiles 64 [COUNT]'
lacks '^ +64 '
cmd 'info tiles 1010 3'
is '    tile        cycle        pc  symbol                   status
    1010         5466   0x513c8  ctl_sync_chip            runnable
    1011         5466   0x513c8  ctl_sync_chip            runnable
    1012         5466   0x513c8  ctl_sync_chip            runnable
  ... 4 more tiles: info tiles 1013 [COUNT]'
cmd 'tile 0'
cmd 'info memory'
has 'tile 0: 0x4c000-0xe7fff (624 KiB), 39 elements of 16 KiB'
has '  region 1 0x80000-0xe7fff (416 KiB): data, 2-way interleaved on 64-bit words'
has 'sections:'
like '^  \.bss\.0 +0x55d08-0x55d87 +128 bytes  data, writable, zero-filled$'
has 'tensors:'
like '^  a +0x55d08-0x55d87 elements 0\.\.63 \(f16\)$'
cmd 'continue'
is "The program ended: $m_cycles cycles, 278765 instructions, 5 supersteps."
# The output: a slice of a row, one element, and the same bytes read as
# tile memory on the tile that holds its first piece.
cmd 'print c[0, 0:10]'
like '^c: f16 \[64,64\] output, 10 elements shown$'
like '^  \[0,0\]( -?[0-9.]+){8}$'
like '^  \[0,8\]( -?[0-9.]+){2}$'
cmd 'tile 505'
cmd 'print c[0][1] == *(f16*)0x805c2 && c[0][7] == *(f16*)0x805ce'
is 'c[0][1] == *(f16*)0x805c2 && c[0][7] == *(f16*)0x805ce = 1'
cmd 'info memory'
like '^  c +0x805c0-0x805cf elements 0\.\.7 \(f16\)$'
cmd 'stats'
like "^  so far: 278765 instructions, [0-9]+ issues, latest tile cycle $m_cycles, 5 supersteps ended, "
status 1
run_session "matmul: tensors, memory, tiles" m.elf --input a=a.bin

# c[0][9] alone and in its slice are the same value.
session
cmd 'run'
cmd 'print c[0, 0:10]'
cmd 'print c[0][9]'
cmd 'print c'
like '^c: f16 \[64,64\] output, 4096 elements shown$'
like '^  \[63,56\]( -?[0-9.]+){8}$'
run_session "matmul: print c" m.elf --input a=a.bin
slice_9=$(awk '$1 == "[0,8]" { print $3 }' <<<"${ANS[2]}")
single_9=$(awk '{ print $3 }' <<<"${ANS[3]}")
check "matmul: c[0][9] ($single_9) is the 10th value of c[0, 0:10] ($slice_9)" \
    test -n "$slice_9" -a "$slice_9" = "$single_9"

# ---- help, aliases, abbreviations, source, quit -----------------------------

session
cmd 'help'
has 'Commands (help CMD for more):'
has '  run (r)                        run'
has '  until (u)                      until LOCATION | EXPR'
has '  backtrace (bt, where)          backtrace'
has '  print (p)                      print[/FMT] EXPR | TENSOR [SLICE]'
has '  goto                           goto superstep N'
has 'info WHAT: breakpoints registers tiles supersteps exchange tensors memory amp frame display checkpoints.'
has 'What LOCATION, EXPR, PLACE, ... may be: help arguments.'
cmd 'help next'
is 'next [N]  (alias: n)
  Run the selected context to its next source line, over calls (N times).
  N           a repeat count, 1 or more'
cmd 'help bt'
is "backtrace  (alias: bt, where)
  The selected tile and context: pc, symbol, source line, the caller (the supervisor's return address
  or the vertex a worker runs), cycle, superstep, state."
cmd 'h goto'
is "goto superstep N
  Go back (or forward) to the end of superstep N of the selected tile's chip: the nearest checkpoint
  at or before it is restored and the run re-executed from there, deterministically.
  superstep N the moment superstep N of the selected tile's chip ended"
cmd 'help arguments'
has 'The arguments the usages name:'
has '  LOCATION    TILE:ADDR, TILE:SYMBOL, SYMBOL (every tile that has it), ADDR (the selected tile),'
has '  CONTEXT     sup (the supervisor) or w1..w6 (a worker)'
has '  BP          a breakpoint or watchpoint number (info breakpoints)'
cmd 'help info'
has 'info WHAT  (alias: i)'
like '^  info tiles \[FIRST \[COUNT\]\] +Tiles with code: cycle, supervisor pc and state'
like '^  info checkpoints +The machine states kept for going back'
cmd 'help zzz'
is "error: unknown command 'zzz' (try 'help')"
cmd 'help re'
is "error: ambiguous command 're' (reverse-stepi, reverse-continue, ...)"
# Unique prefixes name commands; ambiguous ones are refused.
cmd 'cont'
is "error: ambiguous command 'cont' (continue, context, ...)"
cmd 'bre 0:bump'
is 'Breakpoint 1: tile 0, pc 0x4c028 <bump> (calls.S:16)'
cmd 'tbr 0:worker'
is 'Temporary breakpoint 2: tile 0, pc 0x4c03c <worker> (calls.S:22)'
cmd 'ru'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 4'
cmd 'disp $m8'
is '1: $m8 = 0x00000003 (3, 3)'
cmd 'undisp 1'
is 'Deleted display 1.'
cmd 'backt'
has '#0 tile 0, supervisor (running), pc 0x4c028 <bump> (calls.S:16)'
cmd 'contin'
has 'Temporary breakpoint 2, tile 0, worker 5, pc 0x4c03c <worker> (calls.S:22), cycle 10'
cmd 'wa 0:counter'
is 'Watchpoint 3: tile 0 0x80000 (4 bytes)'
cmd 'rw vstate'
is 'Read watchpoint 4: tile 0 0x80004 (4 bytes)'
cmd 'aw halves:2'
is 'Access watchpoint 5: tile 0 0x80014 (2 bytes)'
cmd 'del 3 4 5'
cmd 'cond 1 $m8 == 2'
is 'Breakpoint 1 stops if $m8 == 2'
cmd 'inf b'
like '^1    breakpoint  keep tile 0, pc 0x4c028 \(0:bump\) +1$'
cmd 'fin'
like '^Run till exit from worker 5 of tile 0\.$'
cmd 'ne'
is "error: ambiguous command 'ne' (next, next-superstep, ...)"
cmd 'n'
is 'tile 0, supervisor, pc 0x4c018 <loop+0xc> (calls.S:11), cycle 35
   0x4c018:  sync 1'
cmd 'stepi'
is 'tile 0, supervisor, pc 0x4c018 <loop+0xc> (calls.S:11), cycle 36
   0x4c018:  sync 1
next: pc 0x4c018 <loop+0xc> (calls.S:11)'
cmd 'rev'
is "error: ambiguous command 'rev' (reverse-stepi, reverse-continue, ...)"
cmd 'reverse-s'
is 'tile 0, supervisor, pc 0x4c014 <loop+0x8> (calls.S:10), cycle 35
   0x4c014:  sync 0
next: pc 0x4c018 <loop+0xc> (calls.S:11)'
cmd 'reverse-n'
is 'At the start of the run.'
cmd 'reverse-c'
is 'No breakpoint stopped the run before; at the start of the run.'
cmd 'go superstep 0'
is 'At the end of superstep 0 of chip 0 (sync 1) at cycle 126.'
cmd 'c'
has 'Breakpoint 1, tile 0, supervisor, pc 0x4c028 <bump> (calls.S:16), cycle 130'
cmd 'sta'
like "^calls\.elf: 1 tiles, stopped$"
cmd 'q now'
is 'error: quit takes no arguments'
cmd 'quit'
is ''
cmd 'print 1'
status 1
run_session "calls: help, abbreviations, aliases, quit" calls.elf
check "quit: the commands after it are not read" \
    bash -c '! grep -q "^(ipusim) print 1$" <<<"$1"' _ "$SESSION_OUT"

# source FILE: its commands, not echoed, up to the first error.
printf '%s\n' 'break 0:worker' 'run' 'print $m13' 'bogus' 'print 2' > cmds.gdb
session
cmd 'source cmds.gdb'
is "Breakpoint 1: tile 0, pc 0x4c03c <worker> (calls.S:22)
Starting calls.elf on gc200 (1 tile with code).
Breakpoint 1, tile 0, worker 5, pc 0x4c03c <worker> (calls.S:22), cycle 10
   0x4c03c:  ld32 \$m0, \$m13, \$mzero, 0
\$m13 = 0x00080004 (524292, 524292)
error: unknown command 'bogus' (try 'help')"
cmd 'source missing.gdb'
is 'error: missing.gdb: cannot open: No such file or directory'
cmd 'source'
is 'error: source needs a file'
cmd 'context'
is 'Context: worker 5 of tile 0.'
cmd 'q'
is ''
status 1
run_session "calls: source FILE" calls.elf

# ---- the command line -------------------------------------------------------

# ---- corner cases: a cycle passed at a barrier, a sync line, watches and going back

session
# Tile 0 waits at sync 1 from before cycle 300 to 366: the breakpoint fires
# when the barrier releases it.
cmd 'break cycle 300'
cmd 'run'
is 'Starting ring.elf on gc200 (4 tiles with code).
Breakpoint 1, tile 0 passed cycle 300 waiting at a barrier; it goes on at cycle 366
tile 0, supervisor, pc 0x4c030 <loop+0x10> (ring.S:22), cycle 366
   0x4c030:  sync 1'
cmd 'info breakpoints'
has '1    cycle       keep cycle 300                                1'
# Another tile's code, by TILE:SYMBOL.
cmd 'disassemble 2:worker 1'
is '    0x4c040 <worker> (ring.S:27):  setzi $m0, 4'
cmd 'disassemble 9:worker'
is 'error: tile 9 has no code in ring.elf'
status 1
run_session "ring: a cycle breakpoint passed at a barrier, another tile's code" ring.elf

session
# next from a sync stops at the line after it, not the one after that.
cmd 'break 0:0x4c018'
cmd 'run'
cmd 'next'
is 'tile 0, supervisor, pc 0x4c01c <loop+0x10> (calls.S:12), cycle 126
   0x4c01c:  add $m8, $m8, -1'
# Going back one issue with an access watch set: the tile's issues drop by one.
cmd 'delete all'
cmd 'awatch vstate'
cmd 'continue 3'
cmd 'rwatch vstate'
cmd 'continue'
like '^Access watchpoint 2, tile 0 0x80004 \(4 bytes\): read of 4 bytes at 0x80004$'
cmd 'info breakpoints'
has '2    acc watch   keep tile 0 0x80004 (4 bytes)                 4'
has '3    read watch  keep tile 0 0x80004 (4 bytes)                 1'
cmd 'stats'
like '^  so far: 49 instructions, 49 issues, latest tile cycle 140,'
cmd 'reverse-stepi'
cmd 'stats'
like '^  so far: 48 instructions, 48 issues, latest tile cycle 139,'
run_session "calls: next from a sync, read and access watches on the same bytes, going back" calls.elf

# -x: the script's lines are echoed after the banner, then stdin's.
printf '%s\n' 'break 1:worker' 'run' > x.gdb
out=$(echo 'print $m13' | "$IPUSIM" debug ring.elf --batch -x x.gdb 2>&1)
check "-x: exit 0" test $? -eq 0
check "-x: the banner first, then the script's commands echoed" test "$(head -n 3 <<<"$out")" = \
"ipusim debugger: ring.elf on gc200 ('help' lists the commands)
(ipusim) break 1:worker
Breakpoint 1: tile 1, pc 0x4c040 <worker> (ring.S:27)"
check "-x: run from the script" grep -qx 'Breakpoint 1, tile 1, worker 4, pc 0x4c040 <worker> (ring.S:27), cycle 9' <<<"$out"
check "-x: then stdin" test "$(tail -n 2 <<<"$out")" = '(ipusim) print $m13
$m13 = 0x00080050 (524368, 524368)'

OUT=$WORK/empty
mkdir -p "$OUT"
fails 1 "ipusim: -x: missing.gdb: cannot open: No such file or directory" -- \
    "$IPUSIM" debug ring.elf --batch -x missing.gdb
# The script is read before the program: its error comes first.
fails 1 "ipusim: -x: missing.gdb: cannot open: No such file or directory" -- \
    "$IPUSIM" debug nothing.elf --batch -x missing.gdb
fails 2 "ipusim debug: --checkpoint-every: 'x' is not a number of supersteps (0: none)" -- \
    "$IPUSIM" debug ring.elf --batch --checkpoint-every x
fails 2 "ipusim debug: --checkpoint-budget: '0' is not a number of MiB (1 to 1048576)" -- \
    "$IPUSIM" debug ring.elf --batch --checkpoint-budget 0

# --batch: a failed command makes the exit status 1, the rest still run.
out=$(printf '%s\n' 'bogus' 'run' | "$IPUSIM" debug ring.elf --batch 2>&1)
check "--batch: a failed command: exit 1" test $? -eq 1
check "--batch: the commands after it run" grep -qx "The program ended: $ring_cycles cycles, 716 instructions, 3 supersteps." <<<"$out"

finish
