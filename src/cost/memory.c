/*
 * memory.c - per-GPU memory of a configuration, stage by stage.
 *
 * Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 * Transformer Models", §4.1 and Table 2).  Per layer, 16-bit activations, s tokens,
 * microbatch b, hidden h, a heads:
 *   attention  11sbh + 5as^2b: QKV input 2sbh, Q and K 4sbh, softmax output 2as^2b,
 *              its dropout mask as^2b and output 2as^2b, V 2sbh, projection input
 *              2sbh, dropout mask sbh
 *   MLP        19sbh: fc1 input 2sbh, GeLU input 8sbh, GeLU output 8sbh, mask sbh
 *   norms      4sbh: the inputs of the two layer norms
 * Tensor parallelism (t) splits what lies between the column- and row-parallel
 * GEMMs: sbh(10 + 24/t + 5as/(ht)); sequence parallelism splits the rest too:
 * (sbh/t)(34 + 5as/h).  Selective recomputation drops the 5as^2b of the attention
 * core; full recomputation keeps only the layer input, 2sbh (/t with SP).
 * Generalised term by term here:
 *   - grouped-query attention: K and V hold kv*d columns instead of h (d = h/a);
 *     with t > kv the K/V heads are replicated, one per GPU;
 *   - MLP of width f: fc1 output 2sbf and activation output 2sbf (GeLU: f = 4h gives
 *     the 16sbh above); gated (SwiGLU) keeps gate and up, 4sbf, plus the product 2sbf;
 *   - MoE layers: each token visits top_k experts: k copies of the expert MLP terms
 *     and of its permuted input, plus fp32 router logits;
 *   - no dropout: no masks (sbh each, as^2b) and the softmax output is the tensor
 *     attention over V reads (2as^2b instead of 5as^2b);
 *   - flash attention keeps no s x s matrix, only the fp32 log-sum-exp per row;
 *   - fp8 (Transformer Engine) keeps the fp8 copy of each GEMM input, 1 byte;
 *   - context parallelism: each rank holds s/cp tokens (scores: s/cp x s).
 * Microbatches in flight: 1F1B keeps p - k on stage k (the first stage p, Eq.5 of
 * Korthikanti: L layers' worth); the interleaved schedule keeps Megatron's warm-up
 * 2(p - k - 1) + (v - 1)p chunks plus one, a factor (1 + (p-1)/(pv)) on the first
 * stage (§4.2.3); GPipe keeps all m.
 *
 * Model states (Rajbhandari et al. SC'20 "ZeRO", §3.1 and §5.1): 2 bytes of 16-bit
 * weights, the gradients, and the optimizer state (fp32 master weights 4, momentum 4,
 * variance 4); ZeRO-1 shards the optimizer state, ZeRO-2 also the gradients, ZeRO-3
 * also the weights, across the data-parallel ranks.  The gradients are what
 * Megatron-LM keeps (README, "Distributed Optimizer": bytes per parameter, non-
 * distributed / distributed over d): bf16 params with fp32 main gradients, 18 /
 * 6 + 12/d (arguments.py sets accumulate_allreduce_grads_in_fp32 with --bf16, and
 * fp8 trains with --bf16); fp16 params with fp16 gradients, 20 / 4 + 16/d, the
 * optimizer holding an fp32 copy of the gradients beside the master weights.  The
 * time model reduces the same gradient bytes (ppl_grad_bytes).  Megatron-LM lays out the
 * parameters: column-parallel weights and biases split over t, row-parallel biases and norms
 * replicated, the vocabulary-parallel embedding on the first stage and, when the
 * pipeline has more than one stage, a copy of a tied embedding on the last
 * (megatron/core/models/common/language_module: shared_embedding_or_output_weight).
 */
#include "cost/memory.h"

#include "base/minmax.h"
#include "base/constants.h"

#include "cost/pipeline.h"

#include <math.h>

#include "cost/shard.h"
#include "cost/stack.h"
#include <string.h>

#define GIB 1073741824.0

