/*
 * serve.c - one inference engine's layout costed (cost/serve.h).
 *
 * Decode is memory-bound at small batches: each step streams the weights its
 * tokens touch and the batch's KV cache through HBM once (the roofline view of
 * autoregressive decoding; Pope et al., "Efficiently Scaling Transformer
 * Inference", MLSys 2023, Sec. 2-3), and becomes compute-bound when the batch's
 * GEMM FLOPs (2 a weight a token) take longer.  Prefill is the prompt's forward
 * pass, as training's forward costs it (compute.c).
 *
 * Pipeline parallelism (pp stages, each tp GPUs on servers of their own) splits
 * the layers evenly (vLLM's get_pp_indices) and the batch into pp groups in
 * flight (or one a sequence when the batch is smaller), as vLLM's pipeline runs
 * one scheduled batch a stage: each stage decodes a group of batch / pp
 * sequences over its L / pp layers, so a group's
 * next token comes after pp such stage steps, and the pp - 1 sends of its
 * activations between stages (the stages work on the other groups meanwhile).
 * The stages are taken as equal: the output layer's and the embedding's reads,
 * on the last and first stage, are spread over them; the memory a GPU holds is
 * the heaviest stage's (ceil(L / pp) of the heaviest layer and the larger end).
 * Pipelining adds capacity, not speed: a token's time is that of the whole
 * model at tp, plus the sends.
 *
 * Expert parallelism (ep GPUs a replica) holds each routed expert whole on one
 * GPU, E / ep of them, and the rest of the model at tp in ep / tp attention
 * groups, each with a batch of its own: the layout of DeepSeek-V3's serving
 * (DeepSeek-V3 report, Sec. 3.4: attention TP4 with DP, routed experts EP32
 * for prefill and EP320 for decode) and of SGLang's and vLLM's DP attention.
 * Every MoE layer sends each token to its top_k experts and back (dispatch and
 * combine, the training model's ppl_ep_dispatch, as DeepEP sends them:
 * expert_all_to_alls_s); the experts a
 * decode step reads are those the whole replica's tokens touch, and the
 * busiest GPU's share of the expert GEMMs is the routing's load factor
 * (ppl_moe_load_factor).  Each group's tokens are split over its tp ranks for
 * the dispatch and gathered back after the combine, costed as the dense MLP's
 * all-reduce.
 */
#include "cost/serve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/minmax.h"
#include "cost/compute.h"
#include "hardware/comm.h"

/* vLLM's gpu_memory_utilization default (vllm/config: 0.9): the share of a GPU's
 * memory an engine takes for its weights, activations and KV cache. */
#define SERVE_MEMORY_SHARE 0.9

double ppl_kv_bytes_per_token(const ppl_model *m, double bytes)
{
    double per_layer = m->attention == PPL_ATTENTION_MLA
                           ? (double)(m->mla.kv_lora_rank + m->mla.qk_rope_head_dim)
                           : 2.0 * (double)m->kv_heads * (double)m->head_dim;
    return (double)m->layers * per_layer * bytes;
}

double ppl_experts_touched(const ppl_model *m, double tokens)
{
    if (!m->has_moe || m->moe.experts <= 0)
        return 1.0;
    double k = (double)m->moe.top_k / (double)m->moe.experts;
    return 1.0 - pow(1.0 - k, tokens);
}

size_t ppl_serve_shapes(const ppl_model *m, const ppl_topology *t, int64_t tp, int64_t gpus,
                        bool stages, ppl_serve_shape *out)
{
    size_t n = 0;
    if (tp < 1 || m->heads % tp != 0 || tp > gpus)
        return 0;
    out[n++] = (ppl_serve_shape){.pp = 1, .ep = 0};
    for (int64_t pp = 2; stages && tp == t->gpus_per_server && tp * pp <= gpus &&
                         pp <= t->servers && pp <= m->layers;
         pp *= 2)
        out[n++] = (ppl_serve_shape){.pp = pp, .ep = 0};
    for (int64_t ep = 2 * tp; m->has_moe && ep <= gpus && ep <= m->moe.experts; ep *= 2)
        if (m->moe.experts % ep == 0 && (ep <= t->gpus_per_server || ep % t->gpus_per_server == 0))
            out[n++] = (ppl_serve_shape){.pp = 1, .ep = ep};
    return n;
}

int64_t ppl_serve_replica_gpus(const ppl_serve_layout *l)
{
    return l->ep > 1 ? l->ep : l->tp * (l->pp > 1 ? l->pp : 1);
}

