/*
 * parplan/schedule.h - one configuration's step time: pipeline schedule,
 * communication exposed on the critical path, optimizer and per-step cost.
 *
 * A stage's time per microbatch is its compute (compute.h) plus the tensor-,
 * context- and expert-parallel communication and the pipeline send/recv that the
 * software stack does not hide.  The pipeline takes (m - 1) x the slowest stage plus
 * one pass through every stage (1F1B, GPipe: bubble (p-1)/m of the ideal with equal
 * stages; Narayanan et al. SC'21 §2.2), or with v interleaved chunks m x the
 * slowest plus 1/v of one pass (bubble (p-1)/(mv)).  The data-parallel gradient
 * reduction runs after each stage's last backward, partly hidden by the stages that
 * finish later and, on stacks that overlap it, by that last backward itself.
 */
#ifndef PARPLAN_SCHEDULE_H
#define PARPLAN_SCHEDULE_H

#include <stdbool.h>

#include "parplan/comm.h"
#include "parplan/compute.h"
#include "parplan/config.h"
#include "parplan/memory.h"
#include "parplan/pipeline.h"

/*
 * The training software, by what ran: each profile says what its era overlaps
 * (a property of the stack, not of the GPU).  validate maps a run's `software`
 * to one; plan and estimate take --stack PROFILE (default the newest).
 */
typedef enum ppl_stack {
    PPL_STACK_NEMO_2025 = 0,        /* NeMo / Megatron-Bridge 2025+ (the default) */
    PPL_STACK_MEGATRON_CORE,        /* Megatron-Core / Megatron-LM 2023-24 */
    PPL_STACK_NEMO_2024,            /* NeMo 24.x: Megatron-Core 2024, 16-bit gradients */
    PPL_STACK_FSDP,                 /* PyTorch FSDP: llm-foundry 2023 */
    PPL_STACK_MEGATRON_LM_2023,     /* Megatron-LM 2023 without overlap (MegaScale's baseline) */
    PPL_STACK_MEGATRON_LM_2022,     /* Megatron-LM 2022: sequence parallelism, selective */
    PPL_STACK_MEGATRON_LM_2021,     /* Megatron-LM 2021 (Narayanan et al. SC'21) */
    PPL_STACK_MEGATRON_DEEPSPEED,   /* Megatron-DeepSpeed 2021-22 (MT-NLG, BLOOM) */
    PPL_STACK_DEEPSPEED_ZERO3_2021, /* DeepSpeed ZeRO-3, 2021 */
    PPL_STACK_COUNT,
    /* the names of parplan 0.1: the newest and the oldest profile */
    PPL_STACK_MODERN = PPL_STACK_NEMO_2025,
    PPL_STACK_LEGACY = PPL_STACK_MEGATRON_LM_2021
} ppl_stack;

typedef struct ppl_stack_opts {
    ppl_stack stack;
    double tp_overlap;    /* share of tensor-parallel communication hidden under GEMMs */
    double dp_overlap;    /* share of one microbatch's backward that hides the gradient reduction */
    double pp_overlap;    /* share of pipeline send/recv hidden under compute */
    double overlap_cost;  /* compute slowdown per second of communication hidden under it
                             (NCCL kernels take SMs and HBM bandwidth from the GEMMs) */
    double bucket_params; /* gradients per reduction bucket */
    double step_overhead_s; /* per-step cost outside the model (data, logging, launch) */
    /* ZeRO-3 / FSDP: how the stack issues a layer's gathers and reductions, and how
     * much of a layer's compute its prefetch hides them under */
    bool zero3_per_tensor; /* one collective per parameter tensor (DeepSpeed 2021), else
                              one per layer (FSDP unit, Megatron-FSDP bucket) */
    double zero3_overlap;  /* share of the layer's compute that hides its collectives */
    double zero3_bus;      /* share of the ring's bus bandwidth its collectives reach */
} ppl_stack_opts;

/* The profile's options under the fitted constants k. */
void ppl_stack_opts_init(ppl_stack_opts *opts, ppl_stack stack, const ppl_constants *k);
/* "nemo-2025", "megatron-lm-2021", ... */
const char *ppl_stack_name(ppl_stack stack);
/* Whether the profile overlaps communication with compute (Megatron-Core and later). */
bool ppl_stack_overlaps(ppl_stack stack);
/* Whether the profile keeps and reduces bf16 gradients in bf16 and fp8 training
 * (NVIDIA's performance configurations), not in fp32 (Megatron-LM's default). */
bool ppl_stack_half_grads(ppl_stack stack);

/* What a profile's software could run: the search covers nothing else unless a
 * flag pins it (validate predicts what ran, plan what the stack can build). */
