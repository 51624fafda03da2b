/*
 * model.c - loading model files and deriving parameter counts and FLOPs.
 *
 * Parameters (Narayanan et al. SC'21, Eq.2 and its derivation in §3): a GPT layer
 * holds 12h^2 weights (QKV 3h^2, output projection h^2, MLP 8h^2) and 13h
 * biases and norm weights (QKV 3h, projection h, MLP 4h + h, two layer norms 4h);
 * the model adds V*h of embedding and s*h of learned positions, the output layer
 * being tied to the embedding.  Each term is generalised here:
 *   attention  h*(a*d) + 2*h*(kv*d) + (a*d)*h      with d = h/a (GQA: kv < a)
 *   MLP        2*h*f, or 3*h*f when gated (SwiGLU)
 *   MoE layer  E experts of that MLP shape with f = moe.ffn_hidden, plus a router h*E
 *   biases     (a*d + 2*kv*d + h) + (f or 2f + h), when the model has them
 *   norms      2h per LayerNorm (gain and bias), h per RMSNorm; two per layer, and
 *              with qk_norm two more of head_dim (one over the query heads, one over
 *              the key heads: Qwen3, Megatron-Core's qk_layernorm)
 * For a GPT (bias, LayerNorm, learned positions, tied, no final norm) the sum is
 * Eq.2 exactly: 12Lh^2 + 13Lh + (V + s)h.
 *
 * FLOPs per token (Korthikanti et al. 2022, Eq.7, derived in their §5 and Narayanan
 * §3.3): a forward pass costs 2 FLOPs per weight of every matrix multiply, plus
 * 4*s*h for the attention scores and the weighted sum of values (2sh each), plus
 * 2hV for the output layer.  Backward is twice the forward, so training is 3x;
 * full recomputation adds one more forward of the transformer layers (Eq.3).
 */
#include "model/model.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonread.h"
#include "model/hfconfig.h"

/* Upper bounds on what parplan accepts: far beyond any real model, small enough
 * that every product of them stays exact in a double and in 64-bit integers. */
#define MAX_HIDDEN (1 << 22)
#define MAX_HEADS (1 << 16)
#define MAX_VOCAB (1 << 26)
#define MAX_FFN (1 << 24)
#define MAX_EXPERTS (1 << 16)

static const char *const norm_names[] = {"layernorm", "rmsnorm", NULL};
static const char *const position_names[] = {"learned", "rope", "alibi", "none", NULL};
static const char *const router_score_names[] = {"softmax", "sigmoid", NULL};

const char *ppl_router_score_name(ppl_router_score score)
{
    return (unsigned)score < 2 ? router_score_names[score] : "?";
}

const char *ppl_norm_name(ppl_norm_kind kind)
{
    return (unsigned)kind < 2 ? norm_names[kind] : "?";
}

const char *ppl_position_name(ppl_position_kind kind)
{
    return (unsigned)kind < 4 ? position_names[kind] : "?";
}

static const char *const model_keys[] = {"schema_version",
                                         "name",
                                         "source",
                                         "layers",
                                         "hidden",
                                         "heads",
                                         "kv_heads",
                                         "head_dim",
                                         "ffn_hidden",
                                         "vocab",
                                         "seq_len",
                                         "gated_mlp",
                                         "tied_embeddings",
                                         "bias",
                                         "norm",
                                         "position_embedding",
                                         "final_norm",
                                         "embedding_norm",
                                         "dropout",
                                         "moe",
                                         "attention",
                                         "mtp_layers",
                                         "params",
                                         "rope_theta",
                                         "qk_norm",
                                         NULL};
static const char *const moe_keys[] = {"experts",
                                       "top_k",
                                       "ffn_hidden",
                                       "every",
                                       "shared_experts",
                                       "shared_ffn_hidden",
                                       "first_dense_layers",
                                       "capacity_factor",
                                       "router_node_limit",
                                       "routing_skew",
                                       "router_score",
                                       "router_expert_bias",
                                       "router_topk_scale",
                                       NULL};
static const char *const attention_keys[] = {
    "type",       "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", NULL};
static const char *const attention_names[] = {"standard", "mla", NULL};

const char *ppl_attention_name(ppl_attention_kind kind)
{
    return (unsigned)kind < 2 ? attention_names[kind] : "?";
}

