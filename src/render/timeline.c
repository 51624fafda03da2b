/*
 * timeline.c - one step's pipeline as a list schedule (render/timeline.h).
 *
 * Orders, per stage s of p (virtual stage of chunk c: c p + s, of V = p v):
 *  - GPipe: every forward, then every backward (Huang et al., NeurIPS 2019).
 *  - 1F1B: p - s - 1 warm-up forwards, then one forward and one backward in
 *    turn, then the remaining backwards (Narayanan et al. SC'21 §2.2, Fig. 4).
 *  - Interleaved 1F1B: the forwards take microbatches in groups of N per chunk,
 *    chunk after chunk (the k-th forward is chunk (k mod N v) div N of microbatch
 *    (k div N v) N + k mod N); backwards the same with the chunks reversed;
 *    warm-up (p - s - 1) 2 + (v - 1) N forwards, at most m v (Narayanan et al.
 *    §2.2.2; megatron/core/pipeline_parallel/schedules.py, forward_backward_
 *    pipelining_with_interleaving: get_model_chunk_id, num_warmup_microbatches).
 *  - ZB-H1 (Qi et al., ICLR 2024 §3): B and W apart, each stage free to run, of
 *    the passes whose inputs are ready, a B first, then an F while it holds fewer
 *    than p - s microbatches (1F1B's memory), then a W; the stage whose next pass
 *    can start earliest goes first.  The postponed W passes fill the tail.
 * With equal stages of forward F and backward B, 1F1B ends at (m + p - 1)(F + B)
 * and interleaving at m (F + B) + (p - 1)(F + B) / v: the step model's pipeline
 * (schedule.c); ZB-H1 with F = B = W at m (F + B + W) + (p - 1)(F + B - W), the
 * paper's; test_timeline checks them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/pipeline.h"
#include "render/timeline.h"

typedef struct op {
    int32_t chunk, mb, kind;
} op;

/* The order stage s runs its passes in: 2 m v of them. */
static void stage_order(int schedule, int64_t p, int64_t v, int64_t m, int64_t g, int64_t s,
                        op *ops)
{
    const int64_t total = m * v;
    size_t n = 0;
    if (schedule == PPL_SCHEDULE_GPIPE) {
        for (int64_t i = 0; i < m; i++)
            ops[n++] = (op){0, (int32_t)i, PPL_BLOCK_FORWARD};
        for (int64_t i = 0; i < m; i++)
            ops[n++] = (op){0, (int32_t)i, PPL_BLOCK_BACKWARD};
        return;
    }
    int64_t warm = v > 1 ? (p - s - 1) * 2 + (v - 1) * g : p - s - 1;
    if (warm > total)
        warm = total;
        /* the k-th forward of this stage: its chunk and microbatch */
#define CHUNK(k) (v > 1 ? ((k) % (g * v)) / g : 0)
#define MB(k) (v > 1 ? ((k) / (g * v)) * g + (k) % g : (k))
    int64_t f = 0, b = 0;
    for (; f < warm; f++)
        ops[n++] = (op){(int32_t)CHUNK(f), (int32_t)MB(f), PPL_BLOCK_FORWARD};
    while (f < total) {
        ops[n++] = (op){(int32_t)CHUNK(f), (int32_t)MB(f), PPL_BLOCK_FORWARD};
        f++;
        ops[n++] = (op){(int32_t)(v - 1 - CHUNK(b)), (int32_t)MB(b), PPL_BLOCK_BACKWARD};
        b++;
    }
    for (; b < total; b++)
        ops[n++] = (op){(int32_t)(v - 1 - CHUNK(b)), (int32_t)MB(b), PPL_BLOCK_BACKWARD};
#undef CHUNK
#undef MB
}

/* The busiest stage's work: m x its F + B + W. */
static double busiest_s(const ppl_passes *passes, int64_t pp, int64_t m)
{
    double busy = 0.0;
    for (int64_t s = 0; s < pp; s++)
        busy = fmax(busy, (double)m * (passes[s].f_s + passes[s].b_s + passes[s].w_s));
    return busy;
}

