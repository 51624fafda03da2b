/*
 * bridge.c - a plan as Megatron-Bridge v0.6.0 runs it (see render/bridge.h).
 * Paths and lines are Megatron-Bridge's at tag v0.6.0 (2026-08-19) and, for the
 * model's fields, the Megatron-Core it pins (3rdparty/Megatron-LM at cd4afffa64).
 *
 * A recipe builds its model from a Hugging Face checkpoint (AutoBridge
 * .from_hf_pretrained(...).to_megatron_provider() in each recipe), so the
 * model identity is the checkpoint's; everything the plan decides is set on the
 * recipe's ConfigContainer, each Megatron-LM flag of the plan as the field of the
 * same name, and every layout field the flags leave out set to what the flags'
 * absence means (a recipe sets its own: Llama 3 8B's cp 2, DeepSeek-V3's
 * hybridep dispatcher, the current-scaling recipe's bf16 first and last layers).
 */
#include "render/bridge.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/hfcheckpoint.h"

/* The recipes, by the checkpoint they build (render/hfcheckpoint.h). */
typedef struct bridge_recipe {
    const char *hf_model, *module, *function, *where;
} bridge_recipe;

#define LLAMA "megatron.bridge.recipes.llama.llama3"
#define QWEN "megatron.bridge.recipes.qwen.qwen3_moe"
static const bridge_recipe recipes[] = {
    {"meta-llama/Meta-Llama-3-8B", LLAMA, "llama3_8b_pretrain_config",
     "recipes/llama/h100/llama3.py:242"},
    {"meta-llama/Meta-Llama-3-70B", LLAMA, "llama3_70b_pretrain_config",
     "recipes/llama/h100/llama3.py:724"},
    {"meta-llama/Meta-Llama-3.1-405B", LLAMA, "llama31_405b_pretrain_config",
     "recipes/llama/h100/llama3.py:1207"},
    {"Qwen/Qwen3-30B-A3B", QWEN, "qwen3_30b_a3b_pretrain_config",
     "recipes/qwen/h100/qwen3_moe.py:40"},
    {"Qwen/Qwen3-235B-A22B", QWEN, "qwen3_235b_a22b_pretrain_config",
     "recipes/qwen/h100/qwen3_moe.py:238"},
    {"deepseek-ai/DeepSeek-V3", "megatron.bridge.recipes.deepseek.deepseek_v3",
     "deepseek_v3_pretrain_config", "recipes/deepseek/h100/deepseek_v3.py:266"},
};
#undef LLAMA
#undef QWEN

static const bridge_recipe *recipe_by_checkpoint(const char *hf_model)
{
    for (size_t k = 0; k < sizeof recipes / sizeof recipes[0]; k++)
        if (strcmp(recipes[k].hf_model, hf_model) == 0)
            return &recipes[k];
    return NULL;
}

