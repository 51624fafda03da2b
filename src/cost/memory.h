/*
 * cost/memory.h - per-GPU memory of a training configuration.
 *
 * Five terms per pipeline stage, in bytes per GPU:
 *  weights, gradients, optimizer   model states, Rajbhandari et al. SC'20 §3.1/§5.1:
 *                                  (2 + 2 + 12) bytes per parameter with mixed-precision
 *                                  Adam, divided by TP and PP and sharded by ZeRO 1/2/3
 *  activations                     Korthikanti et al. 2022 Table 2 per layer, times the
 *                                  layers of the stage, times the microbatches the
 *                                  schedule keeps in flight (their Eq.5 and §4.2.3)
 *  other                           framework memory (CUDA context, NCCL buffers), ZeRO-3
 *                                  gather buffers, the layer being recomputed, allocator
 *                                  fragmentation
 * The worst stage decides whether the configuration fits.
 */
#ifndef PARPLAN_MEMORY_H
#define PARPLAN_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "model/model.h"
#include "hardware/topology.h"

/* Named constants of the memory model; ppl_memory_opts_init sets the defaults. */
/* The command line's default headroom: none.  The memory model already errs high
 * where it can be checked: measured runs that ran are predicted up to 10% over
 * their GPU's memory (calibrate.h, PPL_CALIB_MEMORY_UNCERTAINTY), Meta's Llama 3
 * 405B layout at 131,072 tokens among them; keeping 5% free would refuse it.
 * --memory-headroom asks for more. */
#define PPL_MEMORY_HEADROOM_DEFAULT 0.0

typedef struct ppl_memory_opts {
    double weight_bytes;           /* 2: bf16/fp16 weights */
    double main_grad_bytes;        /* 4: fp32 main gradients (bf16 and fp8 training) */
    double half_grad_bytes;        /* 2: fp16 gradients (fp16 training) */
    bool half_grads;               /* bf16 and fp8 training keep 16-bit gradients too */
    bool low_params;               /* the stack's recipes keep fp8 GEMM weights in fp8 alone
                                      (ppl_low_params) */
    double fp16_grad_copy_bytes;   /* 4: the fp32 gradient copy of fp16's optimizer */
    double master_bytes;           /* 4: fp32 master weights */
    double adam_bytes;             /* 8: fp32 momentum and variance */
    double sgd_bytes;              /* 4: fp32 momentum */
    double fp8_weight_cache_bytes; /* 2: fp8 weight and its transpose per GEMM weight (TE) */
    double cuda_context_bytes;     /* CUDA context and kernels */
    double nccl_group_bytes;       /* NCCL buffers per communicator in use */
    double overhead_bytes;         /* if >= 0, replaces context + NCCL: the user's figure */
    double fragmentation;          /* caching-allocator loss, as a fraction of activations */
    /* capacity kept free by plans: a share of it and/or bytes (both 0 by default
     * in the library; the command line keeps PPL_MEMORY_HEADROOM_DEFAULT) */
    double headroom_fraction, headroom_bytes;
    double zero3_prefetch_layers; /* unsharded layers held with ZeRO-3: current + prefetched */
} ppl_memory_opts;

/* Bytes kept free out of `capacity`. */
double ppl_memory_headroom(const ppl_memory_opts *o, double capacity);

void ppl_memory_opts_init(ppl_memory_opts *opts);

/* Whether configuration c keeps its fp8 GEMM weights in fp8 alone, with no 16-bit
 * copy, and gathers them in fp8 (Megatron-Core --fp8-param-gather): the stack's
 * recipes do (o->low_params, stack.h ppl_stack_low_params) and the configuration
 * allows it (ppl_low_params_allowed). */
bool ppl_low_params(const ppl_memory_opts *o, const ppl_config *c);

/* Memory of one pipeline stage, per GPU, bytes. */
typedef struct ppl_memory {
    int64_t stage;
    int64_t layers;       /* transformer layers on this stage */
    double in_flight;     /* microbatches' worth of the stage's activations held */
    double params;        /* parameters held per GPU (before ZeRO-3 sharding) */
    double params_low;    /* of them, those kept in fp8 alone (ppl_low_params), else 0 */
    double params_low_expert; /* of those, the experts' */
    double params_expert; /* of which expert weights (sharded over edp) */
    double weights, gradients, optimizer, activations, other;
    double host; /* optimizer state offloaded to host memory (not in total) */
    double total, capacity;
    double headroom; /* bytes of capacity kept free (ppl_memory_opts); fits: total <= capacity -
                        headroom */
    bool fits;
} ppl_memory;

/* Activation bytes of one transformer layer for one microbatch on one GPU
 * (Korthikanti Table 2, generalised; see memory.c). moe: a MoE layer. */
double ppl_activation_bytes_per_layer(const ppl_model *model, const ppl_config *config,
                                      const ppl_memory_opts *opts, bool moe);

/* Microbatches in flight on a stage under the configuration's schedule, in units
 * of the stage's layers' activations (Korthikanti Eq.5; interleaving §4.2.3; the
 * zero-bubble and DualPipe schedules: ppl_pipeline_in_flight). */
