/*
 * cost/executor.h - the pipeline executor: one step's pipeline run op by op.
 *
 * Every rank runs its schedule's program (the order of its forward and backward
 * passes, executor.c builds one per schedule) in order; an op starts when its rank
 * is free and its input is there: the previous stage's forward of the same
 * microbatch (and the send from it), the next stage's backward to the input, or for
 * a W its own B.  Time advances event by event (a list scheduler over the ranks'
 * programs), so the step it gives is one a real run can reach: never below a
 * microbatch's dependency chain or the busiest rank's work.  The closed forms of
 * pipeline.h are exact only with equal stages and enough microbatches; this is the
 * pipeline time of every plan that can rank.
 *
 * The inputs (ppl_pipe_in) and the lower bounds the run never goes below
 * (ppl_pipe_bound_s) are pipeline.h's.  Passes are per stage (ppl_passes): a rank
 * holding several chunks of the model (interleaved 1F1B, the V of ZB-V and
 * DualPipeV) runs each chunk's share of its stage's passes; DualPipe's rank k holds
 * stages k and p-1-k, one for each direction.
 */
#ifndef PARPLAN_EXECUTOR_H
#define PARPLAN_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "cost/pipeline.h"
#include "cost/programs.h"
#include "parplan/error.h"

/* One op as it ran (its kind: ppl_pipe_op, cost/programs.h). */
typedef struct ppl_pipe_event {
    double start_s, end_s;
    int32_t rank;
    int32_t microbatch; /* of the forward for F&B; DualPipe's second direction from m/2 */
    int32_t microbatch2; /* F&B: the backward's microbatch; else -1 */
    int16_t chunk;      /* the model chunk: 0 .. chunks-1 on the rank */
    uint8_t op;         /* ppl_pipe_op */
} ppl_pipe_event;

typedef struct ppl_pipe_out {
    double time_s;        /* the pipeline: first op's start to last op's end */
    double bound_s;       /* the largest of the proven lower bounds (ppl_pipe_bound_s) */
    double peak_in_flight; /* the most microbatches of a stage's activations any rank
                              held at once (forwards whose B had not run) */
    int64_t peak_rank;    /* the rank that held them */
    int64_t cycles_carried;    /* a 1F1B line's cycles (a backward and a forward a rank)
                                  carried forward once its state repeated, not run op by
                                  op (cost/linesweep.h); 0 when recalled, kept or not
                                  swept */
    double *in_flight_by_rank; /* each rank's most, when asked (keep_events; pp entries) */
    ppl_pipe_event *events; /* every op, when asked (ppl_pipe_run keep_events) */
    size_t n_events;
} ppl_pipe_out;

/* Runs the step's pipeline.  keep_events: fill out->events and
 * out->in_flight_by_rank (freed by ppl_pipe_out_free).  Without them, a run the
 * thread made of the same inputs answers, and a line of a shape it ran walks the
 * order that run kept (cost/recall.h): the same figures, to the bit; a 1F1B line is
 * swept, its periods past the transient carried (cost/linesweep.h: the same figures
 * within a relative 1e-14 a carried period).  PPL_EUSAGE for inputs the
 * schedule cannot run (naming the knob); PPL_EINTERNAL out of memory, or if the
 * programs deadlock (a bug). */
ppl_status ppl_pipe_run(const ppl_pipe_in *in, bool keep_events, ppl_pipe_out *out,
                        ppl_error *err);
void ppl_pipe_out_free(ppl_pipe_out *out);

#endif
