/*
 * stack.c - the software-stack profiles (see cost/stack.h): what each stack
 * that ran could build, what it overlaps, its gradient precision, its MoE
 * communication, and the options the step-time model takes from it.
 */
#include "cost/stack.h"

#include <stdlib.h>
#include <string.h>

/* The profiles: what ran, and whether it overlaps communication with compute.
 * Megatron-Core (2023+) overlaps the gradient reduction with the backward
 * (--overlap-grad-reduce), TP communication with GEMMs (Transformer Engine's
 * userbuffers) and pipeline sends with compute; Megatron-LM up to its 2023
 * releases as run without those flags (MegaScale's baseline, Jiang et al. NSDI'24
 * §6), Megatron-DeepSpeed and DeepSpeed 2021 hide none of their own.  An expert
 * tensor-parallel size other than tp (--expert-tensor-parallel-size) first came
 * with Megatron-Core core_v0.10, so only the 2025+ profile searches it. */
/* Context-parallel algorithms: ring attention (p2p) alone until Megatron-Core
 * core_v0.10.0 (Nov 2024) brought --cp-comm-type with a2a, allgather and a2a+p2p
 * (commits 91a8a4c8dc, 645c329d07); NeMo's 2024 containers shipped the 0.8-0.9
 * releases before it. */
#define CP_P2P (1u << PPL_CP_COMM_P2P)
#define CP_ALL ((1u << PPL_CP_COMM_COUNT) - 1u)
#define N PPL_RECOMPUTE_NONE

static const struct {
    const char *name; /* what each stands for: the ppl_stack enum */
    bool overlaps;
    bool half_grads; /* bf16 gradient buffers and reduction (see below) */
    bool moe_comm;   /* Megatron-Core 0.12+ MoE communication: the flex dispatcher with
                        DeepEP (moe_enable_deepep, core_v0.12) and the 1F1B all-to-all
                        overlap (overlap_moe_expert_parallel_comm, core_v0.14) */
    bool low_params; /* fp8 GEMM weights kept and gathered in fp8 (see below) */
    bool fused_attn; /* Transformer Engine's fused attention kernels (see below) */
    ppl_stack_support can;
    ppl_stack_unasked unasked; /* recompute, sp, zero, flash: see below */
} profiles[PPL_STACK_COUNT] = {
    /* clang-format off */
    /*                                                 overlaps half   moe    low    fused  cp     sp     sel    flash  vp     zero etp    cp_comms uneven groups offload  unasked: rec sp zero flash */
    [PPL_STACK_NEMO_2025]            = {"nemo-2025",            true,  true,  true,  true,  true,  {true,  true,  true,  true,  true,  3, true,  CP_ALL, true,  true,  true}, {N, 1, 1, 1}},
    [PPL_STACK_MEGATRON_CORE]        = {"megatron-core",        true,  false, true,  false, true,  {true,  true,  true,  true,  true,  1, false, CP_P2P, false, false, false}, {N, 1, 1, 1}},
    [PPL_STACK_NEMO_2024]            = {"nemo-2024",            true,  true,  false, false, true,  {true,  true,  true,  true,  true,  1, false, CP_P2P, false, false, false}, {N, 1, 1, 1}},
    [PPL_STACK_FSDP]                 = {"fsdp",                 true,  false, false, false, false, {false, false, true,  true,  false, 3, false, 0,      false, true,  false}, {N, 0, 3, 1}},
    [PPL_STACK_MEGATRON_LM_2023]     = {"megatron-lm-2023",     false, false, false, false, false, {false, true,  true,  true,  true,  1, false, 0,      false, false, false}, {N, 0, 0, 0}},
    [PPL_STACK_MEGATRON_LM_2022]     = {"megatron-lm-2022",     false, false, false, false, false, {false, true,  true,  false, true,  1, false, 0,      false, false, false}, {N, 0, 0, 0}},
    [PPL_STACK_MEGATRON_LM_2021]     = {"megatron-lm-2021",     false, false, false, false, false, {false, false, false, false, true,  0, false, 0,      false, false, false}, {N, 0, 0, 0}},
    [PPL_STACK_MEGATRON_DEEPSPEED]   = {"megatron-deepspeed",   false, false, false, false, false, {false, false, false, false, false, 1, false, 0,      false, false, true}, {N, 0, 0, 0}},
    [PPL_STACK_DEEPSPEED_ZERO3_2021] = {"deepspeed-zero3-2021", false, false, false, false, false, {false, false, false, false, false, 3, false, 0,      false, false, true}, {N, 0, 3, 0}},
    /* clang-format on */
};
#undef N

