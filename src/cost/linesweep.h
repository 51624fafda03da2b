/*
 * cost/linesweep.h - a 1F1B line of one chunk a rank, swept in an order fixed in
 * advance.
 *
 * The executor (executor.c) runs such a line, when it keeps no events, here: every
 * rank's op i, the forwards among them from the first rank to the last, then the
 * backwards from the last to the first.  Rank k runs W_k + 1 warm-up forwards,
 * then a backward and a forward in turn, then the backwards left
 * (ppl_line_next).  Inputs (rank k-1's forward, rank k+1's backward, the last
 * rank's own forward) are then ops of no later index that run first: no waits,
 * no finish times cleared; each op's arithmetic is the executor's.
 */
#ifndef PARPLAN_LINESWEEP_H
#define PARPLAN_LINESWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/programs.h"

/* A line's run: its stages' figures (by rank) and the arrays the sweep advances. */
typedef struct ppl_line_sweep {
    int64_t p, m;                 /* ranks, microbatches */
    const int64_t *warm;          /* each rank's warm-up (ppl_programs) */
    const double *dur_f, *dur_bw; /* a forward's, a backward's duration */
    const double *hop_f, *hop_b;  /* the send a forward's, a backward's input takes */
    double frac;                  /* a stage's share of activations a chunk holds */
    double *done_f, *done_b;      /* rank x microbatch: a pass's end + 1 s */
    double *free_s, *held;        /* each rank's last end, microbatches in flight */
    int64_t *forwards, *ops;      /* each rank's forwards run, ops run */
    /* in and out: the step so far, the most in flight and its rank */
    double time_s, peak_in_flight;
    int64_t peak_rank;
} ppl_line_sweep;

/* Whether the line can be swept: one chunk a rank, 1F1B's order (not GPipe's),
 * every program 2m ops and no rank more warm-up forwards than the rank before. */
bool ppl_line_sweepable(const ppl_programs *g);

/* Runs every op of the line, each op's arithmetic the executor's, into sw's
 * time_s, peak_in_flight and peak_rank. */
void ppl_line_sweep_run(ppl_line_sweep *sw);

#endif
