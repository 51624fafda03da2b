/*
 * cost/linesweep.h - a 1F1B line of one chunk a rank, swept in an order fixed in
 * advance and carried past its transient.
 *
 * The executor (executor.c) runs such a line, when it keeps no events, here: every
 * rank's op i, the forwards among them from the first rank to the last, then the
 * backwards from the last to the first.  Rank k runs W_k + 1 warm-up forwards,
 * then a backward and a forward in turn, then the backwards left
 * (ppl_line_next).  Inputs (rank k-1's forward, rank k+1's backward, the last
 * rank's own forward) are then ops of no later index that run first: no waits,
 * no finish times cleared; each op's arithmetic is the executor's.
 *
 * The carry.  Past every rank's warm-up a cycle (a backward and a forward a rank)
 * writes times that are maxima of sums of the times it read (an input's end plus
 * its send, the rank's last end) and the fixed durations: a max-plus linear map,
 * the same one every cycle.  Such a map is monotone and commutes with adding a
 * constant to every time, so once a cycle moves every time the next cycles read by
 * one figure d, every later cycle moves them by d again (Baccelli, Cohen, Olsder
 * and Quadrat, "Synchronization and Linearity", 1992, §3.7: a max-plus recurrence
 * is periodic past its transient), and q cycles on the state is itself plus q d.
 * Where the figures agree only within tol, the map being nonexpansive in the
 * largest difference, the state q cycles on is off by at most q tol.  A line of
 * hundreds of microbatches on tens of ranks then costs its transient and its
 * drain, not every microbatch; one whose transient outlasts its forwards (uneven
 * stages, whose slack drains slowly) is swept to the end.
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
    /* in and out: the step so far, the most in flight and its rank, the cycles
     * carried */
    double time_s, peak_in_flight;
    int64_t peak_rank, cycles_carried;
} ppl_line_sweep;

/* Whether the line can be swept: one chunk a rank, 1F1B's order (not GPipe's),
 * every program 2m ops and no rank more warm-up forwards than the rank before. */
bool ppl_line_sweepable(const ppl_programs *g);

/* Runs every op of the line, each op's arithmetic the executor's, into sw's
 * time_s, peak_in_flight, peak_rank and cycles_carried. */
void ppl_line_sweep_run(ppl_line_sweep *sw);

/* A line's run between two of its op indices: what the ops still to run read. */
typedef struct ppl_line_state {
    int64_t p, m;            /* ranks, microbatches */
    double *free_s;          /* each rank's last op's end */
    double *done_f, *done_b; /* by rank x microbatch: a pass's end + 1 s */
    int64_t *forwards;       /* the forwards each rank has run */
    int64_t ops;             /* the ops each rank has run (the same for all: a sweep's index) */
} ppl_line_state;

/* The rounding a cycle's figures may differ by and still count as one shift: a
 * relative 1e-14 of the latest time, some 45 units in the last place, where a
 * cycle's sums differ by a few.  Carried over at most m cycles, the step is off by
 * less than a relative 1e-14 m. */
#define PPL_STEADY_REL_TOL 1e-14

/* Whether every time the next cycle reads moved by one figure since before_s (each
 * rank's free_s one cycle, two ops, earlier, when every rank was already past its
 * warm-up); if so, carries the state forward by as many cycles as every rank has
 * forwards for and returns them (0: no shift, or none to carry). */
int64_t ppl_line_steady_carry(ppl_line_state *s, const double *before_s);

#endif
