/*
 * cost/linesweep.h - a 1F1B line swept in an order fixed in advance and carried
 * past its transient.
 *
 * The executor (executor.c) runs a 1F1B line, when it keeps no events, here: every
 * rank's op i, the forwards among them from the first rank to the last, then the
 * backwards from the last to the first.  Rank k runs W_k + 1 warm-up forwards,
 * then a backward and a forward in turn, then the backwards left
 * (ppl_line_next); with several chunks a rank, in Megatron-Core's table's order.
 * With one chunk every input (rank k-1's forward, rank k+1's backward, the last
 * rank's own forward) is then an op of no later index that runs first: no waits,
 * no finish times cleared; with chunks each op checks that its input ran, and the
 * executor runs the line its own way if one did not.  Each op's arithmetic is the
 * executor's.
 *
 * The carry.  Past every rank's warm-up a period (a backward and a forward a rank,
 * or with chunks a group's: n microbatches through every chunk, n v of each) writes
 * times that are maxima of sums of the times it read (an input's end plus
 * its send, the rank's last end) and the fixed durations: a max-plus linear map,
 * the same one every period.  Such a map is monotone and commutes with adding a
 * constant to every time, so once a period moves every time the next periods read
 * by one figure d, every later period moves them by d again (Baccelli, Cohen, Olsder
 * and Quadrat, "Synchronization and Linearity", 1992, §3.7: a max-plus recurrence
 * is periodic past its transient), and q periods on the state is itself plus q d.
 * Where the figures agree only within tol, the map being nonexpansive in the
 * largest difference, the state q periods on is off by at most q tol.  A line of
 * hundreds of microbatches on tens of ranks then costs its transient and its
 * drain, not every microbatch; one whose transient outlasts its forwards (uneven
 * stages, whose slack drains slowly) is swept to the end.
 */
#ifndef PARPLAN_LINESWEEP_H
#define PARPLAN_LINESWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/programs.h"

/* A line's run: its stages' figures (by virtual stage, chunk c of rank k being
 * stage c p + k) and the arrays the sweep advances. */
typedef struct ppl_line_sweep {
    int64_t p, m, v;              /* ranks, microbatches, chunks a rank */
    int64_t group;                /* chunks: the table's group of microbatches */
    const int32_t *table;         /* chunks: each forward's microbatch and chunk (programs.h) */
    const int64_t *warm;          /* each rank's warm-up (ppl_programs) */
    const double *dur_f, *dur_bw; /* a forward's, a backward's duration */
    const double *hop_f, *hop_b;  /* the send a forward's, a backward's input takes */
    double frac;                  /* a stage's share of activations a chunk holds */
    double *done_f, *done_b;      /* virtual stage x microbatch: a pass's end + 1 s */
    double *free_s, *held;        /* each rank's last end, chunk-microbatches in flight */
    int64_t *forwards, *ops;      /* each rank's forwards run, ops run */
    /* in and out: the step so far, the most in flight and its rank, the cycles (a
     * backward and a forward a rank) carried */
    double time_s, peak_in_flight;
    int64_t peak_rank, cycles_carried;
} ppl_line_sweep;

/* Whether the line can be swept: 1F1B's order (not GPipe's), one chunk a rank or
 * Megatron-Core's table, every program 2 m v ops and no rank more warm-up forwards
 * than the rank before. */
bool ppl_line_sweepable(const ppl_programs *g);

/* Runs every op of the line, each op's arithmetic the executor's, into sw's
 * time_s, peak_in_flight, peak_rank and cycles_carried.  false: an op's input had
 * not run at its turn (chunks only); sw's arrays are then half run. */
bool ppl_line_sweep_run(ppl_line_sweep *sw);

/* A line's run between two of its op indices: what the ops still to run read. */
typedef struct ppl_line_state {
    int64_t p, m, v, n;      /* ranks, microbatches, chunks, the period's microbatches */
    double *free_s;          /* each rank's last op's end */
    double *done_f, *done_b; /* by virtual stage x microbatch: a pass's end + 1 s */
    int64_t *forwards;       /* the forwards each rank has run */
    int64_t ops;             /* the ops each rank has run (the same for all: a sweep's index) */
} ppl_line_state;

/* The times a row of done (a virtual stage's, by microbatch) holds that later ops
 * still read, [lo, hi): the ends its reader has yet to take. */
typedef struct ppl_line_window {
    int64_t lo, hi;
} ppl_line_window;

/* The rounding a period's figures may differ by and still count as one shift: a
 * relative 1e-14 of the latest time, some 45 units in the last place, where a
 * period's sums differ by a few.  Carried over at most m periods, the step is off
 * by less than a relative 1e-14 m. */
#define PPL_STEADY_REL_TOL 1e-14

/* The most a step of m microbatches, time_s long, may move by the carry: the
 * bound a run without events keeps to the run op by op. */
static inline double ppl_steady_bound_s(int64_t m, double time_s)
{
    return PPL_STEADY_REL_TOL * (double)m * time_s;
}

/* Whether every time the next period reads moved by one figure since before_s (each
 * rank's free_s one period, 2 n v ops, earlier, when every rank was already past
 * its warm-up); if so, carries the state forward by as many periods as every rank
 * has forwards for in whole groups and returns them (0: no shift, or none to
 * carry).  windows: room for 2 p v. */
int64_t ppl_line_steady_carry(ppl_line_state *s, const double *before_s, ppl_line_window *windows);

#endif
