/*
 * microcache.c - a search's microbatch compute parts and CP exchanges, kept by
 * what each reads.
 */
#include "cost/microcache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/pages.h"
#include "cost/compute.h"
#include "cost/cp.h"
#include "cost/memory.h"

/* What a microbatch's compute parts share across the layouts around its layers:
 * the dense and output layers' times and every activation (memory.h
 * ppl_memory_parts_activations) depend on the first six fields of
 * ppl_micro_key alone (compute.c and memory.c read no other field of the
 * configuration but those a search fixes: precision, fp8 recipe, bf16 layers),
 * the MoE layers' times and a layer's parameters on the first eight (the expert
 * layout: ep, etp), of which the MoE times read the expert layout only in the
 * experts' GEMMs and the host's launches (compute.h ppl_layer_base: the rest is
 * kept with the first six and each layout's miss finishes it, a third of the
 * work); only the fixed terms (ppl_memory_parts_fixed) read the last
 * two, whether there are pipeline stages and replicas, and they cost less to
 * compute than to keep.  A search walks many expert layouts and replica counts
 * for each attention layout: each part is computed once for all of them.
 *
 * Memory is the cost that matters here: a page a process touches first costs
 * about 10 us of CPU on a virtual machine (a guest's fault, the host's
 * backing), as much as some thirty thousand instructions, so a slot holds only
 * what its key decides, and nothing is kept per full key. */
#define SHARED_SLOTS 4096
/* the activation terms of ppl_memory_parts (ppl_memory_parts_activations) */
#define ACT_FIELDS                                                                                 \
    X(act_dense)                                                                                   \
    X(act_moe) X(kept_dense) X(kept_moe) X(act16_dense) X(act16_moe) X(kept16_dense) X(kept16_moe) \
        X(act_first) X(act_last) X(recompute_dense) X(recompute_moe)
typedef struct acts {
#define X(f) double f;
    ACT_FIELDS
#undef X
} acts;
typedef struct shared_slot {
    int64_t key[6];
    ppl_layer_time dense;
    double tp_count;
    acts act;
} shared_slot;
/* The output layer's times read fewer fields still: tp, cp and the microbatch. */
#define HEAD_SLOTS 1024
typedef struct head_slot {
    int64_t key[3];
    ppl_layer_time head;
} head_slot;
/* 207,318 distinct expert keys in DeepSeek-V3's search on 2,048 GPUs: 16384 slots
 * compute 293 K of them against 554 K at 1024.  A dense model's layer parameters
 * are kept the same way, without the MoE times (they are none). */
#define LAYOUT_SLOTS 16384
/* a layer's parameters in ppl_memory_parts (ppl_memory_parts_layers) */
#define LAYER_FIELDS                                                                               \
    X(layer_dense)                                                                                 \
    X(layer_moe_shared) X(layer_moe_expert) X(gemm_dense) X(gemm_moe_shared) X(gemm_moe_expert)
typedef struct layout_slot {
    int64_t key[8];
#define X(f) double f;
    LAYER_FIELDS
#undef X
} layout_slot;
/* A layer's parameters read fewer fields still: tp, ep and etp (memory.c
 * per_gpu_layer_params); a MoE layout's miss takes them from here.  Qwen3-235B on
 * meta-24k-roce meets 295 such keys over 28,099 misses (about 1,100 computed with
 * the positions' collisions; 8,192 slots would save 0.25 M instructions). */
#define PARAM_SLOTS 512
typedef struct param_slot {
    int64_t key[3];
#define X(f) double f;
    LAYER_FIELDS
#undef X
} param_slot;
/* A layout's CP exchanges (ppl_micro_cache_cp) read tp, cp, the microbatch, the
 * algorithms tried, whether dominated ones are dropped, and the three CP groups
 * as placed (cp.c; the model and the network are the search's): a search meets
 * some hundreds of such keys over thousands of layouts. */
