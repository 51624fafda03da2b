/*
 * hfconfig.c - a Hugging Face `config.json` read as a parplan model (model.h).
 *
 * The transformers configuration classes name the same architecture figures
 * parplan's model files do; this maps them, by `model_type`, into a model
 * document that ppl_model_from_json then checks and derives like any other:
 *
 *   every type      num_hidden_layers, hidden_size, num_attention_heads,
 *                   num_key_value_heads (default: the heads), head_dim,
 *                   intermediate_size, vocab_size, tie_word_embeddings (default
 *                   false: LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
 *                   MixtralConfig, DeepseekV3Config, GptOssConfig all default it
 *                   so); RMSNorm, rotary positions, a gated (SwiGLU) MLP, a final
 *                   norm, no dropout
 *   llama, mistral  attention_bias (llama; default false)
 *   qwen2           biases on q, k and v only: not counted (h + 2 kv d a layer,
 *                   0.002% of Qwen2-7B)
 *   qwen3           attention_bias; the per-head q/k norms (2 d a layer) are not
 *                   counted
 *   mixtral         num_local_experts, num_experts_per_tok: experts of
 *                   intermediate_size
 *   qwen2_moe,      num_experts, num_experts_per_tok, moe_intermediate_size,
 *   qwen3_moe       decoder_sparse_step; shared_expert_intermediate_size (qwen2_moe);
 *                   mlp_only_layers must be empty
 *   deepseek_v3     multi-latent attention (q_lora_rank, kv_lora_rank,
 *                   qk_nope_head_dim, qk_rope_head_dim, v_head_dim), n_routed_experts,
 *                   n_shared_experts, moe_intermediate_size, first_k_dense_replace,
 *                   moe_layer_freq, topk_group (the node limit of its routing),
 *                   num_nextn_predict_layers (MTP)
 *   gpt_oss         num_local_experts, num_experts_per_tok, biases (attention_bias);
 *                   sliding-window layers are costed as full attention and the
 *                   attention sinks (one scalar a head) are not counted
 *
 * The training sequence length is not in config.json: the model takes
 * max_position_embeddings up to 8,192 tokens, with a warning to give --seq-len.
 */
#include <jansson.h>
#include <string.h>

#include "base/jsonread.h"
#include "model/hfconfig.h"

#define HF_MAX_INT (1LL << 40)
#define HF_DEFAULT_SEQ_LEN 8192

bool ppl_model_is_hf(const json_t *root)
{
    return json_is_object(root) && json_is_string(json_object_get(root, "model_type"));
}

typedef enum hf_family {
    HF_DENSE, /* llama, mistral, qwen2, qwen3 */
    HF_MIXTRAL,
    HF_QWEN_MOE,
    HF_DEEPSEEK_V3,
    HF_GPT_OSS
} hf_family;

static const struct {
    const char *type;
    hf_family family;
} types[] = {
    {"llama", HF_DENSE},        {"mistral", HF_DENSE},           {"qwen2", HF_DENSE},
    {"qwen3", HF_DENSE},        {"mixtral", HF_MIXTRAL},         {"qwen2_moe", HF_QWEN_MOE},
    {"qwen3_moe", HF_QWEN_MOE}, {"deepseek_v3", HF_DEEPSEEK_V3}, {"gpt_oss", HF_GPT_OSS},
};

/* Copies integer key `hf_key` of hf into doc's `key` (required or, when absent,
 * left out so the model's own default applies). */
static ppl_status copy_int(ppl_jr_ctx *ctx, const json_t *hf, const char *hf_key, ppl_jr_need need,
                           json_t *doc, const char *key)
{
    if (!json_object_get(hf, hf_key) && need == PPL_JR_OPTIONAL)
        return PPL_OK;
    int64_t v;
    ppl_status st = ppl_jr_int(ctx, hf, "", hf_key, need, 0, 1, HF_MAX_INT, &v);
    if (st == PPL_OK)
        json_object_set_new(doc, key, json_integer((json_int_t)v));
    return st;
}