/* The unasked column, each from the release the profile stands for (argparse,
 * dataclass or shipped YAML defaults), but where the profile itself presupposes
 * a flag that needs another value:
 * - recomputation is off in every one: Megatron-LM --checkpoint-activations
 *   store_true (megatron/arguments.py:393 at v2.5), --recompute-granularity None
 *   (:502 at 55ba1f7, :693 at 23.04, megatron/training/arguments.py:1084 at
 *   core_v0.9.0, TransformerConfig in Megatron-Bridge v0.2.0), NeMo 24.07's
 *   activations_checkpoint_granularity null (megatron_gpt_config.yaml:192 at
 *   r2.0.0rc1), composer's activation_checkpointing False
 *   (trainer/dist_strategy.py:128 at v0.16.0);
 * - sequence parallelism is off (arguments.py:581 at 55ba1f7, :778 at 23.04), but
 *   the profiles that overlap TP communication with GEMMs run --tp-comm-overlap,
 *   which Megatron refuses without it (megatron/training/arguments.py:200 at
 *   core_r0.8.0: "Tensor parallel communication/GEMM overlap can happen only when
 *   sequence parallelism is enabled"), so theirs is on;
 * - the distributed optimizer is off (arguments.py:983 at 23.04, :1584 at
 *   core_v0.9.0, use_distributed_optimizer False in Megatron-Bridge v0.2.0; NeMo
 *   24.07's optim fused_adam, yaml:300; DeepSpeed's zero_optimization stage 0,
 *   runtime/zero/constants.py:51 at v0.5.5), but NeMo 24.x's profile reduces in
 *   bf16 through optim.grad_sync_dtype, an option of distributed_fused_adam, so
 *   its is on; Megatron-Core's profile gathers the parameters under the forward
 *   (--overlap-param-gather, what its overlap stands for: docs/launch.md), which
 *   Megatron refuses without it (megatron/training/arguments.py:279-281 at
 *   core_r0.8.0, :1024-1027 at main), so its is on; Megatron-Bridge's overlap
 *   turns the same gather on wherever dp > 1 (training/comm_overlap.py:539-542
 *   at v0.2.0) and its recipes set the distributed optimizer beside it
 *   (recipes/llama/llama3.py:555-559), so nemo-2025's is on; FSDP's
 *   sharding_strategy defaults to FULL_SHARD (composer dist_strategy.py:141) and
 *   DeepSpeed 2021's profile is its ZeRO-3;
 * - attention: Megatron-LM 2021-23 have no fused attention unless
 *   --use-flash-attn (23.04 arguments.py:755); Megatron-Core's default
 *   --transformer-impl transformer_engine (core_v0.6.0 on; arguments.py:721 at
 *   core_v0.9.0) lets Transformer Engine pick a fused kernel (cuDNN's on Hopper,
 *   FlashAttention-2 on Ampere: transformer_engine/pytorch/attention.py:5158-5166
 *   at v1.8), as Megatron-Bridge's attention_backend auto does; NeMo 24.07's YAML
 *   has transformer_engine False (:221), but its profile's TP overlap runs in
 *   Transformer Engine, so it is on; llm-foundry's attn_impl triton is a flash
 *   kernel (configuration_mpt.py:14 at v0.3.0);
 * - no release interleaves unasked (--num-layers-per-virtual-pipeline-stage None
 *   from v2.5, :573, on; NeMo's virtual_pipeline_model_parallel_size null). */

const ppl_stack_unasked *ppl_stack_unasked_of(ppl_stack stack)
{
    return &profiles[(unsigned)stack < PPL_STACK_COUNT ? stack : PPL_STACK_NEMO_2025].unasked;
}

bool ppl_stack_moe_comm(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT && profiles[stack].moe_comm;
}

ppl_ep_mode ppl_ep_mode_of(const ppl_model *m, const ppl_config *c, ppl_stack stack)
{
    ppl_ep_mode e = {false, false};
    if (!m->has_moe || c->ep <= 1 || !ppl_stack_moe_comm(stack))
        return e;
    /* a model trained with node-limited routing is dispatched as it was designed
     * to be, once per server (DeepEP) */
    e.dedup = m->moe.router_node_limit > 0;
    /* megatron/core/transformer/transformer_config.py (__post_init__, "EP A2A
     * overlap"): expert parallelism, no full recomputation, bf16 or fp16, a virtual
     * pipeline when pp > 1, at most one MTP layer */
    e.overlap = c->ep_overlap && c->recompute != PPL_RECOMPUTE_FULL &&
                c->precision != PPL_PRECISION_FP16 && (c->pp == 1 || c->vp > 1) &&
                m->mtp_layers <= 1;
    return e;
}

