#!/usr/bin/env bash
# `ipusim debug` at a terminal, typed as a person would (tmux gives it a real
# tty, so it uses readline), on a compiled BERT-Base layer (about 100,000
# symbols): completion of commands, tensor names and info's topics answers in
# under 0.2 s each, history is kept across sessions, Ctrl-C stops a run.
# Skipped where tmux is missing or cannot start a session.
source "$(dirname "$0")/lib.sh"

"$IPUSIM" compile bert-base:s64 --f16-matmul -o "$WORK/bert.elf" >/dev/null 2>&1
check "a BERT layer compiles" test -s "$WORK/bert.elf"

sock="$WORK/tmux.sock"
if ! command -v tmux >/dev/null; then
    echo "note: tmux is missing: skipping"
    finish
    exit
fi
if ! HOME="$WORK" tmux -S "$sock" new-session -d -x 200 -y 50 "sleep 1" 2>/dev/null; then
    echo "note: tmux cannot start a session here: skipping"
    finish
    exit
fi
tmux -S "$sock" kill-server 2>/dev/null
export HOME="$WORK/home"
mkdir -p "$HOME"
n=0
# A server of its own for each session (a new session on the socket of one
# still shutting down can fail).
start() {
    n=$((n + 1))
    sock="$WORK/tmux$n.sock"
    tmux -S "$sock" new-session -d -x 200 -y 50 "'$IPUSIM' debug '$WORK/bert.elf'"
}
screen() { tmux -S "$sock" capture-pane -p; }
wait_for() { # wait_for REGEX: up to 20 s for the screen to show it
    for _ in $(seq 2000); do screen | grep -Eq -- "$1" && return 0; sleep 0.01; done
    return 1
}
now() { date +%s.%N; }
# answers_within SECONDS REGEX KEYS...: type KEYS; the screen shows REGEX in
# under SECONDS (timed from the keys sent to the screen showing it).
answers_within() {
    local limit=$1 regex=$2
    shift 2
    local t0 t1
    t0=$(now)
    tmux -S "$sock" send-keys "$@"
    wait_for "$regex" || { echo "  the screen never showed /$regex/:"; screen | tail -5; return 1; }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" -v l="$limit" 'BEGIN { d = b - a; printf "  %.3f s\n", d; exit !(d < l) }'
}
quit_session() {
    tmux -S "$sock" send-keys C-u 'quit' Enter
    for _ in $(seq 100); do tmux -S "$sock" has-session 2>/dev/null || break; sleep 0.05; done
    tmux -S "$sock" kill-server 2>/dev/null
}

start
check "tmux: the prompt" wait_for '^\(ipusim\) *$'
check "completion of a command (reverse-c -> reverse-continue) under 0.2 s" \
    answers_within 0.2 '^\(ipusim\) reverse-continue *$' 'reverse-c' Tab
tmux -S "$sock" send-keys C-u
check "completion of a tensor name (the first of 100,000 symbols) under 0.2 s" \
    answers_within 0.2 'layer0\.attention\.query\.transpose' 'print layer0.attention.q' Tab Tab Tab
tmux -S "$sock" send-keys C-u
check "completion of info's topics (info ch -> checkpoints) under 0.2 s" \
    answers_within 0.2 '^\(ipusim\) info checkpoints *$' 'info ch' Tab
tmux -S "$sock" send-keys C-u
check "completion after a location offers 'if'" \
    answers_within 0.2 '^\(ipusim\) break ctl_end if *$' 'break ctl_en' Tab Tab
tmux -S "$sock" send-keys C-u 'info tiles 0 2' Enter
# (The screen is cleared between checks so that old lines cannot match.)
check "a command runs after completions" wait_for 'more tiles: info tiles 2 \[COUNT\]'
# (readline lists the candidates at a Tab after one that changed nothing.)
# Ctrl-C stops a run in progress.
tmux -S "$sock" send-keys 'run' Enter
check "the run starts" wait_for '^Starting .*bert\.elf'
sleep 0.5
tmux -S "$sock" send-keys C-c
check "Ctrl-C stops the run" wait_for 'Interrupted at cycle [0-9]+\.'
tmux -S "$sock" send-keys 'backtrace' Enter
check "the debugger answers after Ctrl-C" wait_for '^#0 tile '
quit_session
check "history written to ~/.ipusim_history" grep -qx 'info tiles 0 2' "$HOME/.ipusim_history"

# A second session: the first one's commands come back with the up arrow.
start
check "tmux: the prompt again" wait_for '^\(ipusim\) *$'
tmux -S "$sock" send-keys Up
check "history across sessions: Up brings back the last command" wait_for '^\(ipusim\) quit$'
tmux -S "$sock" send-keys Up Up Up
check "history across sessions: and the ones before" wait_for '^\(ipusim\) info tiles 0 2$'
quit_session

finish