#define CP_SLOTS 512
typedef struct cp_slot {
    int64_t key[4]; /* tp, cp, mbs, tried + 2 x prune */
    ppl_group g_cp, g_a2a, g_ring;
    unsigned costed;
    ppl_cp_cost costs[PPL_CP_COMM_COUNT];
} cp_slot;
/* Each table's slots are filled in order, a hash position holding the index + 1
 * of its slot (0: none): a new cache clears kilobytes, and the pages written are
 * the keys met, not a page a position (a plan meets some hundreds to thousands of
 * keys).  The times in bf16 differ from the others only where layers are kept in
 * bf16 (ppl_config bf16_layers, which a search fixes): their tables are
 * allocated only then, as the MoE times only for a MoE model. */
struct ppl_micro_cache {
    uint16_t shared_at[SHARED_SLOTS], layout_at[LAYOUT_SLOTS], head_at[HEAD_SLOTS];
    uint16_t cp_at[CP_SLOTS], param_at[PARAM_SLOTS];
    size_t nshared, nlayout, nhead, ncp, nparam;
    cp_slot cp[CP_SLOTS]; /* beside the positions: on the pages every search writes */
    param_slot param[PARAM_SLOTS];
    shared_slot shared[SHARED_SLOTS];
    head_slot head[HEAD_SLOTS];
    ppl_layer_time *dense16; /* SHARED_SLOTS */
    /* SHARED_SLOTS: a MoE layer's time but for its expert layout (compute.h
     * ppl_layer_base), which each layout's miss finishes */
    ppl_layer_base *moe_base, *moe16_base;
    layout_slot *layout; /* LAYOUT_SLOTS, allocated at the first miss */
    ppl_layer_time *moe, *moe16;
};

ppl_micro_cache *ppl_micro_cache_new(void)
{
    ppl_micro_cache *cache = ppl_pages_alloc(sizeof *cache);
    if (cache) {
        memset(cache->shared_at, 0, sizeof cache->shared_at);
        memset(cache->layout_at, 0, sizeof cache->layout_at);
        memset(cache->head_at, 0, sizeof cache->head_at);
        memset(cache->cp_at, 0, sizeof cache->cp_at);
        memset(cache->param_at, 0, sizeof cache->param_at);
        cache->nshared = cache->nlayout = cache->nhead = cache->ncp = cache->nparam = 0;
        cache->dense16 = NULL;
        cache->moe_base = cache->moe16_base = NULL;
        cache->layout = NULL;
        cache->moe = cache->moe16 = NULL;
    }
    return cache;
}

void ppl_micro_cache_free(ppl_micro_cache *cache)
{
    if (cache) {
        ppl_pages_free(cache->dense16, SHARED_SLOTS * sizeof *cache->dense16);
        ppl_pages_free(cache->moe_base, SHARED_SLOTS * sizeof *cache->moe_base);
        ppl_pages_free(cache->moe16_base, SHARED_SLOTS * sizeof *cache->moe16_base);
        ppl_pages_free(cache->layout, LAYOUT_SLOTS * sizeof *cache->layout);
        ppl_pages_free(cache->moe, LAYOUT_SLOTS * sizeof *cache->moe);
        ppl_pages_free(cache->moe16, LAYOUT_SLOTS * sizeof *cache->moe16);
    }
    ppl_pages_free(cache, sizeof *cache);
}

/* A table of n, allocated at its first use; NULL when it cannot be had. */
static void *table_of(void *table, size_t n, size_t size)
{
    return table ? table : ppl_pages_alloc(n * size);
}

/* A layer's parameters (ppl_memory_parts_layers) by tp, ep and etp */
static void layer_params(ppl_micro_cache *cache, const ppl_model *m, const ppl_config *c,
                         const int64_t key[PPL_MICRO_KEY], ppl_memory_parts *mem)
{
    const int64_t k[3] = {key[0], key[6], key[7]}; /* ppl_micro_key's tp, ep, etp */
    bool found;
    param_slot *p = &cache->param[ppl_slot_for(cache->param_at, &cache->nparam, PARAM_SLOTS,
                                               ppl_micro_key_hash(k, 3), &found)];
    if (!found || memcmp(p->key, k, sizeof k) != 0) {
        ppl_memory_parts_layers(m, c, mem);
#define X(f) p->f = mem->f;
        LAYER_FIELDS
#undef X
        memcpy(p->key, k, sizeof k);
        return;
    }
#define X(f) mem->f = p->f;
    LAYER_FIELDS
#undef X
}

/* A MoE layer's times from the parts its attention layout shares (as
 * ppl_micro_moe_init sets them: compute.h ppl_layer_time_finish) */
