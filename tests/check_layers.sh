#!/usr/bin/env bash
# check_layers.sh — the house rules the build cannot see, checked on every
# source under the fixed top-level folders (tests/ excepted):
#   1. a file includes only from its own layer or the layers below it
#      (the order is LAYERS below; README.md, "Layers", says why);
#   2. no file passes 1,500 lines;
#   3. no function passes 150 lines (from the line that opens its body at
#      column 0 to the one that closes it).
# Exit 0 when all hold; otherwise one line per breach and exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bottom to top.  A file belongs to the longest folder prefix listed.
LAYERS=(
  sim/base            # diagnostics, time units, file helpers: every layer
  memmodel            # tile SRAM: memory map, elements, regions
  isa                 # the Tile Vertex ISA: table, state, executors, arithmetic
  isa/elf             # the executable format
  isa/asm             # assembler and disassembler
  exchange            # the fabric: matching and timing of transfers, links, host
  sim/program         # machine description and tensor map: the compiler/simulator contract
  sim/engine          # tiles, BSP engine, trace, loading programs
  sim/debugger        # the debugger's engine
  workloads/kernels   # stand-alone kernels and their C models
  workloads/codelets  # the kernel library the compiler calls, and its C models
  frontends           # graph IR, ONNX import, passes, lowering, in-process simulation
  workloads/models    # built-in models, built as graphs
  validation          # references, microbenchmarks, model and ONNX-test validation
  frontends/cli       # the command line: every subcommand
)

layer_of() {
  local f=$1 best=-1 bestlen=0 i p
  for i in "${!LAYERS[@]}"; do
    p=${LAYERS[$i]}
    if [[ $f == "$p"/* && ${#p} -gt $bestlen ]]; then best=$i; bestlen=${#p}; fi
  done
  echo "$best"
}

files=$(git ls-files 'sim/*' 'memmodel/*' 'isa/*' 'exchange/*' 'workloads/*' 'frontends/*' 'validation/*' \
        | grep -E '\.(c|h|def)$' || true)
fail=0
for f in $files; do
  lf=$(layer_of "$f")
  if ((lf < 0)); then echo "$f: in no layer (add its folder to LAYERS)"; fail=1; continue; fi
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    [[ -z $inc ]] && continue
    if [[ -f $dir/$inc ]]; then target=$(realpath -m --relative-to=. "$dir/$inc")
    elif [[ -f $inc ]]; then target=$inc
    else continue; fi          # generated or system
    lt=$(layer_of "$target")
    if ((lt > lf)); then
      echo "$f (${LAYERS[$lf]}) includes $target (${LAYERS[$lt]}, a layer above)"; fail=1
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$f")
  n=$(wc -l < "$f")
  if ((n > 1500)); then echo "$f: $n lines (at most 1,500)"; fail=1; fi
  if [[ $f == *.c ]]; then
    awk -v file="$f" '
      /^\{/ { start = NR; name = prev }
      /^\}/ && start { len = NR - start + 1
                       if (len > 150) { printf "%s:%d: function of %d lines (at most 150): %s\n", file, start, len, name; bad = 1 }
                       start = 0 }
      { if ($0 !~ /^[[:space:]]*$/) prev = $0 }
      END { exit bad }' "$f" || fail=1
  fi
done
((fail == 0)) && echo "layers: every include points down; no file over 1,500 lines, no function over 150"
exit $fail