static ppl_status get_int(ppl_jr_ctx *ctx, const json_t *hf, const char *key, ppl_jr_need need,
                          int64_t fallback, int64_t min, int64_t *out)
{
    return ppl_jr_int(ctx, hf, "", key, need, fallback, min, HF_MAX_INT, out);
}

static ppl_status moe_of(ppl_jr_ctx *ctx, const json_t *hf, hf_family family, json_t *doc)
{
    json_t *moe = json_object();
    json_object_set_new(doc, "moe", moe);
    ppl_status st;
    int64_t v;
    const char *experts = family == HF_QWEN_MOE      ? "num_experts"
                          : family == HF_DEEPSEEK_V3 ? "n_routed_experts"
                                                     : "num_local_experts";
    if ((st = copy_int(ctx, hf, experts, PPL_JR_REQUIRED, moe, "experts")) ||
        (st = copy_int(ctx, hf, "num_experts_per_tok", PPL_JR_REQUIRED, moe, "top_k")))
        return st;
    /* Mixtral's and gpt-oss's experts are of intermediate_size; the others name
     * the expert width apart from the dense MLP's */
    const char *width = family == HF_MIXTRAL || family == HF_GPT_OSS ? "intermediate_size"
                                                                     : "moe_intermediate_size";
    if ((st = copy_int(ctx, hf, width, PPL_JR_REQUIRED, moe, "ffn_hidden")))
        return st;
    if (family == HF_QWEN_MOE) {
        if ((st = copy_int(ctx, hf, "decoder_sparse_step", PPL_JR_OPTIONAL, moe, "every")))
            return st;
        const json_t *dense = json_object_get(hf, "mlp_only_layers");
        if (json_array_size(dense) > 0)
            return ppl_jr_fail(ctx, "mlp_only_layers",
                               "dense layers at chosen places are not a parplan layout (only the "
                               "first layers, or every k-th, may be dense)");
        if ((st = get_int(ctx, hf, "shared_expert_intermediate_size", PPL_JR_OPTIONAL, 0, 0, &v)))
            return st;
        if (v > 0) {
            json_object_set_new(moe, "shared_experts", json_integer(1));
            json_object_set_new(moe, "shared_ffn_hidden", json_integer((json_int_t)v));
        }
    }
    if (family == HF_DEEPSEEK_V3) {
        if ((st = copy_int(ctx, hf, "moe_layer_freq", PPL_JR_OPTIONAL, moe, "every")) ||
            (st = get_int(ctx, hf, "n_shared_experts", PPL_JR_OPTIONAL, 0, 0, &v)))
            return st;
        if (v > 0)
            json_object_set_new(moe, "shared_experts", json_integer((json_int_t)v));
        if ((st = get_int(ctx, hf, "first_k_dense_replace", PPL_JR_OPTIONAL, 0, 0, &v)))
            return st;
        if (v > 0)
            json_object_set_new(moe, "first_dense_layers", json_integer((json_int_t)v));
        /* node-limited routing: tokens reach experts of at most topk_group groups,
         * one group a node in DeepSeek-V3's deployment (report §2.1.2) */
        if ((st = get_int(ctx, hf, "topk_group", PPL_JR_OPTIONAL, 0, 0, &v)))
            return st;
        if (v > 0)
            json_object_set_new(moe, "router_node_limit", json_integer((json_int_t)v));
        /* the router (modeling_deepseek.py MoEGate): scoring_func, the
         * auxiliary-loss-free bias of topk_method noaux_tc (report §2.1.2), and
         * routed_scaling_factor on the top-k weights */
        const char *score = json_string_value(json_object_get(hf, "scoring_func"));
        if (score && strcmp(score, "sigmoid") != 0 && strcmp(score, "softmax") != 0)
            return ppl_jr_fail(ctx, "scoring_func", "'%.20s': expected sigmoid or softmax", score);
        if (score)
            json_object_set_new(moe, "router_score", json_string(score));
        const char *method = json_string_value(json_object_get(hf, "topk_method"));
        if (method && strcmp(method, "noaux_tc") == 0)
            json_object_set_new(moe, "router_expert_bias", json_true());
        double scale;
        if ((st = ppl_jr_real(ctx, hf, "", "routed_scaling_factor", PPL_JR_OPTIONAL, 1.0,
                              PPL_JR_POSITIVE(1e3), &scale)))
            return st;
        if (scale != 1.0)
            json_object_set_new(moe, "router_topk_scale", json_real(scale));
    }
    return PPL_OK;
}