void ppl_memory_opts_init(ppl_memory_opts *o)
{
    memset(o, 0, sizeof *o);
    o->weight_bytes = 2.0;
    o->main_grad_bytes = 4.0;
    o->half_grad_bytes = 2.0;
    o->fp16_grad_copy_bytes = 4.0;
    o->master_bytes = 4.0;
    o->adam_bytes = 8.0;
    o->sgd_bytes = 4.0;
    /* Transformer Engine caches the fp8 cast of each weight and, for Hopper's
     * TN-only fp8 GEMMs, its transpose, across the microbatches of a step */
    o->fp8_weight_cache_bytes = 2.0;
    /* the CUDA context of a PyTorch process: ~300-500 MB with lazy module loading
     * (CUDA >= 11.7; pytorch/pytorch#107667, #20532) */
    o->cuda_context_bytes = 0.5 * GIB;
    /* NCCL buffers: NCCL_BUFFSIZE 4 MiB per channel and peer, up to 32 channels; a
     * measured rule of thumb is ~0.65 GiB per additional communicator
     * (LUMI-AI-Guide#111); parplan takes 0.5 GiB per parallel group in use */
    o->nccl_group_bytes = 0.5 * GIB;
    o->overhead_bytes = -1.0;
    /* PyTorch's caching allocator: reserved exceeds allocated by some percent in
     * steady training; assumed (constants.c), settable with --fragmentation */
    o->fragmentation = ppl_assumed_values()->fragmentation;
    /* FSDP and ZeRO-3 hold the layer being computed and the one prefetched */
    o->zero3_prefetch_layers = 2.0;
}

/* ---- activations ------------------------------------------------------ */

typedef struct act_terms {
    double outside; /* tensors outside the TP region (split by t only with SP) */
    double inside;  /* tensors inside (already per GPU) */
    double scores;  /* the s x s attention terms, per GPU */
} act_terms;

/* MLP tensors inside the TP region, per GPU, for one pass over `cols` inner
 * columns a rank: fc1's 16-bit outputs (gate and up when gated) and fc2's input. */
static double mlp_inside(const ppl_layer_shape *shape, double sb, double cols, double gemm_in)
{
    double fc1_out = 2.0 * shape->fc1_outputs * sb * cols;
    double fc2_in = gemm_in * sb * cols;
    return fc1_out + fc2_in;
}

static act_terms activation_terms(const ppl_model *m, const ppl_config *c, const ppl_memory_opts *o,
                                  bool moe)
{
    (void)o;
    act_terms r = {0, 0, 0};
    const double t = (double)c->tp, h = (double)m->hidden, a = (double)m->heads;
    const double s = (double)m->seq_len / (double)c->cp, s_keys = (double)m->seq_len;
    const double b = (double)c->mbs, sb = s * b;
    /* GEMM inputs saved for backward in the GEMMs' precision, block scales included */
    const double gemm_in = ppl_config_gemm_bytes(c);
    const double mask = m->dropout ? 1.0 : 0.0;
    ppl_layer_shape shape;
    ppl_layer_shape_of(m, c->tp, &shape);

    /* outside: two norm inputs, QKV input, fc1 input, two dropout masks */
    r.outside = 4.0 * sb * h + gemm_in * sb * h + gemm_in * sb * h + 2.0 * mask * sb * h;
    /* inside: Q, K, V, projection input; under MLA also the latents every rank
     * holds whole: their norms' inputs (16-bit) and the up projections' inputs */
    r.inside =
        2.0 * sb * shape.q_cols + 2.0 * 2.0 * sb * shape.kv_cols + gemm_in * sb * shape.v_cols;
    r.inside += (2.0 + gemm_in) * sb * shape.latent_cols;
    if (moe) {
        double k = (double)m->moe.top_k;
        /* per visited expert: its permuted input and its MLP; router logits fp32;
         * the shared experts' MLP as a dense one (the permuted input is h wide,
         * whatever the attention's width) */
        r.inside += k * (gemm_in * sb * h / t + mlp_inside(&shape, sb, shape.expert_cols, gemm_in));
        r.inside += mlp_inside(&shape, sb, shape.shared_cols, gemm_in);
        r.outside += 4.0 * sb * (double)m->moe.experts;
    } else {
        r.inside += mlp_inside(&shape, sb, shape.ffn_cols, gemm_in);
    }
    if (c->flash_attention)
        r.scores = 4.0 * (a / t) * sb; /* fp32 log-sum-exp of each row */
    else
        r.scores = (m->dropout ? 5.0 : 2.0) * (a / t) * s * s_keys * b;
    return r;
}

