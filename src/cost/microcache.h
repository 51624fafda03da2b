/*
 * microcache.h - a search's microbatch compute parts and CP exchanges, kept by
 * what each reads.
 */
#ifndef PARPLAN_COST_MICROCACHE_H
#define PARPLAN_COST_MICROCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "cost/cp.h"
#include "cost/evalctx.h"
#include "cost/stage.h"

/* The compute parts a search computed, by what ppl_micro_compute_init reads of
 * the configuration (tp, cp, ep, etp, mbs, sp, recomputation, flash attention,
 * and pp and dp only as more than one: the communicators a GPU holds, the
 * output layer's copy; the pins are the search's), each part by the fields it
 * reads.  ppl_micro_cache_fill sets in `out` what ppl_micro_compute_init would
 * (computing what is not held) and nothing else.  NULL from _new when out of
 * memory. */
typedef struct ppl_micro_cache ppl_micro_cache;
/* Its key: those fields of c, in that order, and a hash of a key's first n
 * (FNV-1a), for a cache of what depends on them (plan/bounds.c keeps one). */
#define PPL_MICRO_KEY 10
#define PPL_MICRO_KEY_STAGES 8   /* pp > 1 */
#define PPL_MICRO_KEY_REPLICAS 9 /* dp > 1 */
static inline void ppl_micro_key(const ppl_config *c, int64_t key[PPL_MICRO_KEY])
{
    /* the attention layout, then the expert layout, then the stages and replicas */
    key[0] = c->tp, key[1] = c->cp, key[2] = c->mbs, key[3] = c->sequence_parallel;
    key[4] = c->recompute, key[5] = c->flash_attention;
    key[6] = c->ep, key[7] = ppl_config_etp(c);
    key[PPL_MICRO_KEY_STAGES] = c->pp > 1, key[PPL_MICRO_KEY_REPLICAS] = c->dp > 1;
}
static inline uint64_t ppl_micro_key_hash(const int64_t *key, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the key */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint64_t)key[i]) * 1099511628211ull;
    return h;
}
/* A table filled in order: hash position `at` holds its slot's index + 1 (0:
 * none), so that a new table clears kilobytes and the pages written are the keys
 * met, not a page a position.  The slot of a key's position, hash % cap (*found:
 * it holds a key, maybe another's): the one it names, else the next unused one,
 * else, the table full, the position's own index (whichever position named it then
 * finds another key there): as many positions as slots.  cap is at most 65,535. */
static inline size_t ppl_slot_for(uint16_t *slot_at, size_t *n, size_t cap, uint64_t hash,
                                  bool *found)
{
    const size_t at = (size_t)(hash % cap);
    *found = slot_at[at] != 0;
    if (*found)
        return slot_at[at] - 1u;
    size_t i = *n < cap ? (*n)++ : at;
    slot_at[at] = (uint16_t)(i + 1);
    return i;
}
ppl_micro_cache *ppl_micro_cache_new(void);
/* ppl_cp_comms_costed (cp.h) for a layout, kept by what it reads (the first
 * time computed, then copied): the same costs, the same algorithms, and the same
 * c->cp_comm left. */
unsigned ppl_micro_cache_cp(ppl_micro_cache *cache, const ppl_eval_ctx *ctx, ppl_config *c,
                            const ppl_layout *l, unsigned tried, bool prune_dominated,
                            ppl_cp_cost costs[PPL_CP_COMM_COUNT]);
void ppl_micro_cache_free(ppl_micro_cache *cache);
void ppl_micro_cache_fill(ppl_micro_cache *cache, const ppl_eval_ctx *ctx, const ppl_config *c,
                          ppl_micro *out);

#endif
