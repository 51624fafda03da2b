/*
 * stage.c - the pieces of an estimate: one microbatch's communication and
 * compute, runs of equal stages, one stage's time per microbatch (see
 * cost/stage.h).
 *
 * Communication volumes per microbatch (Narayanan et al. SC'21 §3; Korthikanti et
 * al. 2022 §4.2.2):
 *   TP  per layer 2 all-reduces of b*s*h 16-bit elements forward and 2 backward
 *       (with sequence parallelism a reduce-scatter and an all-gather instead of
 *       each, the same bytes), 2 more with full recomputation;
 *   CP  per layer the exchange of its --cp-comm-type (ring, all-to-all,
 *       all-gather or both), costed and overlapped in context.c;
 *   EP  per MoE layer an all-to-all to dispatch tokens and one to combine them,
 *       forward and backward;
 *   PP  per stage boundary b*s*h forward and the same backward; with tensor
 *       parallelism each rank sends 1/t of it on its own rail and the receiving
 *       stage all-gathers it over NVLink (scatter-gather, Narayanan §4.1), so the
 *       network carries t times less; interleaving sends v times as many;
 *   DP  per step the stage's gradients (all-reduce; reduce-scatter then a
 *       parameter all-gather with ZeRO-1/2), in buckets; ZeRO-3 gathers each
 *       layer's weights forward and backward and reduce-scatters its gradients
 *       every microbatch: 1.5x the volume of plain data parallelism.
 */
#include "cost/stage.h"

#include "base/minmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* DeepSpeed's stage 3 (its documentation, config-json "ZeRO optimizations"):
 * a parameter under stage3_param_persistence_threshold elements (1e5 by default)
 * stays whole on every rank and is never gathered.  Its 2021 releases reduce-
 * scattered every parameter's gradient by itself: the reduce_bucket_size bucket
 * only batches when they are issued (deepspeed/runtime/zero/partition_parameters.py
 * at v0.4.0, _reduce_scatter_gradients, lines 902-931, one
 * torch.distributed.reduce_scatter per parameter at line 966; the same at v0.5.0
 * and v0.5.10; the coalesced reduce-scatter came with v0.6.0). */
#define DS_PERSIST_ELEMS 1e5

/* A dense layer's parameter tensors per tensor-parallel rank (its shape,
 * ppl_layer_shape_of), in the backward's order (the MLP's before the
 * attention's): the MLP's matrices (three when gated) and their biases, the
 * norms' weights (and biases), the output projection and the QKV matrix (the
 * attention's other weights) and their biases.  Returns how many it wrote (at
 * most 16). */
static int layer_tensors(const ppl_model *m, int64_t tp, double size[16])
{
    ppl_layer_shape sh;
    ppl_layer_shape_of(m, tp, &sh);
    const double h = (double)m->hidden, proj = sh.v_cols * h;
    const int norms = m->norm == PPL_NORM_LAYERNORM ? 4 : 2;
    int n = 0;
    for (int i = 0; i < (m->gated_mlp ? 3 : 2); i++)
        size[n++] = h * sh.ffn_cols;
    if (m->bias) {
        size[n++] = h;
        for (int i = 0; i < (m->gated_mlp ? 2 : 1); i++)
            size[n++] = sh.ffn_cols;
    }
    for (int i = 0; i < norms; i++)
        size[n++] = h;
    size[n++] = proj;
    size[n++] = sh.attn_weights - proj;
    if (m->bias) {
        size[n++] = h;
        size[n++] = sh.q_cols + 2.0 * sh.kv_cols;
    }
    return n;
}

void ppl_zero3_per_tensor(const ppl_model *m, int64_t tp, double *gathers, double *reductions)
{
    double size[16];
    const int n = layer_tensors(m, tp, size);
    *gathers = 0.0;
    for (int i = 0; i < n; i++)
        *gathers += size[i] >= DS_PERSIST_ELEMS;
    *reductions = (double)n;
}

/* Bytes per reduced gradient element: those the memory model keeps (fp32 main
 * gradients for bf16 and fp8, fp16 ones for fp16 training). */
double ppl_dp_grad_bytes(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    return ppl_grad_bytes(&ctx->memory, c->precision);
}

/* Bucketed reduction of `params` gradients over the sharding group g (and, with
 * ZeRO-1/2, the parameter all-gather that follows the optimizer step); with
 * replicas of the shards (rep, shard.h), each shard's all-reduce across them; with
 * ZeRO-3 only that (its gathers and reductions are per layer, class_dp). */