static hf_family family_of(const json_t *hf)
{
    const char *type = json_string_value(json_object_get(hf, "model_type"));
    for (size_t i = 0; type && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(type, types[i].type) == 0)
            return types[i].family;
    return HF_DENSE;
}

const char *ppl_hf_key_of(const json_t *hf, const char *key)
{
    hf_family f = family_of(hf);
    static const char *const common[][2] = {{"layers", "num_hidden_layers"},
                                            {"hidden", "hidden_size"},
                                            {"heads", "num_attention_heads"},
                                            {"kv_heads", "num_key_value_heads"},
                                            {"vocab", "vocab_size"},
                                            {"ffn_hidden", "intermediate_size"},
                                            {"head_dim", "head_dim"},
                                            {"seq_len", "max_position_embeddings"},
                                            {"rope_theta", "rope_theta"},
                                            {"moe.top_k", "num_experts_per_tok"},
                                            {"mtp_layers", "num_nextn_predict_layers"}};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        if (strcmp(key, common[i][0]) == 0)
            return common[i][1];
    if (strcmp(key, "moe.experts") == 0)
        return f == HF_QWEN_MOE      ? "num_experts"
               : f == HF_DEEPSEEK_V3 ? "n_routed_experts"
                                     : "num_local_experts";
    if (strcmp(key, "moe.ffn_hidden") == 0)
        return f == HF_MIXTRAL || f == HF_GPT_OSS ? "intermediate_size" : "moe_intermediate_size";
    if (strcmp(key, "moe.every") == 0)
        return f == HF_DEEPSEEK_V3 ? "moe_layer_freq" : "decoder_sparse_step";
    if (strcmp(key, "moe.first_dense_layers") == 0)
        return "first_k_dense_replace";
    if (strcmp(key, "moe.shared_experts") == 0)
        return "n_shared_experts";
    if (strcmp(key, "moe.shared_ffn_hidden") == 0)
        return "shared_expert_intermediate_size";
    if (strncmp(key, "attention.", 10) == 0 && strcmp(key, "attention.type") != 0)
        return key + 10; /* q_lora_rank, kv_lora_rank, ... as the config names them */
    return NULL;
}

static ppl_status mla_of(ppl_jr_ctx *ctx, const json_t *hf, json_t *doc)
{
    static const char *const keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim"};
    json_t *a = json_object();
    json_object_set_new(doc, "attention", a);
    json_object_set_new(a, "type", json_string("mla"));
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        ppl_status st = copy_int(ctx, hf, keys[i], PPL_JR_REQUIRED, a, keys[i]);
        if (st != PPL_OK)
            return st;
    }
    return PPL_OK;
}