static double full_layer_bytes(const act_terms *r, const ppl_config *c, bool keep_scores)
{
    double outside = c->sequence_parallel ? r->outside / (double)c->tp : r->outside;
    return outside + r->inside + (keep_scores ? r->scores : 0.0);
}

double ppl_activation_bytes_per_layer(const ppl_model *m, const ppl_config *c,
                                      const ppl_memory_opts *o, bool moe)
{
    if (c->recompute == PPL_RECOMPUTE_FULL) {
        /* only the layer input survives the forward pass */
        double x = 2.0 * ((double)m->seq_len / (double)c->cp) * (double)c->mbs * (double)m->hidden;
        return c->sequence_parallel ? x / (double)c->tp : x;
    }
    act_terms r = activation_terms(m, c, o, moe);
    bool keep_scores = c->flash_attention || c->recompute != PPL_RECOMPUTE_SELECTIVE;
    return full_layer_bytes(&r, c, keep_scores);
}

double ppl_in_flight_microbatches(const ppl_config *c, int64_t stage)
{
    return ppl_schedule_of(c->schedule)->in_flight(c, stage); /* pipeline.c */
}

/* ---- parameters --------------------------------------------------------- */

typedef struct layer_params {
    double dense;      /* one dense layer, per GPU */
    double moe_shared; /* a MoE layer's attention, norms, router, per GPU */
    double moe_expert; /* a MoE layer's local experts, per GPU */
    double gemm_dense, gemm_moe_shared, gemm_moe_expert; /* GEMM weights among them */
} layer_params;

static layer_params per_gpu_layer_params(const ppl_model *m, const ppl_config *c)
{
    layer_params p;
    ppl_layer_shape s;
    ppl_layer_shape_of(m, c->tp, &s);
    p.dense = s.attn_weights + s.attn_bias + s.mlp_weights + s.mlp_bias + s.norms;
    p.gemm_dense = s.attn_weights + s.mlp_weights;
    p.moe_shared = p.moe_expert = p.gemm_moe_shared = p.gemm_moe_expert = 0.0;
    if (m->has_moe) {
        /* experts / ep local experts, each split over the etp ranks of its expert
         * tensor-parallel group (Megatron-Core's expert layout; etp = tp unless set) */
        double local = (double)m->moe.experts / (double)c->ep;
        ppl_layer_shape e;
        ppl_layer_shape_of(m, ppl_config_etp(c), &e);
        p.moe_shared =
            s.attn_weights + s.attn_bias + s.norms + s.router + s.shared_weights + s.shared_bias;
        p.moe_expert = local * (e.expert_weights + e.expert_bias);
        p.gemm_moe_shared = s.attn_weights + s.shared_weights;
        p.gemm_moe_expert = local * e.expert_weights;
    }
    return p;
}

bool ppl_low_params(const ppl_memory_opts *o, const ppl_config *c)
{
    return o->low_params && ppl_low_params_allowed(c);
}

double ppl_grad_bytes(const ppl_memory_opts *o, ppl_precision precision)
{
    return precision == PPL_PRECISION_FP16 || o->half_grads ? o->half_grad_bytes
                                                            : o->main_grad_bytes;
}

void ppl_model_state_bytes(double params, int zero, double shard, const ppl_memory_opts *o,
                           ppl_optimizer optimizer, ppl_precision precision, double *weights,
                           double *gradients, double *optimizer_state)
{
    double state = o->master_bytes +
                   (optimizer == PPL_OPTIMIZER_SGD ? o->sgd_bytes : o->adam_bytes) +
                   (precision == PPL_PRECISION_FP16 ? o->fp16_grad_copy_bytes : 0.0);
    *weights = o->weight_bytes * params / (zero >= 3 ? shard : 1.0);
    *gradients = ppl_grad_bytes(o, precision) * params / (zero >= 2 ? shard : 1.0);
    *optimizer_state = state * params / (zero >= 1 ? shard : 1.0);
}

static int parallel_groups(const ppl_config *c)
{
    /* an expert tensor-parallel group other than the TP group is one more */
    int64_t etp = ppl_config_etp(c);
    return (c->tp > 1) + (c->pp > 1) + (c->dp > 1) + (c->cp > 1) + (c->ep > 1) +
           (etp > 1 && etp != c->tp);
}