/* Gradient precision under bf16 (and fp8) training.  Megatron-LM keeps fp32 main
 * gradients and reduces them in fp32 unless told --grad-reduce-in-bf16
 * (megatron/training/arguments.py, validate_args: "bfloat16 requires gradient
 * accumulation and all-reduce to be done in fp32").  NVIDIA's performance
 * configurations turn that off: NeMo 24.x launcher configs set
 * optim.grad_sync_dtype: bf16, NeMo 2 / Megatron-Bridge performance recipes
 * grad_reduce_in_fp32 = False, and Megatron-LM's examples/llama scripts, which
 * follow them, pass --grad-reduce-in-bf16.  The half_grads profiles are those. */
/* The attention kernels: Megatron-Core's default --transformer-impl
 * transformer_engine (core_v0.6.0 on) and NeMo's Transformer Engine layers run its
 * fused attention, cuDNN's kernels on Hopper and later (the unasked column's
 * note, below); Megatron-LM 2023's --use-flash-attn and llm-foundry's triton
 * kernel follow FlashAttention-2, and the older stacks run no flash kernel. */
ppl_attn_kernel ppl_stack_attention_kernel(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT && profiles[stack].fused_attn ? PPL_ATTN_FUSED
                                                                           : PPL_ATTN_FA2;
}

bool ppl_stack_half_grads(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT && profiles[stack].half_grads;
}

/* Megatron-Bridge's mixed-precision recipes (training/mixed_precision.py:
 * fp8_param_gather in bf16_with_fp8_mixed, bf16_with_fp8_current_scaling_mixed and
 * bf16_with_mxfp8_mixed) and Megatron-LM's examples/llama fp8 scripts
 * (--fp8-param-gather), the 2025+ profile's; what the 2024 NeMo containers' recipes
 * did is not known here, so that profile keeps the 16-bit copy. */
bool ppl_stack_low_params(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT && profiles[stack].low_params;
}

bool ppl_low_params_allowed(const ppl_config *c)
{
    if (c->zero < 1)
        return false;
    if (c->precision == PPL_PRECISION_FP8)
        return c->fp8_recipe == PPL_FP8_DELAYED ||
               (c->fp8_recipe == PPL_FP8_TENSORWISE && c->offload_optimizer <= 0.0);
    return c->precision == PPL_PRECISION_MXFP8 && c->offload_optimizer <= 0.0;
}

const ppl_stack_support *ppl_stack_supports(ppl_stack stack)
{
    return &profiles[(unsigned)stack < PPL_STACK_COUNT ? stack : PPL_STACK_NEMO_2025].can;
}

const char *const ppl_stack_names[] = {"nemo-2025",
                                       "megatron-core",
                                       "nemo-2024",
                                       "fsdp",
                                       "megatron-lm-2023",
                                       "megatron-lm-2022",
                                       "megatron-lm-2021",
                                       "megatron-deepspeed",
                                       "deepspeed-zero3-2021",
                                       "modern",
                                       "legacy",
                                       NULL};

ppl_stack ppl_stack_from_name_index(int index)
{
    if (index == PPL_STACK_COUNT)
        return PPL_STACK_MODERN;
    if (index == PPL_STACK_COUNT + 1)
        return PPL_STACK_LEGACY;
    return (unsigned)index < PPL_STACK_COUNT ? (ppl_stack)index : PPL_STACK_MODERN;
}

const char *ppl_stack_name(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT ? profiles[stack].name : "?";
}

bool ppl_stack_overlaps(ppl_stack stack)
{
    return (unsigned)stack < PPL_STACK_COUNT && profiles[stack].overlaps;
}

/* Megatron overlaps pipeline sends with compute only in the interleaved schedule:
 * without virtual stages it sets overlap_p2p_comm False and each send blocks its
 * stage (megatron/training/arguments.py:1010-1012 at main d98e8a64dd: "non-
 * interleaved schedule does not support overlapping p2p communication");
 * Megatron-Bridge selects it only when PP > 1 and VPP > 1 (its comm-overlap
 * guide).  The zero-bubble and DualPipe schedules overlap by construction. */