void ppl_dp_times(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_group *g,
                  const ppl_group *rep, double params, double gather_bytes, double *reduce,
                  double *gather, double *last_bucket, ppl_traffic *traffic)
{
    *reduce = *gather = *last_bucket = 0.0;
    if ((g->n <= 1 && rep->n <= 1) || params <= 0.0)
        return;
    double bucket =
        ppl_max(ctx->stack.bucket_params, ctx->stack.bucket_params_per_dp * (double)c->dp);
    double buckets = bucket > 0 ? ceil(params / bucket) : 1.0;
    double per = params / buckets;
    double gb = ppl_dp_grad_bytes(ctx, c);
    if (c->zero == 0) {
        *reduce = ppl_collective_count(&ctx->net, PPL_OP_ALLREDUCE, g, per * gb, buckets, traffic);
    } else {
        if (c->zero <= 2)
            *reduce = ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, g, per * gb, buckets,
                                           traffic);
        /* param_and_grad_buffer.py:734-760: each bucket's shard all-reduced across
         * the distributed-optimizer instances after the reduce-scatter */
        *reduce += ppl_collective_count(&ctx->net, PPL_OP_ALLREDUCE, rep, per * gb / (double)g->n,
                                        buckets, traffic);
        if (c->zero <= 2)
            *gather = ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, g, per * gather_bytes,
                                           buckets, traffic);
    }
    *last_bucket = *reduce / buckets;
}

/*
 * Bytes of one sequence-parallel all-gather of b*s*h activations: under fp8,
 * mxfp8 and nvfp4 Transformer Engine quantizes before it gathers, the norm's
 * output ahead of QKV and fc1 and the output gradient ahead of the projection's
 * and fc2's backward (TransformerEngine layernorm_linear.py forward,
 * "gemm_input_cast_comm": gather_along_first_dim(ln_out, quantizer=...);
 * distributed.py gather_along_first_dim: fp8, blockwise, MXFP8 and NVFP4
 * all-gathers), at the format's bytes with its scales; the reduce-scatters stay
 * 16-bit.  Without sequence parallelism the all-reduces are 16-bit.
 */
double ppl_tp_gather_bytes(const ppl_config *c, double act_bytes)
{
    if (!c->sequence_parallel || !ppl_precision_low(c->precision))
        return act_bytes;
    return act_bytes * ppl_config_gemm_bytes(c) / 2.0;
}

void ppl_micro_comm_interleave(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_micro *mi)
{
    mi->ep_hidden_share = 0.0;
    if (mi->ep_one <= 0.0)
        return;
    /* the 1F1B all-to-all overlap pairs one microbatch's forward with another's
     * backward and runs each one's dispatch and combine under the other's
     * compute: every chunk but the warm-up ones (Megatron's interleaved warm-up,
     * 2 (p - 1) + (v - 1) p chunks of the first stage; one without a pipeline) */
    if (ctx->stack.conservative) {
        mi->ep_hidden_share = 0.0; /* assumed overlaps costed exposed (stack.h) */
    } else if (ppl_schedule_of(c->schedule)->overlaps_fb) {
        /* DualPipe's F&B: every steady-state chunk runs a forward and a backward
         * of two microbatches together, each one's all-to-all under the other's
         * compute (DeepSeek-V3 report §3.2.1); the chunks run alone are the
         * bubble's (pipeline.c) */
        mi->ep_hidden_share = 1.0;
    } else if (ppl_ep_mode_of(ctx->model, c, ctx->stack.stack).overlap) {
        double chunks = (double)c->microbatches * (double)c->vp;
        double warm = c->pp == 1 ? 1.0 : 2.0 * (double)(c->pp - 1) + (double)((c->vp - 1) * c->pp);
        mi->ep_hidden_share = chunks > warm ? (chunks - warm) / chunks : 0.0;
    }
}

bool ppl_micro_reads_vp(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi)
{
    /* the overlap itself needs vp > 1 with a pipeline (ppl_ep_mode_of): asked for,
     * it may hold at one vp and not at another */
    return mi->ep_one > 0.0 && !ctx->stack.conservative &&
           !ppl_schedule_of(c->schedule)->overlaps_fb && c->ep_overlap;
}

void ppl_micro_comm_init(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         ppl_micro *mi)
{
    ppl_micro_comm_init_with(ctx, c, l, NULL, mi);
}