static ppl_status read_moe(ppl_jr_ctx *ctx, const json_t *obj, const char *path, ppl_model *m)
{
    char mpath[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    json_t *v;
    int score = PPL_ROUTER_SOFTMAX;
    ppl_status st =
        ppl_jr_object(ctx, obj, path, "moe", PPL_JR_OPTIONAL, moe_keys, &v, mpath, sizeof mpath);
    m->has_moe = v != NULL;
    if (st != PPL_OK || !v)
        return st;
    if ((st = ppl_jr_int(ctx, v, mpath, "experts", PPL_JR_REQUIRED, 0, 1, MAX_EXPERTS,
                         &m->moe.experts)) ||
        (st = ppl_jr_int(ctx, v, mpath, "top_k", PPL_JR_REQUIRED, 0, 1, MAX_EXPERTS,
                         &m->moe.top_k)) ||
        (st = ppl_jr_int(ctx, v, mpath, "ffn_hidden", PPL_JR_OPTIONAL, m->ffn_hidden, 1, MAX_FFN,
                         &m->moe.ffn_hidden)) ||
        (st = ppl_jr_int(ctx, v, mpath, "every", PPL_JR_OPTIONAL, 1, 1, PPL_MAX_LAYERS,
                         &m->moe.every)) ||
        (st = ppl_jr_int(ctx, v, mpath, "shared_experts", PPL_JR_OPTIONAL, 0, 0, MAX_EXPERTS,
                         &m->moe.shared_experts)) ||
        (st = ppl_jr_int(ctx, v, mpath, "shared_ffn_hidden", PPL_JR_OPTIONAL, m->moe.ffn_hidden, 1,
                         MAX_FFN, &m->moe.shared_ffn_hidden)) ||
        (st = ppl_jr_int(ctx, v, mpath, "first_dense_layers", PPL_JR_OPTIONAL, 0, 0, PPL_MAX_LAYERS,
                         &m->moe.first_dense_layers)) ||
        /* null or absent: no limit, dropless */
        (st = ppl_jr_int(ctx, v, mpath, "router_node_limit", PPL_JR_OPTIONAL, 0, 1, MAX_EXPERTS,
                         &m->moe.router_node_limit)) ||
        /* at least 1: below it an expert drops tokens even when routing is even,
         * so a step would execute fewer FLOPs than the model's, which MFU and the
         * step's FLOP floor count (a dropped token's work is not modelled) */
        (st = ppl_jr_real(ctx, v, mpath, "capacity_factor", PPL_JR_OPTIONAL, 0.0,
                          PPL_JR_BETWEEN(1.0, 1e3), &m->moe.capacity_factor)) ||
        (st = ppl_jr_real(ctx, v, mpath, "routing_skew", PPL_JR_OPTIONAL, PPL_ROUTING_SKEW_DEFAULT,
                          PPL_JR_BETWEEN(1.0, 1e3), &m->moe.routing_skew)) ||
        (st = ppl_jr_enum(ctx, v, mpath, "router_score", PPL_JR_OPTIONAL, router_score_names,
                          PPL_ROUTER_SOFTMAX, &score)) ||
        (st = ppl_jr_bool(ctx, v, mpath, "router_expert_bias", PPL_JR_OPTIONAL, false,
                          &m->moe.router_expert_bias)) ||
        (st = ppl_jr_real(ctx, v, mpath, "router_topk_scale", PPL_JR_OPTIONAL, 1.0,
                          PPL_JR_POSITIVE(1e3), &m->moe.router_topk_scale)))
        return st;
    m->moe.router_score = (ppl_router_score)score;
    /* transformer_config.py:2617-2625 (Megatron-Core main, d98e8a64dd): the
     * auxiliary-loss-free bias only with sigmoid scores */
    if (m->moe.router_expert_bias && m->moe.router_score != PPL_ROUTER_SIGMOID) {
        ppl_jr_path(full, sizeof full, mpath, "router_expert_bias");
        return ppl_jr_fail(ctx, full,
                           "needs router_score \"sigmoid\" (the bias is added to "
                           "sigmoid scores)");
    }
    if (m->moe.first_dense_layers >= m->layers) {
        ppl_jr_path(full, sizeof full, mpath, "first_dense_layers");
        return ppl_jr_fail(ctx, full, "%lld leaves no layer of the %lld to be MoE",
                           (long long)m->moe.first_dense_layers, (long long)m->layers);
    }
    if (m->moe.top_k > m->moe.experts) {
        ppl_jr_path(full, sizeof full, mpath, "top_k");
        return ppl_jr_fail(ctx, full, "%lld exceeds moe.experts (%lld)", (long long)m->moe.top_k,
                           (long long)m->moe.experts);
    }
    if (m->moe.every > m->layers - m->moe.first_dense_layers) {
        ppl_jr_path(full, sizeof full, mpath, "every");
        return ppl_jr_fail(
            ctx, full, "%lld exceeds the %lld layers past the dense ones: no layer would be MoE",
            (long long)m->moe.every, (long long)(m->layers - m->moe.first_dense_layers));
    }
    return PPL_OK;
}

/* "attention": {"type": "mla", ...}; absent or "standard": heads, kv_heads, head_dim */
static ppl_status read_attention(ppl_jr_ctx *ctx, const json_t *obj, const char *path, ppl_model *m)
{
    char apath[PPL_ERROR_KEY_MAX];
    json_t *v;
    int kind = 0;
    ppl_status st = ppl_jr_object(ctx, obj, path, "attention", PPL_JR_OPTIONAL, attention_keys, &v,
                                  apath, sizeof apath);
    if (st != PPL_OK || !v)
        return st;
    if ((st = ppl_jr_enum(ctx, v, apath, "type", PPL_JR_REQUIRED, attention_names, 0, &kind)) !=
        PPL_OK)
        return st;
    m->attention = (ppl_attention_kind)kind;
    if (m->attention != PPL_ATTENTION_MLA)
        return PPL_OK;
    /* DeepSeek-V3's figures are the defaults a file may leave out but kv_lora_rank */
    ppl_mla *a = &m->mla;
    if ((st = ppl_jr_int(ctx, v, apath, "q_lora_rank", PPL_JR_OPTIONAL, 0, 0, MAX_HIDDEN,
                         &a->q_lora_rank)) ||
        (st = ppl_jr_int(ctx, v, apath, "kv_lora_rank", PPL_JR_REQUIRED, 0, 1, MAX_HIDDEN,
                         &a->kv_lora_rank)) ||
        (st = ppl_jr_int(ctx, v, apath, "qk_nope_head_dim", PPL_JR_OPTIONAL, 128, 1, MAX_HIDDEN,
                         &a->qk_nope_head_dim)) ||
        (st = ppl_jr_int(ctx, v, apath, "qk_rope_head_dim", PPL_JR_OPTIONAL, 64, 0, MAX_HIDDEN,
                         &a->qk_rope_head_dim)) ||
        (st = ppl_jr_int(ctx, v, apath, "v_head_dim", PPL_JR_OPTIONAL, 128, 1, MAX_HIDDEN,
                         &a->v_head_dim)))
        return st;
    return PPL_OK;
}

ppl_status ppl_model_from_json(const json_t *obj, const char *file, const char *path,
                               const ppl_diag *diag, ppl_model *m, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    char full[PPL_ERROR_KEY_MAX];
    ppl_status st;
    int norm = 0, position = 0;
    memset(m, 0, sizeof *m);
    if ((st = ppl_jr_expect_object(&ctx, obj, path)) != PPL_OK)
        return st;
    ppl_jr_warn_unknown_keys(&ctx, obj, path, model_keys);
    if ((st = ppl_jr_schema_version(&ctx, obj, path)) ||
        (st = ppl_jr_string(&ctx, obj, path, "name", PPL_JR_OPTIONAL, "", m->name,
                            sizeof m->name)) ||
        (st = ppl_jr_string(&ctx, obj, path, "source", PPL_JR_OPTIONAL, "", m->source,
                            sizeof m->source)) ||
        (st = ppl_jr_int(&ctx, obj, path, "layers", PPL_JR_REQUIRED, 0, 1, PPL_MAX_LAYERS,
                         &m->layers)) ||
        (st = ppl_jr_int(&ctx, obj, path, "hidden", PPL_JR_REQUIRED, 0, 1, MAX_HIDDEN,
                         &m->hidden)) ||
        (st = ppl_jr_int(&ctx, obj, path, "heads", PPL_JR_REQUIRED, 0, 1, MAX_HEADS, &m->heads)) ||
        (st = ppl_jr_int(&ctx, obj, path, "vocab", PPL_JR_REQUIRED, 0, 1, MAX_VOCAB, &m->vocab)) ||
        (st = ppl_jr_int(&ctx, obj, path, "seq_len", PPL_JR_REQUIRED, 0, 1, PPL_MAX_SEQ_LEN,
                         &m->seq_len)) ||
        (st = ppl_jr_int(&ctx, obj, path, "kv_heads", PPL_JR_OPTIONAL, m->heads, 1, MAX_HEADS,
                         &m->kv_heads)) ||
        (st = ppl_jr_int(&ctx, obj, path, "head_dim", PPL_JR_OPTIONAL, 0, 1, MAX_HIDDEN,
                         &m->head_dim)) ||
        (st = ppl_jr_int(&ctx, obj, path, "ffn_hidden", PPL_JR_OPTIONAL, 4 * m->hidden, 1, MAX_FFN,
                         &m->ffn_hidden)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "gated_mlp", PPL_JR_OPTIONAL, false, &m->gated_mlp)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "tied_embeddings", PPL_JR_OPTIONAL, true,
                          &m->tied_embeddings)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "bias", PPL_JR_OPTIONAL, true, &m->bias)) ||
        (st = ppl_jr_enum(&ctx, obj, path, "norm", PPL_JR_OPTIONAL, norm_names, PPL_NORM_LAYERNORM,
                          &norm)) ||
        (st = ppl_jr_enum(&ctx, obj, path, "position_embedding", PPL_JR_OPTIONAL, position_names,
                          PPL_POSITION_LEARNED, &position)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "final_norm", PPL_JR_OPTIONAL, false, &m->final_norm)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "embedding_norm", PPL_JR_OPTIONAL, false,
                          &m->embedding_norm)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "dropout", PPL_JR_OPTIONAL, true, &m->dropout)) ||
        (st = ppl_jr_int(&ctx, obj, path, "mtp_layers", PPL_JR_OPTIONAL, 0, 0, 64,
                         &m->mtp_layers)) ||
        /* the rotary base: above 1, for the frequencies theta_i = base^(-2(i-1)/d)
         * to fall with i (Su et al. 2021, RoFormer §3.2.2); Megatron-LM takes it
         * as an integer (--rotary-base), so below 2 it would launch 0 or 1 */
        (st = ppl_jr_real(&ctx, obj, path, "rope_theta", PPL_JR_OPTIONAL, 0.0,
                          PPL_JR_BETWEEN(2.0, 1e12), &m->rope_theta)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "qk_norm", PPL_JR_OPTIONAL, false, &m->qk_norm)) ||
        /* a parameter count: at least one (0, its default, is none declared) */
        (st = ppl_jr_real(&ctx, obj, path, "params", PPL_JR_OPTIONAL, 0.0,
                          PPL_JR_BETWEEN(1.0, 1e18), &m->params_declared)))
        return st;
    m->norm = (ppl_norm_kind)norm;
    m->position_embedding = (ppl_position_kind)position;
    /* cross-field checks: without a head_dim, attention heads split the hidden size
     * evenly */
    if (m->head_dim == 0 && (m->heads > m->hidden || m->hidden % m->heads != 0)) {
        ppl_jr_path(full, sizeof full, path, "heads");
        return ppl_jr_fail(&ctx, full, "%lld does not divide hidden (%lld)", (long long)m->heads,
                           (long long)m->hidden);
    }
    if (m->head_dim == 0)
        m->head_dim = m->hidden / m->heads;
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
        ppl_jr_path(full, sizeof full, path, "kv_heads");
        return ppl_jr_fail(&ctx, full, "%lld does not divide heads (%lld)", (long long)m->kv_heads,
                           (long long)m->heads);
    }
    if ((st = read_moe(&ctx, obj, path, m)) != PPL_OK ||
        (st = read_attention(&ctx, obj, path, m)) != PPL_OK)
        return st;
    if (m->rope_theta > 0.0 && m->position_embedding != PPL_POSITION_ROPE) {
        ppl_jr_path(full, sizeof full, path, "rope_theta");
        return ppl_jr_fail(&ctx, full, "a rotary base, but position_embedding is \"%s\"",
                           ppl_position_name(m->position_embedding));
    }
    /* MLA normalises its latents instead (read_attention) */
    if (m->qk_norm && m->attention == PPL_ATTENTION_MLA) {
        ppl_jr_path(full, sizeof full, path, "qk_norm");
        return ppl_jr_fail(&ctx, full,
                           "not with multi-head latent attention, whose latents "
                           "carry their own norms");
    }
    if (m->params_declared > 0) {
        ppl_model_figures f;
        ppl_model_derive(m, &f);
        /* published totals leave the MTP modules out (DeepSeek-V3: 671B + 11.6B) */
        double rel = fabs(f.params_total - f.params_mtp - m->params_declared) / m->params_declared;
        if (rel > 0.01) {
            ppl_jr_path(full, sizeof full, path, "params");
            ppl_diag_warn(diag, file, full,
                          "declares %.6g parameters but the architecture gives %.6g (%.1f%% apart)",
                          m->params_declared, f.params_total - f.params_mtp, 100.0 * rel);
        }
    }
    return PPL_OK;
}

