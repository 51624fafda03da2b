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

#include "cost/evalctx.h"
#include "plan/candidate.h" /* ppl_search_opts, ppl_search_result */

/* The best configurations of ctx's model on its topology under opts (pins,
 * objective, top); PPL_INFEASIBLE, with out's empty_reason, when nothing is valid
 * or nothing fits. */
ppl_status ppl_search(const ppl_eval_ctx *ctx, const ppl_search_opts *opts, ppl_search_result *out,
                      ppl_error *err);

void ppl_search_free(ppl_search_result *result);

#endif