ppl_status ppl_model_doc_from_hf(const json_t *hf, const char *file, const ppl_diag *diag,
                                 json_t **out, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    *out = NULL;
    const char *type = json_string_value(json_object_get(hf, "model_type"));
    int found = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (type && strcmp(type, types[i].type) == 0)
            found = (int)i;
    if (found < 0)
        return ppl_jr_fail(
            &ctx, "model_type",
            "'%.40s' is not one parplan reads (llama, mistral, qwen2, qwen3, mixtral, "
            "qwen2_moe, qwen3_moe, deepseek_v3, gpt_oss); write a parplan model file",
            type ? type : "");
    hf_family family = types[found].family;
    json_t *doc = json_object();
    ppl_status st;
    int64_t v;
    bool b;
    json_object_set_new(doc, "schema_version", json_integer(1));
    char source[160];
    snprintf(source, sizeof source, "Hugging Face config.json (model_type %s)", type);
    json_object_set_new(doc, "source", json_string(source));
    if ((st = copy_int(&ctx, hf, "num_hidden_layers", PPL_JR_REQUIRED, doc, "layers")) ||
        (st = copy_int(&ctx, hf, "hidden_size", PPL_JR_REQUIRED, doc, "hidden")) ||
        (st = copy_int(&ctx, hf, "num_attention_heads", PPL_JR_REQUIRED, doc, "heads")) ||
        (st = copy_int(&ctx, hf, "num_key_value_heads", PPL_JR_OPTIONAL, doc, "kv_heads")) ||
        (st = copy_int(&ctx, hf, "vocab_size", PPL_JR_REQUIRED, doc, "vocab")) ||
        (st = copy_int(&ctx, hf, "intermediate_size", PPL_JR_REQUIRED, doc, "ffn_hidden")))
        goto fail;
    /* head_dim: explicit (Qwen3, gpt-oss, Mistral's later configs) or hidden/heads;
     * DeepSeek-V3's attention is MLA's */
    /* read exactly or refused (128.0 is 128; "128" and -128 are errors naming it),
     * never replaced by hidden / heads; null is absent */
    const json_t *head_dim = json_object_get(hf, "head_dim");
    if (family != HF_DEEPSEEK_V3 && head_dim && !json_is_null(head_dim) &&
        (st = copy_int(&ctx, hf, "head_dim", PPL_JR_OPTIONAL, doc, "head_dim")))
        goto fail;
    if ((st = get_int(&ctx, hf, "max_position_embeddings", PPL_JR_OPTIONAL, HF_DEFAULT_SEQ_LEN, 1,
                      &v)))
        goto fail;
    const int64_t seq_len = v < HF_DEFAULT_SEQ_LEN ? v : HF_DEFAULT_SEQ_LEN;
    json_object_set_new(doc, "seq_len", json_integer((json_int_t)seq_len));
    if ((st = ppl_jr_bool(&ctx, hf, "", "tie_word_embeddings", PPL_JR_OPTIONAL, false, &b)))
        goto fail;
    json_object_set_new(doc, "tied_embeddings", json_boolean(b));
    if ((st = ppl_jr_bool(&ctx, hf, "", "attention_bias", PPL_JR_OPTIONAL, false, &b)))
        goto fail;
    json_object_set_new(doc, "bias", json_boolean(b));
    json_object_set_new(doc, "gated_mlp", json_true());
    json_object_set_new(doc, "norm", json_string("rmsnorm"));
    json_object_set_new(doc, "position_embedding", json_string("rope"));
    json_object_set_new(doc, "final_norm", json_true());
    json_object_set_new(doc, "embedding_norm", json_false());
    json_object_set_new(doc, "dropout", json_false());
    double theta;
    if ((st = ppl_jr_real(&ctx, hf, "", "rope_theta", PPL_JR_OPTIONAL, 0.0, PPL_JR_POSITIVE(1e12),
                          &theta)))
        goto fail;
    if (theta > 0.0)
        json_object_set_new(doc, "rope_theta", json_real(theta));
    /* Qwen3's attention normalises each query and key head (modeling_qwen3.py,
     * modeling_qwen3_moe.py: q_norm, k_norm; no config key turns them off) */
    if (strcmp(type, "qwen3") == 0 || strcmp(type, "qwen3_moe") == 0)
        json_object_set_new(doc, "qk_norm", json_true());
    if (family != HF_DENSE && (st = moe_of(&ctx, hf, family, doc)))
        goto fail;
    if (family == HF_DEEPSEEK_V3) {
        if ((st = mla_of(&ctx, hf, doc)) ||
            (st = get_int(&ctx, hf, "num_nextn_predict_layers", PPL_JR_OPTIONAL, 0, 0, &v)))
            goto fail;
        if (v > 0)
            json_object_set_new(doc, "mtp_layers", json_integer((json_int_t)v));
    }
    *out = doc;
    return PPL_OK;
fail:
    json_decref(doc);
    return st;
}
