/*
 * control_fixture.h — a compiled tile's control program read back from an
 * executable, step by step (workloads/codelets/supervisor.S describes the
 * steps): its kind, its words, the transfers it makes and their
 * endpoints.  The tests that check what the compiler writes into control
 * programs share it.  Header-only (static functions).
 */
#ifndef IPUSIM_TESTS_CONTROL_FIXTURE_H
#define IPUSIM_TESTS_CONTROL_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isa/elf/executable.h"

enum control_kind {
    CONTROL_RUN, CONTROL_CALL, CONTROL_SEND, CONTROL_RECV, CONTROL_SEND_RUN, CONTROL_RECV_RUN,
    CONTROL_SEND_ROWS, CONTROL_RECV_ROWS, CONTROL_SYNC, CONTROL_JUMP, CONTROL_SUB, CONTROL_RET, CONTROL_END,
    CONTROL_KINDS,
    CONTROL_SEND_LIST = CONTROL_KINDS, CONTROL_RECV_LIST  /* (found by their own handlers) */
};

typedef struct control_step {
    enum control_kind kind;
    uint32_t words;
    uint32_t transfers;                 /* sends or receives it makes */
    const uint32_t *endpoint;           /* the endpoint words (control_endpoint reads them) */
    uint32_t endpoints;
    bool narrow;                        /* a run's endpoints two to a word (ctl_sends16, ctl_recvs16, */
    uint32_t base;                      /* ctl_recvs16_group: each base | its half) */
    bool list;                          /* a list (ctl_send_list, ctl_recv_list, the _group
                                           forms): transfer k's address endpoint[2 k - 1], its
                                           endpoint base | the high half of endpoint[2 k] */
} control_step;

/* Transfer k's endpoint. */
static inline uint32_t control_endpoint(const control_step *s, uint32_t k)
{
    if (s->list)
        return s->base | s->endpoint[2 * k] >> 16;
    if (s->endpoints == 1)
        return s->endpoint[0];
    if (s->narrow)
        return s->base | ((s->endpoint[k / 2] >> (k % 2 ? 16 : 0)) & 0xffffu);
    return s->endpoint[k];
}

typedef struct control_walk {
    uint32_t handler[CONTROL_KINDS];
    uint32_t handler2;                  /* ctl_sync_system, a CONTROL_SYNC too */
    uint32_t send16, recv16, recv16g;   /* ctl_sends16, ctl_recvs16 and ctl_recvs16_group, runs too */
    uint32_t send_list, recv_list;      /* ctl_send_list and ctl_recv_list ... */
    uint32_t send_list_g, recv_list_g;  /* ... above a base (the _group forms) */
    uint32_t *w;                        /* the program's words, both blocks one after the other */
    size_t n, i;
} control_walk;

static inline uint32_t control_symbol(const ipu_exe *e, const char *name)
{
    const exe_symbol *s = exe_find_symbol(e, name);
    CU_ASSERT_FATAL(s != NULL);
    return s->addr;
}

/* Tile `tile`'s control program of e, ready to walk. */
static inline void control_walk_begin(control_walk *cw, const ipu_exe *e, uint32_t tile)
{
    static const char *const names[CONTROL_KINDS] = {
        "ctl_run", "ctl_call", "ctl_send", "ctl_recv", "ctl_sends", "ctl_recvs", "ctl_send_rows", "ctl_recv_rows",
        "ctl_sync_chip", "ctl_jump", "ctl_sub", "ctl_ret", "ctl_end",
    };
    for (int k = 0; k < CONTROL_KINDS; k++)
        cw->handler[k] = control_symbol(e, names[k]);
    cw->handler2 = control_symbol(e, "ctl_sync_system");
    cw->send16 = control_symbol(e, "ctl_sends16");
    cw->recv16 = control_symbol(e, "ctl_recvs16");
    cw->recv16g = control_symbol(e, "ctl_recvs16_group");
    cw->send_list = control_symbol(e, "ctl_send_list");
    cw->recv_list = control_symbol(e, "ctl_recv_list");
    cw->send_list_g = control_symbol(e, "ctl_send_list_group");
    cw->recv_list_g = control_symbol(e, "ctl_recv_list_group");
    const exe_section *blk[2] = { NULL, NULL };
    for (size_t s = 0; s < e->n_sections; s++) {
        const exe_section *sec = &e->sections[s];
        if (sec->tile == tile && !strcmp(sec->name, ".control"))
            blk[0] = sec;
        if (sec->tile == tile && !strcmp(sec->name, ".control.1"))
            blk[1] = sec;
    }
    size_t total = (blk[0] ? blk[0]->size : 0) + (blk[1] ? blk[1]->size : 0);
    cw->w = malloc(total + 4);
    CU_ASSERT_FATAL(cw->w != NULL);
    cw->n = cw->i = 0;
    for (int b = 0; b < 2; b++)
        if (blk[b] && blk[b]->bytes) {
            memcpy(cw->w + cw->n, blk[b]->bytes, blk[b]->size);
            cw->n += blk[b]->size / 4;
        }
}

