/*
 * render/launch.h - how a plan is launched: the `launch` object of a result
 * (launch.c), Megatron-LM's flags with their environment and oldest release, and
 * a Megatron-Bridge recipe (render/bridge.h), a DeepSpeed config, a torchtitan job
 * (render/torchtitan.h), or for each launcher why it cannot run the plan.
 */
#ifndef PARPLAN_LAUNCH_H
#define PARPLAN_LAUNCH_H

#include <stdint.h>

#include "cost/estimate.h"
#include "model/model.h"

struct json_t;

/* The result's launch object: Megatron-LM flags (checked against its own rules),
 * their environment and oldest release, a DeepSpeed config, or for each launcher
 * why it cannot run the plan.  stage_layers (pp counts, vp 1), when not NULL, are
 * the layers of each stage instead of the config's split (a mixed cluster's). */
struct json_t *ppl_launch_json(const ppl_estimate *estimate, const ppl_model *model,
                               const int64_t *stage_layers);

/* Marks a launcher ("deepspeed", "torchtitan") of a launch object as unable to run
 * the plan: its part null, its _error why, its _note gone, and out of launchers. */
void ppl_launch_refuse(struct json_t *launch, const char *launcher, const char *why);

#endif
