/*
 * config.c - one training configuration: its derived sizes (etp, edp, sharding
 * group), stage splits and the forms Megatron-LM's flags build, interleaving's
 * microbatch groups, precisions' bytes, the default global batch, the knobs'
 * names, and the pins' defaults.  Checking a configuration against the rules is
 * rules.c's.
 */
#include "cost/config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int64_t ppl_config_etp(const ppl_config *c)
{
    return c->etp > 0 ? c->etp : c->tp;
}

int64_t ppl_config_edp(const ppl_config *c)
{
    int64_t fold = ppl_config_etp(c) * c->ep;
    return fold > 0 ? c->tp * c->cp * c->dp / fold : 0;
}

int64_t ppl_config_shard_group(const ppl_config *c)
{
    return c->shard_group > 0 && c->shard_group <= c->dp ? c->shard_group : c->dp;
}

int64_t ppl_config_shard_replicas(const ppl_config *c)
{
    int64_t n = ppl_config_shard_group(c);
    return n > 0 && c->dp % n == 0 ? c->dp / n : 1;
}

double ppl_recomputed_share(const ppl_config *c, int64_t layers)
{
    if (c->recompute != PPL_RECOMPUTE_FULL)
        return 1.0;
    if (c->recompute_layers <= 0 || c->recompute_layers >= layers || layers <= 0)
        return 1.0;
    return (double)c->recompute_layers / (double)layers;
}

int64_t ppl_stage_layers(const ppl_config *c, int64_t stage)
{
    if (c->pp == 1 || stage == 0)
        return c->split.first;
    if (stage == c->pp - 1)
        return c->split.last;
    return c->split.middle;
}

int64_t ppl_stage_first_layer(const ppl_config *c, int64_t stage)
{
    return stage == 0 ? 0 : c->split.first + (stage - 1) * c->split.middle;
}

/* True when the split is not pp equal stages. */
static bool split_uneven(const ppl_config *c)
{
    if (c->pp < 2)
        return false;
    int64_t even = c->pp == 2 ? c->split.first : c->split.middle;
    return c->split.first != even || c->split.last != even;
}

/* Megatron-Core 0.13+'s --pipeline-model-parallel-layout places any number of
 * layers in each virtual stage (transformer_config.py:2242-2291,
 * pipeline_parallel_layer_layout.py): a split whose every stage holds at least
 * one layer a chunk, which no other flags build */
static ppl_split_form layout_or_none(const ppl_config *c, int64_t vp)
{
    const ppl_stage_split *s = &c->split;
    if (vp > 1 && c->pp >= 2 && s->first >= vp && s->last >= vp && (c->pp == 2 || s->middle >= vp))
        return PPL_SPLIT_LAYOUT;
    return PPL_SPLIT_NONE;
}

ppl_split_form ppl_split_form_of(const ppl_config *c, int64_t vp, bool *embedding, bool *loss)
{
    const ppl_stage_split *s = &c->split;
    *embedding = *loss = false;
    if (vp < 1 || (vp > 1 && c->pp < 2))
        return PPL_SPLIT_NONE;
    if (!split_uneven(c))
        return s->first % vp == 0 ? PPL_SPLIT_EVEN : layout_or_none(c, vp);
    /* --decoder-first/last-pipeline-num-layers: every stage divides into vp chunks */
    if (s->first % vp == 0 && s->last % vp == 0 && (c->pp == 2 || s->middle % vp == 0))
        return PPL_SPLIT_ENDS;
    /* --account-for-embedding/loss-in-pipeline-split: the embedding and the loss
     * count as a layer of the first and last stage, so ends one layer short of
     * the others make equal stages */
    int64_t n = c->pp > 2 ? s->middle : (s->first > s->last ? s->first : s->last);
    int64_t e = n - s->first, l = n - s->last;
    if (e < 0 || e > 1 || l < 0 || l > 1 || n % vp != 0)
        return layout_or_none(c, vp);
    *embedding = e == 1;
    *loss = l == 1;
    return PPL_SPLIT_ACCOUNT;
}