double ppl_in_flight_microbatches(const ppl_config *config, int64_t stage);

/* Bytes per gradient element kept and reduced across data parallelism: fp32 main
 * gradients for bf16 and fp8 training, fp16 ones for fp16 (Megatron-LM). */
double ppl_grad_bytes(const ppl_memory_opts *opts, ppl_precision precision);

/* Model-state bytes for `params` parameters under ZeRO `zero` sharded `shard` ways:
 * ZeRO's worked example (P = 7.5e9, Nd = 64) gives 120, 31.4, 16.6, 1.9 GB. */
void ppl_model_state_bytes(double params, int zero, double shard, const ppl_memory_opts *opts,
                           ppl_optimizer optimizer, ppl_precision precision, double *weights,
                           double *gradients, double *optimizer_state);

/* Transformer layers a GPU of `stage` holds, and how many of them are MoE layers. */
void ppl_stage_layer_counts(const ppl_model *model, const ppl_config *config, int64_t stage,
                            int64_t *layers, int64_t *moe_layers);

/* What a configuration's memory is made of, the same on every stage (per GPU):
 * per-layer parameters and activations, the embedding and output layer, the
 * fixed "other" terms.  ppl_memory_at assembles one stage from them; the search
 * reuses them across stages and ZeRO stages. */
typedef struct ppl_memory_parts {
    double layer_dense, layer_moe_shared, layer_moe_expert; /* parameters per layer */
    double gemm_dense, gemm_moe_shared, gemm_moe_expert;    /* of which GEMM weights */
    double embedding, output;    /* parameters on the first / last stage */
    double act_dense, act_moe;   /* activation bytes per layer and microbatch */
    double kept_dense, kept_moe; /* the same without recomputation */
    /* the same four in bf16, for the layers ppl_config bf16_layers keeps there */
    double act16_dense, act16_moe, kept16_dense, kept16_moe;
    double act_first, act_last;            /* extra activations on the first / last stage */
    double other;                          /* framework memory */
    double zero3_buffers;                  /* gathered layers held with ZeRO-3 */
    double recompute_dense, recompute_moe; /* the layer being recomputed */
} ppl_memory_parts;

void ppl_memory_parts_init(const ppl_model *model, const ppl_config *config,
                           const ppl_memory_opts *opts, ppl_memory_parts *parts);
/* Its three parts, each from what it depends on (the search's caches share them,
 * stage.c): a layer's parameters (layer_* and gemm_*: tp, ep, etp), the fixed
 * terms (embedding, output, other, zero3_buffers: from the layer's parameters
 * and whether there are stages and replicas), the activations (act_* to
 * recompute_*: not the expert layout). */
void ppl_memory_parts_layers(const ppl_model *model, const ppl_config *config,
                             ppl_memory_parts *parts);
void ppl_memory_parts_fixed(const ppl_model *model, const ppl_config *config,
                            const ppl_memory_opts *opts, ppl_memory_parts *parts);
void ppl_memory_parts_activations(const ppl_model *model, const ppl_config *config,
                                  const ppl_memory_opts *opts, ppl_memory_parts *parts);
/* Parameters per GPU of a stage's `dense_layers` dense and `moe_layers` MoE layers,
 * with the embedding when `first` and the output layer when `last`: *dense those
 * sharded as the dense ones (the MoE layers' attention and shared experts
 * included), *expert the routed experts'. */
void ppl_stage_params(const ppl_memory_parts *parts, bool first, bool last, double dense_layers,
                      double moe_layers, double *dense, double *expert);
/* One stage of `layers` layers (`moe_layers` of them MoE) from the parts. */
void ppl_memory_at(const ppl_config *config, const ppl_memory_opts *opts,
                   const ppl_memory_parts *parts, double capacity, int64_t stage, int64_t layers,
                   int64_t moe_layers, ppl_memory *out);

/* A lower bound, bytes, on the memory of the heaviest stage of any split of the
 * model's layers (`moe_layers` of them MoE) over config's pp ranks: the average of
 * the stages' parameters and model states (the fp8 weight cache with it, but for
 * the layers kept in bf16, which hold none), one microbatch of every layer's
 * activations, and the fixed terms each stage holds.  *no_optimizer: the same
 * without the optimizer state (what an offload could free). */
double ppl_memory_floor_bytes(const ppl_config *config, const ppl_memory_opts *opts,
                              const ppl_memory_parts *parts, int64_t layers, int64_t moe_layers,
                              double *no_optimizer);

void ppl_memory_stage(const ppl_model *model, const ppl_topology *topo, const ppl_config *config,
                      const ppl_memory_opts *opts, int64_t stage, ppl_memory *out);

/* The stage with the largest total (ties: the earliest). */
void ppl_memory_worst(const ppl_model *model, const ppl_topology *topo, const ppl_config *config,
                      const ppl_memory_opts *opts, ppl_memory *out);

#endif
