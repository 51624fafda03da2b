/*
 * cost/rules.h - one configuration from the user's pins, checked against every
 * rule of the frameworks that would run it: divisibility (Megatron-LM's
 * arguments.py), the schedule's own (pipeline.h), context and expert parallelism,
 * precision and fp8 recipes, sharding groups and offload (shard.h).  A violation
 * is PPL_EUSAGE with the knob as the key.
 */
#ifndef PARPLAN_RULES_H
#define PARPLAN_RULES_H

#include "cost/config.h"
#include "parplan/error.h"
#include "model/model.h"
#include "hardware/topology.h"

/*
 * Builds the configuration that estimate and memory evaluate from the user's
 * pins, with SPEC defaults (all GPUs of the topology, dp = gpus/(tp*pp*cp), ZeRO 0,
 * no recomputation, no sequence parallelism, no flash attention, vp 1), and checks
 * every divisibility rule.  A violation is PPL_EUSAGE with the knob as the key.
 */
ppl_status ppl_config_from_pins(const ppl_pins *pins, const ppl_model *model,
                                const ppl_topology *topo, ppl_config *config, ppl_error *err);

/* Refuses fp8, mxfp8 or nvfp4 on a GPU without that peak (a usage error naming
 * precision). */
ppl_status ppl_precision_check(int precision, const ppl_topology *topo, ppl_error *err);

/* The fp8 pins against each other, whatever the layout: a recipe other than
 * delayed only under fp8; bf16 layers only under fp8 (not delayed) or mxfp8.
 * The search checks them before it enumerates. */
ppl_status ppl_pins_check_fp8(const ppl_pins *pins, ppl_error *err);

/* The CUDA graph scope against the model and a pinned full recomputation (the
 * MoE scopes need experts, whole layers none, full recomputation the whole-step
 * graph), before the search enumerates. */
ppl_status ppl_pins_check_graphs(const ppl_pins *pins, const ppl_model *model, ppl_error *err);

/* Checks a complete configuration (used by the search as well, with err NULL:
 * whether it passes, no message formatted). */
ppl_status ppl_config_check(const ppl_config *c, const ppl_model *model, const ppl_topology *topo,
                            ppl_error *err);

#endif
