/*
 * compute.c - GPU time of a layer's forward and backward pass.
 *
 * FLOPs (Korthikanti et al. 2022, §5, Eq.7; Narayanan et al. SC'21 §3.3): per token
 * a forward pass costs 2 FLOPs per GEMM weight and 4sh for the attention core
 * (QK^T and the weighted sum of values, 2sh each, over all s keys); backward costs
 * twice the forward.  Recomputation adds a forward: of the whole layer (full, as in
 * Narayanan Eq.3) or of the attention core (selective).  Executed work differs from
 * the model count in one place: flash attention skips the masked half of a causal
 * score matrix (Dao 2023), and its backward recomputes the scores (5 matrix
 * products instead of 4: 2.5x the forward).
 *
 * Time: GEMM FLOPs / (peak x efficiency), where efficiency = gemm x w/(w + w_half)
 * with w = hidden/tp, the width each GPU's GEMMs keep after tensor-parallel
 * splitting: narrow GEMMs run further from peak.  Experts are split by the expert
 * tensor-parallel size etp instead (Megatron-Core, parallel_state.py): each rank
 * holds 1/etp of a local expert and, after the dispatcher's all-gather over the
 * etp group (moe/token_dispatcher.py MoEAlltoAllTokenDispatcher, steps 3-4), runs
 * the T etp/tp token copies (x top_k) routed to it: 2 (T etp/tp) k W/etp = 2 T k W/tp
 * FLOPs, the same for every etp (as is the activation function's traffic); only
 * the width, hidden/etp, differs.  fp8 (and mxfp8, nvfp4) speed the linear
 * layers' GEMMs only; the attention core, the output layer and element-wise
 * kernels stay at 16-bit rates.  Element-wise
 * kernels (norms, residual adds, dropout, activation functions, rotary embedding,
 * unfused softmax) are bound by HBM: bytes moved / (bandwidth x hbm).
 */
#include "cost/compute.h"

#include "base/minmax.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ppl_gpu_efficiency_for(const ppl_topology *t, const ppl_constants *k, ppl_gpu_efficiency *out)
{
    /* the kind's generation (gpu.c): the A100 constants for Ampere, the H100 ones
     * (fractions of the kind's own peaks) for every later kind, but Blackwell's
     * GEMMs, fitted on their own (only 2025+ stacks ran them: fp8 and mxfp8 on
     * Llama and Qwen3, 16-bit on two Qwen3-235B runs and every run's output
     * layer), so that Blackwell runs do not move H100's GEMM fractions.  Flash
     * attention's efficiency is fitted on H100 at 4,096 tokens and heads 128 wide,
     * and follows FlashAttention-2's published benchmark to other lengths, widths
     * and generations (gpu.c; ppl_layer_time_of).  Unfused attention's batched GEMMs (QK^T and the weighted sum,
     * a head's s x d x s at a time over b x a/t heads: thousands of tiles) run
     * cuBLAS's tensor-core GEMM kernels at the generation's 16-bit GEMM fraction,
     * under the roofline of their scores' bytes (ppl_layer_time_of), which binds
     * them on every GPU at heads of 128 or less and 2K tokens. */
    const ppl_kernels gen = ppl_gpu_kernels(&t->gpu, NULL);
    const bool ampere = gen == PPL_KERNELS_AMPERE;
    out->gemm = ampere ? k->a100_gemm : gen == PPL_KERNELS_BLACKWELL ? k->b200_gemm : k->h100_gemm;
    out->gemm_fp8 = ampere                         ? 0.0
                    : gen == PPL_KERNELS_BLACKWELL ? k->b200_gemm_fp8
                                                   : k->h100_gemm_fp8;
    /* Blackwell Ultra's at their own multiple of Blackwell's: the same datasheet
     * peaks (dense 16-bit 2.5 and fp8 5 PFLOP/s a GB300 as a GB200), but
     * Megatron-Bridge's 25.11 tables measure the same layouts 16-19% faster on
     * GB300; a power budget of 1,400 W to GB200's 1,200 W holds its clocks
     * higher, and a clock bound by power (P ~ f^3) explains about 5% of it; the
     * runs fix the rest (b300_sustained) */
    if (t->gpu.spec && t->gpu.spec->ultra) {
        out->gemm = ppl_min(1.0, out->gemm * k->b300_sustained);
        out->gemm_fp8 = ppl_min(1.0, out->gemm_fp8 * k->b300_sustained);
    }
    out->width_half = k->width_half;
    out->attention = k->h100_attention; /* at 4,096 tokens and heads 128 wide on Hopper */
    out->attention_kernel = PPL_ATTN_FA2; /* the stack's, once known (evalctx.c) */
    out->bmm = out->gemm;
    /* element-wise kernels at what streaming kernels measure on the kind (gpu.c) */
    ppl_stream_figures stream;
    (void)ppl_gpu_stream(&t->gpu, &stream);
    out->hbm = stream.share;
}

