/*
 * cost/stage.h - the pieces an estimate is built from: one microbatch's
 * communication and compute, the runs of equal pipeline stages, and one stage's
 * time per microbatch split into the passes of its schedule (stage.c).
 *
 * A stage's time per microbatch is its compute (compute.h) plus the tensor-,
 * context- and expert-parallel communication and the pipeline send/recv that the
 * software stack does not hide.  The search caches these pieces at the loop level
 * they depend on (search.c); estimate.h assembles them into a step.
 */
#ifndef PARPLAN_STAGE_H
#define PARPLAN_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/compute.h"
#include "cost/config.h"
#include "cost/cp.h"
#include "cost/evalctx.h"
#include "cost/memory.h"
#include "cost/pipeline.h"

/* Per microbatch: communication (per layout, microbatch size, sequence
 * parallelism) and compute and memory parts (also per recomputation, flash
 * attention, precision). */
typedef struct ppl_micro {
    double act;             /* b*s*h bytes of one microbatch's activations */
    double tp_one;          /* one TP all-reduce (or reduce-scatter + all-gather) */
    double tp_reduce_one;   /* of it, the reduction: the all-reduce, or the reduce-scatter */
    double tp_gather;       /* bytes of its all-gather (ppl_tp_gather_bytes) */
    ppl_cp_cost cp;         /* CP exchange per layer */
    double ep_one;          /* one expert all-to-all */
    double ep_hidden_share; /* share of it the stack overlaps with another microbatch */
    double etp_one;         /* the all-gather and reduce-scatter around the experts (etp group) */
    double pp_one;          /* one pipeline send of a microbatch */
    double tp_count;        /* TP collectives per layer and microbatch */
    ppl_layer_time dense, moe, head;
    ppl_layer_time dense16, moe16; /* in bf16, for the layers ppl_config bf16_layers keeps */
    ppl_memory_parts mem;
} ppl_micro;

/* Where a run of stages runs, when not on the estimate's own cluster: a mixed
 * cluster's pool (its context, its stages' layout on its servers, a microbatch's
 * pieces there). */
typedef struct ppl_stage_env {
    const ppl_eval_ctx *ctx;
    const ppl_layout *layout;
    const ppl_micro *micro;
} ppl_stage_env;

/* A run of consecutive pipeline stages with the same layers and role. */
typedef struct ppl_stage_class {
    int64_t first_stage, count, layers, moe_layers;
    int64_t bf16_layers; /* of its layers, those run in bf16 (ppl_stage_bf16_layers) */
    bool is_first, is_last;
    const ppl_stage_env *env; /* NULL: the estimate's own context, layout and pieces */
    /* the sends to a neighbouring stage on another pool (0, 1 or 2 a microbatch and
     * direction), each taking cross_send_s instead of the pool's own send */
    int cross_sends;
    double cross_send_s;
    int dp_ready;     /* data-parallel times computed, per kind (bits; ppl_dp_kind) */
    int64_t dp_group; /* the sharding group of kinds 3-5 and 9-11 (sharded in groups) */
    /* kinds 2, 5, 8 and 11 (ZeRO-3): the per-step all-reduce of the shards across
     * replicas; the per-layer collectives over every rank [0] or in the group [1],
     * with the fp8 weights gathered in fp8 [2, 3] */
    double dp_reduce[12], dp_gather[12], dp_last[12], z3_ag[4], z3_rs[4];
} ppl_stage_class;

#define PPL_INLINE_CLASSES 8
typedef struct ppl_classes {
    ppl_stage_class *items;
    size_t n, cap;
    ppl_stage_class inline_items[PPL_INLINE_CLASSES];
} ppl_classes;

/* Bytes of one sequence-parallel all-gather of act_bytes of 16-bit activations:
 * quantized to the GEMMs' format under fp8, mxfp8 and nvfp4 (schedule.c). */
double ppl_tp_gather_bytes(const ppl_config *config, double act_bytes);

void ppl_micro_comm_init(const ppl_eval_ctx *ctx, const ppl_config *config,
                         const ppl_layout *layout, ppl_micro *micro);
/* The same with the CP exchange given (ppl_cp_cost_of's for the configuration's
 * algorithm, which a search costs once for all of them), or NULL: costed here. */
void ppl_micro_comm_init_with(const ppl_eval_ctx *ctx, const ppl_config *config,
                              const ppl_layout *layout, const ppl_cp_cost *cp, ppl_micro *micro);
/* Of those, the one that reads the interleaving (and the microbatches and
 * schedule): the share of the expert all-to-all hidden under another microbatch.
 * A search that changes only vp sets it again instead of the rest. */
void ppl_micro_comm_interleave(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_micro *micro);
/* Copies what ppl_micro_comm_init sets from src to dst, and nothing else. */
void ppl_micro_comm_copy(ppl_micro *dst, const ppl_micro *src);
/* Whether that share may read vp: where the 1F1B all-to-all overlap is asked for
 * (--ep-overlap) and there is an all-to-all to hide; elsewhere every interleaving's
 * microbatch is the same. */
bool ppl_micro_reads_vp(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_micro *micro);
void ppl_micro_compute_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_micro *micro);
/* Its two parts: the dense and output layers' times and the TP collectives'
 * count, which read the attention layout alone; the MoE layers' times, which
 * read the expert layout (ep, etp) too. */
void ppl_micro_dense_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_micro *micro);
void ppl_micro_moe_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_micro *micro);
/* Copies what ppl_micro_compute_init sets from src to dst: a search reuses it
 * across what it does not read (the interleaving, the ZeRO stage). */