void ppl_micro_comm_init_with(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                              const ppl_cp_cost *cp, ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    const double tokens = (double)c->mbs * (double)m->seq_len / (double)c->cp;
    mi->act = tokens * (double)m->hidden * 2.0; /* b*s*h 16-bit */
    mi->tp_one = mi->tp_reduce_one = 0.0;
    mi->tp_gather = ppl_tp_gather_bytes(c, mi->act);
    if (c->tp > 1) {
        mi->tp_reduce_one =
            ppl_collective_count(&ctx->net,
                                 c->sequence_parallel ? PPL_OP_REDUCESCATTER : PPL_OP_ALLREDUCE,
                                 &l->g_tp, mi->act, 1, NULL);
        mi->tp_one = mi->tp_reduce_one +
                     (c->sequence_parallel ? ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER,
                                                                  &l->g_tp, mi->tp_gather, 1, NULL)
                                           : 0.0);
    }
    if (cp)
        mi->cp = *cp;
    else
        ppl_cp_cost_of(ctx, c, l, &mi->cp);
    mi->ep_one = mi->ep_hidden_share = 0.0;
    if (c->ep > 1 && m->has_moe) {
        /* each token's hidden state, 16-bit, to each of its top_k experts */
        double copy =
            tokens * (double)m->hidden * 2.0 / (c->sequence_parallel ? (double)c->tp : 1.0);
        ppl_ep_mode mode = ppl_ep_mode_of(m, c, ctx->stack.stack);
        ppl_dispatch d = {(double)m->moe.top_k, m->moe.router_node_limit, mode.dedup,
                          ppl_moe_load_factor(m)};
        ppl_coll r;
        ppl_ep_dispatch(&ctx->net, &l->g_ep, copy, &d, &r);
        mi->ep_one = r.time_s;
        ppl_micro_comm_interleave(ctx, c, mi);
    }
    /* around the experts, the dispatcher all-gathers the tokens it received over
     * the expert tensor-parallel group and reduce-scatters their outputs
     * (moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher steps 4 and 5): the
     * gathered buffer holds etp ranks' T/tp tokens x top_k, b*s*h x k etp/tp */
    mi->etp_one = 0.0;
    const int64_t etp = ppl_config_etp(c);
    if (etp > 1 && m->has_moe) {
        double gathered = mi->act * (double)m->moe.top_k * (double)etp / (double)c->tp *
                          ppl_moe_load_factor(m); /* the busiest rank's share */
        mi->etp_one =
            ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_etp, gathered, 1, NULL) +
            ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_etp, gathered, 1, NULL);
    }
    mi->pp_one = 0.0;
    if (c->pp > 1) {
        double per_rank = c->tp > 1 ? mi->act / (double)c->tp : mi->act;
        mi->pp_one = ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, &l->g_pp, per_rank, 1, NULL);
        if (c->tp > 1 && !c->sequence_parallel) /* scatter-gather: rebuild over NVLink */
            mi->pp_one +=
                ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_tp, mi->act, 1, NULL);
    }
}

void ppl_micro_moe_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    memset(&mi->moe, 0, sizeof mi->moe);
    if (m->has_moe)
        ppl_layer_time_of(m, ctx->topo, c, &ctx->eff, true, &mi->moe);
    mi->moe16 = mi->moe;
    if (c->bf16_layers > 0 && m->has_moe) {
        ppl_config c16 = *c;
        c16.precision = PPL_PRECISION_BF16;
        ppl_layer_time_of(m, ctx->topo, &c16, &ctx->eff, true, &mi->moe16);
    }
}

void ppl_micro_dense_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    ppl_layer_time_of(m, ctx->topo, c, &ctx->eff, false, &mi->dense);
    ppl_output_time_of(m, ctx->topo, c, &ctx->eff, ctx->stack.fused_loss, &mi->head);
    mi->dense16 = mi->dense;
    if (c->bf16_layers > 0) {
        ppl_config c16 = *c;
        c16.precision = PPL_PRECISION_BF16;
        ppl_layer_time_of(m, ctx->topo, &c16, &ctx->eff, false, &mi->dense16);
    }
    mi->tp_count = c->recompute == PPL_RECOMPUTE_FULL ? 6.0 : 4.0;
}

void ppl_micro_compute_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_micro *mi)
{
    ppl_micro_dense_init(ctx, c, mi);
    ppl_micro_moe_init(ctx, c, mi);
    ppl_memory_parts_init(ctx->model, c, &ctx->memory, &mi->mem);
}

void ppl_micro_comm_copy(ppl_micro *dst, const ppl_micro *src)
{
    dst->act = src->act;
    dst->tp_one = src->tp_one;
    dst->tp_reduce_one = src->tp_reduce_one;
    dst->tp_gather = src->tp_gather;
    dst->cp = src->cp;
    dst->ep_one = src->ep_one;
    dst->ep_hidden_share = src->ep_hidden_share;
    dst->etp_one = src->etp_one;
    dst->pp_one = src->pp_one;
}

void ppl_micro_compute_copy(ppl_micro *dst, const ppl_micro *src)
{
    dst->dense = src->dense;
    dst->moe = src->moe;
    dst->head = src->head;
    dst->dense16 = src->dense16;
    dst->moe16 = src->moe16;
    dst->tp_count = src->tp_count;
    dst->mem = src->mem;
}

/* A class of one stage, `stage`, of `layers` layers (`moe` MoE), no time known. */
static void class_init(ppl_stage_class *k, const ppl_config *c, int64_t stage, int64_t layers,
                       int64_t moe)
{
    memset(k, 0, sizeof *k);
    k->first_stage = stage;
    k->count = 1;
    k->layers = layers;
    k->moe_layers = moe;
    k->bf16_layers = ppl_stage_bf16_layers(c, stage, layers);
    k->is_first = stage == 0;
    k->is_last = stage == c->pp - 1;
}

/* Runs of consecutive stages that hold the same layers and play the same part. */
static void class_at(ppl_classes *cl, const ppl_config *c, int64_t k, int64_t layers, int64_t moe)
{
    class_init(&cl->items[cl->n++], c, k, layers, moe);
}

