/*
 * cost/stack.h - the training software, by what ran: one profile a row (stack.c).
 *
 * Each profile says what its era overlaps (a property of the stack, not of the
 * GPU), what it could build (the search covers nothing else unless a flag pins
 * it), its gradient precision and its MoE communication.  validate maps a run's
 * `software` to one; plan and estimate take --stack PROFILE (default the newest).
 */
#ifndef PARPLAN_STACK_H
#define PARPLAN_STACK_H

#include <stdbool.h>

#include "cost/config.h"
#include "base/constants.h"
#include "model/model.h"

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
    bool tp_overlap;        /* each tensor-parallel collective runs under the GEMM it feeds
                               or follows (Transformer Engine's userbuffers, stage.c) */
    /* that overlap beside Megatron-FSDP (ZeRO-2/3) is one Megatron-LM warns about:
     * before Blackwell it wants CUDA_DEVICE_MAX_CONNECTIONS=1, which Megatron-FSDP
     * refuses (evalctx.c); assumed, and costed exposed under conservative */
    bool tp_overlap_fsdp_warned;
    bool tp_async_backward; /* the column-parallel layers' input-gradient reduction runs
                               under their weight-gradient GEMM (Megatron-LM 2022-23) */
    bool grad_accum_unfused; /* every microbatch adds the gradients into the main ones in
                                a kernel of its own (Megatron-LM 2021, Megatron-DeepSpeed) */
    bool grad_accum_unfused_fp16; /* the same in fp16 training only (Megatron-LM 2022-23) */
    bool fused_loss;      /* the cross-entropy loss in one fused kernel over the 16-bit logits
                             (Megatron-Bridge, llm-foundry), not Megatron's fp32 passes */
    double dp_overlap;    /* share of one microbatch's backward that hides the gradient reduction */
    double pp_overlap;    /* share of pipeline send/recv hidden under compute */
    double overlap_cost;  /* compute slowdown per second of communication hidden under it
                             (NCCL kernels take SMs and HBM bandwidth from the GEMMs) */
    double bucket_params; /* gradients per reduction bucket; 0: one bucket */
    double bucket_params_per_dp; /* at least this many per data-parallel rank in a bucket */
    double step_overhead_s; /* per-step cost outside the model (data, logging, launch) */
    double host_op_s;       /* host time per operation a layer launches */
    /* ZeRO-3 / FSDP: how the stack issues a layer's gathers and reductions, and how
     * much of a layer's compute its prefetch hides them under */
    bool zero3_per_tensor; /* one collective per parameter tensor (DeepSpeed 2021), else
                              one per layer (FSDP unit, Megatron-FSDP bucket) */
    bool zero3_regather;   /* a recomputed forward gathers the layer again (DeepSpeed) */
    double zero3_overlap;  /* share of the layer's compute that hides its collectives */
    double zero3_bus;      /* share of the ring's bus bandwidth its collectives reach */
    /* cost as exposed the overlaps no run of the calibration measures: the expert
     * all-to-all hidden under another microbatch's compute (--ep-overlap, DualPipe's
     * F&B); the tensor-, data- and context-parallel overlaps are fitted (constants.c)
     * or measured (the calibration's cp 2 runs), the pipeline sends' follow from the
     * schedule (stack.c), and they stay */
    bool conservative;
} ppl_stack_opts;

/* Whether configuration c's tensor-parallel collectives run under its GEMMs
 * (tp_overlap with sequence parallelism, unless conservative drops an overlap
 * Megatron-LM warns about), and whether that rests on the warned one. */
bool ppl_stack_tp_hidden(const ppl_stack_opts *opts, const ppl_config *c);
bool ppl_stack_tp_assumed(const ppl_stack_opts *opts, const ppl_config *c);
/* Whether c can run a stack's tensor-parallel overlap: tp > 1, with sequence
 * parallelism (Megatron allows --tp-comm-overlap only with it), not turned off
 * (--tp-overlap=no).  The time model and the launch flags read it alike. */
bool ppl_stack_tp_overlap_fits(const ppl_config *c);