void ppl_layer_work_of(const ppl_model *m, const ppl_config *c, bool moe, ppl_layer_work *w)
{
    const double t = (double)c->tp, h = (double)m->hidden, a = (double)m->heads;
    const double s = (double)m->seq_len, T = (double)c->mbs * s / (double)c->cp;
    ppl_layer_shape shape;
    ppl_layer_shape_of(m, c->tp, &shape);
    const double kvd = shape.kv_cols;
    double weights = shape.attn_weights; /* QKV and projection */
    double act_bytes;                    /* activation function, per token */
    w->skew_gemm_flops = 0.0;
    /* the activation function reads fc1's outputs and writes its result, 16-bit:
     * 4 B an inner column, 6 B when gated (gate and up read) */
    const double act_per_col = 2.0 * (shape.fc1_outputs + 1.0);
    if (moe) {
        double k = (double)m->moe.top_k;
        /* each token through k experts; the router's GEMM split as its input is */
        weights += k * shape.expert_weights + shape.router / t + shape.shared_weights;
        act_bytes = act_per_col * (k * shape.expert_cols + shape.shared_cols);
        /* the step waits for the busiest expert's GPU: its share above the mean */
        double excess = ppl_moe_load_factor(m) - 1.0;
        w->skew_gemm_flops = 2.0 * T * excess * k * shape.expert_weights;
        act_bytes += excess * k * act_per_col * shape.expert_cols;
    } else {
        weights += shape.mlp_weights;
        act_bytes = act_per_col * shape.ffn_cols;
    }
    w->gemm_flops = 2.0 * T * weights;
    /* QKV (every projection but the output one, v_cols x h) and a dense MLP's fc1 */
    w->tp_gemm_flops[PPL_GEMM_QKV] = 2.0 * T * (shape.attn_weights - shape.v_cols * h);
    w->tp_gemm_flops[PPL_GEMM_PROJ] = 2.0 * T * shape.v_cols * h;
    w->tp_gemm_flops[PPL_GEMM_FC1] = moe ? 0.0 : 2.0 * T * h * shape.fc1_outputs * shape.ffn_cols;
    w->tp_gemm_flops[PPL_GEMM_FC2] = moe ? 0.0 : 2.0 * T * shape.ffn_cols * h;
    w->col_gemm_flops = w->tp_gemm_flops[PPL_GEMM_QKV] + w->tp_gemm_flops[PPL_GEMM_FC1];
    w->head_dim = shape.q_cols * t / a;
    w->expert_gemm_flops = 0.0;
    if (moe) {
        /* the same FLOPs as the etp layout counts them: T etp/tp tokens a rank,
         * 1/etp of each expert */
        const double etp = (double)ppl_config_etp(c);
        ppl_layer_shape e = shape; /* tp's, where etp is tp */
        if (ppl_config_etp(c) != c->tp)
            ppl_layer_shape_of(m, ppl_config_etp(c), &e);
        w->expert_gemm_flops = 2.0 * (T * etp / t) * (double)m->moe.top_k * e.expert_weights;
    }
    /* QK^T over the query (and key) columns, the weighted sum over the value ones */
    w->attn_model_flops = 2.0 * T * s * (shape.q_cols + shape.v_cols);
    w->attn_flops = c->flash_attention ? 0.5 * w->attn_model_flops : w->attn_model_flops;

    /* per token: two norms (read + write 2h each: 8h) and two residual adds (read
     * both, write the sum: 6h each); with hidden dropout, each add is Megatron's
     * fused bias-dropout-add (--bias-dropout-fusion, on by default: megatron/
     * arguments.py and model/transformer.py bias_dropout_add_fused_train, commit
     * 55ba1f7 of 2022; megatron/core/fusions/fused_bias_dropout.py since), which
     * writes the 1-byte mask in the same pass: 7h each */
    double outside = (8.0 + (m->dropout ? 14.0 : 12.0)) * h;
    if (c->sequence_parallel)
        outside /= t;
    double inside = act_bytes;
    if (m->attention == PPL_ATTENTION_MLA) /* rotate the rope parts of Q and of the shared K */
        inside += 2.0 * 2.0 * (double)m->mla.qk_rope_head_dim * (a / t + 1.0);
    else if (m->position_embedding == PPL_POSITION_ROPE)
        inside += 2.0 * 2.0 * (shape.q_cols + kvd); /* rotate Q and K: read and write */
    /* unfused attention, per score: the fused scale-mask-softmax reads and writes
     * it (4 B), dropout reads it and writes it and a 1-byte mask (5 B); backward,
     * dropout's reads the gradient and the mask and writes one (5 B), softmax's
     * reads the gradient and the probabilities and writes one (6 B) */
    w->scores = T * (a / t) * s;
    w->softmax_bytes = w->softmax_bytes_backward = 0.0;
    if (!c->flash_attention) {
        w->softmax_bytes = (m->dropout ? 9.0 : 4.0) * w->scores;
        w->softmax_bytes_backward = (m->dropout ? 11.0 : 6.0) * w->scores;
    }
    w->elementwise_bytes = T * (outside + inside) + w->softmax_bytes;
}