/* ZB-H1 as the greedy list schedule of the header; blocks[3 p m], stage by stage. */
static ppl_status zb_h1(int64_t p, int64_t m, const ppl_passes *passes, ppl_block *blocks,
                        double *end_s, ppl_error *err)
{
    /* per stage: the F, B and W passes placed, the finish times of its F and B */
    int64_t *count = calloc((size_t)(3 * p), sizeof *count);
    double *done = malloc((size_t)(2 * p * m) * sizeof *done),
           *free_at = calloc((size_t)p, sizeof *free_at);
    if (!count || !done || !free_at) {
        free(count), free(done), free(free_at);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (int64_t i = 0; i < 2 * p * m; i++)
        done[i] = INFINITY;
#define FDONE(s, i) done[(size_t)((s)*m + (i))]
#define BDONE(s, i) done[(size_t)((p + (s)) * m + (i))]
    for (int64_t placed = 0; placed < 3 * p * m; placed++) {
        int64_t best_s = -1;
        int best_kind = 0, best_rank = 3;
        double best_t = INFINITY;
        for (int64_t s = 0; s < p; s++) {
            int64_t *n = &count[3 * s]; /* F, B, W placed */
            double t[3] = {INFINITY, INFINITY, INFINITY};
            if (n[0] < m && n[0] - n[1] < p - s)
                t[0] = s == 0 ? 0.0 : FDONE(s - 1, n[0]);
            if (n[1] < m)
                t[1] = fmax(FDONE(s, n[1]), s == p - 1 ? 0.0 : BDONE(s + 1, n[1]));
            if (n[2] < n[1])
                t[2] = BDONE(s, n[2]);
            static const int priority[3] = {PPL_BLOCK_BACKWARD, PPL_BLOCK_FORWARD,
                                            PPL_BLOCK_WEIGHT};
            for (int k = 0; k < 3; k++) {
                const int kind = priority[k];
                double start = fmax(t[kind], free_at[s]);
                if (start < best_t || (start == best_t && start < INFINITY && k < best_rank)) {
                    best_t = start, best_s = s, best_kind = kind, best_rank = k;
                }
            }
        }
        if (best_s < 0) { /* nothing can run: an order that deadlocks, a bug */
            free(count), free(done), free(free_at);
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "the ZB-H1 order deadlocked");
        }
        const ppl_passes *ps = &passes[best_s];
        const int64_t i = count[3 * best_s + best_kind];
        const double len = best_kind == PPL_BLOCK_FORWARD    ? ps->f_s
                           : best_kind == PPL_BLOCK_BACKWARD ? ps->b_s
                                                             : ps->w_s;
        blocks[best_s * 3 * m + count[3 * best_s] + count[3 * best_s + 1] + count[3 * best_s + 2]] =
            (ppl_block){(int32_t)best_s, 0, (int32_t)i, best_kind, best_t, best_t + len};
        if (best_kind == PPL_BLOCK_FORWARD)
            FDONE(best_s, i) = best_t + len;
        else if (best_kind == PPL_BLOCK_BACKWARD)
            BDONE(best_s, i) = best_t + len;
        count[3 * best_s + best_kind]++;
        free_at[best_s] = best_t + len;
    }
#undef FDONE
#undef BDONE
    *end_s = 0.0;
    for (int64_t s = 0; s < p; s++)
        *end_s = fmax(*end_s, free_at[s]);
    free(count), free(done), free(free_at);
    return PPL_OK;
}

