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
 */
#include "cost/serve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* Weights one decode step reads for `tokens` tokens, whole model: all but the
 * input embedding's table (a row a token) and the MTP modules (not run), the
 * output layer's matrix even when tied (it computes the logits), and of the
 * routed experts the share the tokens touch. */
static double decode_weights(const ppl_model *m, const ppl_model_figures *f, double tokens)
{
    double w = f->params_total - f->params_embedding - f->params_mtp;
    if (m->tied_embeddings)
        w += (double)m->vocab * (double)m->hidden;
    if (m->has_moe) {
        ppl_layer_shape s;
        ppl_layer_shape_of(m, 1, &s);
        double routed = (double)m->moe.experts * s.expert_weights;
        w -= (double)f->moe_layers * routed * (1.0 - ppl_experts_touched(m, tokens));
    }
    return w;
}

/* Bytes a weight or a cached value takes in the engine's precision. */
static double value_bytes(ppl_precision precision)
{
    return precision == PPL_PRECISION_FP8 ? 1.0 : 2.0;
}

/* The ranks a tensor-parallel replica splits its keys and values over: the KV
 * heads while there are heads to split; an MLA latent, like a KV head beyond
 * kv_heads ranks, is held whole on each rank. */
static double kv_split(const ppl_model *m, int64_t tp)
{
    return m->attention == PPL_ATTENTION_MLA ? 1.0 : fmin((double)tp, (double)m->kv_heads);
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

/* The forward of `prompts` prompts of `tokens` tokens together, every layer at
 * tp, and two all-reduces a layer of their activations (Megatron's row-parallel
 * layers, as engines run them). */
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
        (double)prompts * (double)tokens * (double)m->hidden * value_bytes(l->precision);
    return dense_layers * dense.forward_s + moe_layers * moe.forward_s +
           all_reduces_s(ctx, l->tp, act, 2.0 * (double)m->layers);
}