typedef struct ppl_stack_support {
    bool context_parallel;    /* Megatron-Core 2024+ */
    bool sequence_parallel;   /* Megatron-LM 2022+ */
    bool selective_recompute; /* Megatron-LM 2022+ */
    bool flash_attention;     /* 2023+ stacks */
    bool interleaving;        /* Megatron's interleaved 1F1B (not DeepSpeed's pipeline engine) */
    int max_zero;             /* the deepest sharding it has: 0 none, 1 optimizer, ..., 3 */
    bool expert_tp;    /* an expert tensor-parallel size of its own (Megatron-Core 0.10+, 2025) */
    unsigned cp_comms; /* the CP algorithms it has: bit k for ppl_cp_comm k */
    bool uneven_interleaving; /* microbatches not a multiple of pp (Megatron-Core 0.10+) */
} ppl_stack_support;
const ppl_stack_support *ppl_stack_supports(ppl_stack stack);
/* Whether the profile has Megatron-Core's MoE communication: DeepEP's deduplicating
 * dispatcher and the 1F1B all-to-all overlap. */
bool ppl_stack_moe_comm(ppl_stack stack);
/* The profile of what a run's `software` names (framework, version); *known false
 * when the pair is not one parplan knows, and the profile is a guess. */
ppl_stack ppl_stack_for_software(const char *framework, const char *version, bool *known);
/* Names accepted for --stack and a runs file's `stack`: the profiles, then the
 * aliases "modern" and "legacy" (NULL-terminated); ppl_stack_from_name_index
 * turns an index into the profile. */
extern const char *const ppl_stack_names[];
ppl_stack ppl_stack_from_name_index(int index);

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

/* How a configuration's expert all-to-alls run under its profile: deduplicated
 * per server (DeepEP: Megatron-Core --moe-token-dispatcher-type flex
 * --moe-enable-deepep) for a model with node-limited routing, and overlapped with
 * another microbatch's compute (--overlap-moe-expert-parallel-comm) where
 * Megatron-Core allows it. */
typedef struct ppl_ep_mode {
    bool dedup;
    bool overlap;
} ppl_ep_mode;
ppl_ep_mode ppl_ep_mode_of(const ppl_model *model, const ppl_config *config, ppl_stack stack);

/* A context under the committed constants (constants.c). */
void ppl_eval_ctx_init(ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo,
                       ppl_stack stack);
/* The same context under other constants (--constants FILE, a fit). */
void ppl_eval_ctx_set_constants(ppl_eval_ctx *ctx, const ppl_constants *k, ppl_stack stack);

typedef struct ppl_step_time {
    double compute; /* compute on the critical path: m x the slowest stage */
    double bubble;  /* pipeline fill and drain */
    double tp_comm, cp_comm, pp_comm, dp_comm, ep_comm; /* communication time, each */
    double optimizer;
    double exposed_comm; /* communication not hidden under compute */
    double overhead;     /* per-step cost */
} ppl_step_time;

typedef struct ppl_traffic {
    double nvlink, rail, spine; /* bytes sent per GPU per step at each level */
} ppl_traffic;

/* One collective on the context's network (NCCL's automatic algorithm), `count`
 * times, in seconds; adds its bytes to *traffic when not NULL; 0 for a group of
 * one or no bytes. */
double ppl_eval_coll(const ppl_eval_ctx *ctx, ppl_collective_op op, const ppl_group *g,
                     double bytes, double count, ppl_traffic *traffic);

/* The passes of a run of equal stages (a stage class), per microbatch. */
typedef struct ppl_stage_passes {
    int64_t first_stage, count;
    ppl_passes passes;
} ppl_stage_passes;
#define PPL_PASS_CLASSES 8 /* the stage classes whose passes an estimate lists */

typedef struct ppl_estimate {
    ppl_config config;
    ppl_memory memory;
    ppl_step_time time;
    ppl_traffic traffic;
    double step_time_s;
    double tokens_per_s;
    double model_tflops_per_gpu;
    double hardware_tflops_per_gpu;
    double mfu; /* model FLOPs over the 16-bit dense peak */
    int64_t slowest_stage;
    ppl_passes passes; /* the slowest stage's F, B, W (and F&B) per microbatch */
    /* every class's, in stage order (full estimates; the first PPL_PASS_CLASSES) */
    ppl_stage_passes stage_passes[PPL_PASS_CLASSES];
    int n_stage_passes;
    ppl_stack stack;        /* the software whose overlaps the figures assume */
    int64_t ep_servers;     /* servers one expert-parallel group spans (1: inside one) */
    const char *bottleneck; /* "compute", "bubble", "tp_comm", ... */
    /* where the largest exposed communication runs: "nvlink" or a tier's name (a
     * copy, so that the estimate outlives its topology) */
    char bottleneck_level[PPL_NAME_MAX];
} ppl_estimate;

