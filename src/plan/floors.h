/*
 * plan/floors.h - the compute-alone bounds of a search's replica shapes, kept by
 * what they read, and the test that prunes a shape with them (floors.c).
 */
#ifndef PARPLAN_FLOORS_H
#define PARPLAN_FLOORS_H

#include "plan/bounds.h"

/* The first part kept for a search, by what it reads: the microbatch's compute
 * parts (ppl_micro_cache_fill's key, less whether there are replicas, and whether
 * there are stages unless the stack adds gradients unfused: floors.c) and the
 * recomputed layers.  Every exchange is free in it, so the pipeline, the
 * replicas, ZeRO and the layout do not enter (stage.c ppl_stage_eval: each term
 * that reads them is a product of an exchange); a search meets it under every
 * pipeline and replica count of its layout.  ppl_floor_cached asks `computed` for
 * the parts only when it is not kept; NULL from ppl_floor_cache_new when out of
 * memory. */
typedef struct ppl_floor_cache ppl_floor_cache;
ppl_floor_cache *ppl_floor_cache_new(void);
void ppl_floor_cache_free(ppl_floor_cache *cache);
const ppl_compute_floor *ppl_floor_cached(ppl_floor_cache *cache, ppl_micro_cache *computed,
                                          const ppl_eval_ctx *ctx, const ppl_pins *pins,
                                          const ppl_config *c);

/* The knobs a group of configurations takes: sequence parallelism (0, 1),
 * recomputation (ppl_recompute) and flash attention (0, 1). */
typedef struct ppl_floor_choices {
    const int64_t *sps;
    int nsps;
    const int64_t *recomputes;
    int nrecomputes;
    const int64_t *flashes;
    int nflashes;
} ppl_floor_choices;

/* Whether every configuration c takes with those knobs has its compute-alone
 * bound (ppl_bound_step_compute_from) above `worst`.  On compute alone sequence
 * parallelism only takes work away (a layer's element-wise kernels outside its
 * tensor-parallel part, split over tp) and recomputation only adds it
 * (compute.c), so the least bound is among the choices with sequence parallelism
 * and without recomputation, where those are choices: the others are costed only
 * when that least is within rounding (1e-9) of `worst`. */
bool ppl_floor_over(ppl_floor_cache *cache, ppl_micro_cache *computed, const ppl_eval_ctx *ctx,
                    const ppl_pins *pins, ppl_config *c, const ppl_floor_choices *k, double worst);

#endif
