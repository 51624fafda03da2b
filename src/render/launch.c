/*
 * launch.c - a plan's launch: Megatron-LM flags, a Megatron-Bridge recipe
 * (bridge.c), a DeepSpeed config and a torchtitan job (torchtitan.c), each checked
 * against its framework's own rules (see render/launch.h).
 */
#include "render/launch.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/output.h"
#include "cost/knobs.h"
#include "cost/shard.h"
#include "render/bridge.h"
#include "render/torchtitan.h"

/* A launcher's part of the launch object, or null with why it cannot run the plan. */
static void launcher_part(json_t *launch, const char *key, json_t *value, const char *error_key,
                          const char *why)
{
    if (why) {
        json_decref(value);
        json_object_set_new(launch, key, json_null());
        json_object_set_new(launch, error_key, json_string(why));
    } else {
        json_object_set_new(launch, key, value);
    }
}

void ppl_launch_refuse(json_t *launch, const char *launcher, const char *why)
{
    char key[48];
    snprintf(key, sizeof key, "%s_error", launcher);
    json_object_set_new(launch, launcher, json_null());
    json_object_set_new(launch, key, json_string(why));
    snprintf(key, sizeof key, "%s_note", launcher);
    json_object_del(launch, key);
    snprintf(key, sizeof key, "%s_release", launcher);
    json_object_del(launch, key);
    json_t *runs = json_object_get(launch, "launchers");
    for (size_t i = json_array_size(runs); i-- > 0;) {
        const char *name = json_string_value(json_array_get(runs, i));
        if (name && strcmp(name, launcher) == 0)
            json_array_remove(runs, i);
    }
}

static void arg_str(json_t *args, const char *flag, const char *value)
{
    json_array_append_new(args, json_string(flag));
    json_array_append_new(args, json_string(value));
}

static void arg_int(json_t *args, const char *flag, int64_t value)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)value);
    arg_str(args, flag, num);
}

/* The MoE flags, as costed.  The layer pattern is spelled out, as Megatron-Core
 * evaluates it (arguments.py moe_freq_type; gpt_layer_specs.py: an integer N
 * makes layers 0, N, 2N, ... MoE, which is not parplan's every-N-th counted from
 * the first dense-free layer).  The dispatcher and the all-to-all overlap follow
 * ppl_ep_mode_of. */
