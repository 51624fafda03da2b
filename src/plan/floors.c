/*
 * floors.c - the compute-alone bounds of a search's shapes (see plan/floors.h).
 */
#include "plan/floors.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/minmax.h"
#include "base/pages.h"
#include "cost/stack.h"

/* the most slots, a power of two, that the one huge page the table takes holds
 * (base/pages.h: its length rounds up to 2 MiB).  DeepSeek-V3 on meta-24k-roce
 * meets 38,746 keys: 4,096 slots missed 43,904 times, 8,192 miss 41,606.  Not a
 * power of two, a position is the hash modulo a factor such as 15 as well, which
 * for FNV-1a over small integers is little more than its hex digits' sum: 15,360
 * slots missed 26,411 times on a GPT-3 whatif that 4,096 missed 10,071 times. */
#define FLOOR_SLOTS 8192
typedef struct floor_slot {
    int64_t key[PPL_MICRO_KEY + 1];
    ppl_compute_floor floor;
} floor_slot;
/* filled in order (ppl_slot_for): the pages written are the keys met */
struct ppl_floor_cache {
    uint16_t slot_at[FLOOR_SLOTS];
    size_t n;
    floor_slot slot[FLOOR_SLOTS];
};
_Static_assert(sizeof(struct ppl_floor_cache) <= ((size_t)2 << 20), "one huge page");

ppl_floor_cache *ppl_floor_cache_new(void)
{
    ppl_floor_cache *cache = ppl_pages_alloc(sizeof *cache);
    if (cache) {
        memset(cache->slot_at, 0, sizeof cache->slot_at);
        cache->n = 0;
    }
    return cache;
}

void ppl_floor_cache_free(ppl_floor_cache *cache)
{
    ppl_pages_free(cache, sizeof *cache);
}

const ppl_compute_floor *ppl_floor_cached(ppl_floor_cache *cache, ppl_micro_cache *computed,
                                          const ppl_eval_ctx *ctx, const ppl_pins *pins,
                                          const ppl_config *c)
{
    int64_t key[PPL_MICRO_KEY + 1]; /* the compute parts', and the recomputed layers */
    ppl_micro_key(c, key);
    key[PPL_MICRO_KEY] = c->recompute_layers;
    /* of the parts, a floor reads no memory but the layer's parameters (which
     * read neither of the last two fields) and, where the stack adds each
     * microbatch's gradients unfused, the ends' (stage.c ppl_stage_eval): the
     * output layer's reads pp > 1, a tied embedding's copy.  Replicas (dp > 1)
     * change only the communicators' memory (memory.c ppl_memory_parts_fixed). */
    if (!ppl_stack_grad_accum_unfused(&ctx->stack, c))
        key[PPL_MICRO_KEY_STAGES] = 0;
    key[PPL_MICRO_KEY_REPLICAS] = 0;
    const uint64_t h = ppl_micro_key_hash(key, PPL_MICRO_KEY + 1);
    bool found;
    floor_slot *f = &cache->slot[ppl_slot_for(cache->slot_at, &cache->n, FLOOR_SLOTS, h, &found)];
    if (!found || memcmp(f->key, key, sizeof key) != 0) {
        ppl_micro parts;
        ppl_micro_cache_fill(computed, ctx, c, &parts);
        ppl_bound_compute_floor(ctx, pins, c, &parts, &f->floor);
        memcpy(f->key, key, sizeof key);
    }
    return &f->floor;
}

/* The least compute-alone bound over the knobs, or the first found at most
 * `below`. */
static double least_floor(ppl_floor_cache *cache, ppl_micro_cache *computed,
                          const ppl_eval_ctx *ctx, const ppl_pins *pins, ppl_config *c,
                          const ppl_floor_choices *k, double below)
{
    double least = INFINITY;
    for (int i = 0; i < k->nsps; i++)
        for (int h = 0; h < k->nrecomputes; h++)
            for (int j = 0; j < k->nflashes; j++) {
                c->sequence_parallel = k->sps[i];
                c->recompute = (ppl_recompute)k->recomputes[h];
                c->flash_attention = k->flashes[j];
                const ppl_compute_floor *f = ppl_floor_cached(cache, computed, ctx, pins, c);
                least = ppl_min(least, ppl_bound_step_compute_from(ctx, c, f));
                if (least <= below)
                    return least;
            }
    return least;
}

bool ppl_floor_over(ppl_floor_cache *cache, ppl_micro_cache *computed, const ppl_eval_ctx *ctx,
                    const ppl_pins *pins, ppl_config *c, const ppl_floor_choices *k, double worst)
{
    static const int64_t sp_on[1] = {1}, none[1] = {PPL_RECOMPUTE_NONE};
    ppl_floor_choices least = *k;
    for (int i = 0; i < k->nsps; i++)
        if (k->sps[i] == 1)
            least.sps = sp_on, least.nsps = 1;
    for (int h = 0; h < k->nrecomputes; h++)
        if (k->recomputes[h] == PPL_RECOMPUTE_NONE)
            least.recomputes = none, least.nrecomputes = 1;
    const double at_least = least_floor(cache, computed, ctx, pins, c, &least, worst);
    if (at_least <= worst)
        return false;
    if (at_least > worst * (1.0 + 1e-9))
        return true;
    return least_floor(cache, computed, ctx, pins, c, k, worst) > worst;
}