int64_t ppl_serve_attention_groups(const ppl_serve_layout *l)
{
    return l->ep > 1 ? l->ep / l->tp : 1;
}

int64_t ppl_serve_replica_batch(const ppl_serve_layout *l)
{
    return l->batch * ppl_serve_attention_groups(l);
}

/* The routed experts' weights, every MoE layer (the MTP modules' not counted),
 * and one token's: top_k of them. */
static double routed_weights(const ppl_model *m, const ppl_model_figures *f, double *per_token)
{
    *per_token = 0.0;
    if (!m->has_moe)
        return 0.0;
    ppl_layer_shape s;
    ppl_layer_shape_of(m, 1, &s);
    *per_token = (double)f->moe_layers * (double)m->moe.top_k * s.expert_weights;
    return (double)f->moe_layers * (double)m->moe.experts * s.expert_weights;
}

/* Weights one decode step reads, whole model, but the routed experts: all but
 * the input embedding's table (a row a token) and the MTP modules (not run),
 * and the output layer's matrix even when tied (it computes the logits). */
static double decode_dense_weights(const ppl_model *m, const ppl_model_figures *f, double routed)
{
    double w = f->params_total - f->params_embedding - f->params_mtp - routed;
    if (m->tied_embeddings)
        w += (double)m->vocab * (double)m->hidden;
    return w;
}

/* One token's attention FLOPs against `context` cached positions, every layer,
 * whole model: the scores QK^T and the weighted sum of the values, 2 FLOPs a
 * multiply-add over each head's query-key and value widths.  Under MLA the
 * engines absorb the key and value up-projections into the query and the
 * output (DeepSeek-V2 report, Sec. 2.1.3: W^UK into W^Q, W^UV into W^O), so each
 * head scores the cached latent and rotary key (kv_lora_rank +
 * qk_rope_head_dim wide) and sums the latent (kv_lora_rank): four times a
 * 128-wide head's work, which makes MLA's decode compute-bound where GQA's is
 * not. */
static double decode_attention_flops(const ppl_model *m, double context)
{
    double qk = (double)m->head_dim, v = (double)m->head_dim;
    if (m->attention == PPL_ATTENTION_MLA) {
        qk = (double)(m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
        v = (double)m->mla.kv_lora_rank;
    }
    return 2.0 * context * (double)m->heads * (qk + v) * (double)m->layers;
}

double ppl_serve_value_bytes(ppl_precision precision)
{
    return precision == PPL_PRECISION_FP8 ? 1.0 : 2.0;
}

/* The ranks a tensor-parallel replica splits its keys and values over: the KV
 * heads while there are heads to split; an MLA latent, like a KV head beyond
 * kv_heads ranks, is held whole on each rank. */
static double kv_split(const ppl_model *m, int64_t tp)
{
    return m->attention == PPL_ATTENTION_MLA ? 1.0 : ppl_min((double)tp, (double)m->kv_heads);
}

/* `count` all-reduces over a replica's tensor-parallel group: tp GPUs of one
 * server, or whole servers when tp spans several (engines such as vLLM run
 * tensor parallelism across nodes; the all-reduces then cross the network). */
static double all_reduces_s(const ppl_eval_ctx *ctx, int64_t tp, double bytes, double count)
{
    ppl_group g;
    const int64_t per = ctx->topo->gpus_per_server;
    if (tp <= per)
        ppl_group_servers(&ctx->net, 1, tp, &g);
    else
        ppl_group_servers(&ctx->net, (tp + per - 1) / per, per, &g);
    return ppl_collective_count(&ctx->net, PPL_OP_ALLREDUCE, &g, bytes, count, NULL);
}

/* One stage's activations to the next: a send between two servers (each stage
 * whole servers of its own). */
static double hop_s(const ppl_eval_ctx *ctx, double bytes)
{
    ppl_group g;
    ppl_group_servers(&ctx->net, 2, 1, &g);
    return ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, &g, bytes, 1.0, NULL);
}

/* ep > 1: the MoE layers' dispatch and combine of `tokens` tokens a GPU over
 * the replica's ep GPUs (a server's worth on each of its servers, or fewer in
 * one): the dispatch in the engine's precision, the combine in bf16 (DeepSeek's
 * inference system: FP8 dispatch, BF16 combine; open-infra-index day 6).
 * Decoding (`low_latency`), each of a token's top_k copies is a message of its
 * own, as DeepEP's low-latency kernels send them (RDMA to each expert's GPU, no
 * forwarding); prefilling, a token crosses to each remote server once and is
 * forwarded over NVLink there (its normal kernels). */