static void moe_args(json_t *args, const ppl_estimate *e, const ppl_model *m,
                     const char **min_version)
{
    const ppl_config *c = &e->config;
    const ppl_moe *x = &m->moe;
    arg_int(args, "--num-experts", x->experts);
    arg_int(args, "--moe-router-topk", x->top_k);
    if (x->ffn_hidden != m->ffn_hidden)
        arg_int(args, "--moe-ffn-hidden-size", x->ffn_hidden);
    if (x->every > 1 || x->first_dense_layers > 0) {
        /* [0]*d + ([0]*(N-1)+[1])*q + [0]*r over the L layers */
        int64_t rest = m->layers - x->first_dense_layers;
        char pattern[160];
        int n = snprintf(pattern, sizeof pattern, "[0]*%lld", (long long)x->first_dense_layers);
        if (x->every > 1)
            n += snprintf(pattern + n, sizeof pattern - (size_t)n, "+([0]*%lld+[1])*%lld",
                          (long long)(x->every - 1), (long long)(rest / x->every));
        else
            n += snprintf(pattern + n, sizeof pattern - (size_t)n, "+[1]*%lld", (long long)rest);
        if (x->every > 1 && rest % x->every)
            snprintf(pattern + n, sizeof pattern - (size_t)n, "+[0]*%lld",
                     (long long)(rest % x->every));
        arg_str(args, "--moe-layer-freq", pattern);
    }
    if (x->shared_experts > 0)
        arg_int(args, "--moe-shared-expert-intermediate-size",
                x->shared_experts * x->shared_ffn_hidden);
    if (x->capacity_factor > 0) {
        char cf[32];
        snprintf(cf, sizeof cf, "%g", x->capacity_factor);
        arg_str(args, "--moe-expert-capacity-factor", cf);
    }
    /* node-limited routing as group-limited routing, a group per server of the
     * expert-parallel group (transformer_config.py: experts divisible by the
     * groups, group top-k at most the groups) */
    if (x->router_node_limit > 0 && e->ep_servers > x->router_node_limit &&
        x->experts % e->ep_servers == 0) {
        arg_int(args, "--moe-router-num-groups", e->ep_servers);
        arg_int(args, "--moe-router-group-topk", x->router_node_limit);
    }
    ppl_ep_mode mode = ppl_ep_mode_of(m, c, e->stack);
    /* the router as the model has it (transformer_config.py:804-821): its score
     * function, the auxiliary-loss-free expert bias (sigmoid scores only,
     * transformer_config.py:2617-2625) and the top-k weights' scale */
    if (x->router_score != PPL_ROUTER_SOFTMAX)
        arg_str(args, "--moe-router-score-function", ppl_router_score_name(x->router_score));
    if (x->router_expert_bias)
        json_array_append_new(args, json_string("--moe-router-enable-expert-bias"));
    if (x->router_topk_scale != 1.0) {
        char scale[32];
        snprintf(scale, sizeof scale, "%g", x->router_topk_scale);
        arg_str(args, "--moe-router-topk-scaling-factor", scale);
    }
    arg_str(args, "--moe-token-dispatcher-type", mode.dedup ? "flex" : "alltoall");
    if (mode.dedup) { /* DeepEP: core_v0.12 */
        json_array_append_new(args, json_string("--moe-enable-deepep"));
        if (strcmp(*min_version, "core_v0.12") < 0)
            *min_version = "core_v0.12";
    }
    if (mode.overlap) { /* core_v0.14 */
        json_array_append_new(args, json_string("--overlap-moe-expert-parallel-comm"));
        if (strcmp(*min_version, "core_v0.14") < 0)
            *min_version = "core_v0.14";
    }
    json_array_append_new(args, json_string("--moe-grouped-gemm"));
}

/* Megatron-Core's --pipeline-model-parallel-layout for a split it builds no other
 * way (config.h PPL_SPLIT_LAYOUT): virtual stage v = chunk x pp + rank holds
 * ppl_split_chunk_layers(rank, chunk) decoder layers ("t"), the first the embedding
 * ("E"), the last the MTP modules ("m") and the loss ("L"), "|" between them
 * (pipeline_parallel_layer_layout.py, parse_str_to_list and the list's order:
 * lines 45-52).  "t*4" is the parser's repetition. */
static void layout_text(const ppl_config *c, const ppl_model *m, const int64_t *stage_layers,
                        ppl_buf *out)
{
    const int64_t stages = c->pp * c->vp;
    for (int64_t v = 0; v < stages; v++) {
        const int64_t rank = v % c->pp, chunk = v / c->pp;
        const int64_t n = stage_layers ? stage_layers[v] : ppl_split_chunk_layers(c, rank, chunk);
        ppl_buf_printf(out, "%s%s", v ? "|" : "", v == 0 ? "E" : "");
        if (n == 1)
            ppl_buf_printf(out, "t");
        else if (n > 1)
            ppl_buf_printf(out, "t*%lld", (long long)n);
        if (v == stages - 1) {
            for (int64_t k = 0; k < m->mtp_layers; k++)
                ppl_buf_printf(out, "m");
            ppl_buf_printf(out, "L");
        }
    }
}

/* Why Megatron-LM cannot build the model as planned, or NULL: what no flag of its
 * GPT model builds (arguments.py:2397-2399 position types). */