static void moe_finish(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layer_base *base,
                       const ppl_layer_base *base16, ppl_micro *out)
{
    ppl_layer_time_finish(ctx->model, c, &ctx->eff, true, base, &out->moe);
    out->moe16 = out->moe;
    if (base16) {
        ppl_config c16 = *c;
        c16.precision = PPL_PRECISION_BF16;
        ppl_layer_time_finish(ctx->model, &c16, &ctx->eff, true, base16, &out->moe16);
    }
}

/* A layer's parameters and MoE times, kept when the tables could be had; a MoE
 * layer's from `base` (and `base16` where layers are kept in bf16) when given. */
static void layout_parts(ppl_micro_cache *cache, const ppl_eval_ctx *ctx, const ppl_config *c,
                         const int64_t key[PPL_MICRO_KEY], const ppl_layer_base *base,
                         const ppl_layer_base *base16, ppl_micro *out)
{
    const ppl_model *m = ctx->model;
    const bool moe = m->has_moe, moe16 = moe && c->bf16_layers > 0;
    ppl_memory_parts *mem = &out->mem;
    cache->layout = table_of(cache->layout, LAYOUT_SLOTS, sizeof *cache->layout);
    if (moe)
        cache->moe = table_of(cache->moe, LAYOUT_SLOTS, sizeof *cache->moe);
    if (moe16)
        cache->moe16 = table_of(cache->moe16, LAYOUT_SLOTS, sizeof *cache->moe16);
    if (!cache->layout || (moe && !cache->moe) || (moe16 && !cache->moe16)) {
        ppl_micro_moe_init(ctx, c, out); /* computed each time */
        ppl_memory_parts_layers(m, c, mem);
        return;
    }
    bool found;
    const size_t i = ppl_slot_for(cache->layout_at, &cache->nlayout, LAYOUT_SLOTS,
                                  ppl_micro_key_hash(key, 8), &found);
    layout_slot *l = &cache->layout[i];
    if (!found || memcmp(l->key, key, sizeof l->key) != 0) {
        if (moe && base)
            moe_finish(ctx, c, base, base16, out);
        else
            ppl_micro_moe_init(ctx, c, out);
        layer_params(cache, m, c, key, mem);
        if (moe)
            cache->moe[i] = out->moe;
        if (moe16)
            cache->moe16[i] = out->moe16;
#define X(f) l->f = mem->f;
        LAYER_FIELDS
#undef X
        memcpy(l->key, key, sizeof l->key);
        return;
    }
    /* as micro_moe_init sets them */
    if (moe)
        out->moe = cache->moe[i];
    else
        memset(&out->moe, 0, sizeof out->moe);
    out->moe16 = moe16 ? cache->moe16[i] : out->moe;
#define X(f) mem->f = l->f;
    LAYER_FIELDS
#undef X
}