double ppl_stack_pp_overlap(const ppl_stack_opts *so, const ppl_config *c)
{
    if (c->schedule == PPL_SCHEDULE_1F1B && c->vp <= 1)
        return 0.0;
    return so->pp_overlap;
}

/* Without interleaving, one: the buckets reduce under the last backward as it
 * makes their gradients, and gather under the first forward as it needs their
 * parameters.  Interleaved, the stage's vp model chunks are synchronised one by
 * one.  The schedule runs the microbatches through each chunk in groups of g
 * (megatron/core/pipeline_parallel/schedules.py:989, get_schedule_table, with
 * microbatch_group_size_per_vp_stage: ppl_vp_group, pp unless the microbatches
 * are not a multiple of it), a chunk's gradients are
 * reduced once the last group's backward of it is done while the group goes on
 * through the chunks before it (:1443-1454, grad_sync_func per chunk), and the
 * next chunk's parameters are gathered as the first group's forward starts the
 * one before (:1341-1353, param_sync_func); Megatron-LM at d98e8a6.  So the last
 * chunk's pass hides its own buckets as without interleaving (1/vp of a pass),
 * and the group's passes over the other vp - 1 chunks hide the rest: (1 + (vp -
 * 1) g) / vp passes.  (Fewer microbatches than pp cannot interleave: pipeline.c
 * refuses them, and ppl_vp_group is 0.) */
double ppl_stack_dp_passes(const ppl_config *c)
{
    const int64_t group = ppl_vp_group(c);
    if (c->schedule != PPL_SCHEDULE_1F1B || c->vp <= 1 || group < 1)
        return 1.0;
    return (1.0 + (double)(c->vp - 1) * (double)group) / (double)c->vp;
}

ppl_stack ppl_stack_for_software(const char *framework, const char *version, bool *known)
{
    const char *f = framework ? framework : "", *v = version ? version : "";
    int year = 0;
    if (v[0] == 'v' || v[0] == 'V')
        v++;
    /* the leading number and the one after its dot (strtol saturates, no overflow) */
    long major = v[0] >= '0' && v[0] <= '9' ? strtol(v, NULL, 10) : -1, minor = 0;
    const char *dot = major >= 0 ? strchr(v, '.') : NULL;
    if (dot && dot[1] >= '0' && dot[1] <= '9')
        minor = strtol(dot + 1, NULL, 10);
    if (major >= 2000 && major < 2100) {
        year = (int)major; /* "2021" */
    } else if (major >= 20 && major < 100) {
        year = 2000 + (int)major; /* a container's year and month: "24.07", "25.09" */
    } else if (dot && strcmp(f, "megatron-core") == 0 && major == 0) {
        /* Megatron-Core's own numbering: 0.1-0.9 came out in 2023-24, 0.10 on in 2025 */
        year = minor >= 10 ? 2025 : 2024;
    } else if (dot && strcmp(f, "nemo") == 0 && major >= 1 && major <= 2) {
        /* the NeMo package's numbering ("2.5.0rc0"), not its container's: 1.x up to
         * 2024, 2.0 and 2.1 in late 2024, 2.2 on in 2025 */
        year = major == 2 && minor >= 2 ? 2025 : 2024;
    } else if (dot && strcmp(f, "deepspeed") == 0 && major == 0) {
        /* DeepSpeed 0.3-0.5 are its 2020-21 releases, 0.6 came in 2022 */
        year = minor <= 5 ? 2021 : 2022;
    } /* else a release number parplan cannot date: no year */
    *known = true;
    if (strcmp(f, "megatron-lm") == 0) {
        if (year == 2021)
            return PPL_STACK_MEGATRON_LM_2021;
        if (year == 2022)
            return PPL_STACK_MEGATRON_LM_2022;
        if (year == 2023)
            return PPL_STACK_MEGATRON_LM_2023;
    }
    if (strcmp(f, "megatron-deepspeed") == 0)
        return PPL_STACK_MEGATRON_DEEPSPEED;
    if (strcmp(f, "deepspeed") == 0 && year > 0 && year <= 2021)
        return PPL_STACK_DEEPSPEED_ZERO3_2021;
    if (strcmp(f, "megatron-core") == 0 && year > 0 && year < 2025)
        return PPL_STACK_MEGATRON_CORE;
    if (strcmp(f, "nemo") == 0 && year > 0 && year < 2025)
        return PPL_STACK_NEMO_2024;
    if (strcmp(f, "megatron-core") == 0 && year >= 2025)
        return PPL_STACK_NEMO_2025; /* 2025+ releases: the kernels of their era */
    if (strcmp(f, "megatron-bridge") == 0 || strcmp(f, "nemo") == 0)
        return PPL_STACK_NEMO_2025;
    if (strcmp(f, "llm-foundry") == 0 || strcmp(f, "fsdp") == 0)
        return PPL_STACK_FSDP;
    *known = false;
    return PPL_STACK_MEGATRON_CORE; /* the most common stack of large runs since 2023 */
}