static const bridge_recipe *recipe_of(const ppl_model *m, char *why, size_t len)
{
    ppl_hf_checkpoint_miss miss;
    const ppl_hf_checkpoint *ck = ppl_hf_checkpoint_of(m, &miss);
    const bridge_recipe *r = recipe_by_checkpoint(ck          ? ck->hf_model
                                                  : miss.near ? miss.near->hf_model
                                                              : "");
    if (ck && r)
        return r;
    if (miss.near && r)
        snprintf(why, len,
                 "Megatron-Bridge v0.6.0's %s builds %s (%s), whose %s is %lld where the "
                 "model has %lld",
                 r->function, r->hf_model, r->where, miss.key, (long long)miss.checkpoint,
                 (long long)miss.model);
    else
        snprintf(why, len,
                 "no Megatron-Bridge v0.6.0 recipe builds a checkpoint of %lld layers of width "
                 "%lld with %lld heads (Llama 3 8B/70B, Llama 3.1 405B, Qwen3 30B-A3B/235B-A22B, "
                 "DeepSeek-V3)",
                 (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    return NULL;
}

/* How a Megatron-LM flag lands in the ConfigContainer. */
typedef enum {
    V_INT,   /* one integer value */
    V_REAL,  /* one number */
    V_STR,   /* one string */
    V_TRUE,  /* bare: the fields true */
    V_FALSE, /* bare: the fields false */
    V_INTS2, /* two integers, a list */
    V_VP,    /* the virtual stages a rank: the config's vp */
    V_CONST, /* bare: the field takes the string given */
    SKIP0,   /* the checkpoint's, or the precision recipe's: bare */
    SKIP1,   /* the same, with a value */
    SKIPN,   /* the same, with every value up to the next flag (set from the config) */
} flag_kind;

/* Megatron-LM's flag, its kind and the fields it sets (the Core config fields
 * of the same name: transformer_config.py, model_parallel_config.py,
 * distributed_data_parallel_config.py, optimizer_config.py; Bridge's own:
 * training/config.py, mixed_precision.py, comm_overlap.py). */
static const struct {
    const char *flag;
    flag_kind kind;
    const char *field, *field2;
    const char *constant; /* V_CONST's value */
} flags[] = {
    {"--tensor-model-parallel-size", V_INT, "model.tensor_model_parallel_size", NULL, NULL},
    {"--pipeline-model-parallel-size", V_INT, "model.pipeline_model_parallel_size", NULL, NULL},
    {"--context-parallel-size", V_INT, "model.context_parallel_size", NULL, NULL},
    {"--cp-comm-type", V_STR, "model.cp_comm_type", NULL, NULL},
    {"--hierarchical-context-parallel-sizes", V_INTS2, "model.hierarchical_context_parallel_sizes",
     NULL, NULL},
    {"--expert-model-parallel-size", V_INT, "model.expert_model_parallel_size", NULL, NULL},
    {"--expert-tensor-parallel-size", V_INT, "model.expert_tensor_parallel_size", NULL, NULL},
    {"--num-layers-per-virtual-pipeline-stage", V_VP, "model.virtual_pipeline_model_parallel_size",
     NULL, NULL},
    {"--num-virtual-stages-per-pipeline-rank", V_INT, "model.virtual_pipeline_model_parallel_size",
     NULL, NULL},
    {"--pipeline-model-parallel-layout", V_STR, "model.pipeline_model_parallel_layout", NULL, NULL},
    {"--microbatch-group-size-per-virtual-pipeline-stage", V_INT,
     "model.microbatch_group_size_per_vp_stage", NULL, NULL},
    {"--decoder-first-pipeline-num-layers", V_INT, "model.num_layers_in_first_pipeline_stage", NULL,
     NULL},
    {"--decoder-last-pipeline-num-layers", V_INT, "model.num_layers_in_last_pipeline_stage", NULL,
     NULL},
    {"--account-for-embedding-in-pipeline-split", V_TRUE,
     "model.account_for_embedding_in_pipeline_split", NULL, NULL},
    {"--account-for-loss-in-pipeline-split", V_TRUE, "model.account_for_loss_in_pipeline_split",
     NULL, NULL},
    {"--micro-batch-size", V_INT, "train.micro_batch_size", NULL, NULL},
    {"--global-batch-size", V_INT, "train.global_batch_size", NULL, NULL},
    {"--sequence-parallel", V_TRUE, "model.sequence_parallel", NULL, NULL},
    {"--recompute-granularity", V_STR, "model.recompute_granularity", NULL, NULL},
    {"--recompute-method", V_STR, "model.recompute_method", NULL, NULL},
    {"--recompute-num-layers", V_INT, "model.recompute_num_layers", NULL, NULL},
    {"--use-distributed-optimizer", V_TRUE, "ddp.use_distributed_optimizer",
     "optimizer.use_distributed_optimizer", NULL},
    {"--use-megatron-fsdp", V_TRUE, "ddp.use_megatron_fsdp", "dist.use_megatron_fsdp", NULL},
    {"--data-parallel-sharding-strategy", V_STR, "ddp.data_parallel_sharding_strategy", NULL, NULL},
    {"--ckpt-format", V_STR, "checkpoint.ckpt_format", NULL, NULL},
    {"--overlap-grad-reduce", V_TRUE, "ddp.overlap_grad_reduce", NULL, NULL},
    /* config.py:1964-1975 keeps the two in step */
    {"--overlap-param-gather", V_TRUE, "ddp.overlap_param_gather", "optimizer.overlap_param_gather",
     NULL},
    {"--tp-comm-overlap", V_TRUE, "comm_overlap.tp_comm_overlap", NULL, NULL},
    {"--attention-backend", V_STR, "model.attention_backend", NULL, NULL},
    {"--bf16", SKIP0, NULL, NULL, NULL},
    {"--fp16", SKIP0, NULL, NULL, NULL},
    {"--fp8-format", SKIP1, NULL, NULL, NULL},
    {"--fp8-recipe", SKIP1, NULL, NULL, NULL},
    {"--fp4-format", SKIP1, NULL, NULL, NULL},
    {"--fp4-recipe", SKIP1, NULL, NULL, NULL},
    /* mixed_precision.py:138-160: the precision config's fields overwrite the
     * model's, the optimizer's and DDP's, so they are set on it */
    {"--grad-reduce-in-bf16", V_FALSE, "mixed_precision.grad_reduce_in_fp32", NULL, NULL},
    {"--fp8-param-gather", V_TRUE, "mixed_precision.fp8_param_gather", NULL, NULL},
    {"--reuse-grad-buf-for-mxfp8-param-ag", V_TRUE,
     "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag", NULL, NULL},
    {"--first-last-layers-bf16", V_TRUE, "mixed_precision.first_last_layers_bf16", NULL, NULL},
    {"--num-layers-at-start-in-bf16", V_INT, "mixed_precision.num_layers_at_start_in_bf16", NULL,
     NULL},
    {"--num-layers-at-end-in-bf16", V_INT, "mixed_precision.num_layers_at_end_in_bf16", NULL, NULL},
    {"--optimizer", V_STR, "optimizer.optimizer", NULL, NULL},
    {"--num-distributed-optimizer-instances", V_INT, "ddp.num_distributed_optimizer_instances",
     NULL, NULL},
    /* Megatron-LM's flag offloads all of it unless told (arguments.py
     * --optimizer-offload-fraction, default 1.0); Megatron-Core's field defaults
     * to 0.0 (optimizer_config.py:347 at cd4afffa64): set with the offload */
    {"--optimizer-cpu-offload", V_TRUE, "optimizer.optimizer_cpu_offload", NULL, NULL},
    {"--optimizer-offload-fraction", V_REAL, "optimizer.optimizer_offload_fraction", NULL, NULL},
    {"--use-precision-aware-optimizer", V_TRUE, "optimizer.use_precision_aware_optimizer", NULL,
     NULL},
    {"--overlap-cpu-optimizer-d2h-h2d", V_TRUE, "optimizer.overlap_cpu_optimizer_d2h_h2d", NULL,
     NULL},
    {"--seq-length", V_INT, "model.seq_length", "dataset.seq_length", NULL},
    {"--make-vocab-size-divisible-by", V_INT, "model.make_vocab_size_divisible_by", NULL, NULL},
    {"--attention-dropout", V_REAL, "model.attention_dropout", NULL, NULL},
    {"--hidden-dropout", V_REAL, "model.hidden_dropout", NULL, NULL},
    {"--rope-type", V_STR, "model.rope_type", NULL, NULL},
    {"--no-rope-fusion", V_FALSE, "model.apply_rope_fusion", NULL, NULL},
    {"--mtp-num-layers", V_INT, "model.mtp_num_layers", NULL, NULL},
    {"--moe-token-dispatcher-type", V_STR, "model.moe_token_dispatcher_type", NULL, NULL},
    /* deprecated for moe_flex_dispatcher_backend "deepep" (transformer_config.py:
     * 1589-1602 at cd4afffa64) */
    {"--moe-enable-deepep", V_CONST, "model.moe_flex_dispatcher_backend", NULL, "deepep"},
    {"--overlap-moe-expert-parallel-comm", V_TRUE, "comm_overlap.overlap_moe_expert_parallel_comm",
     NULL, NULL},
    {"--moe-grouped-gemm", V_TRUE, "model.moe_grouped_gemm", NULL, NULL},
    {"--moe-expert-capacity-factor", V_REAL, "model.moe_expert_capacity_factor", NULL, NULL},
    /* CUDA graphs: set from the configuration after the loop (the flags are
     * core_v0.16's spellings, Bridge's fields the pinned Core's) */
    {"--cuda-graph-impl", SKIP1, NULL, NULL, NULL},
    {"--cuda-graph-scope", SKIPN, NULL, NULL, NULL},
    {"--no-check-for-nan-in-loss-and-grad", SKIP0, NULL, NULL, NULL},
    {"--moe-router-num-groups", V_INT, "model.moe_router_num_groups", NULL, NULL},
    {"--moe-router-group-topk", V_INT, "model.moe_router_group_topk", NULL, NULL},
    /* the network: the checkpoint's config.json (AutoBridge) */
    {"--num-layers", SKIP1, NULL, NULL, NULL},
    {"--hidden-size", SKIP1, NULL, NULL, NULL},
    {"--ffn-hidden-size", SKIP1, NULL, NULL, NULL},
    {"--num-attention-heads", SKIP1, NULL, NULL, NULL},
    {"--kv-channels", SKIP1, NULL, NULL, NULL},
    {"--group-query-attention", SKIP0, NULL, NULL, NULL},
    {"--num-query-groups", SKIP1, NULL, NULL, NULL},
    {"--max-position-embeddings", SKIP1, NULL, NULL, NULL},
    {"--swiglu", SKIP0, NULL, NULL, NULL},
    {"--untie-embeddings-and-output-weights", SKIP0, NULL, NULL, NULL},
    {"--normalization", SKIP1, NULL, NULL, NULL},
    {"--position-embedding-type", SKIP1, NULL, NULL, NULL},
    {"--rotary-base", SKIP1, NULL, NULL, NULL},
    {"--qk-layernorm", SKIP0, NULL, NULL, NULL},
    {"--disable-bias-linear", SKIP0, NULL, NULL, NULL},
    {"--multi-latent-attention", SKIP0, NULL, NULL, NULL},
    {"--q-lora-rank", SKIP1, NULL, NULL, NULL},
    {"--kv-lora-rank", SKIP1, NULL, NULL, NULL},
    {"--qk-head-dim", SKIP1, NULL, NULL, NULL},
    {"--qk-pos-emb-head-dim", SKIP1, NULL, NULL, NULL},
    {"--v-head-dim", SKIP1, NULL, NULL, NULL},
    {"--num-experts", SKIP1, NULL, NULL, NULL},
    {"--moe-router-topk", SKIP1, NULL, NULL, NULL},
    {"--moe-ffn-hidden-size", SKIP1, NULL, NULL, NULL},
    {"--moe-layer-freq", SKIP1, NULL, NULL, NULL},
    {"--moe-shared-expert-intermediate-size", SKIP1, NULL, NULL, NULL},
    {"--moe-router-score-function", SKIP1, NULL, NULL, NULL},
    {"--moe-router-enable-expert-bias", SKIP0, NULL, NULL, NULL},
    {"--moe-router-topk-scaling-factor", SKIP1, NULL, NULL, NULL},
};

/* What the flags' absence means for every field they set, and the fields a
 * recipe sets that would change the layout or the memory costed (CUDA graphs,
 * activation offload, recompute modules). */
static void set_defaults(json_t *set, const ppl_model *m)
{
    static const char *const none[] = {
        "model.virtual_pipeline_model_parallel_size",
        "model.pipeline_model_parallel_layout",
        "model.microbatch_group_size_per_vp_stage",
        "model.num_layers_in_first_pipeline_stage",
        "model.num_layers_in_last_pipeline_stage",
        "model.hierarchical_context_parallel_sizes",
        "model.recompute_granularity",
        "model.recompute_method",
        "model.recompute_num_layers",
        "model.recompute_modules",
        "comm_overlap",
    };
    static const char *const off[] = {
        "model.account_for_embedding_in_pipeline_split",
        "model.account_for_loss_in_pipeline_split",
        "model.sequence_parallel",
        "model.fine_grained_activation_offloading",
        "ddp.use_distributed_optimizer",
        "optimizer.use_distributed_optimizer",
        "ddp.use_megatron_fsdp",
        "dist.use_megatron_fsdp",
        "ddp.overlap_grad_reduce",
        "ddp.overlap_param_gather",
        "optimizer.overlap_param_gather",
        "optimizer.optimizer_cpu_offload",
        "optimizer.use_precision_aware_optimizer",
        "optimizer.overlap_cpu_optimizer_d2h_h2d",
        "mixed_precision.fp8_param_gather",
        "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag",
        "mixed_precision.first_last_layers_bf16",
    };
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        json_object_set_new(set, none[k], json_null());
    for (size_t k = 0; k < sizeof off / sizeof off[0]; k++)
        json_object_set_new(set, off[k], json_false());
    json_object_set_new(set, "model.context_parallel_size", json_integer(1));
    json_object_set_new(set, "model.expert_model_parallel_size", json_integer(1));
    json_object_set_new(set, "model.expert_tensor_parallel_size", json_null());
    json_object_set_new(set, "model.cuda_graph_impl", json_string("none"));
    json_object_set_new(set, "ddp.data_parallel_sharding_strategy", json_string("no_shard"));
    json_object_set_new(set, "ddp.num_distributed_optimizer_instances", json_integer(1));
    json_object_set_new(set, "checkpoint.ckpt_format", json_string("torch_dist"));
    json_object_set_new(set, "optimizer.optimizer", json_string("adam"));
    json_object_set_new(set, "mixed_precision.grad_reduce_in_fp32", json_true());
    json_object_set_new(set, "mixed_precision.num_layers_at_start_in_bf16", json_integer(0));
    json_object_set_new(set, "mixed_precision.num_layers_at_end_in_bf16", json_integer(0));
    json_object_set_new(set, "model.make_vocab_size_divisible_by", json_integer(128));
    json_object_set_new(set, "model.mtp_num_layers",
                        m->mtp_layers > 0 ? json_integer(m->mtp_layers) : json_null());
    if (m->has_moe) {
        json_object_set_new(set, "model.moe_token_dispatcher_type", json_string("alltoall"));
        json_object_set_new(set, "model.moe_grouped_gemm", json_false());
        json_object_set_new(set, "model.moe_expert_capacity_factor", json_null());
    }
}

/* Megatron-Bridge's mixed-precision recipe for the plan's precision
 * (mixed_precision.py:184-420); its fields are then set as the flags say. */
static const char *precision_recipe(const ppl_config *c)
{
    switch (c->precision) {
    case PPL_PRECISION_FP16: return "fp16_mixed";
    case PPL_PRECISION_FP8:
        return c->fp8_recipe == PPL_FP8_TENSORWISE  ? "bf16_with_fp8_current_scaling_mixed"
               : c->fp8_recipe == PPL_FP8_BLOCKWISE ? "bf16_with_fp8_subchannel_scaling_mixed"
                                                    : "bf16_with_fp8_delayed_scaling_mixed";
    case PPL_PRECISION_MXFP8: return "bf16_with_mxfp8_mixed";
    case PPL_PRECISION_NVFP4: return "bf16_with_nvfp4_mixed";
    default: return "bf16_mixed";
    }
}

json_t *ppl_launch_bridge(const ppl_estimate *e, const ppl_model *m, const json_t *args,
                          const json_t *env, char *why, size_t why_len)
{
    why[0] = '\0';
    if (!json_is_array(args)) {
        snprintf(why, why_len,
                 "Megatron-Bridge runs Megatron-Core, which cannot run the plan "
                 "(megatron_error)");
        return NULL;
    }
    const bridge_recipe *r = recipe_of(m, why, why_len);
    if (!r)
        return NULL;
    json_t *set = json_object();
    set_defaults(set, m);
    /* the checkpoint's tokenizer, so that the vocabulary is the model's (recipes
     * train mock data on a NullTokenizer of their own size) */
    json_object_set_new(set, "tokenizer.tokenizer_type", json_string("HuggingFaceTokenizer"));
    json_object_set_new(set, "tokenizer.tokenizer_model", json_string(r->hf_model));
    json_object_set_new(set, "tokenizer.vocab_size", json_null());
    const size_t n = json_array_size(args);
    for (size_t i = 0; i < n; i++) {
        const char *flag = json_string_value(json_array_get(args, i));
        const char *value = i + 1 < n ? json_string_value(json_array_get(args, i + 1)) : NULL;
        size_t k = 0;
        while (k < sizeof flags / sizeof flags[0] && strcmp(flags[k].flag, flag ? flag : "") != 0)
            k++;
        if (k == sizeof flags / sizeof flags[0]) {
            snprintf(why, why_len, "no Megatron-Bridge field for Megatron-LM's %s",
                     flag ? flag : "(not a string)");
            json_decref(set);
            return NULL;
        }
        json_t *v = NULL;
        switch (flags[k].kind) {
        case V_INT:
            v = json_integer(strtoll(value ? value : "0", NULL, 10));
            i++;
            break;
        case V_REAL:
            v = json_real(strtod(value ? value : "0", NULL));
            i++;
            break;
        case V_STR:
            v = json_string(value ? value : "");
            i++;
            break;
        case V_CONST: v = json_string(flags[k].constant); break;
        case V_TRUE: v = json_true(); break;
        case V_FALSE: v = json_false(); break;
        case V_INTS2: {
            const char *second = i + 2 < n ? json_string_value(json_array_get(args, i + 2)) : NULL;
            v = json_array();
            json_array_append_new(v, json_integer(strtoll(value ? value : "0", NULL, 10)));
            json_array_append_new(v, json_integer(strtoll(second ? second : "0", NULL, 10)));
            i += 2;
            break;
        }
        case V_VP:
            v = json_integer(e->config.vp);
            i++;
            break;
        case SKIP1: i++; break;
        case SKIP0: break;
        case SKIPN:
            for (const char *next; i + 1 < n; i++) {
                next = json_string_value(json_array_get(args, i + 1));
                if (!next || strncmp(next, "--", 2) == 0)
                    break;
            }
            break;
        }
        if (!v)
            continue;
        if (flags[k].field2)
            json_object_set(set, flags[k].field2, v);
        json_object_set_new(set, flags[k].field, v);
        if (strcmp(flag, "--optimizer-cpu-offload") == 0 &&
            !json_object_get(set, "optimizer.optimizer_offload_fraction"))
            json_object_set_new(set, "optimizer.optimizer_offload_fraction", json_real(1.0));
    }
    if (json_object_get(set, "model.recompute_granularity") &&
        json_is_string(json_object_get(set, "model.recompute_granularity")) &&
        strcmp(json_string_value(json_object_get(set, "model.recompute_granularity")),
               "selective") == 0) {
        json_t *modules = json_array(); /* Megatron-LM's default (arguments.py) */
        json_array_append_new(modules, json_string("core_attn"));
        json_object_set_new(set, "model.recompute_modules", modules);
    }
    /* CUDA graphs in the pinned Core's fields (transformer_config.py:1009-1040 at
     * cd4afffa64; Bridge utils/cuda_graph.py:65-160 at v0.6.0): the whole step is
     * cuda_graph_impl "full_iteration" with no modules, and wants the loss's NaN
     * check off (training/config.py:1364-1369); per-layer graphs are Transformer
     * Engine's with the modules listed (none: the whole layer) */
    if (e->config.cuda_graphs != PPL_CUDA_GRAPHS_NONE) {
        const ppl_cuda_graphs_row *g = ppl_cuda_graphs_of(e->config.cuda_graphs);
        json_object_set_new(set, "model.cuda_graph_impl",
                            json_string(g->step ? "full_iteration" : "transformer_engine"));
        json_t *list = json_array();
        for (int i = 0; i < 3 && g->modules[i]; i++)
            json_array_append_new(list, json_string(g->modules[i]));
        json_object_set_new(set, "model.cuda_graph_modules", list);
        if (g->step)
            json_object_set_new(set, "rerun_state_machine.check_for_nan_in_loss", json_false());
    }
    /* the environment the flags need; Megatron-FSDP refuses the variable at 1
     * (config.py:1100-1103), so a recipe's is dropped (null) */
    const json_t *cdmc = json_object_get(env, "CUDA_DEVICE_MAX_CONNECTIONS");
    json_object_set_new(set, "env_vars.CUDA_DEVICE_MAX_CONNECTIONS",
                        cdmc ? json_deep_copy(cdmc) : json_null());
    json_t *b = json_object();
    json_object_set_new(b, "recipe", json_string(r->function));
    json_object_set_new(b, "module", json_string(r->module));
    json_object_set_new(b, "hf_model", json_string(r->hf_model));
    json_object_set_new(b, "mixed_precision", json_string(precision_recipe(&e->config)));
    /* [field, value] pairs in the order set: the recipe's fields are paths, not
     * keys of parplan's documents */
    json_t *pairs = json_array();
    const char *field;
    json_t *value;
    json_object_foreach(set, field, value)
    {
        json_t *pair = json_array();
        json_array_append_new(pair, json_string(field));
        json_array_append(pair, value);
        json_array_append_new(pairs, pair);
    }
    json_decref(set);
    json_object_set_new(b, "set", pairs);
    return b;
}