/* "models/Llama-3.1-8B/config.json" -> "Llama-3.1-8B"; "" without a directory or
 * for another file name (the stem is taken then). */
static void hf_dir_name(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    const char *base = strrchr(path, '/');
    if (!base || strcmp(base + 1, "config.json") != 0 || base == path)
        return;
    const char *start = base - 1;
    while (start > path && start[-1] != '/')
        start--;
    ppl_jr_name_copy(out, size, start, (size_t)(base - start));
}

ppl_status ppl_model_load(const char *path, const char *display, const ppl_diag *diag,
                          ppl_model *model, ppl_error *err)
{
    return ppl_model_load_doc(path, display, diag, model, NULL, err);
}

/* An error found in a Hugging Face config's translation names the config's keys:
 * its key, and the parplan keys its message names ("5 does not divide heads (32)"
 * -> "num_attention_heads"). */
static void name_hf_keys(const json_t *hf, ppl_error *err)
{
    const char *key = ppl_hf_key_of(hf, err->key);
    if (key)
        snprintf(err->key, sizeof err->key, "%s", key);
    char out[PPL_ERROR_MSG_MAX];
    size_t n = 0;
    for (const char *p = err->message; *p && n + 1 < sizeof out;) {
        size_t w = 0;
        while (p[w] && (p[w] == '_' || p[w] == '.' || (p[w] >= 'a' && p[w] <= 'z')))
            w++;
        char word[48];
        const char *hf_key = NULL;
        if (w > 0 && w < sizeof word) {
            memcpy(word, p, w);
            word[w] = '\0';
            hf_key = ppl_hf_key_of(hf, word);
        }
        if (hf_key && (p == err->message || p[-1] == ' ' || p[-1] == '(')) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%s", hf_key);
            if (n >= sizeof out)
                n = sizeof out - 1;
            p += w;
        } else {
            size_t step = w > 0 ? w : 1;
            for (size_t i = 0; i < step && n + 1 < sizeof out; i++)
                out[n++] = p[i];
            p += step;
        }
    }
    out[n] = '\0';
    memcpy(err->message, out, n + 1);
}

