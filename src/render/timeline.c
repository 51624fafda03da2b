/*
 * timeline.c - one step's pipeline drawn from the executor's events
 * (render/timeline.h, cost/executor.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cost/pipeline.h"
#include "render/timeline.h"

/* blocks stage by stage, each stage's in the order it runs them */
static int by_stage_then_start(const void *a, const void *b)
{
    const ppl_block *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    return x->start_s < y->start_s ? -1 : x->start_s > y->start_s;
}

static int32_t block_kind(int op)
{
    switch (op) {
    case PPL_OP_F:
        return PPL_BLOCK_FORWARD;
    case PPL_OP_W:
        return PPL_BLOCK_WEIGHT;
    case PPL_OP_FB:
        return PPL_BLOCK_OVERLAPPED;
    default:
        return PPL_BLOCK_BACKWARD;
    }
}

ppl_status ppl_timeline_build(int schedule, int64_t pp, int64_t vp, int64_t m, int64_t group,
                              const ppl_passes *passes, const double *hop_s, size_t max_blocks,
                              ppl_timeline *out, ppl_error *err)
{
    memset(out, 0, sizeof *out);
    const ppl_schedule_row *row = ppl_schedule_of(schedule);
    const int64_t chunks = row->chunks == 2 ? 2 : vp < 1 ? 1 : vp;
    /* each rank runs 2 m chunks blocks, 3 when W is deferred (at most) */
    if (pp < 1 || m < 1 ||
        (double)pp * (double)m * (double)chunks * (row->splits_backward ? 3.0 : 2.0) >
            (double)max_blocks)
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "a pipeline of %lld stages x %lld microbatches x %lld chunks is "
                             "more than the %zu blocks a timeline draws",
                             (long long)pp, (long long)m, (long long)chunks, max_blocks);
    if (vp > 1 && row->chunks == 0 && (pp < 2 || m < pp))
        return ppl_error_set(err, PPL_EUSAGE, "", "vp",
                             "interleaving needs pp >= 2 and at least pp microbatches");
    ppl_pipe_in in = {schedule, pp, vp, m, group, passes, hop_s};
    ppl_pipe_out run;
    ppl_status st = ppl_pipe_run(&in, true, &run, err);
    if (st != PPL_OK)
        return st;
    ppl_block *blocks = malloc((run.n_events ? run.n_events : 1) * sizeof *blocks);
    if (!blocks) {
        ppl_pipe_out_free(&run);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (size_t i = 0; i < run.n_events; i++) {
        const ppl_pipe_event *e = &run.events[i];
        blocks[i] = (ppl_block){e->rank, e->chunk, e->microbatch, block_kind(e->op), e->start_s,
                                e->end_s};
    }
    qsort(blocks, run.n_events, sizeof *blocks, by_stage_then_start);
    /* the busiest stage's work: the sum of its blocks */
    double most = 0.0, sum = 0.0;
    for (size_t i = 0; i < run.n_events; i++) {
        sum += blocks[i].end_s - blocks[i].start_s;
        if (i + 1 == run.n_events || blocks[i + 1].stage != blocks[i].stage) {
            if (sum > most)
                most = sum;
            sum = 0.0;
        }
    }
    *out = (ppl_timeline){.blocks = blocks,
                          .n = run.n_events,
                          .stages = pp,
                          .chunks = chunks,
                          .microbatches = m,
                          .makespan_s = run.time_s,
                          .busy_s = most};
    ppl_pipe_out_free(&run);
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
    double *hop = calloc((size_t)c->pp, sizeof *hop);
    if (!passes || !hop) {
        free(passes), free(hop);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (int64_t s = 0; s < c->pp; s++)
        passes[s] = e->passes;
    for (int i = 0; i < e->n_stage_passes; i++) {
        const ppl_stage_passes *sp = &e->stage_passes[i];
        for (int64_t s = sp->first_stage; s < sp->first_stage + sp->count && s < c->pp; s++)
            if (s >= 0) {
                passes[s] = sp->passes;
                hop[s] = s + 1 == sp->first_stage + sp->count ? sp->last_hop_s : sp->hop_s;
            }
    }
    ppl_status st = ppl_timeline_build(c->schedule, c->pp, c->vp, c->microbatches, ppl_vp_group(c),
                                       passes, hop, max_blocks, out, err);
    free(passes), free(hop);
    return st;
}

void ppl_timeline_free(ppl_timeline *t)
{
    free(t->blocks);
    memset(t, 0, sizeof *t);
}