/* The next step into *s; false at the end of the words (a step of an
 * unknown kind, or cut short, fails the test). */
static inline bool control_walk_next(control_walk *cw, control_step *s)
{
    if (cw->i >= cw->n)
        return false;
    const uint32_t *w = cw->w + cw->i;
    size_t left = cw->n - cw->i;
    int kind = -1;
    for (int k = 0; k < CONTROL_KINDS && kind < 0; k++)
        if (w[0] == cw->handler[k])
            kind = k;
    if (w[0] == cw->handler2)
        kind = CONTROL_SYNC;
    const bool based = w[0] == cw->recv16g, narrow = w[0] == cw->send16 || w[0] == cw->recv16 || based;
    if (narrow)
        kind = w[0] == cw->send16 ? CONTROL_SEND_RUN : CONTROL_RECV_RUN;
    *s = (control_step){ .kind = (enum control_kind)kind, .words = 1, .narrow = narrow };
    const bool list_base = w[0] == cw->send_list_g || w[0] == cw->recv_list_g;
    if (w[0] == cw->send_list || w[0] == cw->recv_list || list_base)
        s->kind = kind = w[0] == cw->send_list || w[0] == cw->send_list_g ? CONTROL_SEND_LIST : CONTROL_RECV_LIST;
    switch (kind) {
    case CONTROL_RUN: s->words = 4; break;
    case CONTROL_CALL: s->words = 3; break;
    case CONTROL_JUMP: s->words = 2; break;   /* the second block follows in w */
    case CONTROL_SUB: s->words = 2; break;    /* its steps are walked where they lie */
    case CONTROL_SYNC: case CONTROL_RET: case CONTROL_END: break;
    case CONTROL_SEND: case CONTROL_RECV:
        s->words = 4, s->transfers = 1, s->endpoint = w + 3, s->endpoints = 1;
        break;
    case CONTROL_SEND_RUN: case CONTROL_RECV_RUN:
        if (left < 4)
            break;
        if (based && left < 5)
            break;
        s->transfers = narrow ? ((w[3] >> 1) + 1) * 2 + (w[3] & 1) : w[3] + 1;
        s->base = based ? w[4] : 0;
        s->endpoint = w + (based ? 5 : 4), s->endpoints = s->transfers;
        s->words = (based ? 5 : 4) + (narrow ? (s->transfers + 1) / 2 : s->transfers);
        break;
    case CONTROL_SEND_LIST: case CONTROL_RECV_LIST:
        if (left < 3)
            break;
        s->list = true, s->transfers = w[1] + 1, s->base = list_base ? w[2] : 0;
        s->endpoint = w + (list_base ? 4 : 3), s->endpoints = s->transfers;
        s->words = (list_base ? 3 : 2) + 2 * s->transfers;
        break;
    case CONTROL_SEND_ROWS: case CONTROL_RECV_ROWS:
        s->words = 6, s->transfers = left >= 5 ? w[4] + 1 : 0, s->endpoint = w + 5, s->endpoints = 1;
        break;
    default:
        CU_FAIL("a control step of an unknown kind");
        return false;
    }
    if (s->words > left) {
        CU_FAIL("a control step cut short");
        return false;
    }
    cw->i += s->words;
    return true;
}

static inline void control_walk_end(control_walk *cw)
{
    free(cw->w);
    cw->w = NULL;
}

/* Whether step s sends (else receives, or neither). */
static inline bool control_sends(const control_step *s)
{
    return s->kind == CONTROL_SEND || s->kind == CONTROL_SEND_RUN || s->kind == CONTROL_SEND_ROWS ||
           s->kind == CONTROL_SEND_LIST;
}

static inline bool control_receives(const control_step *s)
{
    return s->kind == CONTROL_RECV || s->kind == CONTROL_RECV_RUN || s->kind == CONTROL_RECV_ROWS ||
           s->kind == CONTROL_RECV_LIST;
}

#endif