void ppl_stage_layer_counts(const ppl_model *m, const ppl_config *c, int64_t stage, int64_t *layers,
                            int64_t *moe_layers)
{
    *moe_layers = 0;
    if (c->vp > 1 && m->layers % (c->pp * c->vp) == 0) {
        int64_t chunk = m->layers / (c->pp * c->vp);
        *layers = chunk * c->vp;
        for (int64_t v = 0; v < c->vp; v++)
            *moe_layers += ppl_moe_layers_in(m, (v * c->pp + stage) * chunk, chunk);
    } else {
        *layers = ppl_stage_layers(c, stage);
        *moe_layers = ppl_moe_layers_in(m, ppl_stage_first_layer(c, stage), *layers);
    }
    /* the multi-token-prediction modules follow the last layer on the last stage
     * (Megatron-Core places them there: --mtp-num-layers), each a layer of the last
     * layer's kind */
    if (stage == c->pp - 1 && m->mtp_layers > 0) {
        bool moe = ppl_moe_layers_in(m, m->layers - 1, 1) > 0;
        *layers += m->mtp_layers;
        *moe_layers += moe ? m->mtp_layers : 0;
    }
}

void ppl_memory_parts_layers(const ppl_model *m, const ppl_config *c, ppl_memory_parts *p)
{
    layer_params lp = per_gpu_layer_params(m, c);
    p->layer_dense = lp.dense;
    p->layer_moe_shared = lp.moe_shared;
    p->layer_moe_expert = lp.moe_expert;
    p->gemm_dense = lp.gemm_dense;
    p->gemm_moe_shared = lp.gemm_moe_shared;
    p->gemm_moe_expert = lp.gemm_moe_expert;
}

void ppl_memory_parts_fixed(const ppl_model *m, const ppl_config *c, const ppl_memory_opts *o,
                            ppl_memory_parts *p)
{
    const double t = (double)c->tp, h = (double)m->hidden, V = (double)m->vocab;
    const double norm = m->norm == PPL_NORM_LAYERNORM ? 2.0 * h : h;
    /* the embedding on the first stage; the output layer, or a tied embedding's
     * copy when there is more than one stage, on the last */
    double positions = m->position_embedding == PPL_POSITION_LEARNED ? (double)m->seq_len * h : 0.0;
    p->embedding = V * h / t + positions + (m->embedding_norm ? norm : 0.0);
    bool output_copy = !m->tied_embeddings || c->pp > 1;
    p->output = (output_copy ? V * h / t : 0.0) + (m->final_norm ? norm : 0.0);
    /* each MTP module's 2h x h projection (column-parallel) and three norms; its
     * layer is counted with the stage's layers */
    const double mtp = (double)m->mtp_layers;
    p->output += mtp * (2.0 * h * h / t + 3.0 * norm);

    /* other: framework, ZeRO-3 gathers */
    p->other = o->overhead_bytes >= 0
                   ? o->overhead_bytes
                   : o->cuda_context_bytes + o->nccl_group_bytes * parallel_groups(c);
    double moe = p->layer_moe_shared + p->layer_moe_expert;
    double layer = p->layer_dense > moe ? p->layer_dense : moe;
    p->zero3_buffers = o->zero3_prefetch_layers * layer * o->weight_bytes;
}

