/*
 * cost/shard.h - hierarchical sharding: ZeRO inside groups, replicas across them.
 *
 * With a sharding group of N data-parallel ranks (N divides dp), ZeRO-1/2/3 shard
 * the model states over the N x cp ranks of each group, as today over all dp x cp,
 * and the dp / N groups hold replicas: Megatron-Core's distributed optimizer with
 * --num-distributed-optimizer-instances K = dp / N (megatron/core/parallel_state.py
 * :922-929, the intra-partial data-parallel group of dp*cp/K ranks), Megatron-FSDP's
 * HSDP with the same flag (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py:346),
 * PyTorch FSDP's HYBRID_SHARD and DeepSpeed's MiCS (ZeRO-3, mics_shard_size).  Each
 * step the gradients are reduce-scattered inside the group, and each shard is then
 * all-reduced across the K replicas (megatron/core/distributed/
 * param_and_grad_buffer.py:734-760); the parameters are gathered inside the group.
 * Experts shard the same way over edp / K ranks (parallel_state.py:1447-1451).
 */
#ifndef PARPLAN_SHARD_H
#define PARPLAN_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/comm.h"
#include "cost/config.h"
#include "parplan/error.h"
#include "model/model.h"
#include "hardware/topology.h"

struct json_t;

/* Checks the sharding group and the optimizer offload of a configuration: a usage
 * error naming shard_group or offload_optimizer when a stack could not build it. */
ppl_status ppl_shard_check(const ppl_config *config, const ppl_model *model, ppl_error *err);

/* Ways the dense model states shard: the group's data-parallel ranks times cp
 * (dp x cp without a group); and the experts' (edp / K). */
double ppl_shard_dense_ways(const ppl_config *config);
double ppl_shard_expert_ways(const ppl_config *config);

/* The sharding groups the search tries for c (tp, cp, dp set, ZeRO >= 1): dp (every
 * rank, first) and each divisor N of dp, 1 < N < dp, whose group's GPUs (tp x cp x N)
 * fill one server or one NVLink domain exactly.  Returns how many (at most 3). */
#define PPL_SHARD_CHOICES 3
int ppl_shard_group_choices(const ppl_topology *topo, const ppl_config *config, int64_t *out);

/* The groups a search tries: the pinned one (> 0), dp alone (0, or a stack that
 * does not shard in groups), else ppl_shard_group_choices. */
int ppl_shard_searched(const ppl_topology *topo, int stack, int64_t pinned,
                       const ppl_config *config, int64_t *out);

/* The groups of one stage's data-parallel ranks (Megatron's rank order: TP
 * innermost, then CP, DP): the sharding group, n*cp ranks tp apart, and the
 * replicas of one shard, dp/n ranks tp*cp*n apart; the experts' the same over
 * edp.  Without a group, shard = the whole data-parallel group, replicas one.
 * The job takes job_domain GPUs of each NVLink domain (ppl_layout's). */
void ppl_shard_groups(const ppl_net *net, int64_t job_domain, const ppl_config *config,
                      ppl_group *shard, ppl_group *replicas, ppl_group *expert_shard,
                      ppl_group *expert_replicas);

/* Launch output: the Megatron-LM flags (appended to `args`) and the DeepSpeed
 * zero_optimization keys (set in `zero`) of the sharding group and the offload;
 * *min_version raised to the Megatron-Core release that has them; *ds_refused
 * set to why DeepSpeed cannot build the plan (NULL: it can). */
void ppl_shard_launch(const ppl_config *config, struct json_t *args, struct json_t *zero,
                      const char **min_version, const char **ds_refused);

#endif
