/*
 * cost/recall.h - what the pipeline executor remembers: whole runs by their
 * inputs, and a line's order by its shape.  Per thread (base/pages.h tables, freed
 * with the thread), so that threads never share them.
 *
 * Runs: a search costs many configurations whose pipelines are the same (ZeRO
 * stages, sharding groups and offload change the reduction and the optimizer,
 * not the passes), and a run is a pure function of its inputs; a run without
 * events is looked up by its inputs, compared in full (recall.c).
 *
 * Orders: GPipe's line, and a 1F1B line the sweep gives up on (cost/linesweep.h:
 * an input not run at its turn; 1F1B is swept in an order fixed in advance and
 * keeps none), run without events, goes rank by rank, each until its next input
 * is missing (executor.c run_line).  Which ops run in which order depends on
 * the programs and on which inputs are there, never on the times: it is a
 * function of the schedule, the ranks, the chunks a rank, the microbatches and the
 * interleaving's group.  A search costs many pipelines of one shape with other
 * stage times, so the first run of a shape records its order, and a later one walks
 * it: the same ops, in the same order, with the same arithmetic, without looking
 * for inputs, waiting or clearing the finish times (every input an op reads was
 * written before it).  The orders sit in one ring of 8 MiB (recall.c): a new
 * order goes after the last one, from the start again when it would not fit, and
 * the orders it overwrites are forgotten.  An order longer than the ring is not
 * kept.
 */
#ifndef PARPLAN_RECALL_H
#define PARPLAN_RECALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/pipeline.h"

/* Runs of up to this many stages are remembered: a stage a layer up to 128
 * layers (Megatron 1T's); a mixed cluster's pipelines run to 96 stages and more. */
#define PPL_RECALL_STAGES 128

/* What a run without events gives (executor.h ppl_pipe_out's figures). */
typedef struct ppl_run_figures {
    double time_s, bound_s, peak_in_flight;
    int64_t peak_rank;
} ppl_run_figures;

/* A run of in kept: its figures in *out, true; else false. */
bool ppl_recall_run(const ppl_pipe_in *in, ppl_run_figures *out);
/* Keeps the run of in, in place of the one its slot held. */
void ppl_recall_keep_run(const ppl_pipe_in *in, const ppl_run_figures *run);

/* One op run: its rank k, forward or backward, its chunk c on the rank (the
 * virtual stage c p + k) and its microbatch; 8 bytes (the executor's limits: at
 * most 65,536 ranks, 64 chunks and 2^22 microbatches). */
typedef struct ppl_line_step {
    uint16_t rank;
    uint8_t fwd, chunk;
    uint32_t mb;
} ppl_line_step;

/* The order kept for a line of in's shape (its schedule, pp, vp, microbatches and
 * group): *n steps, or NULL. */
const ppl_line_step *ppl_recall_order(const ppl_pipe_in *in, size_t *n);
/* Room for the n steps of the order of in's shape, to write while the run goes, or
 * NULL (too long to keep, or no ring).  The room is the shape's once
 * ppl_recall_keep_order says how many were written; until then it is not found. */
ppl_line_step *ppl_recall_order_room(const ppl_pipe_in *in, size_t n);
void ppl_recall_keep_order(const ppl_pipe_in *in, size_t n);

#endif