ppl_status ppl_model_load_doc(const char *path, const char *display, const ppl_diag *diag,
                              ppl_model *model, json_t **doc_out, ppl_error *err)
{
    json_t *kept = NULL;
    ppl_jr_ctx ctx = {.file = display ? display : path, .err = err, .diag = diag};
    json_t *root = ppl_jr_load_file(&ctx, path);
    if (!root)
        return PPL_EINPUT;
    ppl_status st;
    if (ppl_model_is_hf(root)) {
        /* a Hugging Face config.json (hfconfig.c); named after _name_or_path's
         * last part, else the file's directory */
        json_t *doc;
        st = ppl_model_doc_from_hf(root, ctx.file, diag, &doc, err);
        if (st == PPL_OK) {
            st = ppl_model_from_json(doc, ctx.file, "", diag, model, err);
            kept = doc;
            if (st != PPL_OK)
                name_hf_keys(root, err);
        }
        /* only once the file reads, so that an error stays one line */
        if (st == PPL_OK)
            ppl_diag_warn(diag, ctx.file, "max_position_embeddings",
                          "config.json does not give the training sequence length: taking %lld "
                          "tokens unless --seq-len says otherwise",
                          (long long)model->seq_len);
        const char *id = json_string_value(json_object_get(root, "_name_or_path"));
        const char *slash = id ? strrchr(id, '/') : NULL;
        if (st == PPL_OK && id && *(slash ? slash + 1 : id))
            ppl_jr_name_copy(model->name, sizeof model->name, slash ? slash + 1 : id,
                             strlen(slash ? slash + 1 : id));
        else if (st == PPL_OK)
            hf_dir_name(path, model->name, sizeof model->name);
    } else {
        st = ppl_model_from_json(root, ctx.file, "", diag, model, err);
        kept = json_incref(root);
    }
    json_decref(root);
    if (st == PPL_OK && !model->name[0])
        ppl_jr_file_stem(path, model->name, sizeof model->name);
    /* the document as read (a Hugging Face config's as converted), named as the
     * model was */
    if (st == PPL_OK && doc_out && !(*doc_out = ppl_jr_named_copy(kept, model->name)))
        st = ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    json_decref(kept);
    return st;
}