/* at a tensor-parallel split of `ways` (tp, or etp for the experts) */
static double gemm_efficiency_at(const ppl_model *m, int64_t ways, const ppl_gpu_efficiency *e,
                                 bool fp8)
{
    double w = (double)m->hidden / (double)ways;
    return (fp8 ? e->gemm_fp8 : e->gemm) * w / (w + e->width_half);
}

static double gemm_efficiency(const ppl_model *m, const ppl_config *c, const ppl_gpu_efficiency *e,
                              bool fp8)
{
    return gemm_efficiency_at(m, c->tp, e, fp8);
}

static double peak16(const ppl_topology *t, const ppl_config *c)
{
    return t->gpu
        .flops[c->precision == PPL_PRECISION_FP16 ? PPL_PRECISION_FP16 : PPL_PRECISION_BF16];
}

/*
 * Elements a layer casts to fp8 per microbatch and GPU, forward (the linear
 * layers' inputs: QKV and fc1 take the whole sequence's h columns, the projection
 * its v_cols, fc2 its inner columns) and backward (the gradients of their
 * outputs).  Under tensor-wise current scaling each is read once more for its
 * amax before the cast (Transformer Engine's Float8CurrentScaling; delayed
 * scaling takes the scale from the amax history and fuses the amax into the cast,
 * blockwise computes each tile's amax inside the cast kernel).  MoE layers: the
 * visited experts' MLPs, top_k per token, and the shared experts'.
 */
static void fp8_cast_elements(const ppl_model *m, const ppl_config *c, bool moe, double *fwd,
                              double *bwd)
{
    ppl_layer_shape s;
    ppl_layer_shape_of(m, c->tp, &s);
    const double sb = (double)c->mbs * (double)m->seq_len / (double)c->cp, h = (double)m->hidden;
    double mlp_in = h + s.ffn_cols, mlp_out = s.fc1_outputs * s.ffn_cols + h;
    if (moe) {
        const double k = (double)m->moe.top_k;
        mlp_in =
            k * (h / (double)c->tp + s.expert_cols) + (s.shared_cols > 0 ? h + s.shared_cols : 0);
        mlp_out = k * (s.fc1_outputs * s.expert_cols + h / (double)c->tp) +
                  (s.shared_cols > 0 ? s.fc1_outputs * s.shared_cols + h : 0);
    }
    *fwd = sb * (h + s.v_cols + mlp_in);
    *bwd = sb * (s.q_cols + 2.0 * s.kv_cols + h + mlp_out);
}

