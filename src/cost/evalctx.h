/*
 * cost/evalctx.h - what every evaluation of one model on one cluster shares,
 * and where one configuration's parallel groups sit on the cluster.
 *
 * The context holds the model and its figures, the topology and its network
 * (comm.h's tune pass), the GPU's kernel efficiencies under the fitted constants,
 * the memory model's options and the stack profile's.  The layout places a
 * configuration's groups (TP, CP, DP, EP, PP and the sharding groups) in
 * Megatron's rank order.
 */
#ifndef PARPLAN_EVALCTX_H
#define PARPLAN_EVALCTX_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/comm.h"
#include "cost/compute.h"
#include "cost/config.h"
#include "cost/memory.h"
#include "model/model.h"
#include "cost/stack.h"
#include "hardware/topology.h"

/* Everything an evaluation needs that does not change between configurations. */
typedef struct ppl_eval_ctx {
    const ppl_model *model;
    ppl_model_figures figures;
    const ppl_topology *topo;
    ppl_net net;
    ppl_gpu_efficiency eff;
    ppl_memory_opts memory;
    ppl_stack_opts stack;
} ppl_eval_ctx;

/* A context under the committed constants (constants.c). */
void ppl_eval_ctx_init(ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo,
                       ppl_stack stack);
/* The same context under other constants (--constants FILE, a fit). */
void ppl_eval_ctx_set_constants(ppl_eval_ctx *ctx, const ppl_constants *k, ppl_stack stack);

/* Where the parallel groups sit: per (tp, cp, pp, dp, ep, etp).  g_etp, g_ep and
 * g_edp are the expert decomposition of a stage's ranks (etp innermost). */
typedef struct ppl_layout {
    ppl_group g_tp, g_cp, g_dp, g_etp, g_ep, g_edp, g_pp, g_tie;
    /* hierarchical CP (a2a+p2p): the all-to-all groups of cp_a2a adjacent CP ranks
     * and the ring joining one rank of each (cp / cp_a2a ranks) */
    ppl_group g_cp_a2a, g_cp_ring;
    /* hierarchical sharding (shard.h): the sharding group and the replicas of one
     * shard, dense and experts; g_dp and g_edp and groups of one without it */
    ppl_group g_shard, g_replicas, g_eshard, g_ereplicas;
    int64_t job_domain; /* GPUs of each NVLink domain the job takes (ppl_net_job_domain) */
} ppl_layout;

void ppl_layout_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_layout *layout);
/* ppl_layout_init in two parts, for a search that folds one stage's ranks into
 * many expert layouts: the groups that read neither etp nor ep (TP, CP, DP, PP,
 * the tied embedding's, hierarchical CP's), then those that do (expert TP, EP,
 * expert DP) and the sharding groups, on a copy of the first part (or on it). */
void ppl_layout_init_dense(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_layout *layout);
void ppl_layout_init_experts(const ppl_eval_ctx *ctx, const ppl_config *config,
                             const ppl_layout *dense, ppl_layout *layout);
/* `base` (a layout of c, its g_dp and g_edp placed) with the sharding groups of c
 * sharded in groups of n (ppl_shard_groups); out may be base. */
void ppl_layout_shard(const ppl_net *net, const ppl_config *config, const ppl_layout *base,
                      int64_t n, ppl_layout *out);

#endif