ppl_status ppl_timeline_build(int schedule, int64_t pp, int64_t vp, int64_t m, int64_t group,
                              const ppl_passes *passes, size_t max_blocks, ppl_timeline *out,
                              ppl_error *err)
{
    memset(out, 0, sizeof *out);
    if (schedule == PPL_SCHEDULE_ZB_H1 && pp >= 1 && m >= 1) {
        const double nblocks = 3.0 * (double)pp * (double)m;
        if (nblocks > (double)max_blocks)
            return ppl_error_set(err, PPL_EUSAGE, "", "",
                                 "a step of %.0f pipeline blocks is more than the %zu drawn",
                                 nblocks, max_blocks);
        ppl_block *blocks = malloc((size_t)nblocks * sizeof *blocks);
        if (!blocks)
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
        double end = 0.0;
        ppl_status st = zb_h1(pp, m, passes, blocks, &end, err);
        if (st != PPL_OK) {
            free(blocks);
            return st;
        }
        *out = (ppl_timeline){.blocks = blocks,
                              .n = (size_t)nblocks,
                              .stages = pp,
                              .chunks = 1,
                              .microbatches = m,
                              .makespan_s = end,
                              .busy_s = busiest_s(passes, pp, m)};
        return PPL_OK;
    }
    const bool split = ppl_schedule_of(schedule)->splits_backward;
    const int sched = split ? PPL_SCHEDULE_1F1B : schedule;
    const int64_t v = sched == PPL_SCHEDULE_1F1B && vp > 1 ? vp : 1;
    if (pp < 1 || m < 1 || (v > 1 && m < pp))
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "no pipeline of %lld stages and %lld microbatches to draw",
                             (long long)pp, (long long)m);
    /* the mapping above covers every microbatch once when the group divides m;
     * Megatron's uneven last group (ppl_vp_group) is drawn as one group of all */
    if (v > 1 && (group < pp || m % group != 0))
        group = m % pp == 0 ? pp : m;
    const double nblocks = 2.0 * (double)pp * (double)v * (double)m;
    if (nblocks > (double)max_blocks)
        return ppl_error_set(err, PPL_EUSAGE, "", "",
                             "a step of %.0f pipeline blocks is more than the %zu drawn", nblocks,
                             max_blocks);
    const size_t per_stage = (size_t)(2 * v * m), V = (size_t)(pp * v);
    ppl_block *blocks = malloc((size_t)nblocks * sizeof *blocks);
    op *order = malloc((size_t)nblocks * sizeof *order);
    size_t *next = calloc((size_t)pp, sizeof *next);
    double *free_at = calloc((size_t)pp, sizeof *free_at);
    /* finish time of each virtual stage's forward and backward of each microbatch */
    double *done = malloc(2 * V * (size_t)m * sizeof *done);
    if (!blocks || !order || !next || !free_at || !done) {
        free(blocks), free(order), free(next), free(free_at), free(done);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (size_t i = 0; i < 2 * V * (size_t)m; i++)
        done[i] = -1.0;
#define DONE(kind, vs, mb) done[((size_t)(kind)*V + (size_t)(vs)) * (size_t)m + (size_t)(mb)]
    for (int64_t s = 0; s < pp; s++)
        stage_order(sched, pp, v, m, group, s, order + (size_t)s * per_stage);
    size_t placed = 0;
    bool progress = true;
    while (placed < (size_t)nblocks && progress) {
        progress = false;
        for (int64_t s = 0; s < pp; s++) {
            while (next[s] < per_stage) {
                const op *o = &order[(size_t)s * per_stage + next[s]];
                const int64_t vs = (int64_t)o->chunk * pp + s;
                double ready;
                if (o->kind == PPL_BLOCK_FORWARD)
                    ready = vs == 0 ? 0.0 : DONE(0, vs - 1, o->mb);
                else /* after its own forward and the next virtual stage's backward */
                    ready = vs == (int64_t)V - 1 ? DONE(0, vs, o->mb) : DONE(1, vs + 1, o->mb);
                if (ready < 0.0)
                    break;
                const ppl_passes *ps = &passes[s];
                double len =
                    (o->kind == PPL_BLOCK_FORWARD ? ps->f_s : ps->b_s + ps->w_s) / (double)v;
                double start = fmax(ready, free_at[s]);
                blocks[(size_t)s * per_stage + next[s]] =
                    (ppl_block){(int32_t)s, o->chunk, o->mb, o->kind, start, start + len};
                free_at[s] = start + len;
                DONE(o->kind, vs, o->mb) = start + len;
                next[s]++;
                placed++;
                progress = true;
            }
        }
    }
#undef DONE
    double end = 0.0;
    for (int64_t s = 0; s < pp; s++)
        end = fmax(end, free_at[s]);
    free(order), free(next), free(free_at), free(done);
    if (placed < (size_t)nblocks) { /* an order that deadlocks: a bug, not an input */
        free(blocks);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "the pipeline order deadlocked");
    }
    *out = (ppl_timeline){.blocks = blocks,
                          .n = placed,
                          .stages = pp,
                          .chunks = v,
                          .microbatches = m,
                          .makespan_s = end,
                          .busy_s = busiest_s(passes, pp, m),
                          .drawn_as_1f1b = split};
    return PPL_OK;
}

ppl_status ppl_timeline_of_estimate(const ppl_estimate *e, size_t max_blocks, ppl_timeline *out,
                                    ppl_error *err)
{
    const ppl_config *c = &e->config;
    memset(out, 0, sizeof *out);
    if (c->pp < 1 || c->pp > 100000)
        return ppl_error_set(err, PPL_EUSAGE, "", "pp", "no pipeline of %lld stages to draw",
                             (long long)c->pp);
    ppl_passes *passes = malloc((size_t)c->pp * sizeof *passes);
    if (!passes)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    for (int64_t s = 0; s < c->pp; s++)
        passes[s] = e->passes;
    for (int i = 0; i < e->n_stage_passes; i++) {
        const ppl_stage_passes *sp = &e->stage_passes[i];
        for (int64_t s = sp->first_stage; s < sp->first_stage + sp->count && s < c->pp; s++)
            if (s >= 0)
                passes[s] = sp->passes;
    }
    ppl_status st = ppl_timeline_build(c->schedule, c->pp, c->vp, c->microbatches, ppl_vp_group(c),
                                       passes, max_blocks, out, err);
    free(passes);
    return st;
}

void ppl_timeline_free(ppl_timeline *t)
{
    free(t->blocks);
    memset(t, 0, sizeof *t);
}