void ppl_classes_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_classes *cl)
{
    cl->n = 0;
    cl->items = cl->inline_items;
    cl->cap = PPL_INLINE_CLASSES;
    /* every layer of one kind (dense, or MoE): the middle stages alike, three
     * classes at most */
    const int64_t moe_all = ppl_moe_layers_in(ctx->model, 0, ctx->model->layers);
    if (moe_all == 0 || moe_all == ctx->model->layers) {
        const int64_t ends[3] = {0, 1, c->pp - 1};
        for (int i = 0; i < 3; i++) {
            const int64_t k = ends[i];
            if ((i == 1 && c->pp < 3) || (i == 2 && c->pp < 2))
                continue;
            int64_t layers, moe;
            ppl_stage_layer_counts(ctx->model, c, k, &layers, &moe);
            class_at(cl, c, k, layers, moe);
            cl->items[cl->n - 1].count = i == 1 ? c->pp - 2 : 1;
        }
        return;
    }
    /* past the leading dense layers, middle stages of a multiple of `every` layers
     * hold the same counts (ppl_moe_layers_in; not where the stages are chunked,
     * ppl_stage_layer_counts): the rest of them are taken at once */
    const ppl_model *m = ctx->model;
    const bool chunked = c->vp > 1 && m->layers % (c->pp * c->vp) == 0;
    const int64_t every = m->moe.every > 0 ? m->moe.every : 1;
    for (int64_t k = 0; k < c->pp; k++) {
        int64_t layers, moe;
        ppl_stage_layer_counts(ctx->model, c, k, &layers, &moe);
        bool first = k == 0, last = k == c->pp - 1;
        const int64_t rest = c->pp - 1 - k; /* this middle stage and those after it */
        const int64_t run = !chunked && !first && !last && c->split.middle % every == 0 &&
                                    ppl_stage_first_layer(c, k) >= m->moe.first_dense_layers
                                ? rest
                                : 1;
        ppl_stage_class *prev = cl->n ? &cl->items[cl->n - 1] : NULL;
        if (prev && prev->layers == layers && prev->moe_layers == moe && !prev->is_first &&
            !first && !last && !prev->is_last) {
            prev->count += run;
            k += run - 1;
            continue;
        }
        if (cl->n == cl->cap) {
            size_t cap = cl->cap * 4;
            ppl_stage_class *grown = malloc(cap * sizeof *grown);
            if (!grown) { /* keep going with what fits: the run merges into the last class */
                prev->count += run;
                k += run - 1;
                continue;
            }
            memcpy(grown, cl->items, cl->n * sizeof *grown);
            if (cl->items != cl->inline_items)
                free(cl->items);
            cl->items = grown;
            cl->cap = cap;
        }
        class_at(cl, c, k, layers, moe);
        cl->items[cl->n - 1].count = run;
        k += run - 1;
    }
}

/* dp's class of that first stage, layers and MoE layers, or NULL */
static ppl_stage_class *dp_find(const ppl_stage_dp_cache *dp, int64_t stage, int64_t layers,
                                int64_t moe)
{
    for (int i = 0; i < dp->n; i++)
        if (dp->items[i].first_stage == stage && dp->items[i].layers == layers &&
            dp->items[i].moe_layers == moe)
            return (ppl_stage_class *)&dp->items[i];
    return NULL;
}

static ppl_stage_class *dp_entry(const ppl_stage_dp_cache *dp, const ppl_stage_class *k)
{
    return dp_find(dp, k->first_stage, k->layers, k->moe_layers);
}

/* the fields ppl_class_dp fills */
static void dp_copy(ppl_stage_class *to, const ppl_stage_class *from)
{
    to->dp_ready = from->dp_ready;
    to->dp_group = from->dp_group;
    memcpy(to->dp_reduce, from->dp_reduce, sizeof to->dp_reduce);
    memcpy(to->dp_gather, from->dp_gather, sizeof to->dp_gather);
    memcpy(to->dp_last, from->dp_last, sizeof to->dp_last);
    memcpy(to->z3_ag, from->z3_ag, sizeof to->z3_ag);
    memcpy(to->z3_rs, from->z3_rs, sizeof to->z3_rs);
}

void ppl_classes_dp_take(ppl_classes *cl, const ppl_stage_dp_cache *dp)
{
    for (size_t i = 0; dp && i < cl->n; i++) {
        ppl_stage_class *k = &cl->items[i];
        const ppl_stage_class *e = k->env || k->dp_ready ? NULL : dp_entry(dp, k);
        if (e)
            dp_copy(k, e);
    }
}

void ppl_classes_dp_keep(const ppl_classes *cl, ppl_stage_dp_cache *dp)
{
    for (size_t i = 0; dp && i < cl->n; i++) {
        const ppl_stage_class *k = &cl->items[i];
        if (k->env || !k->dp_ready)
            continue;
        ppl_stage_class *e = dp_entry(dp, k);
        if (!e && dp->n < PPL_STAGE_DP_CACHE) {
            e = &dp->items[dp->n++];
            *e = *k;
            e->count = 1;
            continue;
        }
        /* what the entry knows, the class knows too (and of the same group) */
        if (e && (k->dp_ready & e->dp_ready) == e->dp_ready && k->dp_ready != e->dp_ready &&
            (k->dp_group == e->dp_group || !(e->dp_ready & ~0x1c7)))
            dp_copy(e, k);
    }
}

