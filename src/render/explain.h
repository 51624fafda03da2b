/*
 * render/explain.h - why one plan beats another: the knobs that differ and the
 * parts of the step and of memory that moved.
 *
 * A step is compute + pipeline bubble + exposed communication + optimizer step +
 * per-step overhead (schedule.h), so the parts' differences add up to the step
 * time's.  Plans and estimates attach this to every runner-up against #1.
 */
#ifndef PARPLAN_EXPLAIN_H
#define PARPLAN_EXPLAIN_H

#include <stddef.h>

#include "cost/estimate.h"

struct json_t;

#define PPL_DIFF_MAX_KNOBS 24
#define PPL_DIFF_PARTS 6 /* compute, bubble, exposed_comm, host, optimizer, overhead */

typedef struct ppl_diff_knob {
    const char *name; /* "tp", "zero", "recompute", ... as ppl_config names them */
    char from[24], to[24];
} ppl_diff_knob;

typedef struct ppl_plan_diff {
    int nknobs;
    ppl_diff_knob knobs[PPL_DIFF_MAX_KNOBS];
    const char *part_names[PPL_DIFF_PARTS];
    double part_delta_s[PPL_DIFF_PARTS]; /* other - best, seconds a step */
    double step_delta_s;                 /* their sum: other - best */
    double memory_delta_bytes;           /* worst stage's total, other - best */
} ppl_plan_diff;

/* A configuration's layers per stage as runs of equal counts: "7 8x14 7". */
void ppl_stage_layers_text(const ppl_config *config, char *buf, size_t size);

/* How `other` differs from `best`. */
void ppl_plan_diff_of(const ppl_estimate *best, const ppl_estimate *other, ppl_plan_diff *out);

/* "tp 4->2, pp 1->4; +0.021 s: bubble +0.31 s, exposed comm -0.20 s; memory -15.1 GiB"
 * (the two largest moves of the step's parts); returns buf. */
const char *ppl_plan_diff_text(const ppl_plan_diff *d, char *buf, size_t size);

/* {"knobs": {"tp": [from, to], ...}, "step_delta_s", "parts_delta_s": {...},
 * "memory_delta_bytes"}; knob values as strings. */
struct json_t *ppl_plan_diff_json(const ppl_plan_diff *d);

#endif
