/*
 * render/hfcheckpoint.h - the Hugging Face checkpoints the launchers load a
 * catalogue model from (hfcheckpoint.c): a checkpoint is the model when its
 * config.json has the model's figures.  Megatron-Bridge's recipes
 * (render/bridge.h), the inference engines (render/engine.h) and verl (render/verl.h)
 * build from one.
 */
#ifndef PARPLAN_HFCHECKPOINT_H
#define PARPLAN_HFCHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct ppl_hf_checkpoint {
    const char *hf_model; /* the Hub id */
    int64_t layers, hidden, heads, kv_heads, ffn_hidden, vocab;
    int64_t experts, top_k, expert_ffn, kv_lora, mtp;
    int64_t max_positions; /* config.json max_position_embeddings: the longest
                              sequence an engine derives (tokens) */
} ppl_hf_checkpoint;

/* Why no checkpoint is the model: the one of its layers, width and heads (NULL
 * when none has them) and the first figure of it that differs, the experts first. */
typedef struct ppl_hf_checkpoint_miss {
    const ppl_hf_checkpoint *near;
    const char *key;
    int64_t model, checkpoint;
} ppl_hf_checkpoint_miss;

/* The checkpoint with the model's figures, or NULL with *miss said. */
const ppl_hf_checkpoint *ppl_hf_checkpoint_of(const ppl_model *model, ppl_hf_checkpoint_miss *miss);

#endif
