#!/usr/bin/env bash
# File sizes, signals and host resources (tests/BAD_INPUTS.md): host thread
# counts from the environment, files read whole within a limit per kind of
# file, and output temporaries removed when a signal ends the run.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every output a failing command is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

strip_host() { grep -Ev 'host_seconds|per_host_second|host_threads|tile_batches' "$1"; }

# ------------------------------------------------------------ host threads
# OMP_NUM_THREADS is capped like --threads (1..1024); the results do not
# depend on the thread count.
expect 0 "" -- "$IPUSIM" compile matmul:64x64x64 -o mm.elf
expect 0 "\(1024 host threads, " -- env OMP_NUM_THREADS=100000 "$IPUSIM" run mm.elf --json t_many.json
expect 0 "\(1 host thread, " -- "$IPUSIM" run mm.elf --threads 1 --json t_one.json
check "OMP_NUM_THREADS=100000 and --threads 1 give the same report" \
    diff -q <(strip_host t_many.json) <(strip_host t_one.json)
printf 'run\nquit\n' > run.gdb
expect 0 "The program ended: [0-9]+ cycles" -- env OMP_NUM_THREADS=100000 "$IPUSIM" debug mm.elf -x run.gdb --batch

# ------------------------------------------------------------ files read whole
# Each kind of file has its limit; a regular file's size is compared with it
# before anything is read, a stream (/dev/zero) is read to one byte past it.
truncate -s 3G huge.bin            # a hole: no disk space
truncate -s 17G huger.bin
mkdir -p folder
# --input: exactly the tensor's size (matmul:64x64x64 f16: 'a' is 8192 bytes).
fails 1 "ipusim: --input a: /dev/zero: more than the 8192 bytes tensor 'a' takes" -- \
    "$IPUSIM" run mm.elf --input a=/dev/zero --json "$OUT/r.json"
fails 1 "ipusim: --input a: huge.bin: 3221225472 bytes, more than the 8192 bytes tensor 'a' takes" -- \
    "$IPUSIM" run mm.elf --input a=huge.bin --json "$OUT/r.json"
fails 1 "ipusim: --input a: folder: is a directory" -- "$IPUSIM" run mm.elf --input a=folder
fails 1 "ipusim: --input 0: folder: is a directory" -- "$IPUSIM" run mm.elf --input 0=folder
head -c 100 /dev/zero > short.bin
fails 1 "ipusim: --input a: short.bin: input 'a': 100 bytes given, the tensor [64,64] f16 has 8192" -- \
    "$IPUSIM" run mm.elf --input a=short.bin
fails 1 "ipusim: --input a: /dev/zero: more than the 8192 bytes tensor 'a' takes" -- \
    "$IPUSIM" debug mm.elf --input a=/dev/zero --batch
fails 1 "ipusim: --input a: huge.bin: 3221225472 bytes, more than the 8192 bytes tensor 'a' takes" -- \
    "$IPUSIM" debug mm.elf --input a=huge.bin --batch
fails 1 "ipusim: mm.elf: folder: is a directory" -- "$IPUSIM" compare mm.elf --input 0=folder
# A machine configuration: 1 MiB.
fails 1 "ipusim: huge.bin: 3221225472 bytes, more than the 1048576 bytes a machine configuration may have" -- \
    "$IPUSIM" run mm.elf --config huge.bin
fails 1 "ipusim: /dev/zero: more than the 1048576 bytes a machine configuration may have" -- \
    "$IPUSIM" run mm.elf --config /dev/zero
fails 1 "ipusim: folder: is a directory" -- "$IPUSIM" run mm.elf --config folder
# An ONNX model: protobuf's 2 GiB message limit.
fails 1 "ipusim: huge.bin: 3221225472 bytes, more than the 2147483647 bytes a protobuf message may have" -- \
    "$IPUSIM" compile huge.bin -o "$OUT/r.elf"
fails 1 "ipusim: /dev/zero: not a regular file (a character device)" -- "$IPUSIM" compile /dev/zero -o "$OUT/r.elf"
# An executable: 16 GiB, mapped, so a large file that is not one is found
# from its first bytes.
fails 1 "ipusim: huger.bin: 18253611008 bytes, more than the 17179869184 bytes an executable may have" -- \
    "$IPUSIM" run huger.bin
fails 1 "ipusim: huge.bin: not an ELF file (no ELF magic number)" -- timeout 20 "$IPUSIM" run huge.bin
fails 1 "ipusim: /dev/zero: not a regular file (a character device)" -- "$IPUSIM" disasm /dev/zero -o "$OUT/x.S"
fails 1 "ipusim: folder: is a directory" -- "$IPUSIM" run folder
expect 0 "cycles" -- "$IPUSIM" run <(cat mm.elf)
# Assembly sources: 512 MiB (a one-chip program's disassembly); debugger scripts: 64 MiB.
fails 1 "huge.bin: error: cannot read: 3221225472 bytes, more than the 536870912 bytes an assembly source may have" -- \
    "$IPUSIM" asm huge.bin -o "$OUT/x.elf"
fails 1 "ipusim: -x: /dev/zero: more than the 67108864 bytes a debugger script may have" -- \
    "$IPUSIM" debug mm.elf --batch -x /dev/zero
fails 1 "ipusim: -x: huge.bin: 3221225472 bytes, more than the 67108864 bytes a debugger script may have" -- \
    "$IPUSIM" debug mm.elf --batch -x huge.bin
printf 'source folder\n' > src.gdb
expect 1 "error: folder: is a directory" -- "$IPUSIM" debug mm.elf --batch -x src.gdb
rm -f huge.bin huger.bin

# ------------------------------------------------------------ signals while writing
# A compile stopped by SIGTERM, SIGINT or SIGHUP while its executable is
# being written (about 190 MB) leaves no temporary and ends by the signal.
# (env --default-signal: a background job of a script starts with SIGINT
# ignored.)
# The compile is stopped (SIGSTOP) as soon as its temporary is seen, so the
# write cannot finish between the look and the signal; a try in which it
# finished before the look is made again.
for sig in TERM INT HUP; do
    SIGDIR="$WORK/sig_$sig"
    seen= rc=
    for _try in 1 2 3; do
        rm -rf "$SIGDIR"; mkdir -p "$SIGDIR"
        env --default-signal=INT "$IPUSIM" compile bert-base:s128:l2 -o "$SIGDIR/r.elf" >/dev/null 2>&1 &
        pid=$!
        while kill -0 "$pid" 2>/dev/null; do
            if compgen -G "$SIGDIR/r.elf.tmp*" >/dev/null; then
                kill -STOP "$pid"
                compgen -G "$SIGDIR/r.elf.tmp*" >/dev/null && seen=1
                break
            fi
            sleep 0.005
        done
        if [ -n "$seen" ]; then
            kill -"$sig" "$pid"
            kill -CONT "$pid"
        fi
        { wait "$pid"; } 2>/dev/null
        rc=$?
        [ -n "$seen" ] && break
    done
    check "SIG$sig: the temporary was seen while writing" test -n "$seen"
    check "SIG$sig: the compile ended by the signal (exit $rc)" test "$rc" -eq $((128 + $(kill -l "$sig")))
    check "SIG$sig: nothing left in the output folder ($(ls -A "$SIGDIR"))" test -z "$(ls -A "$SIGDIR")"
done

finish