void ppl_serve_cost(const ppl_eval_ctx *ctx, const ppl_serve_layout *l, const ppl_serve_workload *w,
                    ppl_serve_estimate *out)
{
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    const ppl_model_figures *f = &ctx->figures;
    memset(out, 0, sizeof *out);
    const double bytes = value_bytes(l->precision);
    const double tp = (double)l->tp, batch = (double)l->batch;
    const int64_t stages = l->pp > 1 ? l->pp : 1;
    const double pp = (double)stages;
    /* groups in flight: as many as there are stages, or sequences when fewer */
    const double groups = fmin(pp, batch);
    const double split = kv_split(m, l->tp);
    out->kv_bytes_per_token = ppl_kv_bytes_per_token(m, bytes);
    out->weight_bytes = f->params_total * bytes / tp;
    out->kv_bytes =
        batch * (double)(w->input_tokens + w->output_tokens) * out->kv_bytes_per_token / split;
    if (stages > 1) { /* the heaviest stage's: ceil(L / pp) layers */
        const double held = (double)((m->layers + stages - 1) / stages);
        const double layer = fmax(f->params_dense_layer, m->has_moe ? f->params_moe_layer : 0.0);
        out->weight_bytes =
            (held * layer + fmax(f->params_embedding, f->params_output)) * bytes / tp;
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
    int64_t k = PPL_SERVE_CHUNK_TOKENS / w->input_tokens;
    k = k < 1 ? 1 : k > l->batch ? l->batch : k;
    out->prefill_prompts = k;
    /* a prompt's share of a stage's time: its stages prefill other chunks meanwhile,
     * as many as there are groups in flight */
    out->prefill_share_s = (k == 1 ? prefill_time(ctx, l, w->input_tokens, 1)
                                   : prefill_time(ctx, l, w->input_tokens, k) / (double)k) /
                           groups;

    /* decode, a stage's step for its group of batch / pp sequences over its L / pp
     * layers, at the mean context over the response (prompt + half the output) */
    const double context = (double)w->input_tokens + 0.5 * (double)w->output_tokens;
    const double group = batch / groups;
    out->decode_read_bytes = (decode_weights(m, f, group) * bytes / tp +
                              group * context * out->kv_bytes_per_token / split) /
                             pp;
    out->decode_memory_s = out->decode_read_bytes / (t->gpu.hbm_bandwidth_bps * ctx->eff.hbm);
    const double peak = t->gpu.flops[l->precision] > 0.0 ? t->gpu.flops[l->precision]
                                                         : t->gpu.flops[PPL_PRECISION_BF16];
    const double gemm_eff = l->precision == PPL_PRECISION_FP8 ? ctx->eff.gemm_fp8 : ctx->eff.gemm;
    out->decode_compute_s = 2.0 * f->params_active * group / tp / pp / (peak * gemm_eff);
    out->decode_tp_s = all_reduces_s(ctx, l->tp, group * act_token, 2.0 * (double)m->layers / pp);
    out->decode_hop_s = stages > 1 ? hop_s(ctx, group * act_token) : 0.0;
    out->decode_step_s =
        pp * (fmax(out->decode_memory_s, out->decode_compute_s) + out->decode_tp_s) +
        (pp - 1.0) * out->decode_hop_s;
    /* every sequence's prompt is prefilled on the replica too, between decode
     * steps, in chunks */
    const double output = (double)w->output_tokens;
    out->tpot_s = out->decode_step_s + batch / output * out->prefill_share_s;
    out->tokens_per_s = batch / out->tpot_s;
}

bool ppl_serve_disagg_cost(const ppl_eval_ctx *ctx, int64_t prefill_tp,
                           const ppl_serve_layout *decode, const ppl_serve_workload *w,
                           int64_t gpus, ppl_serve_disagg *out)
{
    memset(out, 0, sizeof *out);
    out->prefill_tp = prefill_tp;
    /* a prefill replica holds the weights and the chunk's caches until sent */
    const int64_t chunk = PPL_SERVE_CHUNK_TOKENS / w->input_tokens;
    ppl_serve_layout p = {
        .tp = prefill_tp, .batch = chunk > 1 ? chunk : 1, .precision = decode->precision};
    ppl_serve_cost(ctx, &p, w, &out->prefill);
    ppl_serve_cost(ctx, decode, w, &out->decode);
    if (!out->prefill.fits || !out->decode.fits)
        return false;
    /* prompts a second a prefill replica takes; requests a second a decode one */
    const double rp = 1.0 / out->prefill.prefill_share_s;
    const double rd =
        (double)decode->batch / ((double)w->output_tokens * out->decode.decode_step_s);
    const int64_t tp_d = decode->tp;
    /* the rates match at P x rp = D x rd, P tp_p + D tp_d = gpus: the whole
     * replica counts around it */
    const double p_star = (double)gpus * rd / ((double)prefill_tp * rd + (double)tp_d * rp);
    double best = 0.0;
    for (int64_t P = (int64_t)p_star - 1; P <= (int64_t)p_star + 2; P++) {
        if (P < 1 || P * prefill_tp >= gpus)
            continue;
        const int64_t D = (gpus - P * prefill_tp) / tp_d;
        if (D < 1)
            continue;
        const double rate = fmin((double)P * rp, (double)D * rd);
        if (rate > best)
            best = rate, out->prefill_replicas = P, out->decode_replicas = D;
    }
    if (best <= 0.0)
        return false;
    /* each decode GPU receives its shard of the prompt's cache over the network */
    const double bytes =
        (double)w->input_tokens * out->decode.kv_bytes_per_token / kv_split(ctx->model, tp_d);
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
    const double bytes = value_bytes(precision);
    const double weights = ctx->figures.params_total * bytes / tp, fp8 = weights / bytes;
    const bool fp8_helps = precision != PPL_PRECISION_FP8 && fp8 < capacity &&
                           ctx->topo->gpu.flops[PPL_PRECISION_FP8] > 0.0;
    char help[128];
    if (fp8_helps)
        snprintf(help, sizeof help, "use --precision fp8 (%.1f GiB a GPU)", fp8 / gib);
    else if (stages)
        snprintf(help, sizeof help,
                 "give it more servers, for pipeline stages of a server each (expert "
                 "parallelism is not costed yet)");
    else
        snprintf(help, sizeof help,
                 "engines with pipeline stages or expert parallelism are not costed here yet");
    snprintf(buf, size,
             "no engine layout holds %s's weights and one sequence's cache: %.1f GiB of %s "
             "weights a GPU at tensor-parallel size %lld (the most within one NVLink domain, "
             "one server and the GPUs given) against %.1f GiB (90%% of the GPU); %s",
             ctx->model->name, weights / gib, precision == PPL_PRECISION_FP8 ? "fp8" : "bf16",
             (long long)tp_max, capacity / gib, help);
}