ppl_status ppl_model_set_seq_len(ppl_model *m, int64_t seq_len, ppl_error *err)
{
    if (seq_len < 1 || seq_len > PPL_MAX_SEQ_LEN)
        return ppl_error_set(err, PPL_EUSAGE, "", "seq_len",
                             "expected 1 to %lld tokens, found %lld", (long long)PPL_MAX_SEQ_LEN,
                             (long long)seq_len);
    m->seq_len = seq_len;
    return PPL_OK;
}

double ppl_gpt_params_eq2(double L, double h, double V, double s)
{
    /* Narayanan et al. SC'21 Eq.2, expanded: 12Lh^2 + 13Lh + (V + s)h */
    return 12.0 * L * h * h + 13.0 * L * h + (V + s) * h;
}

/* One multi-token-prediction module (DeepSeek-V3 report §2.2, Fig.3): two RMSNorms of
 * the hidden state and of the next token's embedding, a 2h x h projection of their
 * concatenation, one transformer layer of the model's last kind and the norm before
 * the shared output head (Hugging Face DeepSeek-V3: layer 61's enorm, hnorm,
 * eh_proj, shared_head.norm).  The embedding and the output head are shared. */
static double mtp_module_params(const ppl_model *m, double layer, double norm_size)
{
    const double h = (double)m->hidden;
    return layer + 2.0 * h * h + 3.0 * norm_size;
}

