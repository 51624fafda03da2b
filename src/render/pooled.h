/*
 * render/pooled.h - a plan on a mixed cluster as the command line and the
 * contract show it: a result object like any other (config, step, memory, time,
 * traffic, launch) with `pools`, where its stages run (pooled.c).
 */
#ifndef PARPLAN_POOLED_H
#define PARPLAN_POOLED_H

#include <stddef.h>
#include <stdint.h>

#include "hardware/topology.h"
#include "model/model.h"
#include "plan/mixed.h"

struct json_t;

/* The result object of ppl_estimate_json for the plan's estimate, its config's
 * stage_layers as the plan splits them, `pools` (each pool's name, GPU, stages,
 * GPUs, layers per stage, fullest GPU's memory and capacity), the send across a
 * pool boundary, and, for a pipeline across pools, Megatron-LM's flags with each
 * stage's layers and the nodes of each pool in rank order (launch.nodes); no
 * DeepSpeed config (said under deepspeed_error). */
struct json_t *ppl_pooled_json(const ppl_pools *pools, const ppl_mixed_plan *plan,
                               const ppl_model *model);

/* "h100 x2 > b200 x1": the pools in pipeline order with their stages. */
void ppl_pooled_assignment_text(const ppl_pools *pools, const ppl_mixed_plan *plan, char *buf,
                                size_t size);
/* "12 x3, 11": layers per stage, runs of equal counts folded. */
void ppl_pooled_layers_text(const int64_t *layers, int64_t n, char *buf, size_t size);

#endif
