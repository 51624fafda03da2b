/*
 * parplan/search.h - the configuration space and its best points.
 *
 * Every knob a flag does not pin is enumerated: tp (dividing the attention heads,
 * inside the NVLink domain unless allowed across), pp (at most one per layer), cp,
 * dp = gpus/(tp*pp*cp), ep (MoE), vp (interleaving with equal stages), microbatch
 * size, ZeRO stage (2 and 3 only without pipelining, as Megatron-LM and DeepSpeed
 * require), recomputation, sequence parallelism and flash attention.  Configurations
 * whose worst stage does not fit in memory are dropped; the rest are ranked by the
 * objective, ties broken on a fixed order so that output is reproducible.
 */
#ifndef PARPLAN_SEARCH_H
#define PARPLAN_SEARCH_H

#include <stddef.h>

#include "parplan/cli.h"
#include "parplan/schedule.h"

typedef struct ppl_search_opts {
    const ppl_args *pins;  /* pinned knobs (PPL_UNSET where free) */
    size_t top;            /* how many to keep */
    int objective;         /* ppl_objective */
    double gpu_hour_price; /* for the cost objective */
} ppl_search_opts;

typedef struct ppl_search_result {
    ppl_estimate *results; /* best first, `count` of them (caller frees with ppl_search_free) */
    size_t count;
    size_t evaluated;  /* configurations costed */
    size_t feasible;   /* of those, fitting in memory */
    size_t candidates; /* configurations enumerated, valid or not */
    double seconds;
    double smallest_memory; /* bytes: the least memory any valid configuration needed */
    double capacity;
    const char *empty_reason; /* when nothing fits or nothing is valid */
} ppl_search_result;

ppl_status ppl_search(const ppl_eval_ctx *ctx, const ppl_search_opts *opts, ppl_search_result *out,
                      ppl_error *err);
void ppl_search_free(ppl_search_result *result);

#endif