static const char *megatron_model_error(const ppl_model *m)
{
    if (m->position_embedding == PPL_POSITION_ALIBI)
        return "Megatron-LM has no ALiBi position embedding (BLOOM trained with BigScience's "
               "Megatron-DeepSpeed fork)";
    if (m->embedding_norm)
        return "Megatron-LM has no norm after the embedding (BLOOM's word_embeddings_layernorm)";
    return NULL;
}

/*
 * Megatron-LM's flags for a configuration, checked against its own argument rules
 * (megatron/training/arguments.py validate_args and
 * megatron/core/transformer/transformer_config.py, main at d98e8a64dd, 2026).  The
 * oldest release that has every flag emitted is named alongside: the uneven-stage
 * flags came with core_v0.9, --cp-comm-type and --hierarchical-context-parallel-sizes
 * with core_v0.10 (commit 645c329d07), --num-virtual-stages-per-pipeline-rank, the
 * account-for-embedding/loss flags and --attention-backend with core_v0.11,
 * --grad-reduce-in-bf16 with core_v0.12, --pipeline-model-parallel-layout with
 * core_v0.13 (commit 77732c36), Megatron-FSDP (--use-megatron-fsdp) and --rope-type
 * (arguments.py:1950 at core_v0.14.0, which MLA's plain RoPE needs) with core_v0.14;
 * --expert-tensor-parallel-size came with core_v0.10, and --rotary-base,
 * --qk-layernorm and the router's flags were there by core_v0.11, below the
 * core_v0.11 every launch needs.
 */