/*
 * The host's operations for one layer and microbatch, counted from Megatron-Core's
 * TransformerLayer with Transformer Engine modules (megatron/core/transformer/
 * transformer_layer.py, attention.py, mlp.py, moe/moe_layer.py, moe/router.py,
 * moe/token_dispatcher.py MoEAlltoAllTokenDispatcher, moe/experts.py
 * TEGroupedMLP), forward:
 *   attention: norm and QKV GEMM (TE's LayerNormLinear: 2), rotary embedding of q
 *     and k (2, with rotary positions), the attention kernel (1; unfused, the scores'
 *     batched GEMM, the fused scale-mask-softmax, dropout when trained with it, the
 *     weighted sum's batched GEMM: 3 or 4), projection GEMM (1), residual add (1):
 *     7 for a flash-attention layer with rotary positions;
 *   dense MLP: norm and fc1 (2), activation (1), fc2 (1), residual add (1): 5;
 *   MoE MLP: norm (1); router GEMM, score function, top-k, routing map and the
 *     load-balancing loss (6); the dispatcher's token counts (split sizes, their
 *     gather over the tensor- and expert-parallel group, the copy to the host it
 *     synchronises on: token_dispatcher.py "A synchronization is needed before
 *     expert parallel AlltoAll": 4); permutation, all-to-all and sort by local
 *     expert (3); per local expert (E/ep) its fc1 and fc2 GEMMs (TE's grouped
 *     linear runs one GEMM per expert), one activation (1); sort back, all-to-all,
 *     unpermutation (3); residual add (1): 19 + 2 E/ep; shared experts as a dense
 *     MLP without its norm (4);
 *   fp8, mxfp8, nvfp4: a quantisation before each linear layer (2 for attention,
 *     2 for an MLP); the routed experts' grouped linear layers quantise each
 *     local expert's input apart (expert_quantize_kernels), and pad the
 *     experts' token counts to the fp8 GEMMs' multiple and back (TE
 *     fp8_padding.py, fused_multi_row_padding: 2); tensor parallelism: the
 *     sequence-parallel all-gather and reduce-scatter (or the two all-reduces)
 *     around each block (2 each).
 * Backward: two of each GEMM (input and weight gradients) and one of everything
 * else, about twice the forward's count (2x), but the experts' quantisations: one
 * of each output gradient per local expert and grouped layer, as many as the
 * forward's (grouped_linear.py:297-432).  The figure a host spends on each is the
 * fitted host_op_s (constants.c).
 * CUDA graphs (ppl_config cuda_graphs) replay a captured region as one launch
 * forward and one backward: the attention block above (attn); the MoE MLP's norm,
 * router and token counts, 11 (moe_router, with moe_preprocess); a whole dense
 * layer (layer); the whole step (iteration: nothing a layer).
 */
/* Kernels that quantise one local expert's input to one grouped linear layer
 * (Transformer Engine 2.9 GroupedLinear, tex.split_quantize:
 * pytorch/csrc/extensions/cast.cpp:496-598): delayed scaling quantises every
 * expert at once in a multi-tensor kernel (:117-143), counted with the layer's
 * one quantisation; tensor-wise current scaling runs four per expert (zero the
 * amax, the amax, the scale, the cast with the transpose Hopper's fp8 GEMMs
 * need: csrc/quantizer.cpp:497-536, :337-340), the block-scaled recipes one
 * (MXFP8: quantizer.cpp:1091-1103; blockwise: :805-820); 16-bit none. */
static double expert_quantize_kernels(const ppl_config *c)
{
    if (c->precision == PPL_PRECISION_FP8)
        return c->fp8_recipe == PPL_FP8_TENSORWISE  ? 4.0
               : c->fp8_recipe == PPL_FP8_BLOCKWISE ? 1.0
                                                    : 0.0;
    return ppl_precision_low(c->precision) ? 1.0 : 0.0;
}

