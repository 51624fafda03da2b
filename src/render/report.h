/*
 * render/report.h - configurations and their figures as JSON and as text.
 *
 * The SPEC output fields (config, memory, ...) are built here once, so that
 * memory, estimate, plan and validate print them the same way.
 */
#ifndef PARPLAN_REPORT_H
#define PARPLAN_REPORT_H

#include "cost/config.h"
#include "cost/memory.h"
#include "model/model.h"
#include "base/output.h"
#include "cost/estimate.h"

struct json_t;

/* SPEC config object: gpus, tp, pp, dp, cp, ep, vp, mbs, global_batch,
 * microbatches, zero, recompute, sequence_parallel, flash_attention, precision,
 * stage_layers (and optimizer, schedule; etp for a model with experts, which
 * may be NULL: none). */
struct json_t *ppl_config_json(const ppl_config *config, const ppl_model *model);

/* The inverse: pins from a configuration object as ppl_config_json writes it (a
 * plan's results[i].config), every knob pinned; errors name `path`'s keys in
 * `file`, and an unknown key is warned about on diag (NULL: not).  Of the derived
 * keys, microbatches must be global_batch / (dp x mbs) where given; cp_a2a is read
 * over. */
ppl_status ppl_pins_from_config_json(const struct json_t *config, const char *file,
                                     const char *path, const ppl_diag *diag, ppl_pins *out,
                                     ppl_error *err);

/* SPEC memory object (bytes): weights, gradients, optimizer, activations, other,
 * total, capacity, fits (and worst_stage). */
struct json_t *ppl_memory_json(const ppl_memory *memory);

/* A configuration result per SPEC: config, step_time_s, tokens_per_s, model and
 * hardware TFLOP/s per GPU, mfu, memory, time, traffic, launch (Megatron-LM flags,
 * DeepSpeed config), and the bottleneck. */
struct json_t *ppl_estimate_json(const ppl_estimate *estimate, const ppl_model *model);
/* The same for people: step time, breakdowns, bottleneck. */
void ppl_estimate_text(const ppl_estimate *estimate, ppl_buf *out);

/* "tp 8 x pp 8 x dp 16, vp 1, mbs 1, ..." one line describing a configuration. */
void ppl_config_describe(const ppl_config *config, char *buf, size_t size);

/* The recomputation mode as tables show it: "none", "selective", "full", or
 * "full:N" when only N layers of each stage are recomputed.  Returns buf. */
const char *ppl_recompute_label(const ppl_config *config, char *buf, size_t size);
/* The ZeRO stage as the tables write it: "1", "2/8" sharded in groups of 8 ranks,
 * "2+off" with the optimizer state offloaded; buf, for use in an expression. */
const char *ppl_zero_label(const ppl_config *config, char *buf, size_t size);

#endif