void ppl_classes_free(ppl_classes *cl)
{
    if (cl->items != cl->inline_items)
        free(cl->items);
    cl->items = cl->inline_items;
    cl->n = 0;
}

/* The data-parallel times' slot in a class's cache: 0-2 ZeRO 0, 1-2, 3 over every
 * rank; 3-5 the same in sharding groups; 6-11 the same with the fp8 weights kept
 * and gathered in fp8 (ppl_low_params). */
int ppl_dp_kind(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    return (c->zero == 0 ? 0 : c->zero <= 2 ? 1 : 2) + (ppl_config_shard_replicas(c) > 1 ? 3 : 0) +
           (ppl_low_params(&ctx->memory, c) ? 6 : 0);
}

/* Bytes per parameter a gather moves: 16-bit, but the weights kept in fp8 alone
 * at the format's bytes (Megatron-Core --fp8-param-gather: "perform the param
 * all-gather in fp8"). */
double ppl_gather_bytes(const ppl_eval_ctx *ctx, const ppl_config *c, double params, double low)
{
    const double w = ctx->memory.weight_bytes;
    if (params <= 0.0 || low <= 0.0)
        return w;
    return (w * (params - low) + ppl_config_gemm_bytes(c) * low) / params;
}

bool ppl_class_dp_kept(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_stage_class *k)
{
    if (ppl_config_shard_replicas(c) > 1 && k->dp_group != ppl_config_shard_group(c))
        return false; /* another group's (ppl_class_dp) */
    return (k->dp_ready & (1 << ppl_dp_kind(ctx, c))) != 0;
}

/* Data-parallel times of one class under the configuration's ZeRO stage, cached
 * in the class by kind (they depend on its parameters, the ZeRO stage, the
 * sharding group and the gather's bytes only). */
void ppl_class_dp(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                  ppl_stage_class *k, const ppl_memory *mem)
{
    /* kinds 0-2 and 6-8 shard over every rank, 3-5 and 9-11 in the groups of
     * k->dp_group */
    if (ppl_class_dp_kept(ctx, c, k))
        return;
    const bool grouped = ppl_config_shard_replicas(c) > 1;
    const int kind = ppl_dp_kind(ctx, c), z = kind % 3, low = kind >= 6;
    if (grouped && k->dp_group != ppl_config_shard_group(c)) { /* another group's */
        k->dp_ready &= 0x1c7; /* kinds 0-2 and 6-8 */
        k->dp_group = ppl_config_shard_group(c);
    }
    double dense = mem->params - mem->params_expert;
    const double low_dense = mem->params_low - mem->params_low_expert;
    const double gb_dense = ppl_gather_bytes(ctx, c, dense, low_dense),
                 gb_expert = ppl_gather_bytes(ctx, c, mem->params_expert, mem->params_low_expert);
    {
        double reduce, gather, last, r2, g2, l2;
        ppl_dp_times(ctx, c, &l->g_shard, &l->g_replicas, dense, gb_dense, &reduce, &gather, &last,
                     NULL);
        ppl_dp_times(ctx, c, &l->g_eshard, &l->g_ereplicas, mem->params_expert, gb_expert, &r2,
                     &g2, &l2, NULL);
        reduce += r2;
        gather += g2;
        if (l2 > last)
            last = l2;
        if (z < 2 && c->pp > 1 && ctx->model->tied_embeddings && (k->is_first || k->is_last)) {
            double tied = (double)ctx->model->vocab * (double)ctx->model->hidden / (double)c->tp;
            reduce += ppl_collective_count(&ctx->net, PPL_OP_ALLREDUCE, &l->g_tie,
                                           tied * ppl_dp_grad_bytes(ctx, c), 1, NULL);
        }
        k->dp_reduce[kind] = reduce;
        k->dp_gather[kind] = gather;
        k->dp_last[kind] = last;
    }
    const int z3 = grouped + 2 * low;
    if (z == 2)
        k->z3_ag[z3] = k->z3_rs[z3] = 0.0;
    if (z == 2 && l->g_shard.n > 1 && k->layers > 0) { /* the expert group is a part of it */
        double layer_params = dense / (double)k->layers;
        /* per tensor: as many collectives, each a share of the layer (each pays
         * the collective's latency; the bytes are the layer's either way) */
        double n = 1.0, nr = 1.0;
        if (ctx->stack.zero3_per_tensor)
            ppl_zero3_per_tensor(ctx->model, c->tp, &n, &nr);
        double bus = ctx->stack.zero3_bus;
        /* (a layer whose every tensor stays whole is not gathered) */
        k->z3_ag[z3] = n > 0.0 ? ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_shard,
                                                      layer_params * gb_dense / n / bus, n, NULL)
                               : 0.0;
        k->z3_rs[z3] =
            ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_shard,
                                 layer_params * ppl_dp_grad_bytes(ctx, c) / nr / bus, nr, NULL);
        /* a MoE layer's local experts are sharded over the expert-data-parallel
         * group (edp = tp*cp*dp/(etp*ep) ranks) and gathered and reduce-scattered over it as the
         * dense weights are over theirs; averaged over the class's layers */
        if (k->moe_layers > 0 && mem->params_expert > 0) {
            double expert = mem->params_expert / (double)k->moe_layers;
            double share = (double)k->moe_layers / (double)k->layers;
            if (n > 0.0)
                k->z3_ag[z3] +=
                    share * ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_eshard,
                                                 expert * gb_expert / n / bus, n, NULL);
            const double grads = expert * ppl_dp_grad_bytes(ctx, c);
            k->z3_rs[z3] += share * ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER,
                                                         &l->g_eshard, grads / nr / bus, nr, NULL);
        }
    }
    k->dp_ready |= 1 << kind;
}

