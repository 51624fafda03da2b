/*
 * cmd_model.c - `parplan models` and `parplan model show`.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* 174615822336 -> "174,615,822,336" */
static void with_commas(double value, char *buf, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", value);
    size_t n = strlen(digits), o = 0;
    for (size_t i = 0; i < n && o + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

static json_t *json_count(double value)
{
    return json_integer((json_int_t)llround(value));
}

static json_t *model_inputs_json(const ppl_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "source", json_string(m->source));
    json_object_set_new(o, "layers", json_integer(m->layers));
    json_object_set_new(o, "hidden", json_integer(m->hidden));
    json_object_set_new(o, "heads", json_integer(m->heads));
    json_object_set_new(o, "kv_heads", json_integer(m->kv_heads));
    if (m->attention != PPL_ATTENTION_MLA) /* MLA's widths are attention's keys */
        json_object_set_new(o, "head_dim",
                            json_integer(m->head_dim > 0 ? m->head_dim : m->hidden / m->heads));
    json_object_set_new(o, "ffn_hidden", json_integer(m->ffn_hidden));
    json_object_set_new(o, "vocab", json_integer(m->vocab));
    json_object_set_new(o, "seq_len", json_integer(m->seq_len));
    json_object_set_new(o, "gated_mlp", json_boolean(m->gated_mlp));
    json_object_set_new(o, "tied_embeddings", json_boolean(m->tied_embeddings));
    json_object_set_new(o, "bias", json_boolean(m->bias));
    json_object_set_new(o, "norm", json_string(ppl_norm_name(m->norm)));
    json_object_set_new(o, "position_embedding",
                        json_string(ppl_position_name(m->position_embedding)));
    json_object_set_new(o, "final_norm", json_boolean(m->final_norm));
    json_object_set_new(o, "embedding_norm", json_boolean(m->embedding_norm));
    json_object_set_new(o, "dropout", json_boolean(m->dropout));
    json_object_set_new(o, "rope_theta",
                        m->rope_theta > 0.0 ? ppl_json_real(m->rope_theta) : json_null());
    json_object_set_new(o, "qk_norm", json_boolean(m->qk_norm));
    if (m->has_moe) {
        json_t *moe = json_object();
        json_object_set_new(moe, "experts", json_integer(m->moe.experts));
        json_object_set_new(moe, "top_k", json_integer(m->moe.top_k));
        json_object_set_new(moe, "ffn_hidden", json_integer(m->moe.ffn_hidden));
        json_object_set_new(moe, "every", json_integer(m->moe.every));
        json_object_set_new(moe, "shared_experts", json_integer(m->moe.shared_experts));
        json_object_set_new(moe, "shared_ffn_hidden", json_integer(m->moe.shared_ffn_hidden));
        json_object_set_new(moe, "first_dense_layers", json_integer(m->moe.first_dense_layers));
        json_object_set_new(moe, "capacity_factor",
                            m->moe.capacity_factor > 0 ? ppl_json_real(m->moe.capacity_factor)
                                                       : json_null());
        json_object_set_new(moe, "router_node_limit",
                            m->moe.router_node_limit > 0 ? json_integer(m->moe.router_node_limit)
                                                         : json_null());
        json_object_set_new(moe, "router_score",
                            json_string(ppl_router_score_name(m->moe.router_score)));
        json_object_set_new(moe, "router_expert_bias", json_boolean(m->moe.router_expert_bias));
        json_object_set_new(moe, "router_topk_scale", ppl_json_real(m->moe.router_topk_scale));
        json_object_set_new(o, "moe", moe);
    } else {
        json_object_set_new(o, "moe", json_null());
    }
    if (m->attention == PPL_ATTENTION_MLA) {
        json_t *a = json_object();
        json_object_set_new(a, "type", json_string("mla"));
        json_object_set_new(a, "q_lora_rank", json_integer(m->mla.q_lora_rank));
        json_object_set_new(a, "kv_lora_rank", json_integer(m->mla.kv_lora_rank));
        json_object_set_new(a, "qk_nope_head_dim", json_integer(m->mla.qk_nope_head_dim));
        json_object_set_new(a, "qk_rope_head_dim", json_integer(m->mla.qk_rope_head_dim));
        json_object_set_new(a, "v_head_dim", json_integer(m->mla.v_head_dim));
        json_object_set_new(o, "attention", a);
    }
    json_object_set_new(o, "mtp_layers", json_integer(m->mtp_layers));
    return o;
}

static ppl_status show_json(cli *c, const ppl_model *m, const ppl_model_figures *f)
{
    json_t *doc = ppl_json_document();
    if (!doc)
        return cli_emit_json(c, NULL);
    json_object_set_new(doc, "model", model_inputs_json(m));
    json_object_set_new(doc, "params", json_count(f->params_total));
    json_object_set_new(doc, "active_params", json_count(f->params_active));
    json_t *b = json_object();
    json_object_set_new(b, "embedding", json_count(f->params_embedding));
    json_object_set_new(b, "output", json_count(f->params_output));
    json_object_set_new(b, "dense_layer", json_count(f->params_dense_layer));
    json_object_set_new(b, "attention_per_layer", json_count(f->params_attention));
    json_object_set_new(b, "moe_layers", json_integer(f->moe_layers));
    json_object_set_new(b, "moe_layer", json_count(f->params_moe_layer));
    json_object_set_new(b, "moe_layer_active", json_count(f->params_moe_layer_active));
    json_object_set_new(b, "mtp", json_count(f->params_mtp));
    json_object_set_new(doc, "params_breakdown", b);
    json_t *fl = json_object();
    json_object_set_new(fl, "forward", ppl_json_real(f->flops_forward_per_token));
    json_object_set_new(fl, "training", ppl_json_real(f->flops_training_per_token));
    json_object_set_new(fl, "training_full_recompute",
                        ppl_json_real(f->flops_full_recompute_per_token));
    json_object_set_new(doc, "flops_per_token", fl);
    json_t *w = json_object();
    json_object_set_new(w, "bf16", json_count(f->weight_bytes_bf16));
    json_object_set_new(w, "fp8", json_count(f->weight_bytes_fp8));
    json_object_set_new(doc, "weight_bytes", w);
    json_object_set_new(doc, "training_state_bytes", json_count(f->training_state_bytes));
    return cli_emit_json(c, doc);
}

static void kv(ppl_table *t, const char *key, const char *value)
{
    const char *row[2] = {key, value};
    ppl_table_row(t, row);
}

static void show_text(cli *c, const ppl_model *m, const ppl_model_figures *f)
{
    char a[160], b[64], d[64];
    ppl_table t;
    ppl_table_init(&t, 2, "ll");
    kv(&t, "model", m->name);
    if (m->source[0])
        kv(&t, "source", m->source);
    snprintf(a, sizeof a, "%lld layers, hidden %lld, %lld heads (%lld KV heads)",
             (long long)m->layers, (long long)m->hidden, (long long)m->heads,
             (long long)m->kv_heads);
    if (m->head_dim * m->heads != m->hidden) {
        size_t n = strlen(a);
        snprintf(a + n, sizeof a - n, ", head dim %lld", (long long)m->head_dim);
    }
    kv(&t, "architecture", a);
    if (m->attention == PPL_ATTENTION_MLA) {
        snprintf(
            a, sizeof a,
            "latent attention: q rank %lld, kv rank %lld, q/k head %lld + %lld rope, v head %lld",
            (long long)m->mla.q_lora_rank, (long long)m->mla.kv_lora_rank,
            (long long)m->mla.qk_nope_head_dim, (long long)m->mla.qk_rope_head_dim,
            (long long)m->mla.v_head_dim);
        kv(&t, "", a);
    }
    snprintf(a, sizeof a, "%s MLP of %lld, vocab %lld, sequence %lld",
             m->gated_mlp ? "gated (3 matrices)" : "plain (2 matrices)", (long long)m->ffn_hidden,
             (long long)m->vocab, (long long)m->seq_len);
    kv(&t, "", a);
    snprintf(a, sizeof a, "%s, %s, %s positions, %s embeddings%s%s%s",
             m->bias ? "biases" : "no biases", ppl_norm_name(m->norm),
             ppl_position_name(m->position_embedding), m->tied_embeddings ? "tied" : "untied",
             m->final_norm ? ", final norm" : "", m->embedding_norm ? ", embedding norm" : "",
             m->qk_norm ? ", query/key norms" : "");
    kv(&t, "", a);
    if (m->rope_theta > 0.0) {
        snprintf(a, sizeof a, "%.10g", m->rope_theta);
        kv(&t, "rotary base", a);
    }
    if (m->has_moe) {
        snprintf(a, sizeof a, "%lld experts, top-%lld, expert MLP %lld, %lld of %lld layers",
                 (long long)m->moe.experts, (long long)m->moe.top_k, (long long)m->moe.ffn_hidden,
                 (long long)f->moe_layers, (long long)m->layers);
        kv(&t, "mixture of experts", a);
        if (m->moe.shared_experts > 0 || m->moe.first_dense_layers > 0) {
            snprintf(a, sizeof a, "%lld shared expert(s) of %lld, first %lld layers dense",
                     (long long)m->moe.shared_experts, (long long)m->moe.shared_ffn_hidden,
                     (long long)m->moe.first_dense_layers);
            kv(&t, "", a);
        }
        char cap[32] = "dropless";
        if (m->moe.capacity_factor > 0)
            snprintf(cap, sizeof cap, "capacity factor %.3g", m->moe.capacity_factor);
        if (m->moe.router_node_limit > 0)
            snprintf(a, sizeof a, "%s, each token to at most %lld servers", cap,
                     (long long)m->moe.router_node_limit);
        else
            snprintf(a, sizeof a, "%s", cap);
        kv(&t, "", a);
        snprintf(a, sizeof a, "%s scores%s, top-%lld weights x %.3g",
                 ppl_router_score_name(m->moe.router_score),
                 m->moe.router_expert_bias ? " with a load-balancing expert bias" : "",
                 (long long)m->moe.top_k, m->moe.router_topk_scale);
        kv(&t, "router", a);
    }
    if (m->mtp_layers > 0) {
        snprintf(a, sizeof a, "%lld module(s) on the last stage, sharing embedding and head",
                 (long long)m->mtp_layers);
        kv(&t, "multi-token pred.", a);
    }
    kv(&t, "", "");
    ppl_format_params(f->params_total, b, sizeof b);
    with_commas(f->params_total, d, sizeof d);
    snprintf(a, sizeof a, "%s (%s)", b, d);
    kv(&t, "parameters", a);
    if (m->has_moe) {
        ppl_format_params(f->params_active, b, sizeof b);
        with_commas(f->params_active, d, sizeof d);
        snprintf(a, sizeof a, "%s (%s) per token", b, d);
        kv(&t, "  active", a);
    }
    ppl_format_params(f->params_dense_layer, b, sizeof b);
    kv(&t, m->has_moe ? "  dense layer" : "  per layer", b);
    if (m->has_moe) {
        ppl_format_params(f->params_moe_layer, b, sizeof b);
        kv(&t, "  MoE layer", b);
    }
    ppl_format_params(f->params_embedding, b, sizeof b);
    kv(&t, "  embedding", b);
    ppl_format_params(f->params_output, b, sizeof b);
    kv(&t, "  output", m->tied_embeddings && !m->final_norm ? "tied to the embedding" : b);
    if (m->mtp_layers > 0) {
        ppl_format_params(f->params_mtp, b, sizeof b);
        ppl_format_params(f->params_total - f->params_mtp, d, sizeof d);
        snprintf(a, sizeof a, "%s (without them: %s)", b, d);
        kv(&t, "  MTP modules", a);
    }
    kv(&t, "", "");
    kv(&t, "FLOPs per token", "");
    snprintf(a, sizeof a, "%.4g", f->flops_forward_per_token);
    kv(&t, "  forward", a);
    snprintf(a, sizeof a, "%.4g (3 x forward, model FLOPs as in MFU)", f->flops_training_per_token);
    kv(&t, "  training", a);
    snprintf(a, sizeof a, "%.4g (+ a recomputed forward of every layer)",
             f->flops_full_recompute_per_token);
    kv(&t, "  full recompute", a);
    kv(&t, "", "");
    ppl_format_bytes(f->weight_bytes_bf16, b, sizeof b);
    ppl_format_bytes(f->weight_bytes_fp8, d, sizeof d);
    snprintf(a, sizeof a, "%s in bf16, %s in fp8", b, d);
    kv(&t, "weights", a);
    ppl_format_bytes(f->training_state_bytes, b, sizeof b);
    snprintf(a, sizeof a, "%s (16 bytes/parameter: mixed-precision Adam)", b);
    kv(&t, "training state", a);
    ppl_table_render(&t, &c->out, "");
    ppl_table_free(&t);
}

ppl_status cmd_model_show(cli *c)
{
    ppl_model m;
    ppl_model_figures f;
    ppl_status st = cli_load_model(c, c->args->positional, &m);
    if (st != PPL_OK)
        return st;
    ppl_model_derive(&m, &f);
    if (c->args->json)
        return show_json(c, &m, &f);
    show_text(c, &m, &f);
    return PPL_OK;
}

static ppl_status model_entry(cli *c, const char *name, json_t *list, ppl_table *t)
{
    ppl_model m;
    ppl_model_figures f;
    ppl_status st = cli_load_model(c, name, &m);
    if (st != PPL_OK)
        return st;
    ppl_model_derive(&m, &f);
    if (list) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(m.name));
        json_object_set_new(e, "params", json_count(f.params_total));
        json_object_set_new(e, "active_params", json_count(f.params_active));
        json_object_set_new(e, "flops_per_token", ppl_json_real(f.flops_training_per_token));
        json_object_set_new(e, "source", json_string(m.source));
        json_array_append_new(list, e);
        return PPL_OK;
    }
    char cells[10][96];
    snprintf(cells[0], sizeof cells[0], "%s", m.name);
    snprintf(cells[1], sizeof cells[1], "%lld", (long long)m.layers);
    snprintf(cells[2], sizeof cells[2], "%lld", (long long)m.hidden);
    snprintf(cells[3], sizeof cells[3], "%lld", (long long)m.heads);
    snprintf(cells[4], sizeof cells[4], "%lld", (long long)m.kv_heads);
    snprintf(cells[5], sizeof cells[5], "%lld",
             (long long)(m.has_moe ? m.moe.ffn_hidden : m.ffn_hidden));
    snprintf(cells[6], sizeof cells[6], "%lld", (long long)m.vocab);
    snprintf(cells[7], sizeof cells[7], "%lld", (long long)m.seq_len);
    char total[24], active[24];
    ppl_format_params(f.params_total, total, sizeof total);
    ppl_format_params(f.params_active, active, sizeof active);
    if (m.has_moe)
        snprintf(cells[8], sizeof cells[8], "%s (%s active)", total, active);
    else
        snprintf(cells[8], sizeof cells[8], "%s", total);
    snprintf(cells[9], sizeof cells[9], "%.3g", f.flops_training_per_token);
    ppl_table_row_fixed(t, cells[0], sizeof cells[0]);
    return PPL_OK;
}

ppl_status cmd_models(cli *c)
{
    static const char *const header[] = {"model", "layers", "hidden", "heads",  "kv",
                                         "ffn",   "vocab",  "seq",    "params", "train FLOP/token"};
    return cli_list_catalog(c, PPL_CATALOG_MODELS, "models", 10, "lrrrrrrrrr", header, model_entry);
}