int64_t ppl_split_chunk_layers(const ppl_config *c, int64_t stage, int64_t chunk)
{
    const int64_t n = ppl_stage_layers(c, stage), vp = c->vp > 1 ? c->vp : 1;
    return n / vp + (chunk < n % vp ? 1 : 0);
}

int64_t ppl_vp_group(const ppl_config *c)
{
    const int64_t m = c->microbatches, p = c->pp;
    if (p < 1 || m < p)
        return 0;
    /* megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_
     * with_interleaving: pp <= N <= m, and the last group (m % N) empty or of at
     * least pp microbatches; N = m always qualifies */
    for (int64_t n = p; n < m; n++)
        if (m % n == 0 || m % n >= p)
            return n;
    return m;
}

bool ppl_split_allows_vp(const ppl_config *c, int64_t vp)
{
    bool e, l;
    return ppl_split_form_of(c, vp, &e, &l) != PPL_SPLIT_NONE;
}

bool ppl_split_flags_allow_vp(const ppl_config *c, int64_t vp)
{
    bool e, l;
    ppl_split_form f = ppl_split_form_of(c, vp, &e, &l);
    return f != PPL_SPLIT_NONE && f != PPL_SPLIT_LAYOUT;
}

bool ppl_stage_split_equal(const ppl_stage_split *a, const ppl_stage_split *b)
{
    return a->first == b->first && a->middle == b->middle && a->last == b->last;
}

ppl_stage_split ppl_stage_split_default(int64_t L, int64_t pp)
{
    ppl_stage_split s = {L, L, 0};
    if (pp <= 1)
        return s;
    if (pp == 2) {
        s.first = L / 2;
        s.last = L - s.first;
        return s;
    }
    if (L % pp == 0) {
        s.first = s.last = s.middle = L / pp;
        return s;
    }
    /* first + (pp-2)*middle + last = L with first, last <= middle, as even as can be */
    for (int64_t m = (L + pp - 1) / pp; m >= 1; m--) {
        int64_t r = L - (pp - 2) * m;
        if (r > 2 * m)
            break;
        if (r >= 2) {
            s.first = r / 2;
            s.last = r - s.first;
            s.middle = m;
            return s;
        }
    }
    /* no lighter ends (5 layers on 4 stages): the ends take the remainder */
    s.middle = L / pp;
    int64_t r = L - (pp - 2) * s.middle;
    s.last = r / 2;
    s.first = r - s.last;
    return s;
}

/* A usage error naming the knob at fault (the command line maps it to its flag). */
#define bad(err, flag, ...) ppl_error_set((err), PPL_EUSAGE, "", (flag), __VA_ARGS__)

bool ppl_precision_low(ppl_precision p)
{
    return p == PPL_PRECISION_FP8 || p == PPL_PRECISION_MXFP8 || p == PPL_PRECISION_NVFP4;
}

double ppl_precision_gemm_bytes(ppl_precision p)
{
    switch (p) {
    case PPL_PRECISION_FP8: return 1.0; /* per-tensor scale: nothing per element */
    case PPL_PRECISION_MXFP8:
        return 1.0 + 1.0 / 32.0; /* OCP MX v1.0: an 8-bit E8M0 scale per 32 elements */
    case PPL_PRECISION_NVFP4:
        return 0.5 + 1.0 / 16.0; /* 4 bits, and an FP8 E4M3 scale per 16 elements */
    default: return 2.0;
    }
}

double ppl_config_gemm_bytes(const ppl_config *c)
{
    /* DeepSeek-V3 report §3.3.2: activations scaled per 1x128 tile, an fp32 scale each */
    if (c->precision == PPL_PRECISION_FP8 && c->fp8_recipe == PPL_FP8_BLOCKWISE)
        return 1.0 + 4.0 / 128.0;
    return ppl_precision_gemm_bytes(c->precision);
}

int64_t ppl_stage_bf16_layers(const ppl_config *c, int64_t stage, int64_t layers)
{
    int64_t n = 0;
    if (c->bf16_layers <= 0)
        return 0;
    if (stage == 0)
        n += c->bf16_layers;
    if (stage == c->pp - 1)
        n += c->bf16_layers;
    return n < layers ? n : layers;
}