/*
 * Tensor-parallel communication that Transformer Engine's userbuffers overlap
 * leaves exposed, one layer and microbatch (Megatron-Core --tp-comm-overlap,
 * which needs sequence parallelism: megatron/training/arguments.py:199-200 at
 * core_r0.8.0; NeMo and Megatron-Bridge turn it on in their recipes).  Its
 * default methods (transformer_engine/pytorch/module/base.py, initialize_ub, TE
 * 1.x): ring exchange for the all-gathers before QKV and fc1 and before the
 * projection's and fc2's input-gradient GEMMs; a pipeline of 4 splits for the
 * reduce-scatters after the projection and fc2; bulk overlap for the input-
 * gradient reduce-scatters of QKV and fc1, beside their weight-gradient GEMMs.
 * With G the GEMM, A the all-gather's time and R the reduce-scatter's over t ranks:
 *  - ring exchange: t steps, each computing 1/t of G while the next of the t - 1
 *    chunks moves, the first chunk local: exposed max(0, A - G (t-1)/t);
 *  - pipeline of n splits: each split's reduce-scatter under the next split's
 *    GEMM, the last one's after it: R/n + (n-1)/n max(0, R - G);
 *  - bulk: the collective beside the whole GEMM: max(0, R - G).
 * A dense layer pairs attention (QKV, projection) and MLP (fc1, fc2); a MoE layer
 * only its attention.  `forwards` counts the forward's collectives again where
 * full recomputation repeats them.
 */
#define TE_PIPELINE_SPLITS 4.0
static double tp_exposed_overlapped(const ppl_layer_time *lt, double ag, double rs, double t,
                                    double forwards)
{
    const double r = (t - 1.0) / t, n = TE_PIPELINE_SPLITS;
    double fwd = 0.0, bwd = 0.0;
    for (int col = PPL_GEMM_QKV; col <= PPL_GEMM_FC1; col += 2) {
        const double g_col = lt->tp_gemm_s[col], g_row = lt->tp_gemm_s[col + 1];
        if (g_col <= 0.0 && g_row <= 0.0)
            continue; /* a MoE layer's MLP: the dispatcher's collectives */
        fwd += ppl_pos(ag - r * g_col) + rs / n + (n - 1.0) / n * ppl_pos(rs - g_row);
        bwd += ppl_pos(ag - r * g_row) + ppl_pos(rs - g_col);
    }
    return forwards * fwd + bwd;
}