void ppl_layer_host_ops(const ppl_model *m, const ppl_config *c, bool moe, double *forward,
                        double *backward)
{
    const bool low = ppl_precision_low(c->precision);
    const double comm = c->tp > 1 ? 2.0 : 0.0, cast = low ? 2.0 : 0.0;
    const double rope = m->position_embedding == PPL_POSITION_ROPE ? 2.0 : 0.0;
    const double core = c->flash_attention ? 1.0 : (m->dropout ? 4.0 : 3.0);
    const double attn = 2.0 + rope + core + 2.0 + cast + comm;
    /* the experts' own quantisation kernels, forward */
    double quantize = 0.0, mlp;
    if (moe) {
        const double local = (double)m->moe.experts / (double)(c->ep > 0 ? c->ep : 1);
        const double per_expert = expert_quantize_kernels(c);
        quantize = per_expert > 0.0 ? 2.0 * local * per_expert : 0.0;
        mlp = 19.0 + 2.0 * local + (per_expert > 0.0 ? 2.0 : cast) + comm;
        if (m->moe.shared_experts > 0)
            mlp += 4.0 + cast;
    } else {
        mlp = 5.0 + cast + comm;
    }
    /* a captured region: 1 launch forward, 1 backward (ppl_config_check allows
     * only the scopes the layer has) */
    const ppl_cuda_graphs_row *g = ppl_cuda_graphs_of(c->cuda_graphs);
    if (g->step || g->layer) {
        *forward = *backward = g->layer ? 1.0 : 0.0;
        return;
    }
    double f_attn = attn, b_attn = 2.0 * attn, f_mlp = mlp, b_mlp = 2.0 * mlp;
    if (g->attn)
        f_attn = b_attn = 1.0;
    if (moe && g->router) {
        const double router = 11.0; /* norm, router, token counts */
        f_mlp -= router - 1.0;
        b_mlp -= 2.0 * router - 1.0;
    }
    *forward = f_attn + f_mlp + quantize;
    *backward = b_attn + b_mlp + quantize;
}

void ppl_layer_base_of(const ppl_model *m, const ppl_topology *t, const ppl_config *c,
                       const ppl_gpu_efficiency *e, bool moe, ppl_layer_base *b)
{
    /* the experts at tp's width: the work of every other part reads no expert
     * layout, and ppl_layer_time_finish counts the experts' at their own */
    ppl_config at_tp = *c;
    at_tp.etp = c->tp;
    ppl_layer_work w;
    ppl_layer_work_of(m, &at_tp, moe, &w);
    double p16 = peak16(t, c);
    /* fp8, mxfp8 and nvfp4 run the linear layers' GEMMs at their own peak and the
     * fp8 efficiency (an assumption for the block-scaled ones: no run measured
     * them); the attention core stays 16-bit (Megatron-Core applies the recipe
     * to Transformer Engine's linear layers) */
    const bool fp8 = ppl_precision_low(c->precision);
    b->pgemm = fp8 ? t->gpu.flops[c->precision] : p16;
    b->fp8 = fp8;
    b->gemm_flops = w.gemm_flops;
    b->skew_gemm_flops = w.skew_gemm_flops;
    b->tokens = (double)c->mbs * (double)m->seq_len / (double)c->cp; /* T, as work_of's */
    ppl_layer_shape shape;
    ppl_layer_shape_of(m, c->tp, &shape);
    b->expert_weights = shape.expert_weights;
    b->gemm_den = b->pgemm * gemm_efficiency(m, c, e, fp8);
    /* flash attention at the kernel's sequence (a rank's s/cp queries under context
     * parallelism) and head width, forward and backward, on the stack's kernels
     * (gpu.c); the backward does 2.5 times the forward's FLOPs (FlashAttention-2
     * §3.1: five GEMMs to the forward's two) */
    double flash_f, flash_b;
    ppl_gpu_attention_ratios(&t->gpu, e->attention_kernel, (double)m->seq_len / (double)c->cp,
                             w.head_dim, &flash_f, &flash_b);
    double attn = w.attn_flops / (p16 * (c->flash_attention ? e->attention * flash_f : e->bmm));
    if (!c->flash_attention) {
        /* unfused: QK^T writes every score and the weighted sum reads every
         * probability back, 2 B each (the softmax between them is element-wise
         * work, above).  A head's two GEMMs do 4 s^2 d FLOPs over 4 s^2 + 8 s d
         * bytes (scores, and Q, K, V, the output): d / (1 + 2d/s), 114 FLOP a
         * byte at d 128 and s 2048, under A100's ridge (312 TFLOP/s over 2.04
         * TB/s: 153) and H100's (989 over 3.35: 295).  So they are bound by HBM:
         * a roofline over the scores' bytes */
        attn = ppl_max(attn, 4.0 * w.scores / (t->gpu.hbm_bandwidth_bps * e->hbm));
    }
    b->attn_s = attn;
    b->elem_s = w.elementwise_bytes / (t->gpu.hbm_bandwidth_bps * e->hbm);
    /* backward element-wise: twice the forward's (each reads the output's gradient
     * and what the forward saved, and writes the input's), but the softmax's and
     * dropout's, counted as they run */
    b->elem_backward_s =
        (2.0 * (w.elementwise_bytes - w.softmax_bytes) + w.softmax_bytes_backward) /
        (t->gpu.hbm_bandwidth_bps * e->hbm);
    b->attn_backward_s =
        c->flash_attention ? 2.5 * w.attn_flops / (p16 * e->attention * flash_b) : 2.0 * attn;
    /* fp8 tensor-wise current scaling: the amax pass reads each 16-bit input */
    b->amax_f_s = b->amax_b_s = 0.0;
    if (c->precision == PPL_PRECISION_FP8 && c->fp8_recipe == PPL_FP8_TENSORWISE) {
        double nf, nb;
        fp8_cast_elements(m, c, moe, &nf, &nb);
        b->amax_f_s = 2.0 * nf / (t->gpu.hbm_bandwidth_bps * e->hbm);
        b->amax_b_s = 2.0 * nb / (t->gpu.hbm_bandwidth_bps * e->hbm);
    }
    b->wgrad_col_s = w.col_gemm_flops / (b->pgemm * gemm_efficiency(m, c, e, fp8));
    for (int i = 0; i < PPL_TP_GEMMS; i++)
        b->tp_gemm_s[i] = w.tp_gemm_flops[i] / (b->pgemm * gemm_efficiency(m, c, e, fp8));
    /* selective recomputation without flash attention: the attention core and its
     * softmax again */
    b->selective_s = attn + w.softmax_bytes / (t->gpu.hbm_bandwidth_bps * e->hbm);
    b->flops_model = 3.0 * (w.gemm_flops + w.attn_model_flops);
    b->recompute_flops = c->recompute == PPL_RECOMPUTE_FULL ? w.gemm_flops + w.attn_model_flops
                         : c->recompute == PPL_RECOMPUTE_SELECTIVE && !c->flash_attention
                             ? w.attn_model_flops
                             : 0.0;
}