int64_t ppl_default_global_batch(const ppl_model *m)
{
    double seqs = 4194304.0 / (double)m->seq_len;
    return seqs < 1 ? 1 : (int64_t)pow(2.0, round(log2(seqs)));
}

static int64_t pin(int64_t value, int64_t fallback)
{
    return value == PPL_UNSET ? fallback : value;
}

/* The stage split with --first-stage-layers and/or --last-stage-layers pinned
 * (PPL_UNSET: free): one end pinned, the other takes what keeps the middle
 * stages equal; both pinned, the middle stages share the rest evenly. */
ppl_status ppl_stage_split_pinned(int64_t layers, int64_t pp, int64_t first_pin, int64_t last_pin,
                                  ppl_stage_split *split, ppl_error *err)
{
    *split = ppl_stage_split_default(layers, pp);
    if (first_pin == PPL_UNSET && last_pin == PPL_UNSET)
        return PPL_OK;
    if (pp < 2)
        return bad(err, first_pin != PPL_UNSET ? "first_stage_layers" : "last_stage_layers",
                   "needs at least 2 pipeline stages (pp is %lld)", (long long)pp);
    int64_t first = pin(first_pin, -1), last = pin(last_pin, -1);
    int64_t rest_stages = pp - 2;
    if (first < 0 || last < 0) {
        /* one end pinned: the other takes what keeps the middle stages equal */
        int64_t fixed = first >= 0 ? first : last;
        int64_t best = -1;
        for (int64_t mid = 1; rest_stages > 0 && mid * rest_stages <= layers - fixed; mid++) {
            int64_t other = layers - fixed - mid * rest_stages;
            if (other >= 1 && other <= mid + 1)
                best = mid;
        }
        if (rest_stages == 0)
            best = 0;
        int64_t other = layers - fixed - (best > 0 ? best : 0) * rest_stages;
        if (best < 0 || other < 1)
            return bad(err, first >= 0 ? "first_stage_layers" : "last_stage_layers",
                       "%lld leaves no even split of the other %lld layers", (long long)fixed,
                       (long long)(layers - fixed));
        first = first >= 0 ? first : other;
        last = last >= 0 ? last : other;
        split->middle = best > 0 ? best : 0;
    } else {
        int64_t rest = layers - first - last;
        if (rest_stages == 0 ? rest != 0 : (rest < rest_stages || rest % rest_stages != 0))
            return ppl_error_set(err, PPL_EUSAGE, "", "first_stage_layers",
                                 "%lld + %lld leaves %lld layers, which %lld middle stages "
                                 "cannot share evenly",
                                 (long long)first, (long long)last, (long long)rest,
                                 (long long)rest_stages);
        split->middle = rest_stages > 0 ? rest / rest_stages : 0;
    }
    split->first = first;
    split->last = last;
    return PPL_OK;
}

const char *const ppl_recompute_names[] = {"none", "selective", "full", NULL};
/* in enum order: the training precisions lead ppl_precision (topology.h) */
const char *const ppl_precision_names[] = {"bf16", "fp16", "fp8", "mxfp8", "nvfp4", NULL};
const char *const ppl_fp8_recipe_names[] = {"delayed", "tensorwise", "blockwise", NULL};
const char *const ppl_cuda_graphs_names[] = {"none",  "attn",      "moe_router", "attn+moe_router",
                                             "layer", "iteration", NULL};
const char *const ppl_optimizer_names[] = {"adam", "sgd", NULL};
/* Megatron-LM's --cp-comm-type values (megatron/training/arguments.py) */
const char *const ppl_cp_comm_names[] = {"p2p", "a2a", "allgather", "a2a+p2p", NULL};

