/*
 * plan/ranking.h - the order plans are ranked in and the list of the best ones
 * (ranking.c): the objective, then a fixed order of the knobs, so that output is
 * reproducible.
 */
#ifndef PARPLAN_RANKING_H
#define PARPLAN_RANKING_H

#include <stddef.h>

#include "cost/estimate.h"

typedef enum ppl_objective {
    PPL_OBJECTIVE_TIME = 0,
    PPL_OBJECTIVE_COST = 1,
    PPL_OBJECTIVE_MEMORY = 2
} ppl_objective;

/* "time", "cost", "memory", NULL-terminated. */
extern const char *const ppl_objective_names[];
const char *ppl_objective_name(int objective); /* "?" out of range */

/* The best plans, best first: `count` of at most `cap` in items (the caller's). */
typedef struct ppl_ranking {
    ppl_estimate *items;
    size_t count, cap;
} ppl_ranking;

/* Strict order under `objective` (ppl_objective: the step time, GPU-hours per
 * token, or memory), then the memory a GPU needs, then the knobs: < 0 when a
 * ranks before b. */
int ppl_ranking_compare(int objective, const ppl_estimate *a, const ppl_estimate *b);

/* The list's last when it is full (what a plan must beat to enter it), else NULL. */
const ppl_estimate *ppl_ranking_worst(const ppl_ranking *list);

/* Keeps e among the best; one entry per setting of the knobs, at its faster stage
 * split (the default or the balanced one). */
void ppl_ranking_keep(int objective, ppl_ranking *list, const ppl_estimate *e);

#endif