static double expert_all_to_alls_s(const ppl_eval_ctx *ctx, const ppl_serve_layout *l,
                                   double tokens, double dispatch_bytes, bool low_latency)
{
    const ppl_model *m = ctx->model;
    if (l->ep <= 1 || !m->has_moe)
        return 0.0;
    const int64_t per = ctx->topo->gpus_per_server;
    ppl_group g;
    if (l->ep <= per)
        ppl_group_servers(&ctx->net, 1, l->ep, &g);
    else
        ppl_group_servers(&ctx->net, (l->ep + per - 1) / per, per, &g);
    const ppl_dispatch d = {.top_k = (double)m->moe.top_k,
                            .node_limit = m->moe.router_node_limit,
                            .dedup = !low_latency,
                            .skew = ppl_moe_load_factor(m)};
    ppl_coll dispatch, combine;
    const double token = tokens * (double)m->hidden;
    ppl_ep_dispatch(&ctx->net, &g, token * dispatch_bytes, &d, &dispatch);
    ppl_ep_dispatch(&ctx->net, &g, token * 2.0, &d, &combine);
    return (double)ctx->figures.moe_layers * (dispatch.time_s + combine.time_s);
}

/* The forward of `prompts` prompts of `tokens` tokens together, every layer at
 * tp (the experts at ep, etp 1, when spread), two all-reduces a layer of their
 * activations (Megatron's row-parallel layers, as engines run them), and the
 * experts' all-to-alls. */
static double prefill_time(const ppl_eval_ctx *ctx, const ppl_serve_layout *l, int64_t tokens,
                           int64_t prompts)
{
    const ppl_model *m = ctx->model;
    ppl_model prompt = *m;
    prompt.seq_len = tokens;
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = c.tp = l->tp;
    c.pp = c.cp = c.ep = c.etp = c.vp = c.dp = 1;
    if (l->ep > 1 && m->has_moe)
        c.ep = l->ep, c.dp = l->ep / l->tp;
    c.mbs = c.global_batch = prompts;
    c.microbatches = 1;
    c.precision = l->precision;
    c.flash_attention = true;
    c.sequence_parallel = false;
    c.split = ppl_stage_split_default(m->layers, 1);
    ppl_layer_time dense, moe;
    ppl_layer_time_of(&prompt, ctx->topo, &c, &ctx->eff, false, &dense);
    const double moe_layers = (double)ctx->figures.moe_layers;
    const double dense_layers = (double)m->layers - moe_layers;
    if (m->has_moe)
        ppl_layer_time_of(&prompt, ctx->topo, &c, &ctx->eff, true, &moe);
    else
        moe.forward_s = 0.0;
    const double act =
        (double)prompts * (double)tokens * (double)m->hidden * ppl_serve_value_bytes(l->precision);
    return dense_layers * dense.forward_s + moe_layers * moe.forward_s +
           all_reduces_s(ctx, l->tp, act, 2.0 * (double)m->layers) +
           expert_all_to_alls_s(ctx, l, (double)prompts * (double)tokens / (double)l->tp,
                                ppl_serve_value_bytes(l->precision), false);
}