void ppl_memory_parts_activations(const ppl_model *m, const ppl_config *c, const ppl_memory_opts *o,
                                  ppl_memory_parts *p)
{
    const double t = (double)c->tp, h = (double)m->hidden, V = (double)m->vocab;
    const double s = (double)m->seq_len / (double)c->cp, b = (double)c->mbs;
    const double sp_div = c->sequence_parallel ? t : 1.0;
    const double mtp = (double)m->mtp_layers;
    p->act_dense = ppl_activation_bytes_per_layer(m, c, o, false);
    p->act_moe = m->has_moe ? ppl_activation_bytes_per_layer(m, c, o, true) : 0.0;
    /* the layers full recomputation leaves alone keep what no recomputation keeps */
    ppl_config kept = *c;
    kept.recompute = PPL_RECOMPUTE_NONE;
    p->kept_dense = ppl_activation_bytes_per_layer(m, &kept, o, false);
    p->kept_moe = m->has_moe ? ppl_activation_bytes_per_layer(m, &kept, o, true) : 0.0;
    p->act16_dense = p->act_dense, p->act16_moe = p->act_moe;
    p->kept16_dense = p->kept_dense, p->kept16_moe = p->kept_moe;
    if (c->bf16_layers > 0) { /* their GEMM inputs kept at 2 bytes */
        ppl_config c16 = *c, k16 = kept;
        c16.precision = k16.precision = PPL_PRECISION_BF16;
        p->act16_dense = ppl_activation_bytes_per_layer(m, &c16, o, false);
        p->kept16_dense = ppl_activation_bytes_per_layer(m, &k16, o, false);
        if (m->has_moe) {
            p->act16_moe = ppl_activation_bytes_per_layer(m, &c16, o, true);
            p->kept16_moe = ppl_activation_bytes_per_layer(m, &k16, o, true);
        }
    }
    /* the embedding's dropout mask; its output is the first layer's input, counted
     * with that layer */
    p->act_first = m->dropout ? s * b * h / sp_div : 0.0;
    /* output-layer input, and fp32 logits for the vocabulary-parallel loss */
    p->act_last = (1.0 + mtp) * (2.0 * s * b * h / sp_div + 4.0 * s * b * V / t);
    p->recompute_dense = p->recompute_moe = 0.0;
    if (c->recompute != PPL_RECOMPUTE_NONE) {
        /* backward rebuilds one layer's activations (full) or its attention core */
        act_terms rd = activation_terms(m, c, o, false);
        act_terms rm = m->has_moe ? activation_terms(m, c, o, true) : rd;
        if (c->recompute == PPL_RECOMPUTE_FULL) {
            p->recompute_dense = full_layer_bytes(&rd, c, true);
            p->recompute_moe = full_layer_bytes(&rm, c, true);
        } else if (!c->flash_attention) {
            p->recompute_dense = rd.scores;
            p->recompute_moe = rm.scores;
        }
    }
}

void ppl_memory_parts_init(const ppl_model *m, const ppl_config *c, const ppl_memory_opts *o,
                           ppl_memory_parts *p)
{
    memset(p, 0, sizeof *p);
    ppl_memory_parts_layers(m, c, p);
    ppl_memory_parts_fixed(m, c, o, p);
    ppl_memory_parts_activations(m, c, o, p);
}

void ppl_stage_params(const ppl_memory_parts *p, bool first, bool last, double dense_layers,
                      double moe_layers, double *dense, double *expert)
{
    *dense = dense_layers * p->layer_dense + moe_layers * p->layer_moe_shared +
             (first ? p->embedding : 0.0) + (last ? p->output : 0.0);
    *expert = moe_layers * p->layer_moe_expert;
}

