/*
 * hfcheckpoint.c - the Hugging Face checkpoints of the catalogue's models (see
 * render/hfcheckpoint.h), each row the figures of its config.json.
 */
#include "render/hfcheckpoint.h"

static const ppl_hf_checkpoint checkpoints[] = {
    {.hf_model = "meta-llama/Meta-Llama-3-8B",
     .layers = 32,
     .hidden = 4096,
     .heads = 32,
     .kv_heads = 8,
     .ffn_hidden = 14336,
     .vocab = 128256,
     .max_positions = 8192},
    {.hf_model = "meta-llama/Meta-Llama-3-70B",
     .layers = 80,
     .hidden = 8192,
     .heads = 64,
     .kv_heads = 8,
     .ffn_hidden = 28672,
     .vocab = 128256,
     .max_positions = 8192},
    {.hf_model = "meta-llama/Meta-Llama-3.1-405B",
     .layers = 126,
     .hidden = 16384,
     .heads = 128,
     .kv_heads = 8,
     .ffn_hidden = 53248,
     .vocab = 128256,
     .max_positions = 131072},
    {.hf_model = "Qwen/Qwen3-30B-A3B",
     .layers = 48,
     .hidden = 2048,
     .heads = 32,
     .kv_heads = 4,
     .ffn_hidden = 6144,
     .vocab = 151936,
     .experts = 128,
     .top_k = 8,
     .expert_ffn = 768,
     .max_positions = 40960},
    {.hf_model = "Qwen/Qwen3-235B-A22B",
     .layers = 94,
     .hidden = 4096,
     .heads = 64,
     .kv_heads = 4,
     .ffn_hidden = 12288,
     .vocab = 151936,
     .experts = 128,
     .top_k = 8,
     .expert_ffn = 1536,
     .max_positions = 40960},
    {.hf_model = "deepseek-ai/DeepSeek-V3",
     .layers = 61,
     .hidden = 7168,
     .heads = 128,
     .kv_heads = 128,
     .ffn_hidden = 18432,
     .vocab = 129280,
     .experts = 256,
     .top_k = 8,
     .expert_ffn = 2048,
     .kv_lora = 512,
     .mtp = 1,
     .max_positions = 163840},
};

const ppl_hf_checkpoint *ppl_hf_checkpoint_of(const ppl_model *m, ppl_hf_checkpoint_miss *miss)
{
    const bool moe = m->has_moe, mla = m->attention == PPL_ATTENTION_MLA;
    *miss = (ppl_hf_checkpoint_miss){.near = NULL};
    for (size_t k = 0; k < sizeof checkpoints / sizeof checkpoints[0]; k++) {
        const ppl_hf_checkpoint *r = &checkpoints[k];
        if (r->layers != m->layers || r->hidden != m->hidden || r->heads != m->heads)
            continue;
        const ppl_hf_checkpoint_miss keys[] = {
            {r, "moe.experts", moe ? m->moe.experts : 0, r->experts}, /* the largest first */
            {r, "moe.top_k", moe ? m->moe.top_k : 0, r->top_k},
            {r, "moe.ffn_hidden", moe ? m->moe.ffn_hidden : 0, r->expert_ffn},
            {r, "kv_heads", m->kv_heads, r->kv_heads},
            {r, "ffn_hidden", m->ffn_hidden, r->ffn_hidden},
            {r, "vocab", m->vocab, r->vocab},
            {r, "attention.kv_lora_rank", mla ? m->mla.kv_lora_rank : 0, r->kv_lora},
            {r, "mtp_layers", m->mtp_layers, r->mtp},
        };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (keys[i].model != keys[i].checkpoint) {
                *miss = keys[i];
                return NULL;
            }
        return r;
    }
    return NULL;
}
