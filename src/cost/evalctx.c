/*
 * evalctx.c - the evaluation context and a configuration's layout (see
 * cost/evalctx.h).
 */
#include "cost/evalctx.h"

#include <string.h>

#include "cost/shard.h"

void ppl_eval_ctx_init(ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo,
                       ppl_stack stack)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->model = model;
    ctx->topo = topo;
    ppl_model_derive(model, &ctx->figures);
    ppl_net_init(&ctx->net, topo);
    ppl_memory_opts_init(&ctx->memory);
    ppl_eval_ctx_set_constants(ctx, ppl_constants_committed(), stack);
}

void ppl_eval_ctx_set_constants(ppl_eval_ctx *ctx, const ppl_constants *k, ppl_stack stack)
{
    ppl_gpu_efficiency_for(ctx->topo, k, &ctx->eff);
    ctx->eff.attention_kernel = ppl_stack_attention_kernel(stack);
    /* Hopper's fp8 GEMMs by kernel generation: 2025+ stacks run them closer to
     * peak (the NeMo 24.07 and Megatron-Bridge 25-26 runs of the same models
     * disagree by about a fifth otherwise); Blackwell's have their own fraction
     * (ppl_gpu_efficiency_for) */
    if (stack == PPL_STACK_NEMO_2025 && ctx->eff.gemm_fp8 > 0 &&
        ppl_gpu_kernels(&ctx->topo->gpu, NULL) == PPL_KERNELS_HOPPER)
        ctx->eff.gemm_fp8 = k->h100_gemm_fp8_2025;
    ctx->memory.half_grads = ppl_stack_half_grads(stack);
    ctx->memory.low_params = ppl_stack_low_params(stack);
    ppl_stack_opts_init(&ctx->stack, stack, k);
    /* Megatron-LM warns that tensor (or context) parallelism beside Megatron-FSDP
     * runs poorly before Blackwell: sequence parallelism's overlap wants
     * CUDA_DEVICE_MAX_CONNECTIONS=1, which FSDP must not have (arguments.py:
     * 1451-1464 at main d98e8a64dd; Megatron-Bridge asserts it, config.py:
     * 1100-1103 at v0.6.0).  Meta's Llama 3 405B run (tp 8 beside sharded data
     * parallelism, on its own software) hid it, so the overlap stays, said
     * (estimate's overlap_assumed), and --conservative costs it exposed.  The
     * fsdp profile's tensor parallelism is PyTorch's asynchronous TP. */
    ctx->stack.tp_overlap_fsdp_warned =
        ctx->stack.tp_overlap && stack != PPL_STACK_FSDP &&
        ppl_gpu_kernels(&ctx->topo->gpu, NULL) < PPL_KERNELS_BLACKWELL;
}

void ppl_layout_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_layout *l)
{
    ppl_layout_init_dense(ctx, c, l);
    ppl_layout_init_experts(ctx, c, l, l);
}

/* Groups in Megatron's rank order, TP innermost, then CP, DP, PP; the worst copy
 * over the pipeline stages.  MoE layers fold the same ranks of a stage as etp, ep,
 * edp, PP (megatron/core/parallel_state.py:886-895: the expert RankGenerator over
 * tp=etp, ep, dp=edp with the order tp-cp-ep-dp-pp, cp=1): expert TP innermost, EP
 * strided by etp, expert DP by etp*ep. */
void ppl_layout_init_dense(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_layout *l)
{
    const int64_t pp_stride = c->tp * c->cp * c->dp;
    const ppl_net *net = &ctx->net;
    /* the job's ranks over the NVLink domains it takes */
    const int64_t jd = l->job_domain = ppl_net_job_domain(net, c->gpus);
    ppl_group_place_worst(net, jd, c->tp, 1, 0, c->pp, pp_stride, &l->g_tp);
    ppl_group_place_worst(net, jd, c->cp, c->tp, 0, c->pp, pp_stride, &l->g_cp);
    ppl_group_place_worst(net, jd, c->dp * c->cp, c->tp, 0, c->pp, pp_stride, &l->g_dp);
    ppl_group_place_worst(net, jd, c->pp > 1 ? 2 : 1, pp_stride, 0, c->pp > 1 ? c->pp - 1 : 1,
                          pp_stride, &l->g_pp);
    ppl_group_place_job(net, jd, c->pp > 1 ? 2 : 1, (c->pp - 1) * pp_stride, 0, &l->g_tie);
    /* hierarchical CP: cp_a2a adjacent CP ranks, and the ring of one of each
     * (Megatron-Core parallel_state.py, hierarchical context-parallel groups) */
    int64_t a2a = c->cp_a2a >= 1 && c->cp % c->cp_a2a == 0 ? c->cp_a2a : 1;
    ppl_group_place_worst(net, jd, a2a, c->tp, 0, c->pp, pp_stride, &l->g_cp_a2a);
    ppl_group_place_worst(net, jd, c->cp / a2a, c->tp * a2a, 0, c->pp, pp_stride, &l->g_cp_ring);
}

void ppl_layout_init_experts(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *dense,
                             ppl_layout *l)
{
    if (l != dense)
        *l = *dense;
    const int64_t pp_stride = c->tp * c->cp * c->dp;
    const int64_t etp = ppl_config_etp(c), jd = l->job_domain;
    const ppl_net *net = &ctx->net;
    ppl_group_place_worst(net, jd, etp, 1, 0, c->pp, pp_stride, &l->g_etp);
    ppl_group_place_worst(net, jd, c->ep, etp, 0, c->pp, pp_stride, &l->g_ep);
    ppl_group_place_worst(net, jd, ppl_config_edp(c), etp * c->ep, 0, c->pp, pp_stride, &l->g_edp);
    ppl_layout_shard(net, c, l, ppl_config_shard_group(c), l);
}

void ppl_layout_shard(const ppl_net *net, const ppl_config *c, const ppl_layout *base, int64_t n,
                      ppl_layout *out)
{
    ppl_config g = *c;
    g.shard_group = n;
    if (out != base)
        *out = *base;
    if (ppl_config_shard_replicas(&g) > 1) {
        ppl_shard_groups(net, base->job_domain, &g, &out->g_shard, &out->g_replicas, &out->g_eshard,
                         &out->g_ereplicas);
        return;
    }
    /* every rank: the data-parallel groups themselves, no replicas */
    out->g_shard = base->g_dp;
    out->g_eshard = base->g_edp;
    ppl_group_place_job(net, base->job_domain, 1, 1, 0, &out->g_replicas);
    out->g_ereplicas = out->g_replicas;
}