void ppl_stack_opts_init(ppl_stack_opts *o, ppl_stack stack, const ppl_constants *k)
{
    memset(o, 0, sizeof *o);
    o->stack = stack;
    /* Megatron-Core DDP with --overlap-grad-reduce: buckets of max(40M, 1M x dp)
     * parameters, larger at large dp so that each ring chunk stays bandwidth-bound
     * (megatron/core/distributed/distributed_data_parallel.py, __init__: "If using
     * very large dp_sizes, make buckets larger"); without the overlap, one bucket
     * (bucket_size None there; Megatron-LM 2021-23 all-reduced its contiguous
     * gradient buffer at once, DeepSpeed its own).  FSDP reduces per unit (a
     * layer): 40M stands for one. */
    o->bucket_params = 40e6;
    if (ppl_stack_overlaps(stack) && stack != PPL_STACK_FSDP)
        o->bucket_params_per_dp = 1e6;
    else if (!ppl_stack_overlaps(stack))
        o->bucket_params = 0.0;
    /* Stacks that overlap hide TP communication under the GEMMs beside it
     * (Transformer Engine's userbuffers overlap, stage.c); the others hide nothing
     * of their own.  Not fitted either: they launch each gradient bucket's reduction as soon as its
     * last gradient is ready (Megatron-Core --overlap-grad-reduce: the bucket's
     * register_grad_ready hook in distributed/param_and_grad_buffer.py; FSDP's
     * per-unit reduce-scatter in the backward's post-hook), so the whole last
     * backward may hide it but the last bucket, exposed (stage.c's dp_last), and
     * gather the next step's parameters under its forward (--overlap-param-gather).
     * Not fitted: where the schedule lets them (ppl_stack_pp_overlap), the stacks
     * that overlap post each pipeline send and receive asynchronously and wait for
     * it only before the compute that needs it (Megatron's overlap_p2p_comm, on by
     * default: megatron/training/arguments.py --no-overlap-p2p-communication;
     * p2p_communication.py's isend/irecv handles; the zero-bubble and DualPipe
     * schedules by construction), so the send leaves the sender's stream: it is a
     * hop between stages, on the dependency chain (executor.c), not compute. */
    /* the host's work between two steps, outside the layers: a figure per kind of
     * trainer, fitted (constants.c).  Megatron's and DeepSpeed's optimizers step
     * multi-tensor kernels over a few flat buffers; Composer's DecoupledAdamW, the
     * optimizer of llm-foundry's recipes (scripts/train/yamls/pretrain/mpt-*.yaml:
     * decoupled_adamw, gradient_clipping), loops over the parameter tensors in
     * Python and launches about nine kernels for each (composer/optim/
     * decoupled_weight_decay.py, DecoupledAdamW.adamw) */
    o->step_overhead_s = stack == PPL_STACK_FSDP ? k->fsdp_step_overhead_s : k->step_overhead_s;
    o->host_op_s = k->host_op_s;
    o->overlap_cost = k->overlap_cost;
    /* Megatron-LM's releases of 2022-23 run the backward's column-parallel
     * reductions under the weight-gradient GEMMs (--async-tensor-model-parallel-
     * allreduce, on by default: megatron/arguments.py at commit 55ba1f7 of 2022 and
     * tag 23.04; its 2021 releases had no such flag: tags v2.0-v2.6); the stacks
     * that overlap run every TP collective beside a GEMM instead (tp_overlap below) */
    o->tp_async_backward =
        stack == PPL_STACK_MEGATRON_LM_2022 || stack == PPL_STACK_MEGATRON_LM_2023;
    /* Megatron-LM's gradient-accumulation fusion (--no-gradient-accumulation-fusion,
     * store_false: commit 83b1e42f30 of February 2022) needs fp32 main gradients:
     * arguments.py turns it off otherwise (lines 182-188 at 55ba1f7); its 2021
     * releases, and Megatron-DeepSpeed's fork of them, add each microbatch's
     * gradients in a kernel of their own (stage.c) */
    o->grad_accum_unfused =
        stack == PPL_STACK_MEGATRON_LM_2021 || stack == PPL_STACK_MEGATRON_DEEPSPEED;
    o->grad_accum_unfused_fp16 =
        stack == PPL_STACK_MEGATRON_LM_2022 || stack == PPL_STACK_MEGATRON_LM_2023;
    /* the loss: Megatron's vocabulary-parallel cross entropy runs as separate fp32
     * passes over the logits unless --cross-entropy-loss-fusion, opt-in in every
     * release (store_true: megatron/training/arguments.py:1134 at core_r0.8.0;
     * NeMo 24.07 never sets it); Megatron-Bridge turns it on with Transformer
     * Engine's Triton kernels (cross_entropy_loss_fusion True, gpt_provider.py:180
     * at v0.2.0; cross_entropy_fusion_impl "te", llama/llama_provider.py:187), and
     * llm-foundry's MPT takes flash-attn's fused cross entropy by default (loss_fn
     * fused_crossentropy, models/mpt/modeling_mpt.py).  Bytes: compute.c. */
    o->fused_loss = stack == PPL_STACK_NEMO_2025 || stack == PPL_STACK_FSDP;
    if (ppl_stack_overlaps(stack)) {
        /* Transformer Engine's userbuffers under Megatron-Core, NeMo and
         * Megatron-Bridge (--tp-comm-overlap, stage.c); PyTorch's asynchronous
         * tensor parallelism splits its all-gathers and reduce-scatters around the
         * matmuls alike, which the fsdp profile takes with tp > 1 */
        o->tp_overlap = true;
        o->dp_overlap = 1.0;
        o->pp_overlap = 1.0;
    }
    /* ZeRO-3: FSDP and Megatron-FSDP gather a layer (a unit, a bucket) at a time and
     * prefetch the next under the current one's compute; DeepSpeed's 2021 stage 3
     * gathered each parameter tensor on demand, one NCCL collective apiece, and
     * hid none of it: the fetch, prefetch included, synchronises the device
     * before each tensor's all-gather (deepspeed/runtime/zero/
     * partition_parameters.py:813 at v0.4.0, _allgather_param's
     * torch.cuda.synchronize(), which stage3.py:435 fetch_sub_module reaches).
     * Narayanan et al. SC'21 Table 2 measured 174.6B on 768 and on 1,536 A100
     * at the same 66.75 s a step: twice the compute a GPU on the 768, twice the
     * ring's latency per collective on the 1,536 */
    o->zero3_per_tensor = stack == PPL_STACK_DEEPSPEED_ZERO3_2021;
    /* DeepSpeed's stage 3 releases a module's gathered weights after its forward
     * and fetches them in the pre-forward hook that a recomputed forward runs too
     * (deepspeed/runtime/zero/parameter_offload.py, pre_sub_module_forward_function;
     * deepspeedai/DeepSpeed issue 4784), then again for the backward: under full
     * recomputation a layer is gathered three times a microbatch.  FSDP keeps the
     * weights it gathered for the recomputation through the layer's backward. */
    o->zero3_regather = stack == PPL_STACK_DEEPSPEED_ZERO3_2021;
    o->zero3_overlap = stack == PPL_STACK_DEEPSPEED_ZERO3_2021 ? 0.0 : 1.0;
    o->zero3_bus = stack == PPL_STACK_DEEPSPEED_ZERO3_2021 ? k->zero3_2021_bus : 1.0;
}

bool ppl_stack_tp_assumed(const ppl_stack_opts *o, const ppl_config *c)
{
    /* tp_overlap_fsdp_warned holds only where tp_overlap does (evalctx.c); a
     * configuration without the overlap assumes nothing */
    return o->tp_overlap_fsdp_warned && c->zero >= 2 && ppl_stack_tp_overlap_fits(c);
}

bool ppl_stack_tp_hidden(const ppl_stack_opts *o, const ppl_config *c)
{
    return o->tp_overlap && ppl_stack_tp_overlap_fits(c) &&
           !(o->conservative && ppl_stack_tp_assumed(o, c));
}

bool ppl_stack_grad_accum_unfused(const ppl_stack_opts *o, const ppl_config *c)
{
    return o->grad_accum_unfused ||
           (o->grad_accum_unfused_fp16 && c->precision == PPL_PRECISION_FP16);
}

bool ppl_stack_tp_overlap_fits(const ppl_config *c)
{
    return c->tp > 1 && c->sequence_parallel && !c->tp_overlap_off;
}