/* One stage of a class, per microbatch. */
void ppl_stage_eval(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                    const ppl_stage_class *k, ppl_stage_time *s)
{
    const ppl_stack_opts *so = &ctx->stack;
    const double nd = (double)(k->layers - k->moe_layers), nm = (double)k->moe_layers;
    const double layers = (double)k->layers;
    memset(s, 0, sizeof *s);
    /* with block recomputation only a share f of the layers is recomputed */
    const double f = ppl_recomputed_share(c, k->layers);
    const double tp_count =
        mi->tp_count - (c->recompute == PPL_RECOMPUTE_FULL ? 2.0 * (1.0 - f) : 0.0);
    s->forward =
        nd * mi->dense.forward_s + nm * mi->moe.forward_s + (k->is_last ? mi->head.forward_s : 0.0);
    s->backward = nd * (mi->dense.backward_s - (1.0 - f) * mi->dense.recompute_s) +
                  nm * (mi->moe.backward_s - (1.0 - f) * mi->moe.recompute_s) +
                  (k->is_last ? mi->head.backward_s : 0.0);
    s->wgrad =
        nd * mi->dense.wgrad_s + nm * mi->moe.wgrad_s + (k->is_last ? mi->head.wgrad_s : 0.0);
    if (k->bf16_layers > 0) { /* those layers at their bf16 times, dense ones first */
        const double bd = (double)(k->bf16_layers < k->layers - k->moe_layers
                                       ? k->bf16_layers
                                       : k->layers - k->moe_layers),
                     bm = (double)k->bf16_layers - bd;
        const ppl_layer_time *lo[2] = {&mi->dense, &mi->moe}, *hi[2] = {&mi->dense16, &mi->moe16};
        const double n[2] = {bd, bm};
        for (int i = 0; i < 2; i++) {
            if (n[i] <= 0.0)
                continue;
            s->forward += n[i] * (hi[i]->forward_s - lo[i]->forward_s);
            s->backward += n[i] * (hi[i]->backward_s - (1.0 - f) * hi[i]->recompute_s -
                                   lo[i]->backward_s + (1.0 - f) * lo[i]->recompute_s);
            s->wgrad += n[i] * (hi[i]->wgrad_s - lo[i]->wgrad_s);
        }
    }
    /* Megatron-LM's releases before February 2022 (and later ones in fp16, where
     * the fusion needs fp32 accumulation) add each parameter's gradient into its
     * main gradient after every microbatch's backward, one kernel per tensor
     * (megatron/model/distributed.py _make_param_hook, main_grad.add_, tag v2.5):
     * read the gradient (2 B) and the main gradient, write the sum, at HBM
     * bandwidth; gradient-accumulation fusion (commit 83b1e42f30, on by default,
     * and Megatron-Core's) has the weight-gradient GEMM accumulate in place */
    if (ppl_stack_grad_accum_unfused(so, c)) {
        double dense, expert;
        ppl_stage_params(&mi->mem, k->is_first, k->is_last, nd, nm, &dense, &expert);
        s->backward += (dense + expert) * (2.0 + 2.0 * ppl_dp_grad_bytes(ctx, c)) /
                       (ctx->topo->gpu.hbm_bandwidth_bps * ctx->eff.hbm);
    }
    s->compute = s->forward + s->backward;
    /* a MoE layer's tensor-parallel collectives are its attention's (half of a
     * dense layer's); its experts' are the dispatcher's, over the etp group */
    s->tp = (nd + 0.5 * nm) * tp_count * mi->tp_one;
    /* CP: each layer's exchange under its own attention core (compute.c); full
     * recomputation repeats the forward's */
    const double forwards = 1.0 + (c->recompute == PPL_RECOMPUTE_FULL ? f : 0.0);
    s->cp = layers * (forwards * mi->cp.fwd_s + mi->cp.bwd_s);
    double cp_exposed =
        nd * ppl_cp_exposed(&mi->cp, mi->dense.attention_s, mi->dense.attention_backward_s,
                            forwards) +
        nm * ppl_cp_exposed(&mi->cp, mi->moe.attention_s, mi->moe.attention_backward_s, forwards);
    s->ep = nm * tp_count * mi->ep_one + nm * 0.5 * tp_count * mi->etp_one;
    /* the overlapped share hides under the paired microbatch's compute */
    double ep_hidden = mi->ep_hidden_share * s->ep;
    if (ep_hidden > mi->ep_hidden_share * s->compute)
        ep_hidden = mi->ep_hidden_share * s->compute;
    s->ep_hidden = ep_hidden;
    double sends = (double)(!k->is_last + !k->is_first) * (double)c->vp;
    /* a send to a stage on another pool crosses the link between the pools */
    double cross = (double)k->cross_sends * (double)c->vp;
    s->pp = c->pp > 1 ? (sends - cross) * mi->pp_one + cross * k->cross_send_s : 0.0;
    /* ZeRO-3: each layer's weights gathered forward and backward, gradients
     * reduce-scattered, every microbatch; prefetching hides what the layer's
     * compute covers */
    if (c->zero >= 3 && k->layers > 0) {
        double per_f = so->zero3_overlap * s->forward / layers,
               per_b = so->zero3_overlap * s->backward / layers;
        const int g = (ppl_config_shard_replicas(c) > 1) + 2 * ppl_low_params(&ctx->memory, c);
        const double ag = k->z3_ag[g], rs = k->z3_rs[g];
        /* gathers in the backward: the backward's own, and the recomputed forward's
         * where the stack releases the weights between them (stack.h) */
        const bool regather = so->zero3_regather && c->recompute == PPL_RECOMPUTE_FULL;
        const double ag_b = ag * (1.0 + (regather ? ppl_recomputed_share(c, k->layers) : 0.0));
        s->zero3 = layers * (ag + ag_b + rs);
        double z3_exposed = layers * (ppl_pos(ag - per_f) + ppl_pos(ag_b + rs - per_b));
        s->exposed += z3_exposed + so->overlap_cost * (s->zero3 - z3_exposed);
    }
    /* Megatron-LM 2022-23 launch the backward's reduction of a column-parallel
     * layer's input gradient (an all-reduce, a reduce-scatter under sequence
     * parallelism) before its weight-gradient GEMM and wait for it after
     * (megatron/mpu/layers.py LinearWithGradAccumulationAndAsyncCommunication.
     * backward, lines 272-293 at commit 55ba1f7; core/tensor_parallel/layers.py
     * in 2023): a dense layer's two (QKV, fc1) hide under those GEMMs, a MoE
     * layer's one (QKV); under sequence parallelism the input's all-gather the
     * weight gradient needs runs again under the input-gradient GEMM, hidden too */
    s->tp_async = 0.0;
    if (so->tp_async_backward && c->tp > 1) {
        const double one = mi->tp_reduce_one;
        s->tp_async =
            nd * ppl_min(2.0 * one, mi->dense.wgrad_col_s) + nm * ppl_min(one, mi->moe.wgrad_col_s);
    }
    double tp_hidden = s->tp_async;
    if (ppl_stack_tp_hidden(so, c)) {
        const double ag = mi->tp_one - mi->tp_reduce_one, rs = mi->tp_reduce_one;
        const double t = (double)c->tp;
        const double fwds = 1.0 + (c->recompute == PPL_RECOMPUTE_FULL ? f : 0.0);
        /* the layers kept in bf16 (dense ones first) at their own GEMMs' times */
        const double bd = ppl_min((double)k->bf16_layers, nd), bm = (double)k->bf16_layers - bd;
        const double n[4] = {nd - bd, bd, nm - bm, bm};
        const ppl_layer_time *lt[4] = {&mi->dense, &mi->dense16, &mi->moe, &mi->moe16};
        double tp_exposed = 0.0;
        for (int i = 0; i < 4; i++)
            if (n[i] > 0.0)
                tp_exposed += n[i] * tp_exposed_overlapped(lt[i], ag, rs, t, fwds);
        tp_hidden = ppl_pos(s->tp - tp_exposed);
    }
    s->tp_exposed = s->tp - tp_hidden;
    const double pp_overlap = ppl_stack_pp_overlap(so, c);
    double hidden = tp_hidden + pp_overlap * s->pp + (s->cp - cp_exposed) + ep_hidden;
    s->exposed += (s->tp - tp_hidden) + cp_exposed + (s->ep - ep_hidden) +
                  (1.0 - pp_overlap) * s->pp + so->overlap_cost * hidden;
    /* the host launches every operation of the stage's layers (ppl_layer_host_ops);
     * the GPU runs them as fast as they come or waits: when a layer's kernels and
     * communication take less than its launches, the launches set its time (the
     * MoE dispatcher synchronises with the host every layer, so the host cannot
     * queue a layer ahead) */
    s->host = so->host_op_s * (nd * (mi->dense.host_ops + f * mi->dense.host_ops_recompute) +
                               nm * (mi->moe.host_ops + f * mi->moe.host_ops_recompute));
    s->host_wait = ppl_pos(s->host - (s->compute + s->exposed));
    s->total = s->compute + s->exposed + s->host_wait;
}

