/*
 * plan/ranking.h - the order plans are ranked in and the list of the best ones
 * (ranking.c): the objective, then a fixed order of the knobs, so that output is
 * reproducible.
 */
#ifndef PARPLAN_RANKING_H
#define PARPLAN_RANKING_H

#include <stddef.h>
#include <stdint.h>

#include "cost/estimate.h"

typedef enum ppl_objective {
    PPL_OBJECTIVE_TIME = 0,
    PPL_OBJECTIVE_COST = 1,
    PPL_OBJECTIVE_MEMORY = 2
} ppl_objective;

/* "time", "cost", "memory", NULL-terminated. */
extern const char *const ppl_objective_names[];
const char *ppl_objective_name(int objective); /* "?" out of range */

/* The best plans: `count` of at most `cap` in items (the caller's).  While plans
 * are kept, items is a heap with the worst first, so that keeping one costs
 * O(log cap); ppl_ranking_sort puts them best first.  A list made with
 * ppl_ranking_init finds an entry of the same knobs through a hash table; one set
 * up by hand ({items, 0, cap}) scans its entries (for a few). */
typedef struct ppl_ranking {
    ppl_estimate *items;
    size_t count, cap;
    size_t best;       /* the index of the best entry (count > 0) */
    uint32_t *slot_of; /* per entry: its slot in `slots` */
    uint32_t *slots;   /* entry index + 1 by the knobs' hash (0: empty) */
    size_t nslots;     /* a power of two, at least twice cap */
} ppl_ranking;

/* A list of at most cap plans: items allocated (freed by whoever takes them),
 * the table too (freed by ppl_ranking_sort or ppl_ranking_free). */
ppl_status ppl_ranking_init(ppl_ranking *list, size_t cap, ppl_error *err);
void ppl_ranking_free(ppl_ranking *list); /* items and table */

/* Strict order under `objective` (ppl_objective: the step time, GPU-hours per
 * token, or memory), then the memory a GPU needs, then the knobs: < 0 when a
 * ranks before b. */
int ppl_ranking_compare(int objective, const ppl_estimate *a, const ppl_estimate *b);

/* The list's worst when it is full (what a plan must beat to enter it), else NULL. */
const ppl_estimate *ppl_ranking_worst(const ppl_ranking *list);
/* The list's best, NULL when it is empty. */
const ppl_estimate *ppl_ranking_best(const ppl_ranking *list);

/* Keeps e among the best; one entry per setting of the knobs, at its faster stage
 * split (the default or the balanced one). */
void ppl_ranking_keep(int objective, ppl_ranking *list, const ppl_estimate *e);

/* Puts the entries best first (items[0] the best) and frees the table: the list
 * takes no more plans. */
void ppl_ranking_sort(int objective, ppl_ranking *list);

#endif
