/*
 * plan/bounds.h - lower bounds on a configuration's step time and memory that
 * hold for every stage split the search makes, so that the search skips what
 * cannot rank or fit before costing it (bounds.c derives each).  test_search
 * holds them below every plan of its spaces.
 */
#ifndef PARPLAN_BOUNDS_H
#define PARPLAN_BOUNDS_H

#include "cost/config.h"
#include "cost/evalctx.h"
#include "cost/microcache.h"
#include "cost/stage.h"

/* Whether the search chooses c's recomputed layers (block recomputation: the
 * fewest per stage that fit; memory falls as more are recomputed, time rises):
 * full recomputation with neither it nor a count pinned.  A pinned --recompute
 * full means every layer, as Megatron-LM's uniform method. */
bool ppl_blocks_searched(const ppl_pins *pins, const ppl_config *c);

/* Seconds: no plan of c (any split of the search's form where vp is 1: first,
 * middle and last counts, config.h; c's split where it is more, which the search
 * never rebalances; with block recomputation searched unless pins fix it) steps
 * faster: the busiest rank's work, a microbatch's chain, the pipeline's fill and
 * drain on a line of ranks, plus the per-step cost. */
double ppl_bound_step_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                        const ppl_micro *micro);
/* The same but for the split form's term where vp is 1, and in *interleaved
 * (when not NULL) the bound of c with vp above 1, the microbatch the same (as it
 * is where stage.h ppl_micro_reads_vp says so): every term but the lines' (vp
 * 1's, and interleaving's at c's split: ppl_bound_split_form_s), to the bit. */
double ppl_bound_step_pair_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                             const ppl_micro *micro, double *interleaved);
/* Seconds, at most both figures of ppl_bound_step_pair_s for a fraction of its
 * cost (no stage costed): the busiest rank's work alone, the microbatches times
 * the layers' least shares of their stages' totals and the output layer's work,
 * over pp (bounds.c layer_totals), plus the per-step cost; *interleaved (when not
 * NULL) the same.  The search prunes by it first where it prunes most shapes, and
 * works the other out where it does not prune. */
double ppl_bound_step_pair_quick_s(const ppl_eval_ctx *ctx, const ppl_pins *pins,
                                   const ppl_config *c, const ppl_micro *micro,
                                   double *interleaved);

/* The step bounds of c under each of n CP algorithms (algos[x], their costs
 * cp_costs[algos[x]]) in out[x], the least of them returned: where fill and
 * exact[x] is false each is worked out quick (ppl_bound_step_pair_quick_s) or in
 * full (ppl_bound_step_pair_s; exact[x] then true), out[x] the vp-1 figure where
 * c's vp is 1, else the figure with vp above 1, which also goes to pair[x] where
 * pair is not NULL (pair_exact[x] as exact[x]).  c's CP algorithm and mi's costs
 * are left at the last one's. */
double ppl_bound_algorithms_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, ppl_config *c,
                              ppl_micro *mi, const int64_t *algos, int n,
                              const ppl_cp_cost *cp_costs, bool fill, bool quick, double *out,
                              bool *exact, double *pair, bool *pair_exact);

/* Seconds: the busiest rank of c's own split (its classes cl, as ppl_classes_init
 * makes them) working every microbatch, plus the per-step cost: no plan of c at
 * that split steps faster (bounds.c).  0 under DualPipe. */
double ppl_bound_split_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *micro,
                         const ppl_classes *cl);

/* Seconds: the terms of ppl_bound_step_s that read c's vp and split form, plus the
 * per-step cost.  Where vp > 1, interleaved 1F1B's fill and drain beside the
 * busiest rank's work at c's split (bounds.c interleaved_line_s).  Where vp is 1
 * on a line of ranks, the busiest stage of every split of the search's form (a
 * first stage, pp - 2 equal middle ones and a last) with each layer at its own
 * kind where it lies: the least of ppl_bound_split_s over them, or less.  The
 * per-step cost alone where that cannot be above known_s: c's own split steps
 * within it, or known_s is infinite (pass 0 for the figure).  ppl_bound_step_s
 * of c holds it; ppl_bound_step_pair_s's figures do not. */
