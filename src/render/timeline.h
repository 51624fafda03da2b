/*
 * render/timeline.h - one training step's pipeline, block by block: when each
 * stage runs each microbatch's forward and backward, so that a reader sees the
 * bubble where the schedule leaves it.
 *
 * The blocks come from a list schedule: every stage runs its own fixed order of
 * passes (the schedule's), each as soon as the stage is free and the pass it
 * depends on has finished (a forward on the previous virtual stage's forward, a
 * backward on the next virtual stage's backward).  Passes take the step model's
 * own per-stage times (schedule.h ppl_stage_passes), a chunk 1/v of its stage's;
 * point-to-point transfers and the data-parallel reduction are not drawn.
 */
#ifndef PARPLAN_TIMELINE_H
#define PARPLAN_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parplan/error.h"
#include "cost/estimate.h"

typedef enum ppl_block_kind {
    PPL_BLOCK_FORWARD = 0,
    PPL_BLOCK_BACKWARD = 1, /* the whole backward (B + W); under ZB-H1 the input gradients */
    PPL_BLOCK_WEIGHT = 2,   /* ZB-H1's weight gradients (W) */
} ppl_block_kind;

typedef struct ppl_block {
    int32_t stage, chunk, microbatch;
    int32_t kind; /* ppl_block_kind */
    double start_s, end_s;
} ppl_block;

typedef struct ppl_timeline {
    ppl_block *blocks; /* in the order each stage runs them, stage by stage */
    size_t n;
    int64_t stages, chunks, microbatches;
    double makespan_s; /* first forward to last backward */
    double busy_s;     /* the busiest stage's pass time */
    /* the schedule's order was not simulated (ZB-H2, ZB-V, DualPipe): the blocks
     * are 1F1B's order with the same passes, and the step model's bubble is the
     * schedule's formula (pipeline.h) */
    bool drawn_as_1f1b;
} ppl_timeline;

/*
 * The step of schedule on pp stages of vp chunks each (vp 1 unless interleaved),
 * m microbatches taken in groups of `group` per virtual stage (ppl_vp_group;
 * ignored without interleaving), stage s's passes per microbatch in passes[s].
 * Refuses (PPL_EUSAGE) a step of more than max_blocks blocks.
 */
ppl_status ppl_timeline_build(int schedule, int64_t pp, int64_t vp, int64_t m, int64_t group,
                              const ppl_passes *passes, size_t max_blocks, ppl_timeline *out,
                              ppl_error *err);

/* The same for an estimate: its configuration, and each stage's passes from its
 * stage classes (the slowest stage's for stages past the classes listed). */
ppl_status ppl_timeline_of_estimate(const ppl_estimate *e, size_t max_blocks, ppl_timeline *out,
                                    ppl_error *err);

void ppl_timeline_free(ppl_timeline *t);

#endif
