/*
 * render/verl.h - an RL plan as verl v0.7.0 runs it (verl.c): the entry point
 * and Hydra overrides of its Megatron trainer and vLLM rollout, or the rule
 * that refuses the plan.
 */
#ifndef PARPLAN_VERL_H
#define PARPLAN_VERL_H

#include <stdint.h>

#include "studies/rl.h"

struct json_t;

/* The verl object {version, argv, overrides} of an RL
 * plan of `model` on servers of gpus_per_server GPUs of gpu_memory_bytes each,
 * or NULL with why (at most why_len bytes). */
struct json_t *ppl_launch_verl(const ppl_model *model, const ppl_rl_plan *plan,
                               const ppl_rl_workload *workload, int64_t gpus_per_server,
                               double gpu_memory_bytes, char *why, size_t why_len);

#endif