double ppl_bound_split_form_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *micro,
                              double known_s);

/* Seconds: the same with every communication free (each term of the bound grows
 * with it) and without the pipeline's line term (vp 1's), from a microbatch's
 * compute parts alone (ppl_micro_compute_init): at most ppl_bound_step_s of c
 * under any vp, sp-independent communication, layout. */
double ppl_bound_step_compute_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                                const ppl_micro *compute);

/* ppl_bound_step_compute_s in two parts, for a search that meets the same
 * microbatch under many pipelines: the parts read from the microbatch, which
 * depend on c only through what its compute parts do and its recomputation
 * (ppl_bound_compute_floor), then the bound of c's pipeline over them
 * (ppl_bound_step_compute_from); the two give ppl_bound_step_compute_s to the bit. */
typedef struct ppl_compute_floor {
    double total_s; /* one stage of every layer, every exchange free (bounds.c stages_floor) */
    double wgrad_s; /* of which its weight-gradient passes */
    double chain_s; /* the layers' forward and backward to the input, one microbatch */
    double layer_s; /* a layer's least share of its stage's total (bounds.c layer_total_least) */
    double head_s;  /* the output layer's work, one microbatch */
} ppl_compute_floor;
void ppl_bound_compute_floor(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                             const ppl_micro *compute, ppl_compute_floor *out);
double ppl_bound_step_compute_from(const ppl_eval_ctx *ctx, const ppl_config *c,
                                   const ppl_compute_floor *floor);

/* With ZeRO-3 (config->zero >= 3): the busiest rank's work with every layer's
 * gathers and reduce-scatters over the layout's sharding group in it, at the least
 * any layer moves (bounds.c stages_floor), plus the per-step cost; the
 * bound ppl_bound_step_s shares between ZeRO stages leaves them out.  Below
 * ZeRO-3, 0. */
double ppl_bound_step_zero3_s(const ppl_eval_ctx *ctx, const ppl_pins *pins,
                              const ppl_config *config, const ppl_layout *layout,
                              const ppl_micro *micro);

/* ppl_bound_step_pair_s of a configuration under full recomputation at the count
 * of recomputed layers it holds (0: every layer), as if that count were pinned:
 * the search asks it once the memory has said the fewest a configuration can
 * recompute (ppl_fewest_recomputed), where the bound of the unpinned space can
 * only assume one layer a stage (ppl_bound_split_form_s reads no count: the
 * search has it already). */
double ppl_bound_step_recomputed_s(const ppl_eval_ctx *ctx, const ppl_pins *pins,
                                   const ppl_config *c, const ppl_micro *micro);

/* Bytes: no split of c holds less on its heaviest stage (ppl_memory_floor_bytes);
 * *no_optimizer the same without the optimizer state. */
double ppl_bound_memory_bytes(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *micro,
                              double *no_optimizer);

/* Bytes: ppl_bound_memory_bytes without the activations, every term of which is
 * at least zero: no configuration of c's shape, expert fold, ZeRO stage, sharding
 * group and offload holds less, whatever its microbatch size, interleaving,
 * sequence parallelism, recomputation, flash attention, CP algorithm or split;
 * *no_optimizer the same without the optimizer state. */
double ppl_bound_states_bytes(const ppl_eval_ctx *ctx, const ppl_config *c, double *no_optimizer);

/* Whether any bound above is over what the estimate of `asked` found (its step
 * time, or its memory, by a relative 1e-12): a bound broken.  c is asked at the
 * recomputed layers the search costed it at (the same when not block
 * recomputation). */
bool ppl_bounds_above(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *asked,
                      const ppl_config *c, const ppl_layout *layout, const ppl_micro *micro,
                      double step_s, double memory_bytes);

#endif