void ppl_model_derive(const ppl_model *m, ppl_model_figures *out)
{
    const double h = (double)m->hidden, V = (double)m->vocab, s = (double)m->seq_len;
    const double norm_size = m->norm == PPL_NORM_LAYERNORM ? 2.0 * h : h;
    ppl_layer_shape shape; /* the whole layer: one rank of one */
    ppl_layer_shape_of(m, 1, &shape);
    memset(out, 0, sizeof *out);

    /* attention: Q, K, V (or MLA's latent projections) and the output projection,
     * with their biases */
    double attn_weights = shape.attn_weights;
    double norms = shape.norms;
    double dense_mlp = shape.mlp_weights + shape.mlp_bias;
    out->params_attention = attn_weights + shape.attn_bias;
    out->params_norms = norms;
    out->params_dense_layer = out->params_attention + dense_mlp + norms;

    double L = (double)m->layers, moe_layers = 0.0;
    double moe_total = 0.0, moe_active = 0.0, moe_flops_weights = 0.0;
    if (m->has_moe) {
        /* routed experts, shared experts every token visits, the router */
        double E = (double)m->moe.experts, k = (double)m->moe.top_k;
        double expert = shape.expert_weights + shape.expert_bias;
        double shared = shape.shared_weights + shape.shared_bias + shape.router;
        moe_layers = (double)ppl_moe_layers_in(m, 0, m->layers);
        moe_total = out->params_attention + norms + E * expert + shared;
        moe_active = out->params_attention + norms + k * expert + shared;
        moe_flops_weights =
            attn_weights + k * shape.expert_weights + shape.shared_weights + shape.router;
    }
    out->moe_layers = (int64_t)moe_layers;
    out->params_moe_layer = moe_total;
    out->params_moe_layer_active = moe_active;
    double dense_layers = L - moe_layers;

    out->params_embedding = V * h + (m->position_embedding == PPL_POSITION_LEARNED ? s * h : 0.0) +
                            (m->embedding_norm ? norm_size : 0.0);
    out->params_output = (m->tied_embeddings ? 0.0 : V * h) + (m->final_norm ? norm_size : 0.0);
    double layers_total = dense_layers * out->params_dense_layer + moe_layers * moe_total;
    double layers_active = dense_layers * out->params_dense_layer + moe_layers * moe_active;
    /* the MTP modules repeat the model's last layer, MoE when it is */
    const double D = (double)m->mtp_layers;
    const bool mtp_moe = m->has_moe && moe_layers > 0;
    out->params_mtp =
        D * mtp_module_params(m, mtp_moe ? moe_total : out->params_dense_layer, norm_size);
    double mtp_active =
        D * mtp_module_params(m, mtp_moe ? moe_active : out->params_dense_layer, norm_size);
    out->params_total = layers_total + out->params_embedding + out->params_output + out->params_mtp;
    out->params_active = layers_active + out->params_embedding + out->params_output + mtp_active;
    out->weight_bytes_bf16 = 2.0 * out->params_total;
    out->weight_bytes_fp8 = 1.0 * out->params_total;
    out->training_state_bytes = 16.0 * out->params_total;

    /* FLOPs per token, forward: 2 per weight of each GEMM, and the attention core
     * over all s keys: QK^T 2s x (query columns), the weighted sum of values 2s x
     * (value columns); 4sh for a GPT (Korthikanti Eq.7) */
    double attn_core = 2.0 * s * (shape.q_cols + shape.v_cols);
    double dense_flops = 2.0 * (attn_weights + shape.mlp_weights) + attn_core;
    double moe_flops = 2.0 * moe_flops_weights + attn_core;
    double layer_flops = dense_layers * dense_flops + moe_layers * moe_flops;
    double output_flops = 2.0 * h * V;
    /* each MTP module: its layer, its 2h x h projection and one more pass of the
     * output head */
    double mtp_layer_flops = D * ((mtp_moe ? moe_flops : dense_flops) + 2.0 * 2.0 * h * h);
    double mtp_output_flops = D * output_flops;
    out->flops_forward_per_token = layer_flops + output_flops + mtp_layer_flops + mtp_output_flops;
    out->flops_training_per_token = 3.0 * out->flops_forward_per_token;
    out->flops_full_recompute_per_token =
        4.0 * (layer_flops + mtp_layer_flops) + 3.0 * (output_flops + mtp_output_flops);
}

