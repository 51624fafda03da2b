/*
 * plan/families.h - the families of configurations plan's default search
 * leaves out, why, and what lets each in (families.c).
 */
#ifndef PARPLAN_FAMILIES_H
#define PARPLAN_FAMILIES_H

#include <stdbool.h>

#include "cost/config.h"
#include "cost/evalctx.h"

/* The families of configurations the default search leaves out, why, and what
 * lets them in (a flag of plan, or a pin). */
typedef struct ppl_family {
    const char *name; /* "tp_across_servers", "sharded_with_pp" */
    const char *why;  /* why it is left out */
    /* what searches it: a search option (ppl_search_opts field, allow_values NULL)
     * or a pin and the values that let the family in */
    const char *allow_knob;   /* "allow_tp_across_servers", "zero" */
    const char *allow_values; /* NULL, or "2 or 3" */
} ppl_family;

typedef enum ppl_family_id {
    PPL_FAMILY_TP_ACROSS_SERVERS = 0,
    PPL_FAMILY_SHARDED_WITH_PP,
    PPL_FAMILY_COUNT
} ppl_family_id;
const ppl_family *ppl_search_family(ppl_family_id id);
/* The default search's rules, one per family (its enumeration applies them): tp
 * larger than the GPUs NVLink joins; ZeRO-2/3 with pp > 1. */
bool ppl_tp_across_servers(const ppl_eval_ctx *ctx, int64_t tp);
bool ppl_sharded_with_pp(const ppl_config *config);
/* Whether the configuration belongs to the family. */
bool ppl_search_in_family(const ppl_eval_ctx *ctx, ppl_family_id id, const ppl_config *config);

/* The family outside the default search that the configuration belongs to, or
 * NULL when the default search covers it. */
const ppl_family *ppl_search_outside(const ppl_eval_ctx *ctx, const ppl_config *config);

#endif