/* A stage's passes (pipeline.h): W its weight-gradient GEMMs; the communication
 * left exposed shared between F and B as a layer's collectives are, 2 of tp_count
 * in the forward (the header: 2 of 4 TP collectives and half the EP and PP
 * transfers; 2 of 6 with full recomputation, whose forward runs again in B).  FB is
 * the stage's time per microbatch; under DualPipe's F&B it hides the all-to-all,
 * which the passes run alone show again (what it hid, less the slowdown of hiding). */
void ppl_stage_passes_of(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                         const ppl_stage_time *s, ppl_passes *out)
{
    double alone = s->total;
    if (ppl_schedule_of(c->schedule)->overlaps_fb)
        alone += (1.0 - ctx->stack.overlap_cost) * s->ep_hidden;
    out->w_s = s->wgrad;
    /* the host's wait a third in the forward, whose launches are half the backward's */
    /* (what the backward hid of its own reductions is the backward's: the forward's
     * share is of the exposed communication with it) */
    out->f_s = s->forward + 2.0 / mi->tp_count * (alone - s->compute - s->host_wait + s->tp_async) +
               s->host_wait / 3.0;
    out->b_s = alone - out->f_s - out->w_s;
    out->fb_s = s->total;
}

double ppl_stage_time_cached(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                             const ppl_micro *mi, int64_t stage, int64_t layers, int64_t moe_layers,
                             ppl_memory *memory, ppl_stage_dp_cache *dp)
{
    ppl_stage_class local, *k = dp && c->zero >= 3 ? dp_find(dp, stage, layers, moe_layers) : NULL;
    ppl_stage_time s;
    if (!k) {
        k = dp && c->zero >= 3 && dp->n < PPL_STAGE_DP_CACHE ? &dp->items[dp->n++] : &local;
        class_init(k, c, stage, layers, moe_layers);
    }
    ppl_memory mem;
    ppl_memory_at(c, &ctx->memory, &mi->mem, ctx->topo->gpu.memory_bytes, stage, layers, moe_layers,
                  &mem);
    if (c->zero >= 3)
        ppl_class_dp(ctx, c, l, k, &mem);
    ppl_stage_eval(ctx, c, mi, k, &s);
    if (memory)
        *memory = mem;
    return s.total;
}
