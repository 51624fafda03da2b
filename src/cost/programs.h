/*
 * cost/programs.h - each pipeline schedule's program: the order of the ops every
 * rank runs (its forwards, backwards and deferred weight gradients, which
 * microbatch and which virtual stage), apart from when they run, which the
 * executor works out (cost/executor.h).
 *
 * Routes (virtual stages a microbatch passes): a line of pp x vp chunks, chunk c
 * of rank k being stage c pp + k (1F1B, GPipe, ZB-H1, ZB-H2; Narayanan et al.
 * SC'21 §2.2.2); a V of 2 pp half stages, rank k holding k and 2pp-1-k (ZB-V, Qi
 * et al. ICLR 2024 §6; DualPipeV); DualPipe's two directions, microbatches from
 * m/2 entering at rank pp-1 (DeepSeek-V3 report §3.2.1).
 * Programs: 1F1B's warm-up of p-k-1 forwards, then F and B in turn (Megatron-LM
 * schedules.py forward_backward_pipelining_without_interleaving); interleaved,
 * Megatron-Core's schedule table in groups of N, warm-up 2(p-k-1) + (v-1)N
 * (..._with_interleaving); GPipe, every F then every B; ZB-H1 and ZB-H2, 1F1B's
 * order with p-k-1 and 2(p-k-1) warm-up forwards (Qi et al. §3); ZB-V, the V's
 * order; DualPipe and DualPipeV, the eight steps of deepseek-ai/DualPipe's step()
 * (dualpipe.py, dualpipev.py).  A line's program is not stored (the search and
 * the fit run many long pipelines): op i of rank k comes from its order, warm[k]
 * forwards, then a forward and a backward in turn, then the backwards left.
 */
#ifndef PARPLAN_PROGRAMS_H
#define PARPLAN_PROGRAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/pipeline.h"

/* One op's kind. */
typedef enum ppl_pipe_op {
    PPL_OP_F,  /* forward */
    PPL_OP_B,  /* backward to the input (W deferred) */
    PPL_OP_W,  /* backward to the weights (deferred) */
    PPL_OP_BW, /* the whole backward, B and W together */
    PPL_OP_FB  /* a forward and another microbatch's whole backward overlapped (F&B) */
} ppl_pipe_op;

/* A program's op. */
typedef struct ppl_op {
    uint8_t kind;    /* ppl_pipe_op; W: pop the rank's oldest deferred W */
    int32_t mb, j;   /* microbatch, virtual stage (F, B, BW; F&B's forward) */
    int32_t mb2, j2; /* F&B's backward */
} ppl_op;

/* The routes' shapes. */
enum { PPL_SHAPE_LINE, PPL_SHAPE_V, PPL_SHAPE_DUAL };

/* Every rank's program for one pipeline. */
typedef struct ppl_programs {
    int shape;          /* PPL_SHAPE_* */
    int64_t p, m, v, S; /* ranks, microbatches, chunks a rank, virtual stages */
    int64_t group;      /* interleaved 1F1B: the table's group of microbatches (in's, or p) */
    bool fill;          /* zero-bubble: B and W apart, the deferred W fill the bubbles */
    bool gpipe;         /* GPipe: every forward, then every backward */
    ppl_op *ops;        /* a stored program (a V, DualPipe): rank k's at ops + k * cap */
    int64_t cap;        /* ops a rank holds at most (deferred W included) */
    int64_t *len;       /* ops of rank k's program */
    int64_t *warm;      /* a line's warm-up forwards on each rank */
    int32_t *table;     /* interleaved 1F1B: entry t's microbatch and chunk, 2 m v
                           entries (Megatron-Core's table, the same on every rank) */
} ppl_programs;

/* Builds in's programs (what they need of in is copied); false when out of memory,
 * nothing then held.  The inputs are the executor's, checked before. */
bool ppl_programs_init(ppl_programs *g, const ppl_pipe_in *in);
void ppl_programs_free(ppl_programs *g);

/* Rank k's op i (i < len[k]). */
void ppl_program_op(const ppl_programs *g, int64_t k, int64_t i, ppl_op *o);

/* A line's rank k (its programs not stored), what its ops are worked out from.
 * GPipe runs every forward first; the others warm forwards, then a forward and a
 * backward in turn, then the backwards left, an interleaved line's t-th in the
 * table's order. */
typedef struct ppl_line_rank {
    int64_t k, p, m, v, warm;
    bool gpipe;
    const int32_t *table;
} ppl_line_rank;

static inline void ppl_line_rank_of(const ppl_programs *g, int64_t k, ppl_line_rank *r)
{
    *r = (ppl_line_rank){k, g->p, g->m, g->v, g->warm[k], g->gpipe, g->table};
}

/* Rank r's next op once it has run tf forwards and tb backwards (not GPipe): true
 * for a forward, false for a backward, with its microbatch and virtual stage.  A
 * forward while the warm-up lasts (tf - tb < warm), then when as many backwards as
 * forwards past it ran (tf - tb == warm), until the forwards are done.  The
 * executor's line loop counts them as it goes. */
static inline bool ppl_line_next(const ppl_line_rank *r, int64_t tf, int64_t tb, int64_t *mb,
                                 int64_t *j)
{
    const int64_t v = r->v;
    const bool fwd = tf < r->m * v && tf - tb <= r->warm;
    const int64_t t = fwd ? tf : tb; /* the forward or backward index in the table */
    int64_t c = 0;
    *mb = t;
    if (v > 1)
        *mb = r->table[2 * t], c = r->table[2 * t + 1];
    *j = (fwd ? c : v - 1 - c) * r->p + r->k;
    return fwd;
}

/* Rank r's op i: true for a forward, false for a backward, with its microbatch and
 * virtual stage; the forwards and backwards before it counted from i. */
static inline bool ppl_line_op(const ppl_line_rank *r, int64_t i, int64_t *mb, int64_t *j)
{
    const int64_t m = r->m;
    if (r->gpipe) {
        *mb = i < m ? i : i - m;
        *j = r->k;
        return i < m;
    }
    const int64_t total = m * r->v, warm = r->warm;
    if (i <= warm) /* the warm-up's forwards */
        return ppl_line_next(r, i, 0, mb, j);
    if (i <= 2 * total - warm) /* a forward and a backward in turn */
        return ppl_line_next(r, warm + (i - warm + 1) / 2, (i - warm) / 2, mb, j);
    return ppl_line_next(r, total, i - total, mb, j); /* the backwards left */
}

#endif
