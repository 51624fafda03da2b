/*
 * plan/search.h - the configuration space and its best points.
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

#include "cost/config.h"
#include "plan/families.h"
#include "cost/estimate.h"
#include "plan/ranking.h"

typedef struct ppl_search_opts {
    const ppl_pins *pins;         /* pinned knobs (PPL_UNSET where free) */
    size_t top;                   /* how many to keep */
    int objective;                /* ppl_objective */
    /* with a cost or memory objective: keep only plans whose step is at most
     * (1 + within) x the fastest plan's (a time search first finds it); 0: no
     * such floor */
    double within;
    bool allow_tp_across_servers; /* tensor parallelism beyond the NVLink domain */
    bool no_prune;                /* cost every candidate (tests compare with the pruned search) */
    bool no_balance;              /* keep the default stage split (no integer program) */
    bool gpus_at_most;            /* pins->gpus is a ceiling: every GPU count up to it is a
                                     candidate (whatif's gpus=N: what the cluster offers) */
    /* under a ceiling with the time objective: the counts up to gpus_searched were
     * searched already under the same context, pins and top (whatif's point at a
     * smaller ceiling), that search's list the nseed estimates of seed (none when
     * nothing fit): only the counts above it are
     * enumerated, the list starting with the seed (the ranking is a total order, so
     * the result is the whole search's) */
    int64_t gpus_searched;
    const ppl_estimate *seed;
    size_t nseed;
    bool allow_sharded_with_pp;   /* ZeRO-2/3 with pipelining, left out by default */
    /* with the time objective: also the best of each family the options leave out
     * (neither let in by them nor ruled out by a pin: tensor parallelism across
     * servers unless tp is pinned, ZeRO-2/3 with pipelining unless zero is pinned),
     * costed in the same pass and bounded by the #1 it must beat (result left_out) */
    bool left_out;
    /* called now and then with the share of the space covered (0..1) */
    void (*progress)(void *ctx, double fraction);
    void *progress_ctx;
} ppl_search_opts;

/* A family the default search leaves out, its best configuration when let in,
 * and how much faster that is than the default search's #1 (first / best). */
typedef struct ppl_left_out {
    const ppl_family *family;
    ppl_estimate best;
    double speedup;
} ppl_left_out;

typedef struct ppl_search_result {
    ppl_estimate *results; /* best first, `count` of them (free with ppl_search_free) */
    size_t count;
    size_t candidates; /* configurations looked at one by one, valid or not (not
                          those of a group a bound skipped whole) */
    size_t evaluated;  /* passed the rules and the bounds: memory computed */
    size_t feasible;   /* of those, fitting in memory */
    size_t pruned;     /* skips by a lower bound (plan/bounds.h, the FLOPs at peak):
                          one configuration, or a group of them at once (a fold and
                          microbatch size, the ZeRO stages of a mode, the GPU
                          counts below one) */
    size_t balanced;   /* results whose stage split is not the default one */
    size_t bounds_broken; /* opts no_prune: fitting plans whose step or memory is
                             below the search's lower bound on it (a bug; tests
                             hold it 0) */
    double seconds;
    double smallest_memory; /* bytes: the least memory any valid configuration needed */
    double capacity;
    double step_ceiling_s; /* the slowest step kept (opts within), 0 when none */
    const char *empty_reason; /* when nothing fits or nothing is valid */
    /* opts left_out: the families whose best beats results[0], each with its own
     * #1 (what a search with that family let in would rank first) */
    ppl_left_out left_out[PPL_FAMILY_COUNT];
    size_t n_left_out;
} ppl_search_result;

ppl_status ppl_search(const ppl_eval_ctx *ctx, const ppl_search_opts *opts, ppl_search_result *out,
                      ppl_error *err);

void ppl_search_free(ppl_search_result *result);

#endif