double ppl_moe_load_factor(const ppl_model *m)
{
    if (!m->has_moe)
        return 1.0;
    double skew = m->moe.routing_skew >= 1.0 ? m->moe.routing_skew : 1.0;
    /* with a capacity factor an expert takes at most that share and drops the rest
     * (Megatron-Core moe_expert_capacity_factor; Fedus et al. 2021, Switch §2.1) */
    if (m->moe.capacity_factor > 0.0 && m->moe.capacity_factor < skew)
        return m->moe.capacity_factor;
    return skew;
}

int64_t ppl_moe_layers_in(const ppl_model *m, int64_t first, int64_t count)
{
    if (!m->has_moe || count <= 0)
        return 0;
    /* layer i >= d is MoE when (i - d + 1) % every == 0 */
    const int64_t d = m->moe.first_dense_layers, e = m->moe.every;
    int64_t lo = first > d ? first - d : 0, hi = first + count - d;
    if (hi <= 0)
        return 0;
    return hi / e - lo / e;
}

/* d: the file's head_dim, or hidden / heads for a model built without one */
static double head_dim_of(const ppl_model *m)
{
    return m->head_dim > 0 ? (double)m->head_dim : (double)m->hidden / (double)m->heads;
}

/* weights and biases of one MLP of width f on each of t ranks: fc1 (two matrices when
 * gated) column-parallel with its bias split, fc2 row-parallel with its bias whole */
static double mlp_weights(const ppl_model *m, double f, double t)
{
    return (m->gated_mlp ? 3.0 : 2.0) * (double)m->hidden * f / t;
}
static double mlp_bias(const ppl_model *m, double f, double t)
{
    return m->bias ? (m->gated_mlp ? 2.0 : 1.0) * f / t + (double)m->hidden : 0.0;
}