void ppl_micro_compute_copy(ppl_micro *dst, const ppl_micro *src);
/* Stage classes kept with their data-parallel times (ppl_class_dp) for one
 * layout, by first stage, layers and MoE layers: those times read the class's
 * parameters, the ZeRO stage, the sharding group and the layout alone, not the
 * microbatch, the recomputation, the interleaving, the CP algorithm or the
 * split around the class.  ppl_stage_time_cached keeps its ZeRO-3 classes there;
 * ppl_classes_dp_take and _keep let a split's classes share them.  The caller
 * zeroes n whenever the layout or the parallel sizes change. */
#define PPL_STAGE_DP_CACHE 16
typedef struct ppl_stage_dp_cache {
    int n;
    ppl_stage_class items[PPL_STAGE_DP_CACHE];
} ppl_stage_dp_cache;

void ppl_classes_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_classes *classes);
void ppl_classes_free(ppl_classes *classes);
/* The data-parallel times dp holds for classes of the same first stage, layers and
 * MoE layers, copied into those of `classes` that have none (dp may be NULL);
 * and back, those classes' times kept in dp where they know more kinds. */
void ppl_classes_dp_take(ppl_classes *classes, const ppl_stage_dp_cache *dp);
void ppl_classes_dp_keep(const ppl_classes *classes, ppl_stage_dp_cache *dp);

/* One stage of a class, per microbatch: compute, each parallelism's
 * communication, and what of it the stack leaves exposed. */
typedef struct ppl_stage_time {
    double compute, forward, backward; /* per microbatch */
    double wgrad;                      /* of backward, the weight-gradient GEMMs (W) */
    double ep_hidden;                  /* expert all-to-all hidden under another microbatch */
    double tp_async;                   /* backward TP reductions hidden under weight gradients */
    double tp_exposed;                 /* of tp, what no GEMM hides */
    double tp, cp, ep, pp, zero3;      /* communication per microbatch */
    double exposed;                    /* communication per microbatch not hidden */
    double host;                       /* the host's launches per microbatch */
    double host_wait;                  /* what of them the GPU waits for */
    double total;                      /* compute + exposed + host_wait */
} ppl_stage_time;

/* The stage time of class k (its data-parallel times, ppl_class_dp, computed first
 * under ZeRO-3). */
void ppl_stage_eval(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_micro *micro,
                    const ppl_stage_class *k, ppl_stage_time *out);
/* The stage's passes (pipeline.h): W its weight-gradient GEMMs, the exposed
 * communication shared between F and B as a layer's collectives are. */
void ppl_stage_passes_of(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_micro *micro,
                         const ppl_stage_time *s, ppl_passes *out);

/* The slot of a class's data-parallel cache for the configuration: the ZeRO kind
 * (0 none, 1 ZeRO-1/2, 2 ZeRO-3), plus 3 when sharded in groups. */
/* The kind of data-parallel communication (0-11): ZeRO stage, sharding groups,
 * fp8 weights gathered in fp8; indexes a class's cached times. */
int ppl_dp_kind(const ppl_eval_ctx *ctx, const ppl_config *config);
/* Bytes per parameter a gather of `params` moves, `low` of them kept in fp8 alone
 * (memory.h ppl_low_params) and gathered at the format's bytes, the rest 16-bit. */
double ppl_gather_bytes(const ppl_eval_ctx *ctx, const ppl_config *config, double params,
                        double low);
/* The data-parallel times of class k under the configuration (cached in k by
 * ppl_dp_kind: they depend on its parameters, the ZeRO stage, the sharding group
 * and the gather's bytes only). */
void ppl_class_dp(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_layout *layout,
                  ppl_stage_class *k, const ppl_memory *memory);
/* Whether ppl_class_dp has k's times for the configuration already (it would
 * read nothing of its memory argument). */
bool ppl_class_dp_kept(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_stage_class *k);
/* Bucketed reduction of `params` gradients over the sharding group g (and, with
 * ZeRO-1/2, the parameter all-gather after the optimizer step, gather_bytes a
 * parameter), with the shards' all-reduce across the replicas rep; seconds, its
 * traffic added when not NULL. */
void ppl_dp_times(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_group *g,
                  const ppl_group *rep, double params, double gather_bytes, double *reduce,
                  double *gather, double *last_bucket, ppl_traffic *traffic);
/* A stack that gathers per tensor (DeepSpeed 2021's ZeRO-3): the gathers per
 * layer of tensor-parallel size tp (its tensors of at least
 * stage3_param_persistence_threshold elements, 1e5) and the gradient
 * reduce-scatters (one a tensor, stage.c). */
void ppl_zero3_per_tensor(const ppl_model *model, int64_t tp, double *gathers, double *reductions);
/* Bytes per reduced gradient element (memory.h's, for the configuration). */
double ppl_dp_grad_bytes(const ppl_eval_ctx *ctx, const ppl_config *config);

/* Stage `stage` holding `layers` layers (`moe_layers` MoE) from the pieces: its
 * time per microbatch, and its memory when asked; dp may be NULL. */
double ppl_stage_time_cached(const ppl_eval_ctx *ctx, const ppl_config *config,
                             const ppl_layout *layout, const ppl_micro *micro, int64_t stage,
                             int64_t layers, int64_t moe_layers, ppl_memory *memory,
                             ppl_stage_dp_cache *dp);

#endif
