/*
 * render/timeline.h - one training step's pipeline, block by block: when each
 * stage runs each microbatch's forward and backward, so that a reader sees the
 * bubble where the schedule leaves it.
 *
 * The blocks are the pipeline executor's events (cost/executor.h), the same run
 * the step's pipeline time comes from: every schedule's own order, over the
 * estimate's per-stage passes and sends.  The sends show as the gaps they leave;
 * the data-parallel reduction and the optimizer step are not drawn.
 */
#ifndef PARPLAN_TIMELINE_H
#define PARPLAN_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parplan/error.h"
#include "cost/estimate.h"
#include "cost/executor.h"

typedef enum ppl_block_kind {
    PPL_BLOCK_FORWARD = 0,
    PPL_BLOCK_BACKWARD = 1, /* the whole backward (B + W), or B where W is deferred */
    PPL_BLOCK_WEIGHT = 2,   /* a deferred weight-gradient pass (W) */
    PPL_BLOCK_OVERLAPPED = 3, /* DualPipe's F&B: a forward and another microbatch's
                                 backward together (microbatch: the forward's) */
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
    double makespan_s; /* first forward to last backward: the step's pipeline */
    double busy_s;     /* the busiest stage's pass time */
} ppl_timeline;

/*
 * The step of schedule on pp stages of vp chunks each (vp 1 unless interleaved),
 * m microbatches taken in groups of `group` per virtual stage (ppl_vp_group;
 * ignored without interleaving), stage s's passes per microbatch in passes[s],
 * the send between stage s and s+1 hop_s[s] (NULL: none).  Refuses (PPL_EUSAGE) a
 * step of more than max_blocks blocks, and what the executor refuses.
 */
ppl_status ppl_timeline_build(int schedule, int64_t pp, int64_t vp, int64_t m, int64_t group,
                              const ppl_passes *passes, const double *hop_s, size_t max_blocks,
                              ppl_timeline *out, ppl_error *err);

/* The same for an estimate: its configuration, and each stage's passes and sends
 * from its stage classes (the slowest stage's for stages past the classes listed). */
ppl_status ppl_timeline_of_estimate(const ppl_estimate *e, size_t max_blocks, ppl_timeline *out,
                                    ppl_error *err);

void ppl_timeline_free(ppl_timeline *t);

#endif