void ppl_layer_shape_of(const ppl_model *m, int64_t tp, ppl_layer_shape *s)
{
    const double t = (double)tp, h = (double)m->hidden;
    const double norm_size = m->norm == PPL_NORM_LAYERNORM ? 2.0 * h : h;
    memset(s, 0, sizeof *s);
    s->fc1_outputs = m->gated_mlp ? 2.0 : 1.0;
    s->norms = 2.0 * norm_size;
    if (m->attention == PPL_ATTENTION_MLA) {
        /* Megatron-Core's MLA (megatron/core/transformer/multi_latent_attention.py,
         * MLASelfAttention): the down projections (TELinear, parallel_mode
         * "duplicated") whole on every rank, the up projections column-parallel, the
         * output projection row-parallel; a norm on each latent */
        const ppl_mla *a = &m->mla;
        const double nh = (double)m->heads / t;
        const double qk = (double)(a->qk_nope_head_dim + a->qk_rope_head_dim);
        const double ql = (double)a->q_lora_rank, kvl = (double)a->kv_lora_rank;
        const double rope = (double)a->qk_rope_head_dim;
        s->q_cols = nh * qk;
        s->v_cols = nh * (double)a->v_head_dim;
        s->kv_cols = 0.5 * (s->q_cols + s->v_cols); /* K nh x qk, V nh x v: their mean */
        s->latent_cols = ql + kvl + rope;
        double q_proj = ql > 0.0 ? h * ql + ql * s->q_cols : h * s->q_cols;
        double kv_proj =
            h * (kvl + rope) + kvl * nh * (double)(a->qk_nope_head_dim + a->v_head_dim);
        s->attn_weights = q_proj + kv_proj + s->v_cols * h;
        s->attn_bias = m->bias ? s->q_cols + 2.0 * s->kv_cols + h : 0.0;
        s->norms += (ql + kvl) * (m->norm == PPL_NORM_LAYERNORM ? 2.0 : 1.0);
    } else {
        s->q_cols = (double)m->heads * head_dim_of(m) / t;
        s->v_cols = s->q_cols;
        s->kv_cols = ppl_kv_columns_per_gpu(m, tp);
        s->attn_weights = h * s->q_cols + 2.0 * h * s->kv_cols + s->q_cols * h;
        s->attn_bias = m->bias ? s->q_cols + 2.0 * s->kv_cols + h : 0.0;
        /* one norm over the query heads and one over the key heads, head_dim wide,
         * on every rank (Megatron-Core attention.py q_layernorm, k_layernorm) */
        if (m->qk_norm)
            s->norms += 2.0 * head_dim_of(m) * (m->norm == PPL_NORM_LAYERNORM ? 2.0 : 1.0);
    }
    s->ffn_cols = (double)m->ffn_hidden / t;
    s->mlp_weights = mlp_weights(m, (double)m->ffn_hidden, t);
    s->mlp_bias = mlp_bias(m, (double)m->ffn_hidden, t);
    if (m->has_moe) {
        s->expert_cols = (double)m->moe.ffn_hidden / t;
        s->expert_weights = mlp_weights(m, (double)m->moe.ffn_hidden, t);
        s->expert_bias = mlp_bias(m, (double)m->moe.ffn_hidden, t);
        /* the shared experts: one MLP as wide as all of them, split over tp as a
         * dense MLP (Megatron-Core moe/shared_experts.py,
         * --moe-shared-expert-intermediate-size) */
        double shared = (double)(m->moe.shared_experts * m->moe.shared_ffn_hidden);
        if (shared > 0.0) {
            s->shared_cols = shared / t;
            s->shared_weights = mlp_weights(m, shared, t);
            s->shared_bias = mlp_bias(m, shared, t);
        }
        s->router = h * (double)m->moe.experts;
    }
}

double ppl_kv_columns_per_gpu(const ppl_model *m, int64_t tp)
{
    if (m->attention == PPL_ATTENTION_MLA) { /* per head: K nope + rope, V v_head_dim */
        const ppl_mla *a = &m->mla;
        return 0.5 * (double)m->heads / (double)tp *
               (double)(a->qk_nope_head_dim + a->qk_rope_head_dim + a->v_head_dim);
    }
    double d = head_dim_of(m);
    double kv_heads = (double)m->kv_heads / (double)tp;
    return d * (kv_heads < 1.0 ? 1.0 : kv_heads); /* replicated when tp > kv_heads */
}
