/*
 * simtime.h — simulated time: picoseconds shared by every chip, link and
 * memory of a system, and exact conversions to and from a chip's cycles.
 *
 * Time is an unsigned 64-bit count of picoseconds (2^64 ps is about 213
 * days of simulated time).  A chip whose tile clock is f Hz starts its
 * cycle c at
 *
 *     cycles_to_ps(c) = ceil(c * 10^12 / f)
 *
 * (exact: 128-bit intermediate, no floating point), and a moment p falls
 * before the start of cycle
 *
 *     ps_to_cycle_ceil(p) = the smallest c with cycles_to_ps(c) >= p,
 *
 * the first cycle boundary at or after p: a chip that is told "go at p"
 * goes at that cycle.  The two are inverse on cycle starts:
 * ps_to_cycle_ceil(cycles_to_ps(c)) == c for every clock below 1 THz.
 *
 * Clocks are whole hertz (simtime_hz rounds a machine parameter to the
 * nearest).  Transfers measured in bytes per second take
 * ceil(bytes * 10^12 / rate) ps, again exactly.
 */
#ifndef IPUSIM_SIMTIME_H
#define IPUSIM_SIMTIME_H

#include <stdint.h>

#define SIMTIME_PS_PER_S 1000000000000ull

static inline uint64_t simtime_hz(double hz)
{
    return hz < 1.0 ? 1u : (uint64_t)(hz + 0.5);
}

static inline uint64_t simtime_cycles_to_ps(uint64_t cycles, uint64_t hz)
{
    unsigned __int128 n = (unsigned __int128)cycles * SIMTIME_PS_PER_S;
    unsigned __int128 q = (n + hz - 1) / hz;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* ceil(c * 10^12 / f) >= p  <=>  c * 10^12 > (p - 1) * f  (p >= 1), so the
 * answer is floor((p - 1) * f / 10^12) + 1. */
static inline uint64_t simtime_ps_to_cycle_ceil(uint64_t ps, uint64_t hz)
{
    if (ps == 0)
        return 0;
    unsigned __int128 n = (unsigned __int128)(ps - 1) * hz;
    unsigned __int128 q = n / SIMTIME_PS_PER_S + 1;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* Time to move `bytes` at `bytes_per_s`: ceil(bytes * 10^12 / rate). */
static inline uint64_t simtime_transfer_ps(uint64_t bytes, uint64_t bytes_per_s)
{
    if (bytes_per_s == 0)
        return UINT64_MAX;
    unsigned __int128 n = (unsigned __int128)bytes * SIMTIME_PS_PER_S;
    unsigned __int128 q = (n + bytes_per_s - 1) / bytes_per_s;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static inline uint64_t simtime_max(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* a + b, saturating. */
static inline uint64_t simtime_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

#endif