const char *ppl_recompute_name(int v)
{
    return (unsigned)v < 3 ? ppl_recompute_names[v] : "?";
}
const char *ppl_optimizer_name(int v)
{
    return (unsigned)v < 2 ? ppl_optimizer_names[v] : "?";
}
const char *ppl_cp_comm_name(int v)
{
    return (unsigned)v < PPL_CP_COMM_COUNT ? ppl_cp_comm_names[v] : "?";
}
const char *ppl_cuda_graphs_name(int v)
{
    return (unsigned)v < PPL_CUDA_GRAPHS_COUNT ? ppl_cuda_graphs_names[v] : "?";
}

/* in enum order, as ppl_cuda_graphs_names */
static const ppl_cuda_graphs_row graphs_rows[PPL_CUDA_GRAPHS_COUNT] = {
    [PPL_CUDA_GRAPHS_NONE] = {0},
    [PPL_CUDA_GRAPHS_ATTN] = {.attn = true, .modules = {"attn"}},
    [PPL_CUDA_GRAPHS_MOE_ROUTER] = {.router = true, .modules = {"moe_router", "moe_preprocess"}},
    [PPL_CUDA_GRAPHS_ATTN_MOE_ROUTER] = {.attn = true,
                                         .router = true,
                                         .modules = {"attn", "moe_router", "moe_preprocess"}},
    [PPL_CUDA_GRAPHS_LAYER] = {.layer = true},
    [PPL_CUDA_GRAPHS_ITERATION] = {.step = true},
};

const ppl_cuda_graphs_row *ppl_cuda_graphs_of(int v)
{
    return &graphs_rows[(unsigned)v < PPL_CUDA_GRAPHS_COUNT ? v : PPL_CUDA_GRAPHS_NONE];
}

bool ppl_cp_heads_split(const ppl_model *m, int64_t tp, int64_t ranks)
{
    if (ranks < 1 || tp < 1)
        return false;
    int64_t q = m->heads / tp, kv = m->kv_heads > tp ? m->kv_heads / tp : 1;
    return q % ranks == 0 && kv % ranks == 0;
}

int64_t ppl_cp_a2a_size(const ppl_model *m, const ppl_topology *t, int64_t tp, int64_t cp)
{
    /* the GPUs NVLink joins, as the network model counts them (net.c) */
    int64_t node =
        t->nvlink.domain_gpus > t->gpus_per_server ? t->nvlink.domain_gpus : t->gpus_per_server;
    for (int64_t a = cp; a >= 2; a--)
        if (cp % a == 0 && tp * a <= node && node % (tp * a) == 0 && ppl_cp_heads_split(m, tp, a))
            return a;
    return 1;
}

void ppl_config_take_fixed(ppl_config *c, const ppl_pins *p)
{
    c->precision = (ppl_precision)p->precision;
    c->fp8_recipe = (ppl_fp8_recipe)p->fp8_recipe;
    c->bf16_layers = p->bf16_layers < 0 ? 0 : p->bf16_layers;
    c->cuda_graphs = (ppl_cuda_graphs)p->cuda_graphs;
    c->optimizer = (ppl_optimizer)p->optimizer;
    c->ep_overlap = p->ep_overlap == 1;
    c->tp_overlap_off = p->tp_overlap == 0;
}

void ppl_pins_init(ppl_pins *p)
{
    memset(p, 0, sizeof *p);
    p->gpus = p->tp = p->pp = p->dp = p->cp = p->ep = p->vp = p->mbs = p->global_batch = PPL_UNSET;
    p->etp = PPL_UNSET;
    p->zero = p->recompute = p->sequence_parallel = p->flash_attention = PPL_UNSET;
    p->ep_overlap = PPL_UNSET;
    p->tp_overlap = PPL_UNSET;
    p->precision = PPL_PRECISION_BF16;
    p->optimizer = PPL_OPTIMIZER_ADAM;
    p->schedule = PPL_SCHEDULE_1F1B;
    p->cp_comm = PPL_UNSET;
    p->first_stage_layers = p->last_stage_layers = p->recompute_layers = PPL_UNSET;
    p->shard_group = PPL_UNSET;
    p->offload_optimizer = PPL_UNSET;
    p->fp8_recipe = PPL_FP8_DELAYED;
    p->bf16_layers = 0;
    p->cuda_graphs = PPL_CUDA_GRAPHS_NONE;
}
