/*
 * plan/candidate.h - what a search is asked and what it counts (ppl_search_opts,
 * ppl_search_result: plan/search.h searches), and one candidate of the search
 * costed: pruned by its bounds and its memory, its stage split balanced, its
 * memory and step time estimated, and ranked in its lane (the main list or a
 * left-out family's).
 */
#ifndef PARPLAN_CANDIDATE_H
#define PARPLAN_CANDIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "cost/estimate.h"
#include "cost/microcache.h"
#include "cost/stage.h"
#include "plan/balance.h"
#include "plan/bounds.h"
#include "plan/floors.h"
#include "plan/families.h"
#include "plan/ranking.h"

typedef struct ppl_search_opts {
    const ppl_pins *pins; /* pinned knobs (PPL_UNSET where free) */
    size_t top;           /* how many to keep */
    int objective;        /* ppl_objective */
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
    bool allow_sharded_with_pp; /* ZeRO-2/3 with pipelining, left out by default */
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
    size_t candidates;    /* configurations looked at one by one, valid or not (not
                             those of a group a bound skipped whole) */
    size_t evaluated;     /* passed the rules and the bounds: memory computed */
    size_t feasible;      /* of those, fitting in memory */
    size_t pruned;        /* skips by a lower bound (plan/bounds.h, the FLOPs at peak):
                             one configuration, or a group of them at once (a fold and
                             microbatch size, the ZeRO stages of a mode, the GPU
                             counts below one) */
    size_t balanced;      /* results whose stage split is not the default one */
    size_t bounds_broken; /* opts no_prune: fitting plans whose step or memory is
                             below the search's lower bound on it (a bug; tests
                             hold it 0) */
    double seconds;
    double smallest_memory; /* bytes: the least memory any valid configuration needed */
    double capacity;
    double step_ceiling_s;    /* the slowest step kept (opts within), 0 when none */
    const char *empty_reason; /* when nothing fits or nothing is valid */
    /* opts left_out: the families whose best beats results[0], each with its own
     * #1 (what a search with that family let in would rank first) */
    ppl_left_out left_out[PPL_FAMILY_COUNT];
    size_t n_left_out;
} ppl_search_result;

/* Where c is ranked: the main list (-1), the list of the one family it belongs to
 * that the options leave out and whose best is looked for (its index), or
 * nowhere (-2). */
enum { PPL_LANE_MAIN = -1, PPL_LANE_NONE = -2 };

/* What a candidate's memory decided (cost): keyed by the knobs that vary among the
 * candidates of one ppl_memory_seen list, with the fewest recomputed layers (or -1:
 * blocks not searched, or not all fit) and the memory at them. */
typedef struct ppl_memory_seen {
    int zero;
    int64_t shard_group, recompute_layers;
    double offload;
    ppl_stage_split split;
    int64_t fewest;
    bool fewest_known;
    int asked_fits; /* whether the knobs as asked fit (before the fewest): 0, 1, -1 unknown */
    double asked_total, asked_optimizer; /* their memory, where asked_fits is 0 */
    double total, optimizer;
    bool fits, costed; /* costed: total, optimizer and fits are known */
} ppl_memory_seen;
#define PPL_MEMORY_SEEN 32

/* The search's state: search.c enumerates the candidates, candidate.c costs each. */
typedef struct ppl_search_state {
    const ppl_eval_ctx *ctx;
    const ppl_search_opts *opts;
    ppl_search_result *r;
    ppl_ranking best;
    double last_progress;
    double offload_room; /* the last over-memory one's total less its optimizer state */
    ppl_error unsound;   /* the first estimate with a non-finite figure */
    bool has_unsound;
    /* the families: whether the options let each in, whether its best is looked
     * for (opts left_out), and that best (a list of one, with its own counts) */
    bool allows[PPL_FAMILY_COUNT], looks[PPL_FAMILY_COUNT], broken[PPL_FAMILY_COUNT];
    ppl_ranking family[PPL_FAMILY_COUNT];
    ppl_estimate family_best[PPL_FAMILY_COUNT];
    ppl_search_result family_counts;
    double ceiling_s; /* a family's candidates: the #1 they must beat (else infinite) */
    /* the step-time lower bound of the candidate evaluated (ppl_bound_step_s): the
     * same for its ZeRO stages, sharding groups, offload and stage splits */
    double bound_s;
    int lane;                  /* the list the candidate evaluated goes to (lane_of) */
    double room_bytes;         /* what a GPU's memory holds of a plan (less the headroom) */
    ppl_micro_cache *computed; /* a microbatch's compute parts, by what they read */
    ppl_floor_cache *floors;   /* their compute-alone bounds' parts */
    ppl_balance_memo *memo;    /* the balanced split's time lines (balance.h) */
    /* the memory of the candidates since the search last cleared it (every fold,
     * microbatch size, vp, sp, recomputation and flash attention): the CP
     * algorithms, tried innermost, change neither memory nor what is recomputed
     * (memory.c reads no cp_comm), so each is costed once */
    ppl_memory_seen seen[PPL_MEMORY_SEEN];
    int nseen;
    /* the quick step bounds (search.c): the shapes' sets of bounds met, those
     * bounded quick first, and those the quick ones pruned */
    long quick_sets, quick_tried, quick_pruned;
} ppl_search_state;

/* PPL_EVAL_FITS, PPL_EVAL_OVER (valid, over the memory) or PPL_EVAL_OUT (invalid,
 * or pruned). */
enum { PPL_EVAL_OUT, PPL_EVAL_FITS, PPL_EVAL_OVER };

/* Costs candidate c (its layout l, microbatch mi, stage classes cl) on its lane:
 * a family's candidates are ranked in that family's list of one, counted apart,
 * and pruned by the #1 they must beat as well. */
int ppl_candidate_evaluate(ppl_search_state *s, const ppl_config *c, const ppl_layout *l,
                           const ppl_micro *mi, ppl_classes *cl);

#endif
