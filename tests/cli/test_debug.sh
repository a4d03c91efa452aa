#!/usr/bin/env bash
# `ipusim debug`: commands from a script on stdin (as tests and scripts use
# it), -x and --batch, the command-line errors, and the readline prompt
# driven through tmux as a person would (skipped when tmux is missing).
source "$(dirname "$0")/lib.sh"

# Two tiles: six workers count and store, the supervisors exchange 16
# bytes, sync 1; twice.
{ cat "$CLI_DIR/ring_tile.S"; printf 'TILE 0, 1, 1\nTILE 1, 0, 0\n'; } > "$WORK/ring.S"
"$IPUSIM" asm "$WORK/ring.S" -o "$WORK/ring.elf" >/dev/null || { echo "FAIL: cannot assemble"; exit 1; }

# The cycles of an uninterrupted run, to compare with.
cycles=$("$IPUSIM" run "$WORK/ring.elf" | awk '$1 == 0 && NF == 8 { print $2; exit }')
check "ipusim run reports tile 0's cycles" test -n "$cycles"

# A script on stdin: commands are echoed after the prompt.
out=$(printf '%s\n' 'break 1:worker' 'run' 'print $m13' 'stepi' 'delete 1' 'break superstep 0' 'c' \
                    'x/2x rbuf' 'c' | "$IPUSIM" debug "$WORK/ring.elf" 2>&1)
check "stdin: echoes the commands" grep -q '^(ipusim) break 1:worker$' <<<"$out"
check "stdin: breakpoint set" grep -q '^Breakpoint 1: tile 1, pc 0x4c040 <worker> (.*ring.S:27)$' <<<"$out"
check "stdin: breakpoint hit" grep -q '^Breakpoint 1, tile 1, worker 4, pc 0x4c040 <worker> (.*ring.S:27), cycle 9$' <<<"$out"
check "stdin: print" grep -q '^\$m13 = 0x00080050 (524368, 524368)$' <<<"$out"
check "stdin: stepi" grep -q '^next: pc 0x4c044 <worker+0x4>' <<<"$out"
check "stdin: superstep" grep -q '^Breakpoint 2, superstep 0 of chip 0 ended (sync 1) at cycle' <<<"$out"
check "stdin: x shows tile 1's words" grep -q '^0x80010 <rbuf>: 0x00000007 0x00000000$' <<<"$out"
check "stdin: same cycles as run ($cycles)" grep -q "^The program ended: $cycles cycles" <<<"$out"

# -x runs a script first; --batch makes a failed command the exit status.
printf 'break 0:loop\nrun\n' > "$WORK/script.gdb"
expect 0 '^Breakpoint 1, tile 0, supervisor, pc 0x4c020 <loop>' -- \
    bash -c "echo where | '$IPUSIM' debug '$WORK/ring.elf' -x '$WORK/script.gdb'"
expect 1 "error: unknown command 'bogus' \(try 'help'\)" -- \
    bash -c "printf 'bogus\nquit\n' | '$IPUSIM' debug '$WORK/ring.elf' --batch"
expect 0 "error: unknown command 'bogus'" -- \
    bash -c "printf 'bogus\nquit\n' | '$IPUSIM' debug '$WORK/ring.elf'"
expect 1 "ipusim: .*nothing.elf" -- "$IPUSIM" debug "$WORK/nothing.elf"
expect 2 "no executable given" -- "$IPUSIM" debug
expect 2 "unknown option '--frob'" -- "$IPUSIM" debug "$WORK/ring.elf" --frob
expect 1 "has no input tensor 'x'" -- "$IPUSIM" debug "$WORK/ring.elf" --input x=/dev/null
expect 0 "ipusim debug PROG.elf" -- "$IPUSIM" help debug

# A person at the terminal: tmux gives the debugger a real tty, so it uses
# readline (prompt, completion, history).
sock="$WORK/tmux.sock"
if ! command -v tmux >/dev/null; then
    echo "note: tmux is missing: skipping the interactive part"
elif ! HOME="$WORK" tmux -S "$sock" new-session -d -x 160 -y 50 "'$IPUSIM' debug '$WORK/ring.elf'" 2>/dev/null; then
    # tmux cannot start its server here (no pseudo-terminals, or /dev/null
    # is not a character device).
    echo "note: tmux cannot start a session here: skipping the interactive part"
else
    export HOME="$WORK/home"
    mkdir -p "$HOME"
    tmux -S "$sock" kill-server 2>/dev/null
    # A server of its own for the real session: a new session on the socket
    # of one still shutting down can fail ("server exited unexpectedly").
    sock="$WORK/tmux2.sock"
    tmux -S "$sock" new-session -d -x 160 -y 50 "'$IPUSIM' debug '$WORK/ring.elf'"
    screen() { tmux -S "$sock" capture-pane -p; }
    wait_for() { # wait_for REGEX: up to 10 s for the screen to show it
        for _ in $(seq 100); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
        return 1
    }
    check "tmux: prompt" wait_for '^\(ipusim\)'
    tmux -S "$sock" send-keys 'break 1:wor' Tab Enter
    check "tmux: completion of a symbol" wait_for '^Breakpoint 1: tile 1, pc 0x4c040 <worker>'
    tmux -S "$sock" send-keys 'ru' Tab Enter
    check "tmux: completion of a command, breakpoint hit" wait_for '^Breakpoint 1, tile 1, worker 4'
    tmux -S "$sock" send-keys 'delete 1' Enter 'stepi' Enter
    check "tmux: stepi" wait_for '^tile 1, worker 4, pc 0x4c040 <worker> .*, cycle 10$'
    tmux -S "$sock" send-keys Enter
    check "tmux: an empty line repeats stepi" wait_for '^tile 1, worker 5, pc 0x4c040 <worker> .*, cycle 11$'
    tmux -S "$sock" send-keys 'print $FP_CT' Tab Enter
    check "tmux: completion of a CSR" wait_for '^\$FP_CTL = 0x00000000'
    tmux -S "$sock" send-keys 'quit' Enter
    for _ in $(seq 50); do tmux -S "$sock" has-session 2>/dev/null || break; sleep 0.1; done
    check "tmux: quit ends the session" bash -c "! tmux -S '$sock' has-session 2>/dev/null"
    check "tmux: history kept in ~/.ipusim_history" grep -q '^print \$FP_CTL$' "$HOME/.ipusim_history"
    tmux -S "$sock" kill-server 2>/dev/null
fi

finish
