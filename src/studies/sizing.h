/*
 * studies/sizing.h - the fewest GPUs that train N tokens within D days, or that
 * hold one replica of the model at all (fit-only).
 *
 * The search walks whole servers of the topology: doubling until the best plan
 * on that many trains in time, then bisection between the last count that did
 * not and the first that did (the time to train falls as servers are added, the
 * premise of the bisection).  The time counts failures, checkpoints and
 * restarts (goodput.h): where they eat what more GPUs add, more stop paying.
 * Hot spares (goodput.h) are held beside the job: they must fit on the topology
 * with it, and the GPU-hours count them.
 * Fit-only pins dp to 1 and takes the first count, in powers of two up to a
 * server and in whole servers beyond, on which any configuration fits.  Each
 * count is planned on the first GPUs of the topology with ppl_best_plan.
 */
#ifndef PARPLAN_SIZING_H
#define PARPLAN_SIZING_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"
#include "studies/goodput.h"
#include "cost/estimate.h"
#include "plan/search.h"
#include "studies/whatif.h"

typedef struct ppl_sizing_opts {
    const ppl_pins *pins;            /* gpus is chosen here; global_batch PPL_UNSET: the default */
    ppl_search_opts search;          /* objective and families (pins, top, gpus_at_most ignored) */
    bool fit_only;                   /* one replica, no time limit (tokens and days unused) */
    double tokens;                   /* training tokens */
    double days;                     /* days allowed */
    double gpu_hour_price;           /* > 0: the cost of the GPU-hours */
    const ppl_goodput_opts *goodput; /* failures and checkpoints; NULL: the defaults */
} ppl_sizing_opts;

typedef struct ppl_sizing {
    int64_t gpus;              /* the answer */
    ppl_estimate best;         /* the best plan on that many GPUs */
    bool global_batch_assumed; /* ppl_default_global_batch, none being given */
    double seconds;            /* time to train with failures (0 with fit-only) */
    double days;
    double failure_free_s;         /* the same without failures, checkpoints, restarts */
    ppl_goodput goodput;           /* of the answer's plan */
    double seconds_without_spares; /* the same plan's time with no hot spares */
    double gpu_hours;              /* (gpus + spares) x seconds / 3,600 */
    double cost;                   /* gpu_hours x price, 0 without a price */
    ppl_search_totals search;      /* the searches behind the answer */
} ppl_sizing;

/* Sizes the cluster for ctx's model on ctx's topology.  PPL_INFEASIBLE when no
 * count of its GPUs will do: the message says what all of them achieve at best
 * (or that nothing fits, or that one replica does not fit). */
ppl_status ppl_size(const ppl_eval_ctx *ctx, const ppl_sizing_opts *opts, ppl_sizing *out,
                    ppl_error *err);

#endif