void ppl_serve_cost(const ppl_eval_ctx *ctx, const ppl_serve_layout *l, const ppl_serve_workload *w,
                    ppl_serve_estimate *out)
{
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    const ppl_model_figures *f = &ctx->figures;
    memset(out, 0, sizeof *out);
    const double bytes = ppl_serve_value_bytes(l->precision);
    const double tp = (double)l->tp, batch = (double)l->batch;
    const int64_t stages = l->pp > 1 ? l->pp : 1;
    const double pp = (double)stages;
    /* the GPUs each routed expert is split over (tp), or spread over whole (ep) */
    const bool spread = l->ep > 1 && m->has_moe;
    const double experts_over = spread ? (double)l->ep : tp;
    const double attention_groups = spread ? (double)(l->ep / l->tp) : 1.0;
    /* groups in flight: as many as there are stages, or sequences when fewer */
    const double groups = ppl_min(pp, batch);
    const double split = kv_split(m, l->tp);
    double routed_token;
    const double routed = routed_weights(m, f, &routed_token);
    out->kv_bytes_per_token = ppl_kv_bytes_per_token(m, l->kv_16bit ? 2.0 : bytes);
    /* the engines load no multi-token-prediction module unless they decode
     * speculatively (not costed here) */
    const double held = f->params_total - f->params_mtp;
    out->weight_bytes = ((held - routed) / tp + routed / experts_over) * bytes;
    out->kv_bytes =
        batch * (double)(w->input_tokens + w->output_tokens) * out->kv_bytes_per_token / split;
    if (stages > 1) { /* the heaviest stage's: ceil(L / pp) layers */
        const double held = (double)((m->layers + stages - 1) / stages);
        const double layer = ppl_max(f->params_dense_layer, m->has_moe ? f->params_moe_layer : 0.0);
        out->weight_bytes =
            (held * layer + ppl_max(f->params_embedding, f->params_output)) * bytes / tp;
        out->kv_bytes *= held / (double)m->layers;
    }
    out->capacity_bytes = SERVE_MEMORY_SHARE * t->gpu.memory_bytes - l->reserved_bytes;
    out->fits = out->weight_bytes + out->kv_bytes <= out->capacity_bytes;

    /* prefill: the prompt's forward through every layer, one sequence at tp (the
     * time to first token), and a chunk of as many prompts as PPL_SERVE_CHUNK_TOKENS
     * holds (at most the batch), as an engine prefills queued prompts */
    /* a prompt through every stage, and its activations sent between them */
    const double act_token = (double)m->hidden * bytes;
    out->prefill_s = prefill_time(ctx, l, w->input_tokens, 1);
    if (stages > 1)
        out->prefill_s += (pp - 1.0) * hop_s(ctx, (double)w->input_tokens * act_token);
    int64_t k = (l->chunk_tokens > 0 ? l->chunk_tokens : PPL_SERVE_CHUNK_TOKENS) / w->input_tokens;
    k = k < 1 ? 1 : k > l->batch ? l->batch : k;
    out->prefill_prompts = k;
    /* a prompt's share of a stage's time: its stages prefill other chunks meanwhile,
     * as many as there are groups in flight */
    out->prefill_share_s = (k == 1 ? prefill_time(ctx, l, w->input_tokens, 1)
                                   : prefill_time(ctx, l, w->input_tokens, k) / (double)k) /
                           groups;

    /* decode, a stage's step for its group of batch / pp sequences over its L / pp
     * layers, at the mean context over the response (prompt + half the output);
     * the routed experts read are those the replica's tokens touch, every
     * attention group's */
    const double context = (double)w->input_tokens + 0.5 * (double)w->output_tokens;
    const double group = batch / groups;
    const double touched = ppl_experts_touched(m, group * attention_groups);
    out->decode_read_bytes =
        ((decode_dense_weights(m, f, routed) / tp + routed * touched / experts_over) * bytes +
         group * context * out->kv_bytes_per_token / split) /
        pp;
    out->decode_memory_s = out->decode_read_bytes / (t->gpu.hbm_bandwidth_bps * ctx->eff.hbm);
    const double peak = t->gpu.flops[l->precision] > 0.0 ? t->gpu.flops[l->precision]
                                                         : t->gpu.flops[PPL_PRECISION_BF16];
    const double gemm_eff = l->precision == PPL_PRECISION_FP8 ? ctx->eff.gemm_fp8 : ctx->eff.gemm;
    /* a GPU's share of the tokens' GEMMs, the busiest expert GPU's above it, and
     * of their attention (heads split over tp, in 16-bit) */
    const double skew = spread ? (ppl_moe_load_factor(m) - 1.0) * routed_token : 0.0;
    out->decode_compute_s =
        (2.0 * (f->params_active + skew) / (peak * gemm_eff) +
         decode_attention_flops(m, context) / (t->gpu.flops[PPL_PRECISION_BF16] * ctx->eff.gemm)) *
        group / tp / pp;
    out->decode_tp_s = all_reduces_s(ctx, l->tp, group * act_token, 2.0 * (double)m->layers / pp);
    out->decode_hop_s = stages > 1 ? hop_s(ctx, group * act_token) : 0.0;
    out->decode_ep_s = expert_all_to_alls_s(ctx, l, group / tp, bytes, true);
    out->decode_step_s =
        pp * (ppl_max(out->decode_memory_s, out->decode_compute_s) + out->decode_tp_s) +
        (pp - 1.0) * out->decode_hop_s + out->decode_ep_s;
    /* every sequence's prompt is prefilled on the replica too, between decode
     * steps, in chunks */
    const double output = (double)w->output_tokens;
    out->tpot_s = out->decode_step_s + batch / output * out->prefill_share_s;
    out->tokens_per_s = batch * attention_groups / out->tpot_s;
}

ppl_serve_layout ppl_serve_prefill_layout(int64_t tp, int64_t ep, ppl_precision precision,
                                          const ppl_serve_workload *w)
{
    /* a prefill replica holds the weights and the chunk's caches until sent */
    const int64_t chunk = PPL_SERVE_CHUNK_TOKENS / w->input_tokens;
    return (ppl_serve_layout){
        .tp = tp, .ep = ep, .batch = chunk > 1 ? chunk : 1, .precision = precision};
}