void ppl_micro_cache_fill(ppl_micro_cache *cache, const ppl_eval_ctx *ctx, const ppl_config *c,
                          ppl_micro *out)
{
    int64_t key[PPL_MICRO_KEY];
    ppl_micro_key(c, key);
    const ppl_model *m = ctx->model;
    bool found;
    const bool dense16 = c->bf16_layers > 0;
    if (dense16)
        cache->dense16 = table_of(cache->dense16, SHARED_SLOTS, sizeof *cache->dense16);
    if (dense16 && !cache->dense16) {
        ppl_micro_compute_init(ctx, c, out); /* computed each time */
        return;
    }
    /* allocated before the first slot is filled, or never: every slot filled
     * then holds its base */
    const bool moe = m->has_moe;
    if (moe && cache->nshared == 0) {
        cache->moe_base = table_of(cache->moe_base, SHARED_SLOTS, sizeof *cache->moe_base);
        if (dense16)
            cache->moe16_base =
                table_of(cache->moe16_base, SHARED_SLOTS, sizeof *cache->moe16_base);
    }
    const size_t i = ppl_slot_for(cache->shared_at, &cache->nshared, SHARED_SLOTS,
                                  ppl_micro_key_hash(key, 6), &found);
    shared_slot *sh = &cache->shared[i];
    /* a MoE layer's parts but its expert layout's, where their tables could be had */
    ppl_layer_base *base = moe && cache->moe_base ? &cache->moe_base[i] : NULL;
    ppl_layer_base *base16 =
        base && dense16 ? cache->moe16_base ? &cache->moe16_base[i] : NULL : NULL;
    if (base && dense16 && !base16)
        base = NULL;
    bool head_set = false;
    if (!found || memcmp(sh->key, key, sizeof sh->key) != 0) {
        ppl_micro_dense_init(ctx, c, out); /* the head too: kept below */
        head_set = true;
        if (base)
            ppl_layer_base_of(m, ctx->topo, c, &ctx->eff, true, base);
        if (base16) {
            ppl_config c16 = *c;
            c16.precision = PPL_PRECISION_BF16;
            ppl_layer_base_of(m, ctx->topo, &c16, &ctx->eff, true, base16);
        }
        sh->dense = out->dense;
        if (dense16)
            cache->dense16[i] = out->dense16;
        sh->tp_count = out->tp_count;
        ppl_memory_parts mem;
        ppl_memory_parts_activations(m, c, &ctx->memory, &mem);
#define X(f) sh->act.f = mem.f;
        ACT_FIELDS
#undef X
        memcpy(sh->key, key, sizeof sh->key);
    } else {
        out->dense = sh->dense;
        out->dense16 = dense16 ? cache->dense16[i] : sh->dense; /* as micro_dense_init */
        out->tp_count = sh->tp_count;
    }
    const size_t j =
        ppl_slot_for(cache->head_at, &cache->nhead, HEAD_SLOTS, ppl_micro_key_hash(key, 3), &found);
    head_slot *hd = &cache->head[j];
    if (found && memcmp(hd->key, key, sizeof hd->key) == 0) {
        out->head = hd->head;
    } else {
        if (!head_set) /* as ppl_micro_dense_init computes it */
            ppl_output_time_of(m, ctx->topo, c, &ctx->eff, ctx->stack.fused_loss, &out->head);
        hd->head = out->head;
        memcpy(hd->key, key, sizeof hd->key);
    }
    /* as ppl_micro_compute_init would (test_micro_cache holds it): the
     * activations, the layout's parameters, the fixed terms */
#define X(f) out->mem.f = sh->act.f;
    ACT_FIELDS
#undef X
    layout_parts(cache, ctx, c, key, base, base16, out);
    ppl_memory_parts_fixed(m, c, &ctx->memory, &out->mem);
}

static bool same_group(const ppl_group *a, const ppl_group *b)
{
    if (a->n != b->n || a->m != b->m || a->nodes != b->nodes || a->tier != b->tier)
        return false;
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        if (a->members_in_tier[i] != b->members_in_tier[i])
            return false;
    return true;
}

unsigned ppl_micro_cache_cp(ppl_micro_cache *cache, const ppl_eval_ctx *ctx, ppl_config *c,
                            const ppl_layout *l, unsigned tried, bool prune_dominated,
                            ppl_cp_cost costs[PPL_CP_COMM_COUNT])
{
    const int64_t key[4] = {c->tp, c->cp, c->mbs, (int64_t)tried * 2 + prune_dominated};
    bool found;
    const size_t i =
        ppl_slot_for(cache->cp_at, &cache->ncp, CP_SLOTS, ppl_micro_key_hash(key, 4), &found);
    cp_slot *e = &cache->cp[i];
    if (found && memcmp(e->key, key, sizeof key) == 0 && same_group(&e->g_cp, &l->g_cp) &&
        same_group(&e->g_a2a, &l->g_cp_a2a) && same_group(&e->g_ring, &l->g_cp_ring)) {
        for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
            if (tried & (1u << x)) {
                costs[x] = e->costs[x];
                c->cp_comm = (ppl_cp_comm)x; /* as ppl_cp_comms_costed leaves it */
            }
        return e->costed;
    }
    e->costed = ppl_cp_comms_costed(ctx, c, l, tried, prune_dominated, costs);
    memcpy(e->key, key, sizeof key);
    e->g_cp = l->g_cp;
    e->g_a2a = l->g_cp_a2a;
    e->g_ring = l->g_cp_ring;
    for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
        if (tried & (1u << x))
            e->costs[x] = costs[x];
    return e->costed;
}