void ppl_layer_time_finish(const ppl_model *m, const ppl_config *c, const ppl_gpu_efficiency *e,
                           bool moe, const ppl_layer_base *b, ppl_layer_time *out)
{
    /* the experts' GEMMs (and the busiest GPU's excess) at the expert tensor-parallel
     * width, the rest at the tensor-parallel one; their FLOPs as the etp layout
     * counts them: T etp/tp tokens a rank, 1/etp of each expert */
    double expert_gemm_flops = 0.0;
    if (moe) {
        const int64_t etp = ppl_config_etp(c);
        double weights = b->expert_weights;
        if (etp != c->tp) {
            ppl_layer_shape es;
            ppl_layer_shape_of(m, etp, &es);
            weights = es.expert_weights;
        }
        expert_gemm_flops =
            2.0 * (b->tokens * (double)etp / (double)c->tp) * (double)m->moe.top_k * weights;
    }
    double expert = expert_gemm_flops + b->skew_gemm_flops;
    double gemm = (b->gemm_flops - expert_gemm_flops) / b->gemm_den;
    if (expert > 0.0)
        gemm += expert / (b->pgemm * gemm_efficiency_at(m, ppl_config_etp(c), e, b->fp8));
    out->forward_s = gemm + b->attn_s + b->elem_s + b->amax_f_s;
    out->attention_s = b->attn_s;
    out->attention_backward_s = b->attn_backward_s;
    /* backward: input gradients (a GEMM as large as each forward one, the attention
     * core, element-wise) and weight gradients (one more GEMM each): W = gemm */
    out->wgrad_s = gemm;
    out->wgrad_col_s = b->wgrad_col_s;
    for (int i = 0; i < PPL_TP_GEMMS; i++)
        out->tp_gemm_s[i] = b->tp_gemm_s[i];
    out->recompute_s = c->recompute == PPL_RECOMPUTE_FULL ? out->forward_s
                       : c->recompute == PPL_RECOMPUTE_SELECTIVE && !c->flash_attention
                           ? b->selective_s
                           : 0.0;
    out->backward_s =
        2.0 * gemm + b->attn_backward_s + b->elem_backward_s + b->amax_b_s + out->recompute_s;
    out->flops_model = b->flops_model;
    out->flops_hardware = out->flops_model + b->recompute_flops;
    double ops_f, ops_b;
    ppl_layer_host_ops(m, c, moe, &ops_f, &ops_b);
    out->host_ops = ops_f + ops_b;
    /* full recomputation launches the forward again; selective, the attention's */
    out->host_ops_recompute = c->recompute == PPL_RECOMPUTE_FULL        ? ops_f
                              : c->recompute == PPL_RECOMPUTE_SELECTIVE ? 1.0
                                                                        : 0.0;
}

