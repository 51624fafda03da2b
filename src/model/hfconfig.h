/*
 * model/hfconfig.h - a Hugging Face config.json read as a model (hfconfig.c).
 */
#ifndef PARPLAN_HFCONFIG_H
#define PARPLAN_HFCONFIG_H

#include <stdbool.h>

#include "parplan/error.h"

struct json_t;

/* Whether a document is a Hugging Face config.json (it names a model_type), and
 * its translation into a parplan model document (hfconfig.c: llama, mistral,
 * qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, deepseek_v3, gpt_oss), which the
 * caller frees.  ppl_model_load reads either kind of file. */
bool ppl_model_is_hf(const struct json_t *root);
ppl_status ppl_model_doc_from_hf(const struct json_t *hf, const char *file, const ppl_diag *diag,
                                 struct json_t **out, ppl_error *err);
/* The config.json key a parplan model key ("kv_heads", "moe.experts") was read
 * from, for the config's model_type; NULL for a key no config key gives. */
const char *ppl_hf_key_of(const struct json_t *hf, const char *key);

#endif