void ppl_memory_at(const ppl_config *c, const ppl_memory_opts *o, const ppl_memory_parts *p,
                   double capacity, int64_t stage, int64_t layers, int64_t moe_layers,
                   ppl_memory *out)
{
    const bool first = stage == 0, last = stage == c->pp - 1;
    const double dense_layers = (double)(layers - moe_layers), moe = (double)moe_layers;
    out->stage = stage;
    out->layers = layers;
    /* parameters per GPU: dense ones shard over dp*cp, experts over edp; the fp8
     * cache covers the transformer GEMMs (Megatron keeps the embedding and output
     * layer in 16-bit) */
    double dense, expert;
    ppl_stage_params(p, first, last, dense_layers, moe, &dense, &expert);
    double gemm_dense = dense_layers * p->gemm_dense + moe * p->gemm_moe_shared;
    double gemm_expert = moe * p->gemm_moe_expert;
    /* the layers kept in bf16, dense ones first (the first layers of MoE models
     * with leading dense layers are dense): no fp8 weight cache, 16-bit activations */
    const int64_t bf16 = ppl_stage_bf16_layers(c, stage, layers);
    const double bf16_dense = (double)(bf16 < layers - moe_layers ? bf16 : layers - moe_layers),
                 bf16_moe = (double)bf16 - bf16_dense;
    double cache_dense = gemm_dense - bf16_dense * p->gemm_dense - bf16_moe * p->gemm_moe_shared,
           cache_expert = gemm_expert - bf16_moe * p->gemm_moe_expert;
    if (ppl_schedule_of(c->schedule)->param_copies > 1.0) {
        /* DualPipe: rank k also holds stage pp-1-k (as many layers with equal stages;
         * the ends swap the embedding and the output layer): pipeline.h */
        double dense2, expert2;
        ppl_stage_params(p, last, first, dense_layers, moe, &dense2, &expert2);
        dense += dense2;
        expert += expert2;
        cache_dense *= 2.0;
        cache_expert *= 2.0;
    }
    out->params = dense + expert;
    out->params_expert = expert;
    double w1, g1, o1, w2, g2, o2;
    /* dense states shard over the sharding group's ranks x cp (dp*cp without a
     * group); experts over their expert-data-parallel ranks, tp*cp*dp/(etp*ep)
     * (parallel_state.py:880), divided among the group's replicas (shard.c) */
    const double shard_dense = ppl_shard_dense_ways(c);
    const double shard_expert = expert > 0.0 ? ppl_shard_expert_ways(c) : 1.0;
    ppl_model_state_bytes(dense, c->zero, shard_dense, o, c->optimizer, c->precision, &w1, &g1,
                          &o1);
    ppl_model_state_bytes(expert, c->zero, shard_expert, o, c->optimizer, c->precision, &w2, &g2,
                          &o2);
    out->weights = w1 + w2;
    out->gradients = g1 + g2;
    /* the offloaded share of the optimizer state lives in host memory, beside a
     * pinned copy of its gradients (hybrid_optimizer.py:108-114; offload.h) */
    const double off = c->offload_optimizer;
    out->optimizer = (1.0 - off) * (o1 + o2);
    out->host =
        off *
        (o1 + o2 + (dense / shard_dense + expert / shard_expert) * ppl_grad_bytes(o, c->precision));
    /* ZeRO-3 shards the cache as the weights; mxfp8 and nvfp4 cache the same two
     * copies (row- and column-wise: their blocks run along one axis) at their
     * bytes per element.  Kept in fp8 alone (ppl_low_params), the weight is the
     * first copy and no 16-bit one is held: Transformer Engine's Float8Tensor and
     * MXFP8Tensor parameters keep their data and its transpose (or column-wise
     * copy) */
    out->params_low = out->params_low_expert = 0.0;
    if (ppl_precision_low(c->precision)) {
        const double held = cache_dense / (c->zero >= 3 ? shard_dense : 1.0) +
                            cache_expert / (c->zero >= 3 ? shard_expert : 1.0);
        out->weights += o->fp8_weight_cache_bytes * ppl_precision_gemm_bytes(c->precision) * held;
        if (ppl_low_params(o, c)) {
            out->weights -= o->weight_bytes * held;
            out->params_low = cache_dense + cache_expert;
            out->params_low_expert = cache_expert;
        }
    }

    /* activations: per layer x layers x microbatches in flight */
    double in_flight = ppl_in_flight_microbatches(c, stage);
    out->in_flight = in_flight;
    double f = ppl_recomputed_share(c, layers);
    double per_mb = dense_layers * (f * p->act_dense + (1.0 - f) * p->kept_dense) +
                    moe * (f * p->act_moe + (1.0 - f) * p->kept_moe) + (first ? p->act_first : 0.0);
    per_mb +=
        bf16_dense *
            (f * (p->act16_dense - p->act_dense) + (1.0 - f) * (p->kept16_dense - p->kept_dense)) +
        bf16_moe * (f * (p->act16_moe - p->act_moe) + (1.0 - f) * (p->kept16_moe - p->kept_moe));
    out->activations = in_flight * per_mb;
    if (last || (first && ppl_schedule_of(c->schedule)->param_copies > 1.0)) {
        double held = ppl_schedule_of(c->schedule)->forwards_first ? (double)c->microbatches : 1.0;
        out->activations += held * p->act_last;
    }
    out->other = p->other + (c->zero >= 3 ? p->zero3_buffers : 0.0) +
                 (moe_layers > 0 ? p->recompute_moe : p->recompute_dense) +
                 o->fragmentation * out->activations;
    out->total = out->weights + out->gradients + out->optimizer + out->activations + out->other;
    out->capacity = capacity;
    out->headroom = ppl_memory_headroom(o, capacity);
    out->fits = out->total <= out->capacity - out->headroom;
}

/* Every term of ppl_memory_at summed over the ranks is at least its figure for
 * the whole model held once (the parameters, their states and cache are linear in
 * the layers, the embedding and output layer counted once, twice under DualPipe
 * as its ranks hold them; every stage holds at least one microbatch of its
 * layers' activations, each at least what recomputation keeps), and each rank
 * holds the fixed terms; the heaviest rank holds at least the average. */