void ppl_layer_time_of(const ppl_model *m, const ppl_topology *t, const ppl_config *c,
                       const ppl_gpu_efficiency *e, bool moe, ppl_layer_time *out)
{
    ppl_layer_base b;
    ppl_layer_base_of(m, t, c, e, moe, &b);
    ppl_layer_time_finish(m, c, e, moe, &b, out);
}

/* Bytes the loss moves per logit, forward and backward.  Megatron's
 * vocabulary-parallel cross entropy (megatron/core/tensor_parallel/
 * cross_entropy.py at core_r0.8.0; mpu/cross_entropy.py before), forward: the
 * 16-bit logits cast to fp32 (read 2, write 4), their max (read 4), less the max
 * in place (8), exp in place (8), the sum (4), the division into the softmax it
 * keeps (8): 38 B; backward: the softmax times the output gradient in place (8)
 * and the cast back to 16 bits for the output layer's GEMMs (read 4, write 2):
 * 14 B.  Fused (Transformer Engine's Triton kernels, common/triton/
 * cross_entropy.py: online_softmax_kernel reads the 16-bit logits once for the
 * max and the sum, cross_entropy_kernel reads them again and writes the gradient,
 * element_mul_kernel scales it in place in the backward; flash-attn's xentropy
 * alike): 6 B forward, 4 B backward. */
#define LOSS_BYTES_FORWARD 38.0
#define LOSS_BYTES_BACKWARD 14.0
#define FUSED_LOSS_BYTES_FORWARD 6.0
#define FUSED_LOSS_BYTES_BACKWARD 4.0

void ppl_output_time_of(const ppl_model *m, const ppl_topology *t, const ppl_config *c,
                        const ppl_gpu_efficiency *e, bool fused_loss, ppl_layer_time *out)
{
    /* logits: 2 h V per token over the vocabulary-parallel output layer; the loss
     * passes over the logits as its kernels do (above) */
    const double T = (double)c->mbs * (double)m->seq_len / (double)c->cp;
    /* and, per multi-token-prediction module, the head once more and its 2h x h
     * projection (DeepSeek-V3 report §2.2) */
    const double heads = 1.0 + (double)m->mtp_layers, h = (double)m->hidden;
    double flops = heads * 2.0 * T * h * (double)m->vocab / (double)c->tp +
                   (double)m->mtp_layers * 2.0 * T * 2.0 * h * h / (double)c->tp;
    double p16 = peak16(t, c);
    /* Megatron keeps the output layer in 16-bit under fp8, mxfp8 and nvfp4 (it is
     * not a Transformer Engine layer; --fp8-output-proj, mxfp8 only, is off) */
    double gemm = flops / (p16 * gemm_efficiency(m, c, e, false));
    const double logits_per_s =
        (t->gpu.hbm_bandwidth_bps * e->hbm) / (heads * T * (double)m->vocab / (double)c->tp);
    out->forward_s =
        gemm + (fused_loss ? FUSED_LOSS_BYTES_FORWARD : LOSS_BYTES_FORWARD) / logits_per_s;
    out->backward_s =
        2.0 * gemm + (fused_loss ? FUSED_LOSS_BYTES_BACKWARD : LOSS_BYTES_BACKWARD) / logits_per_s;
    out->recompute_s = 0.0;
    out->attention_s = out->attention_backward_s = 0.0;
    out->wgrad_s = gemm; /* the output layer's weight gradient */
    out->wgrad_col_s = 0.0;
    memset(out->tp_gemm_s, 0, sizeof out->tp_gemm_s);
    out->flops_model = 3.0 * flops;
    out->flops_hardware = out->flops_model;
    out->host_ops = out->host_ops_recompute = 0.0; /* a handful against the layers' hundreds */
}

double ppl_optimizer_time(double params, const ppl_topology *t, const ppl_gpu_efficiency *e,
                          ppl_optimizer optimizer)
{
    /* Adam reads fp32 master, momentum, variance and gradient (16 bytes), writes the
     * first three and the 16-bit weights (14): 30 bytes per parameter; SGD 22 */
    double bytes = optimizer == PPL_OPTIMIZER_SGD ? 22.0 : 30.0;
    return params * bytes / (t->gpu.hbm_bandwidth_bps * e->hbm);
}