json_t *ppl_launch_json(const ppl_estimate *given, const ppl_model *m, const int64_t *stage_layers)
{
    /* layers given stage by stage (vp 1): the first/last flags where the middle
     * stages are equal, else the layout (config.h PPL_SPLIT_LAYOUT) */
    ppl_estimate copy;
    const ppl_estimate *e = given;
    bool custom = false;
    if (stage_layers && given->config.vp == 1 && given->config.pp > 1) {
        const int64_t pp = given->config.pp;
        copy = *given;
        copy.config.split = (ppl_stage_split){.first = stage_layers[0],
                                              .last = stage_layers[pp - 1],
                                              .middle = pp > 2 ? stage_layers[1] : 0};
        for (int64_t k = 2; k < pp - 1; k++)
            custom |= stage_layers[k] != stage_layers[1];
        e = &copy;
    }
    const ppl_config *c = &e->config;
    json_t *launch = json_object(), *args = json_array(), *ds = json_object();
    const char *min_version = "core_v0.11", *ds_why = NULL;
#define ARG(s) json_array_append_new(args, json_string(s))
#define ARGI(s, v)                                                                                 \
    do {                                                                                           \
        char num_[32];                                                                             \
        snprintf(num_, sizeof num_, "%lld", (long long)(v));                                       \
        ARG(s);                                                                                    \
        ARG(num_);                                                                                 \
    } while (0)
    ARGI("--tensor-model-parallel-size", c->tp);
    ARGI("--pipeline-model-parallel-size", c->pp);
    if (c->cp > 1) {
        ARGI("--context-parallel-size", c->cp);
        /* the exchange as costed (context.c); both flags came with core_v0.10 */
        ARG("--cp-comm-type");
        ARG(ppl_cp_comm_name(c->cp_comm));
        if (c->cp_comm == PPL_CP_COMM_A2A_P2P) {
            /* the all-to-all level first, then the ring (model_parallel_config.py) */
            char ring[32];
            ARGI("--hierarchical-context-parallel-sizes", c->cp_a2a);
            snprintf(ring, sizeof ring, "%lld", (long long)(c->cp / c->cp_a2a));
            ARG(ring);
        }
        if (strcmp(min_version, "core_v0.10") < 0)
            min_version = "core_v0.10";
    }
    if (c->ep > 1)
        ARGI("--expert-model-parallel-size", c->ep);
    /* arguments.py:587-588: unset, expert tensor parallelism is tp */
    if (m->has_moe && ppl_config_etp(c) != c->tp)
        ARGI("--expert-tensor-parallel-size", ppl_config_etp(c));
    /* the stage split as Megatron-LM builds it (transformer_config.py, "Uneven PP") */
    bool embedding = false, loss = false;
    ppl_split_form form =
        custom ? PPL_SPLIT_LAYOUT : ppl_split_form_of(c, c->vp, &embedding, &loss);
    if (c->vp > 1 && form == PPL_SPLIT_EVEN)
        ARGI("--num-layers-per-virtual-pipeline-stage", m->layers / (c->pp * c->vp));
    else if (form == PPL_SPLIT_LAYOUT) {
        /* one of the three virtual-pipeline flags (arguments.py:927-939), and none
         * of the first/last or account flags (transformer_config.py:2242-2259) */
        ppl_buf layout;
        ppl_buf_init(&layout);
        layout_text(c, m, custom ? stage_layers : NULL, &layout);
        ARG("--pipeline-model-parallel-layout");
        ARG(layout.data ? layout.data : "");
        ppl_buf_free(&layout);
        if (strcmp(min_version, "core_v0.13") < 0)
            min_version = "core_v0.13";
    } else if (c->vp > 1)
        ARGI("--num-virtual-stages-per-pipeline-rank", c->vp);
    /* microbatches not a multiple of pp: a group per virtual stage that
     * schedules.py (forward_backward_pipelining_with_interleaving) accepts */
    if (c->vp > 1 && ppl_vp_group(c) != c->pp)
        ARGI("--microbatch-group-size-per-virtual-pipeline-stage", ppl_vp_group(c));
    if (form == PPL_SPLIT_ENDS) {
        ARGI("--decoder-first-pipeline-num-layers", c->split.first);
        ARGI("--decoder-last-pipeline-num-layers", c->split.last);
    }
    if (embedding)
        ARG("--account-for-embedding-in-pipeline-split");
    if (loss)
        ARG("--account-for-loss-in-pipeline-split");
    /* (interleaving with pp 2 relies on overlap_p2p_comm, on by default:
     * arguments.py asks pp > 2 only when --no-overlap-p2p-communication) */
    ARGI("--micro-batch-size", c->mbs);
    ARGI("--global-batch-size", c->global_batch);
    if (c->sequence_parallel)
        ARG("--sequence-parallel");
    if (c->recompute == PPL_RECOMPUTE_FULL) {
        ARG("--recompute-granularity");
        ARG("full");
        if (c->recompute_layers > 0) {
            /* the first N layers of each (virtual) stage, the rest keep activations */
            ARG("--recompute-method");
            ARG("block");
            ARGI("--recompute-num-layers", c->recompute_layers / c->vp);
        } else {
            ARG("--recompute-method");
            ARG("uniform");
            ARGI("--recompute-num-layers", 1);
        }
    } else if (c->recompute == PPL_RECOMPUTE_SELECTIVE) {
        ARG("--recompute-granularity");
        ARG("selective");
    }
    /* ZeRO-1 is the distributed optimizer; 2 and 3 are Megatron-FSDP's sharding
     * strategies, which need the fsdp_dtensor checkpoint format (arguments.py) */
    if (c->zero == 1) {
        ARG("--use-distributed-optimizer");
    } else if (c->zero >= 2) {
        ARG("--use-megatron-fsdp");
        ARG("--data-parallel-sharding-strategy");
        ARG(c->zero == 2 ? "optim_grads" : "optim_grads_params");
        ARG("--ckpt-format");
        ARG("fsdp_dtensor");
        min_version = "core_v0.14";
    }
    /* the overlap the time model assumes of a modern stack: gradient reduction
     * (and, sharded, the parameter gather) behind compute; TP communication
     * behind GEMMs, which Megatron does only with sequence parallelism */
    if (ppl_stack_overlaps(e->stack)) {
        if (c->dp > 1) {
            ARG("--overlap-grad-reduce");
            if (c->zero >= 1)
                ARG("--overlap-param-gather");
        }
        if (ppl_stack_tp_overlap_fits(c))
            ARG("--tp-comm-overlap");
    }
    ARG("--attention-backend");
    ARG(c->flash_attention ? "flash" : "unfused");
    if (c->precision == PPL_PRECISION_FP16) {
        ARG("--fp16");
    } else {
        ARG("--bf16");
        /* the profile's 16-bit gradients (arguments.py: else fp32 main grads) */
        if (ppl_stack_half_grads(e->stack)) {
            ARG("--grad-reduce-in-bf16");
            if (strcmp(min_version, "core_v0.12") < 0)
                min_version = "core_v0.12";
        }
    }
    /* the linear layers' GEMMs below 16 bits (transformer_config.py fp8, fp8_recipe,
     * fp4, fp4_recipe): fp8 as delayed scaling (Megatron's default recipe) with
     * e5m2 gradients; mxfp8 and nvfp4 as Megatron-Bridge's bf16_with_mxfp8_mixed
     * and bf16_with_nvfp4_mixed (training/mixed_precision.py) set them; the
     * parameter gather in fp8 follows below */
    if (c->precision == PPL_PRECISION_FP8) {
        ARG("--fp8-format");
        ARG("hybrid");
        if (c->fp8_recipe != PPL_FP8_DELAYED) {
            /* --fp8-recipe tensorwise: core_v0.12.0; blockwise: core_v0.13.0
             * (transformer_config.py fp8_recipe at those tags) */
            ARG("--fp8-recipe");
            ARG(ppl_fp8_recipe_names[c->fp8_recipe]);
            const char *v = c->fp8_recipe == PPL_FP8_BLOCKWISE ? "core_v0.13" : "core_v0.12";
            if (strcmp(min_version, v) < 0)
                min_version = v;
        }
    } else if (c->precision == PPL_PRECISION_MXFP8) {
        ARG("--fp8-format");
        ARG("e4m3");
        ARG("--fp8-recipe");
        ARG("mxfp8");
        if (strcmp(min_version, "core_v0.12") < 0) /* --fp8-recipe mxfp8: core_v0.12.0 */
            min_version = "core_v0.12";
    } else if (c->precision == PPL_PRECISION_NVFP4) {
        ARG("--fp4-format");
        ARG("e2m1");
        ARG("--fp4-recipe");
        ARG("nvfp4");
        if (strcmp(min_version, "core_v0.15") < 0) /* --fp4-format: core_v0.15.0 */
            min_version = "core_v0.15";
    }
    /* the fp8 weights kept and gathered in fp8 (stack.h ppl_stack_low_params, as
     * the memory model costs them); mxfp8 with the distributed optimizer reuses the
     * gradient buffer for the gather, as Megatron-Bridge's bf16_with_mxfp8_mixed
     * sets it (--reuse-grad-buf-for-mxfp8-param-ag: core_v0.13.0; Megatron-FSDP
     * turns it off, arguments.py:1137) */
    if (ppl_stack_low_params(e->stack) && ppl_low_params_allowed(c)) {
        ARG("--fp8-param-gather");
        if (c->precision == PPL_PRECISION_MXFP8 && c->zero == 1) {
            ARG("--reuse-grad-buf-for-mxfp8-param-ag");
            if (strcmp(min_version, "core_v0.13") < 0)
                min_version = "core_v0.13";
        }
    }
    if (c->bf16_layers > 0) { /* --first-last-layers-bf16 and its counts: core_v0.12.0 */
        ARG("--first-last-layers-bf16");
        ARGI("--num-layers-at-start-in-bf16", c->bf16_layers);
        ARGI("--num-layers-at-end-in-bf16", c->bf16_layers);
        if (strcmp(min_version, "core_v0.12") < 0)
            min_version = "core_v0.12";
    }
    if (c->optimizer == PPL_OPTIMIZER_SGD) {
        ARG("--optimizer");
        ARG("sgd");
    }
    /* the model itself */
    ARGI("--num-layers", m->layers);
    ARGI("--hidden-size", m->hidden);
    ARGI("--ffn-hidden-size", m->ffn_hidden);
    ARGI("--num-attention-heads", m->heads);
    /* heads x head_dim != hidden (Qwen3): Megatron-LM's --kv-channels, the
     * projection width per head (default hidden / heads) */
    if (m->head_dim > 0 && m->head_dim * m->heads != m->hidden)
        ARGI("--kv-channels", m->head_dim);
    if (m->kv_heads != m->heads) {
        ARG("--group-query-attention");
        ARGI("--num-query-groups", m->kv_heads);
    }
    ARGI("--seq-length", m->seq_len);
    ARGI("--max-position-embeddings", m->seq_len);
    if (m->gated_mlp)
        ARG("--swiglu");
    if (!m->tied_embeddings)
        ARG("--untie-embeddings-and-output-weights");
    if (m->norm == PPL_NORM_RMSNORM) {
        ARG("--normalization");
        ARG("RMSNorm");
    }
    if (m->position_embedding == PPL_POSITION_ROPE) {
        ARG("--position-embedding-type");
        ARG("rope");
        /* arguments.py:2418 (an int, default 10000) */
        if (m->rope_theta > 0.0)
            ARGI("--rotary-base", (int64_t)llround(m->rope_theta));
        if (m->attention == PPL_ATTENTION_MLA) {
            /* MLA takes YaRN unless told (transformer_config.py:3306 rope_type
             * "yarn"): plain RoPE by --rope-type (arguments.py:2906, core_v0.14),
             * and without the fused kernel, which MLA runs under YaRN only
             * (transformer_config.py:3345-3346; core_v0.12 refused the fusion with
             * MLA outright) */
            ARG("--rope-type");
            ARG("rope");
            ARG("--no-rope-fusion");
            if (strcmp(min_version, "core_v0.14") < 0)
                min_version = "core_v0.14";
        }
    } else if (m->position_embedding == PPL_POSITION_NONE) {
        ARG("--position-embedding-type");
        ARG("none");
    }
    if (m->qk_norm) /* transformer_config.py:259 qk_layernorm */
        ARG("--qk-layernorm");
    /* the vocabulary as the model has it: Megatron pads it to a multiple of
     * make_vocab_size_divisible_by x tp (build_tokenizer.py:133-145, default 128);
     * the largest power of two up to 128 that leaves it unpadded, else 1 (padded to
     * a multiple of tp only) */
    int64_t divisor = 128;
    while (divisor > 1 && m->vocab % (divisor * c->tp) != 0)
        divisor /= 2;
    if (divisor != 128)
        ARGI("--make-vocab-size-divisible-by", divisor);
    char vocab_note[192] = "";
    if (m->vocab % c->tp != 0) /* no divisor helps: padded to a multiple of tp */
        snprintf(vocab_note, sizeof vocab_note,
                 "Megatron-LM pads the vocabulary from %lld to %lld rows (a multiple of tp %lld), "
                 "%lld more than the plan counts in the embedding%s",
                 (long long)m->vocab, (long long)((m->vocab / c->tp + 1) * c->tp), (long long)c->tp,
                 (long long)((m->vocab / c->tp + 1) * c->tp - m->vocab),
                 m->tied_embeddings ? "" : " and the output layer");
    if (!m->bias)
        ARG("--disable-bias-linear");
    if (!m->dropout) {
        ARG("--attention-dropout");
        ARG("0.0");
        ARG("--hidden-dropout");
        ARG("0.0");
    }
    if (m->attention == PPL_ATTENTION_MLA) {
        /* Megatron-Core's MLA (arguments.py "--q-lora-rank" ... "--v-head-dim";
         * --qk-head-dim is the non-rotary part of a query/key head) */
        ARG("--multi-latent-attention");
        if (m->mla.q_lora_rank > 0)
            ARGI("--q-lora-rank", m->mla.q_lora_rank);
        ARGI("--kv-lora-rank", m->mla.kv_lora_rank);
        ARGI("--qk-head-dim", m->mla.qk_nope_head_dim);
        ARGI("--qk-pos-emb-head-dim", m->mla.qk_rope_head_dim);
        ARGI("--v-head-dim", m->mla.v_head_dim);
    }
    if (m->mtp_layers > 0) {
        ARGI("--mtp-num-layers", m->mtp_layers);
        /* the flag came with core_v0.12.0; 0.12 and 0.13 refuse MTP with context
         * parallelism (arguments.py:963 at core_v0.12.0, 1075 at core_v0.13.0) */
        const char *v = c->cp > 1 ? "core_v0.14" : "core_v0.12";
        if (strcmp(min_version, v) < 0)
            min_version = v;
    }
    if (m->has_moe)
        moe_args(args, e, m, &min_version);
    ppl_shard_launch(c, args, NULL, &min_version, NULL); /* hierarchical sharding, offload */
#undef ARG
    /* CUDA graphs as core_v0.16.0 takes them (arguments.py:1430-1442): Transformer
     * Engine's per-layer graphs with the scopes listed (none listed: the whole
     * layer), the whole step with the local implementation (transformer_config.py:
     * 1738-1742), which wants the NaN check off (arguments.py:725-728); main keeps
     * these spellings and migrates them (--cuda-graph-modules, --cuda-graph-impl
     * full_iteration: arguments.py:263-294 at d98e8a64dd) */
    if (c->cuda_graphs != PPL_CUDA_GRAPHS_NONE) {
        const ppl_cuda_graphs_row *g = ppl_cuda_graphs_of(c->cuda_graphs);
        json_array_append_new(args, json_string("--cuda-graph-impl"));
        json_array_append_new(args, json_string(g->step ? "local" : "transformer_engine"));
        if (g->step || g->modules[0])
            json_array_append_new(args, json_string("--cuda-graph-scope"));
        if (g->step)
            json_array_append_new(args, json_string("full_iteration"));
        for (int i = 0; i < 3 && g->modules[i]; i++)
            json_array_append_new(args, json_string(g->modules[i]));
        if (g->step)
            json_array_append_new(args, json_string("--no-check-for-nan-in-loss-and-grad"));
        if (strcmp(min_version, "core_v0.16") < 0)
            min_version = "core_v0.16";
    }
#undef ARGI
    /* Megatron-LM pipelines run 1F1B (interleaved or not): no flag builds GPipe,
     * nor the schedules of pipeline.h */
    launcher_part(launch, "megatron_args", args, "megatron_error",
                  ppl_schedule_of(c->schedule)->megatron_error
                      ? ppl_schedule_of(c->schedule)->megatron_error
                      : megatron_model_error(m));
    json_t *env = json_object();
    /* arguments.py asserts CUDA_DEVICE_MAX_CONNECTIONS=1 with tp or cp > 1 before
     * Blackwell (harmless after it), and Megatron-FSDP asserts it is not 1 */
    if ((c->tp > 1 || c->cp > 1) && c->zero < 2)
        json_object_set_new(env, "CUDA_DEVICE_MAX_CONNECTIONS", json_string("1"));
    json_object_set_new(launch, "env", env);
    json_object_set_new(launch, "megatron_lm", json_string(min_version));
    if (vocab_note[0] && json_is_array(json_object_get(launch, "megatron_args")))
        json_object_set_new(launch, "megatron_note", json_string(vocab_note));

    json_t *zero = json_object();
    json_object_set_new(zero, "stage", json_integer(c->zero));
    ppl_shard_launch(c, NULL, zero, &min_version, &ds_why);
    json_object_set_new(ds, "train_batch_size", json_integer(c->global_batch));
    json_object_set_new(ds, "train_micro_batch_size_per_gpu", json_integer(c->mbs));
    json_object_set_new(ds, "gradient_accumulation_steps", json_integer(c->microbatches));
    json_object_set_new(ds, "zero_optimization", zero);
    json_t *enabled = json_object();
    json_object_set_new(enabled, "enabled", json_true());
    json_object_set_new(ds, c->precision == PPL_PRECISION_FP16 ? "fp16" : "bf16", enabled);
    /* deepspeed/runtime/pipe/engine.py: the pipeline engine takes ZeRO 0 and 1, and
     * runs its own 1F1B (deepspeed/runtime/pipe/schedule.py TrainSchedule) */
    bool ds_refused = c->zero >= 2 && c->pp > 1;
    if (ppl_schedule_of(c->schedule)->splits_backward)
        ds_why = "DeepSpeed's pipeline engine runs 1F1B only (no zero-bubble or DualPipe "
                 "schedule)";
    else if (ds_refused)
        ds_why = "DeepSpeed's pipeline engine runs ZeRO stages 0 and 1 only";
    else if (c->pp > 1 && (c->vp > 1 || c->schedule == PPL_SCHEDULE_GPIPE))
        /* engine.py:386 train_batch: schedule.TrainSchedule, plain 1F1B over one
         * stage a rank (schedule.py:189) */
        ds_why = "DeepSpeed's pipeline engine runs plain 1F1B only (TrainSchedule: no "
                 "interleaving, no GPipe)";
    if (!ds_why && c->cuda_graphs != PPL_CUDA_GRAPHS_NONE)
        ds_why = "DeepSpeed's training engine captures no CUDA graphs (its config's graph "
                 "options are its inference engine's)";
    ds_refused = ds_why != NULL;
    launcher_part(launch, "deepspeed", ds, "deepspeed_error", ds_why);
    if (!ds_refused) {
        char note[160];
        snprintf(note, sizeof note,
                 "train_batch_size = micro batch x accumulation x dp holds with an mpu that "
                 "reports dp = %lld (tp x pp x cp ranks are not data parallel)",
                 (long long)c->dp);
        json_object_set_new(launch, "deepspeed_note", json_string(note));
    }
    char bridge_why[320];
    json_t *bridge =
        ppl_launch_bridge(e, m, json_object_get(launch, "megatron_args"),
                          json_object_get(launch, "env"), bridge_why, sizeof bridge_why);
    launcher_part(launch, "megatron_bridge", bridge, "megatron_bridge_error",
                  bridge ? NULL : bridge_why);
    if (bridge)
        json_object_set_new(launch, "megatron_bridge_release", json_string("v0.6.0"));
    char tt_why[320];
    json_t *tt = ppl_launch_torchtitan(e, m, stage_layers, tt_why, sizeof tt_why);
    launcher_part(launch, "torchtitan", tt, "torchtitan_error", tt ? NULL : tt_why);
    if (tt) {
        json_object_set_new(launch, "torchtitan_release", json_string("v0.2.2"));
        json_object_set_new(
            launch, "torchtitan_note",
            json_string("torchtitan keeps fp32 weights, gradients and Adam moments (16 bytes a "
                        "parameter, sharded by FSDP2) and gathers bf16 copies; add the data, "
                        "tokenizer (model.hf_assets_path) and training.steps"));
    }
    /* the launchers that run the plan as costed */
    json_t *runs = json_array();
    if (json_is_array(json_object_get(launch, "megatron_args")))
        json_array_append_new(runs, json_string("megatron-lm"));
    if (bridge)
        json_array_append_new(runs, json_string("megatron-bridge"));
    if (!ds_refused)
        json_array_append_new(runs, json_string("deepspeed"));
    if (tt)
        json_array_append_new(runs, json_string("torchtitan"));
    json_object_set_new(launch, "launchers", runs);
    return launch;
}
