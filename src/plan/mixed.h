/*
 * plan/mixed.h - mixed clusters: pipelines across GPU pools.
 *
 * The pools and the link between them are loaded with the topology (topology.h,
 * ppl_pools_load).
 *
 * A job is placed on one pool (each pool is a plain ppl_topology, searched as
 * any other) or across pools (ppl_mixed_cost, ppl_mixed_search): every pipeline
 * stage on one pool, the same tp and dp on every pool, so that each data-parallel
 * replica's pipeline crosses from one pool to the next at one stage boundary;
 * each pool's stages hold as many layers as its speed and memory allow.
 */
#ifndef PARPLAN_MIXED_H
#define PARPLAN_MIXED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"
#include "cost/estimate.h"
#include "cost/stage.h"
#include "plan/search.h"
#include "hardware/topology.h"

#define PPL_MIXED_MAX_STAGES 256

/* A pipeline across pools: pool order[i] holds stages[i] consecutive stages. */
typedef struct ppl_mixed_plan {
    ppl_config config; /* tp, dp, mbs, ...; pp the stages of every pool, gpus tp*dp*pp */
    int npools;
    int order[PPL_MAX_POOLS];       /* index into ppl_pools, in pipeline order */
    int64_t stages[PPL_MAX_POOLS];  /* stages on each, in pipeline order */
    int64_t gpus[PPL_MAX_POOLS];    /* GPUs used on each: tp * dp * stages */
    double memory[PPL_MAX_POOLS];   /* the fullest GPU of each pool, bytes */
    double capacity[PPL_MAX_POOLS]; /* its memory, bytes */
    int64_t layers[PPL_MIXED_MAX_STAGES];
    double stage_s[PPL_MIXED_MAX_STAGES]; /* per microbatch, cross-pool sends included */
    double cross_send_s;                  /* one microbatch's activations across a pool boundary */
    /* the step, costed by the estimator every configuration's is (estimate.h), each
     * stage under its pool: time by part, the fullest GPU's memory, the slowest
     * stage's traffic, rates (MFU against each pool's own peak) and bottleneck;
     * its config's stage split is the default one, the layers above the real one */
    ppl_estimate estimate;
} ppl_mixed_plan;

/* The time of a transfer of `bytes` over a link: latency + bytes / bandwidth. */
double ppl_mixed_send_s(double bytes, double bps, double latency_s);

/* Costs plan's assignment (config, npools, order, stages set; the other fields
 * filled): ctx[k] is the evaluation context of pools->pool[k].  The layers of each
 * stage by ppl_balance_solve on the stages' own time and memory lines.
 * PPL_INFEASIBLE when no split fits; PPL_EUSAGE for a configuration the mixed
 * model does not cost (vp > 1, cp > 1, ep > 1, MoE, ZeRO-3, another schedule than
 * 1F1B or GPipe, more stages than layers or than a pool holds). */
ppl_status ppl_mixed_cost(const ppl_eval_ctx *ctx, const ppl_pools *pools, ppl_mixed_plan *plan,
                          ppl_error *err);

typedef struct ppl_mixed_search_stats {
    size_t evaluated, feasible;
    size_t pruned;        /* assignments whose step-time bound could not rank */
    size_t bounds_broken; /* costed plans below that bound (a bug; tests hold it 0) */
} ppl_mixed_search_stats;

/* The fastest assignments of the job across all of the pools (each order), for
 * pins (tp, dp, mbs, recompute, zero, precision, global_batch honoured when set):
 * out[top], best first; returns how many.  Searched: tp a power of two within
 * every pool's NVLink domain, dp, stages per pool (the most that fit, and halves
 * of it), mbs 1 or 2, recomputation none, selective or full, ZeRO 1, sequence
 * parallelism with tp > 1, flash attention. */
size_t ppl_mixed_search(const ppl_eval_ctx *ctx, const ppl_pools *pools, const ppl_pins *pins,
                        ppl_mixed_plan *out, size_t top, ppl_mixed_search_stats *stats);
/* The same, skipping (counted in stats->pruned) every assignment whose step
 * cannot be below ceiling_s (INFINITY: none) nor rank among out's top: the
 * microbatches times the least slowest stage any split of the layers gives on the
 * stages' time lines, then the pipeline's lower bound; unless no_prune. */
size_t ppl_mixed_search_within(const ppl_eval_ctx *ctx, const ppl_pools *pools,
                               const ppl_pins *pins, bool no_prune, double ceiling_s,
                               ppl_mixed_plan *out, size_t top, ppl_mixed_search_stats *stats);

/* The best plans of the job on the mixed cluster, ranked by step time (ties: fewer
 * GPUs): the full search of each pool alone (ppl_search, under opts) and the
 * pipelines across the pools (ppl_mixed_search), opts->top of them in out[];
 * returns how many (0, and err set, on an internal failure; 0 with err untouched
 * when nothing fits).  A pool whose GPU lacks the precision is passed over. */
size_t ppl_mixed_plan_all(const ppl_eval_ctx *ctx, const ppl_pools *pools,
                          const ppl_search_opts *opts, ppl_mixed_plan *out,
                          ppl_mixed_search_stats *stats, ppl_error *err);

#endif
