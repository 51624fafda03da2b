/*
 * plan/balance.h - layers per pipeline stage: the split whose slowest stage is
 * fastest, each stage within its memory (balance.c: a bisection certified optimal
 * or a GLPK integer program, and an exact scan of the splits Megatron-LM's flags
 * build).
 */
#ifndef PARPLAN_BALANCE_H
#define PARPLAN_BALANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"
#include "cost/estimate.h"

/*
 * Layers per pipeline stage: minimise the slowest stage (tau_k n_k + c_k) subject
 * to sum n_k = L, n_k >= 1 and each stage's memory mu_k n_k <= cap_k: a bisection
 * on the slowest stage's time, whose split is taken where it certifies itself
 * optimal, else a small GLPK integer program started from it.  PPL_INFEASIBLE
 * when no split fits.
 */
ppl_status ppl_balance_solve(int64_t stages, int64_t layers, const double *tau, const double *c,
                             const double *mu, const double *cap, int64_t *out, double *objective);
/* The same by the integer program alone (GLPK's branch and bound from the
 * bisection's split), without the bisection's certificate of optimality that
 * ppl_balance_solve takes when it holds: the reference the tests hold it to. */
ppl_status ppl_balance_milp(int64_t stages, int64_t layers, const double *tau, const double *c,
                            const double *mu, const double *cap, int64_t *out, double *objective);
/* The same with coefficients taken from the step-time and memory models for a
 * configuration (pp > 1, vp == 1); fills layers[pp]. */
ppl_status ppl_balance_stages(const ppl_eval_ctx *ctx, const ppl_config *config, int64_t *layers);

/* The time lines of the stages ppl_balance_ends reads (the first, the second and
 * the last), kept between calls that differ only in what those lines do not read:
 * below ZeRO-3 a stage's time reads neither the ZeRO stage, the sharding group nor
 * the offload (stage.c), only its memory does.  The caller clears it (all false)
 * whenever anything else changes. */
typedef struct ppl_balance_memo {
    bool known[3];
    double t1_s[3], t2_s[3]; /* the stage with one layer, with two */
    ppl_stage_dp_cache *dp;  /* ZeRO-3: the lines' classes for the layout, or NULL */
} ppl_balance_memo;

/* Seconds a microbatch: the least slowest stage over the splits ppl_balance_ends
 * chooses among, memory aside, by the memo's time lines alone (none built); 0 where
 * the memo does not hold all three, at ZeRO-3, or where a stage's time may not be
 * convex in its layers (balance.c; recompute_fixed false: the search picks the
 * recomputed layers after balancing, fewer than the lines recompute).  Where it
 * is, the line through one and two layers is below the stage's time at every
 * count, so a split ppl_balance_ends returns runs a stage at least this slow every
 * microbatch. */
double ppl_balance_least_s(const ppl_eval_ctx *ctx, const ppl_config *config,
                           const ppl_micro *micro, const ppl_balance_memo *memo,
                           bool recompute_fixed);

/* The split Megatron-LM's first/last-stage flags express (equal middle stages,
 * free ends) whose slowest stage is fastest by the same per-stage lines, each
 * stage within memory; exact (over the middle stages' layers: a bisection where
 * no line falls, the fewest middle layers among equal splits, else a scan).
 * PPL_INFEASIBLE when no such split fits (pp < 2, vp > 1, or memory).  memo may be
 * NULL. */
ppl_status ppl_balance_ends(const ppl_eval_ctx *ctx, const ppl_config *config,
                            const ppl_layout *layout, const ppl_micro *micro,
                            ppl_balance_memo *memo, ppl_stage_split *split);
/* The same by scanning every middle-stage count, where ppl_balance_ends bisects
 * on lines that do not fall (the tests hold the two equal). */
ppl_status ppl_balance_ends_scanned(const ppl_eval_ctx *ctx, const ppl_config *config,
                                    const ppl_layout *layout, const ppl_micro *micro,
                                    ppl_stage_split *split);

#endif
