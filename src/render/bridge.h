/*
 * render/bridge.h - a plan as Megatron-Bridge v0.6.0 runs it (bridge.c): the
 * library recipe whose Hugging Face checkpoint is the planned model, and the
 * ConfigContainer fields set on it, from the Megatron-LM flags of the same plan
 * field by field; or why Bridge cannot run it.
 */
#ifndef PARPLAN_BRIDGE_H
#define PARPLAN_BRIDGE_H

#include <stddef.h>

#include "cost/estimate.h"
#include "model/model.h"

struct json_t;

/* The megatron_bridge object of a result's launch for `megatron_args` (the flags
 * Megatron-LM runs the plan with: launch.c) and their environment `env`, or NULL
 * with why (at most why_len bytes): no recipe builds the model, a flag has no
 * ConfigContainer field, or megatron_args is not an array (Megatron-Core cannot
 * run the plan). */
struct json_t *ppl_launch_bridge(const ppl_estimate *estimate, const ppl_model *model,
                                 const struct json_t *megatron_args, const struct json_t *env,
                                 char *why, size_t why_len);

#endif