bool ppl_serve_disagg_cost(const ppl_eval_ctx *ctx, const ppl_serve_layout *prefill,
                           const ppl_serve_estimate *prefill_cost, const ppl_serve_layout *decode,
                           const ppl_serve_estimate *decode_cost, const ppl_serve_workload *w,
                           int64_t gpus, ppl_serve_disagg *out)
{
    memset(out, 0, sizeof *out);
    out->prefill_tp = prefill->tp;
    out->prefill_ep = prefill->ep > 1 ? prefill->ep : 0;
    out->prefill = *prefill_cost;
    out->decode = *decode_cost;
    if (!out->prefill.fits || !out->decode.fits)
        return false;
    /* prompts a second a prefill replica takes (each attention group its
     * chunks); requests a second a decode one */
    const int64_t g_p = ppl_serve_replica_gpus(prefill), g_d = ppl_serve_replica_gpus(decode);
    const double rp =
        (double)(ppl_serve_replica_batch(prefill) / prefill->batch) / out->prefill.prefill_share_s;
    const double rd = (double)ppl_serve_replica_batch(decode) /
                      ((double)w->output_tokens * out->decode.decode_step_s);
    /* the rates match at P x rp = D x rd, P g_p + D g_d = gpus: the whole
     * replica counts around it */
    const double p_star = (double)gpus * rd / ((double)g_p * rd + (double)g_d * rp);
    double best = 0.0;
    for (int64_t P = (int64_t)p_star - 1; P <= (int64_t)p_star + 2; P++) {
        if (P < 1 || P * g_p >= gpus)
            continue;
        const int64_t D = (gpus - P * g_p) / g_d;
        if (D < 1)
            continue;
        const double rate = ppl_min((double)P * rp, (double)D * rd);
        if (rate > best)
            best = rate, out->prefill_replicas = P, out->decode_replicas = D;
    }
    if (best <= 0.0)
        return false;
    /* each decode GPU receives its shard of the prompt's cache over the network */
    const double bytes =
        (double)w->input_tokens * out->decode.kv_bytes_per_token / kv_split(ctx->model, decode->tp);
    ppl_group g;
    ppl_group_servers(&ctx->net, ctx->topo->servers > 1 ? 2 : 1, ctx->topo->servers > 1 ? 1 : 2,
                      &g);
    out->kv_transfer_s = ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, &g, bytes, 1.0, NULL);
    out->ttft_s = out->prefill.prefill_s + out->kv_transfer_s;
    out->tpot_s = out->decode.decode_step_s;
    out->tokens_per_s = best * (double)w->output_tokens;
    return true;
}

void ppl_serve_unfit(const ppl_eval_ctx *ctx, ppl_precision precision, int64_t tp_max, bool stages,
                     char *buf, size_t size)
{
    const double gib = 1073741824.0, tp = (double)tp_max;
    const double capacity = SERVE_MEMORY_SHARE * ctx->topo->gpu.memory_bytes;
    const double bytes = ppl_serve_value_bytes(precision);
    const double weights = (ctx->figures.params_total - ctx->figures.params_mtp) * bytes / tp,
                 fp8 = weights / bytes;
    const bool fp8_helps = precision != PPL_PRECISION_FP8 && fp8 < capacity &&
                           ctx->topo->gpu.flops[PPL_PRECISION_FP8] > 0.0;
    char help[128];
    if (fp8_helps)
        snprintf(help, sizeof help, "use --precision fp8 (%.1f GiB a GPU)", fp8 / gib);
    else if (stages)
        snprintf(help, sizeof help, "give it more servers, for pipeline stages of a server each%s",
                 ctx->model->has_moe ? " or its experts spread over more GPUs" : "");
    else
        snprintf(help, sizeof help, "rl's engines have no pipeline stages (serve weighs them)%s",
                 ctx->model->has_moe ? ", and its experts spread over the GPUs did not fit either"
                                     : "");
    snprintf(buf, size,
             "no engine layout holds %s's weights and one sequence's cache: %.1f GiB of %s "
             "weights a GPU at tensor-parallel size %lld (the most within one NVLink domain, "
             "one server and the GPUs given) against %.1f GiB (90%% of the GPU); %s",
             ctx->model->name, weights / gib, precision == PPL_PRECISION_FP8 ? "fp8" : "bf16",
             (long long)tp_max, capacity / gib, help);
}