/* The pieces an estimate is built from, cached by the search at the loop level
 * they depend on; ppl_estimate_config builds them all for one configuration. */

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
} ppl_layout;

/*
 * Context parallelism's exchange of one layer, per microbatch (context.c): the
 * time of each part before overlap, and what overlaps.  A ring of R ranks passes
 * K/V chunks in R - 1 steps, each under the attention of one step (1/R of the
 * layer's); all-to-all and all-gather run before (and after) attention, in the
 * open.
 */
typedef struct ppl_cp_cost {
    double fwd_s, bwd_s;           /* all of it, forward and backward */
    double ring_ranks;             /* R, 0 without a ring */
    double step_fwd_s, step_bwd_s; /* one ring step: K/V forward, K/V and dK/dV backward */
    double open_fwd_s, open_bwd_s; /* never overlapped: all-to-all, all-gather */
} ppl_cp_cost;

/* The exchange of configuration c on its layout; zero with cp 1. */
void ppl_cp_cost_of(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                    ppl_cp_cost *out);
/* Exposed part of one layer's exchange, given the layer's attention core forward
 * and backward (seconds per microbatch) and its forward passes (1, or 1 plus the
 * recomputed share under full recomputation). */
double ppl_cp_exposed(const ppl_cp_cost *cp, double attn_fwd_s, double attn_bwd_s, double forwards);
/* A ring of `ranks` ranks: ranks - 1 transfers of transfer_s, each under one
 * step's compute (step_compute_s); what shows. */
double ppl_cp_ring_exposed(double ranks, double transfer_s, double step_compute_s);
/* Bytes of each GPU's all-to-all buffers in one layer (a2a and a2a+p2p; 0 for
 * the others), forward and backward, 16-bit. */
void ppl_cp_a2a_bytes(const ppl_model *m, const ppl_config *c, double *fwd_bytes,
                      double *bwd_bytes);
/* Adds `count` layers' exchanges to the traffic. */
void ppl_cp_traffic(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l, double count,
                    ppl_traffic *traffic);

/* Per microbatch: communication (per layout, microbatch size, sequence
 * parallelism) and compute and memory parts (also per recomputation, flash
 * attention, precision). */
typedef struct ppl_micro {
    double act;             /* b*s*h bytes of one microbatch's activations */
    double tp_one;          /* one TP all-reduce (or reduce-scatter + all-gather) */
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

/* A run of consecutive pipeline stages with the same layers and role. */
typedef struct ppl_stage_class {
    int64_t first_stage, count, layers, moe_layers;
    int64_t bf16_layers; /* of its layers, those run in bf16 (ppl_stage_bf16_layers) */
    bool is_first, is_last;
    int dp_ready;     /* data-parallel times computed, per kind (bits; schedule.c dp_kind) */
    int64_t dp_group; /* the sharding group of kinds 3-5 (sharded in groups) */
    /* kinds 2 and 5 (ZeRO-3): the per-step all-reduce of the shards across replicas;
     * the per-layer collectives over every rank [0] or in the group [1] */
    double dp_reduce[6], dp_gather[6], dp_last[6], z3_ag[2], z3_rs[2];
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

void ppl_layout_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_layout *layout);
void ppl_micro_comm_init(const ppl_eval_ctx *ctx, const ppl_config *config,
                         const ppl_layout *layout, ppl_micro *micro);
void ppl_micro_compute_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_micro *micro);
void ppl_classes_init(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_classes *classes);
void ppl_classes_free(ppl_classes *classes);

/* Assembles an estimate from the pieces.  With full false it stops at whether the
 * configuration fits and its step time (no traffic, rates or bottleneck); returns
 * whether it fits. */
bool ppl_estimate_cached(const ppl_eval_ctx *ctx, const ppl_config *config,
                         const ppl_layout *layout, const ppl_micro *micro, ppl_classes *classes,
                         bool full, ppl_estimate *out);

/* Stage `stage` holding `layers` layers (`moe_layers` MoE) from the pieces: its
 * time per microbatch, and its memory when asked. */
double ppl_stage_time_cached(const ppl_eval_ctx *ctx, const ppl_config *config,
                             const ppl_layout *layout, const ppl_micro *micro, int64_t stage,
                             int64_t layers, int64_t moe_layers, ppl_memory *memory);

/* Evaluates one checked configuration. */
void ppl_estimate_config(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_estimate *out);

/* PPL_OK when every figure of the estimate (times, rates, memory, traffic) is
 * finite and none is negative; else PPL_EINTERNAL naming the first that is not.
 * Loaded quantities are range-checked, so a failure here is a model bug: no
 * such figure is printed or ranked. */
ppl_status ppl_estimate_check(const ppl_estimate *estimate, ppl_error *err);

#endif
