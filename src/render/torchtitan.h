/*
 * render/torchtitan.h - a plan as torchtitan v0.2.2 runs it (torchtitan.c): the
 * tables of its job TOML, found by the model's figures in torchtitan's registry
 * and checked against torchtitan's own rules, or why it cannot run the plan.
 */
#ifndef PARPLAN_TORCHTITAN_H
#define PARPLAN_TORCHTITAN_H

#include <stddef.h>
#include <stdint.h>

#include "cost/estimate.h"
#include "model/model.h"

struct json_t;

/* The tables of a torchtitan v0.2.2 job TOML that runs the plan as costed (an
 * object per table), or NULL with why (at most why_len bytes) when torchtitan
 * cannot: no flavor of its registry builds the model, or a rule of its own refuses
 * the layout.  stage_layers as for ppl_launch_json. */
struct json_t *ppl_launch_torchtitan(const ppl_estimate *estimate, const ppl_model *model,
                                     const int64_t *stage_layers, char *why, size_t why_len);

#endif