/* Whether configuration c adds each microbatch's gradients into the main ones in
 * a kernel of its own (grad_accum_unfused, or grad_accum_unfused_fp16 in fp16):
 * the one time term that reads the stage's parameters (stage.c). */
bool ppl_stack_grad_accum_unfused(const ppl_stack_opts *opts, const ppl_config *c);

/* The profile's options under the fitted constants k. */
void ppl_stack_opts_init(ppl_stack_opts *opts, ppl_stack stack, const ppl_constants *k);
/* The share of pipeline sends hidden under compute in configuration c: the
 * profile's, but none in plain (non-interleaved) 1F1B, where sends block. */
double ppl_stack_pp_overlap(const ppl_stack_opts *so, const ppl_config *c);
/* How many of a microbatch's passes over a stage (forward or backward) can hide its
 * data-parallel gradient reduction, and the next step's parameter gather, where the
 * stack overlaps them: 1, or more under the interleaved schedule, which
 * synchronises each model chunk apart (stack.c). */
double ppl_stack_dp_passes(const ppl_config *c);
/* "nemo-2025", "megatron-lm-2021", ... */
const char *ppl_stack_name(ppl_stack stack);
/* Whether the profile overlaps communication with compute (Megatron-Core and later). */
bool ppl_stack_overlaps(ppl_stack stack);
/* Whether the profile keeps and reduces bf16 gradients in bf16 and fp8 training
 * (NVIDIA's performance configurations), not in fp32 (Megatron-LM's default). */
bool ppl_stack_half_grads(ppl_stack stack);
/* Whether the profile's fp8 recipes keep the GEMM weights in fp8 alone and gather
 * them in fp8 (Megatron-Core --fp8-param-gather), where the configuration allows
 * it (ppl_low_params_allowed). */
bool ppl_stack_low_params(ppl_stack stack);
/* The attention kernels the profile's software runs (stack.c). */
ppl_attn_kernel ppl_stack_attention_kernel(ppl_stack stack);
/* Whether a configuration can keep its fp8 GEMM weights in fp8 alone: fp8 with
 * the delayed or tensorwise recipe, or mxfp8 (Megatron-Bridge sets
 * fp8_param_gather in bf16_with_fp8_mixed, bf16_with_fp8_current_scaling_mixed and
 * bf16_with_mxfp8_mixed, not in its blockwise and nvfp4 recipes:
 * training/mixed_precision.py); a distributed optimizer or Megatron-FSDP, ZeRO 1
 * or more (arguments.py:1095-1097 at main d98e8a64dd); with the optimizer
 * offloaded, the delayed recipe only (arguments.py:1889-1892). */
bool ppl_low_params_allowed(const ppl_config *c);

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
    bool shard_groups; /* ZeRO sharded in groups, replicated across them (HSDP): Megatron-Core
                          2025 (--num-distributed-optimizer-instances) and FSDP HYBRID_SHARD */
    bool offload;      /* optimizer state stepped on the host: Megatron-Core 2025 (core_v0.12
                          --optimizer-cpu-offload) and DeepSpeed's ZeRO-Offload (2021) */
} ppl_stack_support;
const ppl_stack_support *ppl_stack_supports(ppl_stack stack);
/* What a profile's software does with a setting nobody gave it: its own
 * defaults, before any recipe or script, but where the profile presupposes a
 * flag that needs another value (stack.c).  A measured run that leaves one of these
 * unsaid either kept the default or set it as a tuned run would; validate
 * predicts both and scores the centre (studies/calibrate.h).  vp is 1 in every
 * profile (no stack interleaves unasked) and so has no column. */
typedef struct ppl_stack_unasked {
    int recompute;         /* ppl_recompute */
    int sequence_parallel; /* 0 or 1 */
    int zero;              /* 0 replicated, 1 distributed optimizer, 3 FSDP / ZeRO-3 */
    int flash_attention;   /* 0 or 1 */
} ppl_stack_unasked;
const ppl_stack_unasked *ppl_stack_unasked_of(ppl_stack stack);
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

#endif