double ppl_memory_floor_bytes(const ppl_config *c, const ppl_memory_opts *o,
                              const ppl_memory_parts *p, int64_t layers, int64_t moe_layers,
                              double *no_optimizer)
{
    const double nd = (double)(layers - moe_layers), nm = (double)moe_layers;
    const double copies = ppl_schedule_of(c->schedule)->param_copies > 1.0 ? 2.0 : 1.0;
    double dense, expert;
    ppl_stage_params(p, true, true, nd, nm, &dense, &expert);
    dense *= copies;
    expert *= copies;
    const double shard_dense = ppl_shard_dense_ways(c);
    const double shard_expert = expert > 0.0 ? ppl_shard_expert_ways(c) : 1.0;
    double w1, g1, o1, w2, g2, o2;
    ppl_model_state_bytes(dense, c->zero, shard_dense, o, c->optimizer, c->precision, &w1, &g1,
                          &o1);
    ppl_model_state_bytes(expert, c->zero, shard_expert, o, c->optimizer, c->precision, &w2, &g2,
                          &o2);
    double states = w1 + g1 + w2 + g2;
    if (ppl_precision_low(c->precision)) {
        /* per GEMM weight: the cache, less the 16-bit copy where it is not kept;
         * the layers kept in bf16 hold neither (at most the whole model's
         * saving, at least none of its cost) */
        const double held =
            copies *
            ((nd * p->gemm_dense + nm * p->gemm_moe_shared) / (c->zero >= 3 ? shard_dense : 1.0) +
             nm * p->gemm_moe_expert / (c->zero >= 3 ? shard_expert : 1.0));
        double net = o->fp8_weight_cache_bytes * ppl_precision_gemm_bytes(c->precision) -
                     (ppl_low_params(o, c) ? o->weight_bytes : 0.0);
        states += (c->bf16_layers > 0 ? ppl_min(net, 0.0) : net) * held;
    }
    const double act =
        (nd * ppl_min(p->act_dense, p->kept_dense) + nm * ppl_min(p->act_moe, p->kept_moe)) *
        (1.0 + o->fragmentation);
    const double fixed = p->other + (c->zero >= 3 ? p->zero3_buffers : 0.0) +
                         ppl_min(p->recompute_dense, p->recompute_moe);
    const double pp = (double)c->pp;
    const double optimizer = (1.0 - c->offload_optimizer) * (o1 + o2);
    *no_optimizer = (states + act) / pp + fixed;
    return *no_optimizer + optimizer / pp;
}

double ppl_memory_headroom(const ppl_memory_opts *o, double capacity)
{
    double h = o->headroom_fraction * capacity + o->headroom_bytes;
    return h > 0.0 ? h : 0.0;
}

void ppl_memory_stage(const ppl_model *m, const ppl_topology *topo, const ppl_config *c,
                      const ppl_memory_opts *o, int64_t stage, ppl_memory *out)
{
    ppl_memory_parts parts;
    int64_t layers, moe_layers;
    memset(out, 0, sizeof *out);
    ppl_memory_parts_init(m, c, o, &parts);
    ppl_stage_layer_counts(m, c, stage, &layers, &moe_layers);
    ppl_memory_at(c, o, &parts, topo->gpu.memory_bytes, stage, layers, moe_layers, out);
    if (out->host > ppl_gpu_host_capacity_bytes(&topo->gpu)) /* the offload overflows the host */
        out->fits = false;
}

void ppl_memory_worst(const ppl_model *m, const ppl_topology *topo, const ppl_config *c,
                      const ppl_memory_opts *o, ppl_memory *out)
{
    /* Every stage: layers, MoE layers (every k-th layer lands unevenly) and the
     * microbatches in flight all vary with the stage; ties go to the earliest. */
    ppl_memory_parts parts;
    ppl_memory_parts_init(m, c, o, &parts);
    for (int64_t k = 0; k < c->pp; k++) {
        int64_t layers, moe_layers;
        ppl_memory cand;
        ppl_stage_layer_counts(m, c, k, &layers, &moe_layers);
        ppl_memory_at(c, o, &parts, topo->gpu.memory_bytes, k, layers, moe_layers, &cand);
        if (cand.host > ppl_gpu_host_capacity_bytes(&topo->gpu)) /* as ppl_memory_stage */
            cand.fits = false;
        if (k == 0 || cand.total > out->total || (!cand.fits && out->fits))
            *out = cand;
    }
}
