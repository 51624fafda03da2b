/*
 * torchtitan.c - a plan as torchtitan runs it: the tables of a job TOML for
 * torchtitan v0.2.2 (the last release configured by TOML files; later ones take
 * Python recipes), or why torchtitan cannot run the plan as it was costed (see
 * render/torchtitan.h).  Paths and lines below are torchtitan's at tag v0.2.2.
 */
#include "render/torchtitan.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cost/pipeline.h"
#include "cost/stack.h"

/*
 * The registry flavors torchtitan builds (a [model] name and flavor pick one; no
 * TOML key changes its shape), with the figures that fix the network.  Llama 3's
 * MLP width is derived from dim as model.py:332-336 does: int(2 x 4 dim / 3),
 * times ffn_dim_multiplier, rounded up to multiple_of (8B: 10922 x 1.3 = 14198 up
 * to 1024s: 14336; 70B: 21845 x 1.3 = 28398 up to 4096s: 28672; 405B: 43690 x 1.2 =
 * 52428 up to 4096s: 53248); its vocabulary and head width are the defaults of
 * llama3/model/args.py:33 (128256) and dim / n_heads.
 */
typedef struct tt_flavor {
    const char *name, *flavor, *where;
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab;
    double rope_theta;
    bool qk_norm, tied;
    int64_t experts, top_k, expert_ffn, shared_experts, first_dense; /* 0 experts: dense */
    int64_t q_lora, kv_lora;                                         /* MLA; 0 kv_lora: none */
    double topk_scale;                                               /* route_scale */
    bool sigmoid; /* score_func "sigmoid" (else softmax) */
    bool flex;    /* FlexAttention: no context parallelism (deepseek_v3 parallelize.py:68-73) */
} tt_flavor;

#define LLAMA3 "torchtitan/models/llama3/__init__.py"
#define QWEN3 "torchtitan/models/qwen3/__init__.py"
#define DSV3 "torchtitan/models/deepseek_v3/__init__.py"
#define DENSE(n, fl, at, l, h, a, kv, d, ffn, v, theta, qk, tie)                                   \
    {                                                                                              \
        .name = n, .flavor = fl, .where = at, .layers = l, .hidden = h, .heads = a,                \
        .kv_heads = kv, .head_dim = d, .ffn_hidden = ffn, .vocab = v, .rope_theta = theta,         \
        .qk_norm = qk, .tied = tie                                                                 \
    }
static const tt_flavor flavors[] = {
    DENSE("llama3", "8B", LLAMA3 ":51", 32, 4096, 32, 8, 128, 14336, 128256, 5e5, false, false),
    DENSE("llama3", "70B", LLAMA3 ":82", 80, 8192, 64, 8, 128, 28672, 128256, 5e5, false, false),
    DENSE("llama3", "405B", LLAMA3 ":91", 126, 16384, 128, 8, 128, 53248, 128256, 5e5, false,
          false),
    DENSE("qwen3", "0.6B", QWEN3 ":46", 28, 1024, 16, 8, 128, 3072, 151936, 1e6, true, true),
    DENSE("qwen3", "1.7B", QWEN3 ":59", 28, 2048, 16, 8, 128, 6144, 151936, 1e6, true, true),
    DENSE("qwen3", "4B", QWEN3 ":72", 36, 2560, 32, 8, 128, 9728, 151936, 1e6, true, true),
    DENSE("qwen3", "8B", QWEN3 ":85", 36, 4096, 32, 8, 128, 12288, 151936, 1e6, true, false),
    DENSE("qwen3", "14B", QWEN3 ":97", 40, 5120, 40, 8, 128, 17408, 151936, 1e6, true, false),
    DENSE("qwen3", "32B", QWEN3 ":109", 64, 5120, 64, 8, 128, 25600, 151936, 1e6, true, false),
    {.name = "qwen3",
     .flavor = "30B-A3B",
     .where = QWEN3 ":145",
     .layers = 48,
     .hidden = 2048,
     .heads = 32,
     .kv_heads = 4,
     .head_dim = 128,
     .ffn_hidden = 6144,
     .vocab = 151936,
     .rope_theta = 1e6,
     .qk_norm = true,
     .experts = 128,
     .top_k = 8,
     .expert_ffn = 768,
     .topk_scale = 1.0},
    {.name = "qwen3",
     .flavor = "235B-A22B",
     .where = QWEN3 ":168",
     .layers = 94,
     .hidden = 4096,
     .heads = 64,
     .kv_heads = 4,
     .head_dim = 128,
     .ffn_hidden = 12288,
     .vocab = 151936,
     .rope_theta = 5e6,
     .qk_norm = true,
     .experts = 128,
     .top_k = 8,
     .expert_ffn = 1536,
     .topk_scale = 1.0},
    /* MLA: n_heads of qk_nope 128 + rope 64 (model/args.py:72-75); no MTP module */
    {.name = "deepseek_v3",
     .flavor = "671B",
     .where = DSV3 ":130",
     .layers = 61,
     .hidden = 7168,
     .heads = 128,
     .kv_heads = 128,
     .head_dim = 192,
     .ffn_hidden = 18432,
     .vocab = 129280,
     .rope_theta = 1e4,
     .experts = 256,
     .top_k = 8,
     .expert_ffn = 2048,
     .shared_experts = 1,
     .first_dense = 3,
     .q_lora = 1536,
     .kv_lora = 512,
     .topk_scale = 2.5,
     .sigmoid = true,
     .flex = true},
};
#undef DENSE
#undef LLAMA3
#undef QWEN3
#undef DSV3

/* The first key where the model and the flavor differ, as a sentence, or "". */
static void flavor_diff(const tt_flavor *f, const ppl_model *m, char *out, size_t len)
{
    const int64_t head_dim = m->attention == PPL_ATTENTION_MLA
                                 ? m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim
                                 : (m->head_dim > 0 ? m->head_dim : m->hidden / m->heads);
    const int64_t experts = m->has_moe ? m->moe.experts : 0;
    struct {
        const char *key;
        double model, flavor;
    } keys[] = {
        /* the experts first: a dense flavor of a MoE model's shape is named by them */
        {"moe.experts", (double)experts, (double)f->experts},
        {"moe.top_k", experts ? (double)m->moe.top_k : 0, (double)f->top_k},
        {"moe.ffn_hidden", experts ? (double)m->moe.ffn_hidden : 0, (double)f->expert_ffn},
        {"moe.every", experts ? (double)m->moe.every : 0, experts ? 1.0 : 0.0},
        {"moe.capacity_factor (dropless 0)", experts ? m->moe.capacity_factor : 0, 0},
        {"moe.router_score (softmax 0, sigmoid 1)", experts ? (double)m->moe.router_score : 0,
         f->sigmoid},
        {"moe.router_topk_scale", experts ? m->moe.router_topk_scale : 0,
         f->experts ? f->topk_scale : 0},
        {"moe.shared_experts", experts ? (double)m->moe.shared_experts : 0,
         (double)f->shared_experts},
        {"moe.first_dense_layers", experts ? (double)m->moe.first_dense_layers : 0,
         (double)f->first_dense},
        {"kv_heads", (double)m->kv_heads, (double)f->kv_heads},
        {"head_dim", (double)head_dim, (double)f->head_dim},
        {"ffn_hidden", (double)m->ffn_hidden, (double)f->ffn_hidden},
        {"vocab", (double)m->vocab, (double)f->vocab},
        {"rope_theta", m->rope_theta, f->rope_theta},
        {"qk_norm", m->qk_norm, f->qk_norm},
        {"tied_embeddings", m->tied_embeddings, f->tied},
        {"attention.q_lora_rank", m->attention == PPL_ATTENTION_MLA ? m->mla.q_lora_rank : 0,
         (double)f->q_lora},
        {"attention.kv_lora_rank", m->attention == PPL_ATTENTION_MLA ? m->mla.kv_lora_rank : 0,
         (double)f->kv_lora},
        {"mtp_layers", (double)m->mtp_layers, 0},
        {"bias", m->bias, 0},
        {"gated_mlp", m->gated_mlp, 1},
        {"norm (rmsnorm 1)", m->norm == PPL_NORM_RMSNORM, 1},
        {"position_embedding (rope 1)", m->position_embedding == PPL_POSITION_ROPE, 1},
    };
    out[0] = '\0';
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (keys[k].model != keys[k].flavor) {
            snprintf(
                out, len,
                "torchtitan v0.2.2's %s %s (%s) has %s %.15g where the model has %.15g; no TOML "
                "key changes a flavor",
                f->name, f->flavor, f->where, keys[k].key, keys[k].flavor, keys[k].model);
            return;
        }
}

/* The flavor that builds the model, or NULL with why none does. */
static const tt_flavor *flavor_of(const ppl_model *m, char *why, size_t len)
{
    for (size_t k = 0; k < sizeof flavors / sizeof flavors[0]; k++) {
        const tt_flavor *f = &flavors[k];
        if (f->layers != m->layers || f->hidden != m->hidden || f->heads != m->heads)
            continue;
        flavor_diff(f, m, why, len);
        return why[0] ? NULL : f;
    }
    snprintf(why, len,
             "no flavor of torchtitan v0.2.2's registry has %lld layers of width %lld with %lld "
             "heads (llama3 8B/70B/405B, qwen3 0.6B-32B, 30B-A3B, 235B-A22B, deepseek_v3 671B)",
             (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    return NULL;
}

static void set_int(json_t *o, const char *key, int64_t v)
{
    json_object_set_new(o, key, json_integer(v));
}

static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, json_string(v));
}

/* Each virtual stage's modules in torchtitan's stage order
 * (module_fqns_per_model_part, job_config.py:367; pipeline_parallel.py:450-471: a
 * looped schedule gives rank r the stages r, r + pp, ...; a V schedule the stages
 * r and 2 pp - 1 - r).  Layers are numbered on through the stages; the first holds
 * the embedding, the last the final norm and the output layer. */
static json_t *stage_modules(const ppl_config *c, const int64_t *stage_layers, bool v_shape)
{
    const int64_t stages = c->pp * c->vp;
    json_t *parts = json_array();
    int64_t layer = 0;
    for (int64_t s = 0; s < stages; s++) {
        int64_t rank = s % c->pp, chunk = s / c->pp;
        if (v_shape && s >= c->pp) {
            rank = 2 * c->pp - 1 - s;
            chunk = 1;
        }
        const int64_t n = stage_layers ? stage_layers[s] : ppl_split_chunk_layers(c, rank, chunk);
        json_t *part = json_array();
        if (s == 0)
            json_array_append_new(part, json_string("tok_embeddings"));
        for (int64_t k = 0; k < n; k++, layer++) {
            char name[40];
            snprintf(name, sizeof name, "layers.%lld", (long long)layer);
            json_array_append_new(part, json_string(name));
        }
        if (s == stages - 1) {
            json_array_append_new(part, json_string("norm"));
            json_array_append_new(part, json_string("output"));
        }
        json_array_append_new(parts, part);
    }
    return parts;
}

/* Under full recomputation, torchtitan's layer frequency N: every layer (0), or
 * every N-th of a rank's layers (selective_ac_option "N": a process-wide count,
 * activation_checkpoint.py:37-47, so floor(layers / N) of each rank's layers, in
 * every chunk alike only with vp 1), which must be each stage's recomputed
 * layers; -1 when no N gives them. */
static int64_t layer_frequency(const ppl_config *c)
{
    int64_t k = c->recompute_layers, most = 0;
    for (int64_t s = 0; s < c->pp; s++)
        most = ppl_stage_layers(c, s) > most ? ppl_stage_layers(c, s) : most;
    if (k <= 0 || k >= most)
        return 0;
    if (c->vp > 1)
        return -1;
    const int64_t n = ppl_stage_layers(c, 0) / k;
    for (int64_t s = 0; s < c->pp; s++)
        if (n < 1 || ppl_stage_layers(c, s) / n != k)
            return -1;
    return n;
}

/* torchtitan's name of the configuration's schedule (the schedule table's, the
 * looped one with vp > 1), or NULL when it has none. */
static const char *schedule_name(const ppl_config *c)
{
    const ppl_schedule_row *row = ppl_schedule_of(c->schedule);
    return c->vp > 1 && row->torchtitan_vp ? row->torchtitan_vp : row->torchtitan;
}

/* Why torchtitan v0.2.2 cannot run the configuration as costed, or NULL. */
static const char *refusal(const ppl_estimate *e, const ppl_model *m, const tt_flavor *f)
{
    const ppl_config *c = &e->config;
    if (c->pp > 1 && !schedule_name(c))
        return "torchtitan runs 1F1B, Interleaved1F1B, GPipe, ZBVZeroBubble and DualPipeV of "
               "parplan's schedules (its other zero-bubble schedule, InterleavedZeroBubble, runs "
               "a schedule parplan does not cost)";
    if (c->zero == 1 && c->dp > 1)
        return "torchtitan has no ZeRO-1: FSDP2 shards parameters and gradients with the "
               "optimizer states (pin --zero 2 or 3)";
    if (c->zero < 2 && c->cp > 1)
        return "torchtitan shards the model over the context-parallel ranks (FSDP over dp_shard x "
               "cp: parallel_dims.py fsdp_enabled), which ZeRO 0 does not";
    /* no FSDP (parallel_dims.py fsdp_enabled: dp_shard or cp above 1): DDP */
    const bool fsdp = (c->zero >= 2 && ppl_config_shard_group(c) > 1) || c->cp > 1;
    if (!fsdp && c->dp > 1 && c->dp != c->gpus)
        return "torchtitan's DDP runs data parallelism alone (llama3 parallelize.py:150-151: "
               "\"DDP has not supported > 1D parallelism\"); pin --zero 2 or 3";
    if (c->schedule == PPL_SCHEDULE_DUALPIPEV && m->has_moe && c->ep > 1 &&
        c->recompute != PPL_RECOMPUTE_NONE)
        return "torchtitan's DualPipeV overlaps the expert all-to-all without activation "
               "checkpointing (job_config.py:420-426); pin --recompute none";
    if (c->tp > 1 && !c->sequence_parallel)
        return "torchtitan's tensor parallelism always shards the norms' activations over the "
               "sequence (SequenceParallel in apply_tp); pin --sequence-parallel";
    if (c->recompute == PPL_RECOMPUTE_SELECTIVE)
        return "torchtitan's selective checkpointing (op or layer) keeps a different set of "
               "activations than the core-attention recomputation costed";
    if (c->recompute == PPL_RECOMPUTE_FULL && layer_frequency(c) < 0)
        return "torchtitan checkpoints every layer or every n-th one (activation_checkpoint.py:"
               "37-47, a count over the rank's layers), which gives no stage of this split its "
               "recomputed layers";
    if (c->cp > 1 && (c->cp_comm == PPL_CP_COMM_A2A || c->cp_comm == PPL_CP_COMM_A2A_P2P))
        return "torchtitan's context parallelism is a ring (all-gather or all-to-all rotation of "
               "the key/value shards: job_config.py:446), not Ulysses' all-to-all";
    if (c->cp > 1 && f->flex)
        return "torchtitan's context parallelism needs SDPA and this flavor runs FlexAttention "
               "(deepseek_v3 parallelize.py:68-73)";
    if (!c->flash_attention)
        return "torchtitan runs PyTorch's fused scaled_dot_product_attention; the plan costs "
               "unfused attention (pin --flash-attention)";
    if (c->precision == PPL_PRECISION_FP16)
        return "torchtitan trains in bfloat16 or float32 (mixed_precision_param, "
               "job_config.py:282)";
    if (c->precision == PPL_PRECISION_NVFP4)
        return "torchtitan v0.2.2 has no nvfp4 converter (quantize.linear: float8 and mx)";
    if (c->precision == PPL_PRECISION_FP8 && c->fp8_recipe != PPL_FP8_TENSORWISE)
        return "torchtitan's float8 scales tensorwise or rowwise (torchao), not delayed or "
               "blockwise (pin --fp8-recipe tensorwise)";
    if (ppl_precision_low(c->precision) && ppl_stack_low_params(e->stack) &&
        ppl_low_params_allowed(c))
        return "the plan keeps fp8 weights alone (Megatron's --fp8-param-gather); torchtitan "
               "keeps fp32 weights and casts them";
    if (c->bf16_layers > 0)
        return "torchtitan's float8 filter skips modules by name, not the first and last layers "
               "(--bf16-layers)";
    if (c->offload_optimizer > 0)
        return "torchtitan's CPU offload moves parameters, gradients and optimizer states "
               "(enable_cpu_offload), not a share of the optimizer";
    if (c->cuda_graphs != PPL_CUDA_GRAPHS_NONE)
        return "torchtitan's training captures no CUDA graphs of its own (torch.compile's "
               "cudagraph trees are not what --cuda-graphs costs)";
    if (c->optimizer != PPL_OPTIMIZER_ADAM)
        return "torchtitan builds Adam and AdamW only (components/optimizer.py:315-318)";
    if (m->has_moe && c->ep > 1 && ppl_config_etp(c) != c->tp && ppl_config_etp(c) != 1)
        return "torchtitan splits experts over tp or not at all (parallel_dims.py:58-59: "
               "\"we only support ETP=TP or ETP=1\")";
    /* parallelize.py:69-74 (llama3, qwen3, deepseek_v3): the sequence a multiple of
     * tp x 2 cp (parallel_dims.py seq_len_divisor) */
    if (m->seq_len % (c->tp * 2 * c->cp) != 0)
        return "torchtitan needs the sequence a multiple of tp x 2 cp (llama3 "
               "parallelize.py:69-74)";
    return NULL;
}

json_t *ppl_launch_torchtitan(const ppl_estimate *e, const ppl_model *m,
                              const int64_t *stage_layers, char *why, size_t why_len)
{
    const ppl_config *c = &e->config;
    why[0] = '\0';
    const tt_flavor *f = flavor_of(m, why, why_len);
    if (!f)
        return NULL;
    const char *no = refusal(e, m, f);
    if (no) {
        snprintf(why, why_len, "%s", no);
        return NULL;
    }
    const int64_t etp = ppl_config_etp(c);
    const bool sharded = c->zero >= 2;
    const int64_t shard = sharded ? ppl_config_shard_group(c) : 1;
    /* parallel_dims.py:53-56 and 205-209: dp_replicate x dp_shard x cp x tp x pp is
     * the world; the experts' FSDP group, dp_shard x cp x tp / (etp x ep), whole */
    if (m->has_moe && c->ep > 1 && (shard * c->cp * c->tp) % (etp * c->ep) != 0) {
        snprintf(why, why_len,
                 "torchtitan carves expert parallelism from dp_shard x cp x tp / etp = %lld ranks "
                 "(parallel_dims.py:205-209), which ep %lld does not divide",
                 (long long)(shard * c->cp * c->tp / etp), (long long)c->ep);
        return NULL;
    }
    const ppl_schedule_row *row = ppl_schedule_of(c->schedule);
    const char *schedule = schedule_name(c);
    /* torch's ScheduleInterleaved1F1B: rounds of pp microbatches, m a multiple of
     * max(1, m // pp) rounds */
    if (c->pp > 1 && c->vp > 1 && row->torchtitan_vp && c->microbatches >= c->pp &&
        c->microbatches % (c->microbatches / c->pp) != 0) {
        snprintf(why, why_len,
                 "PyTorch's Interleaved1F1B runs microbatches in rounds: %lld microbatches are "
                 "not a multiple of their %lld rounds",
                 (long long)c->microbatches, (long long)(c->microbatches / c->pp));
        return NULL;
    }

    json_t *tt = json_object(), *model = json_object(), *training = json_object(),
           *par = json_object(), *ac = json_object();
    set_str(model, "name", f->name);
    set_str(model, "flavor", f->flavor);
    json_t *converters = json_array();
    json_t *quantize = NULL;
    if (c->precision == PPL_PRECISION_FP8 || c->precision == PPL_PRECISION_MXFP8) {
        const bool fp8 = c->precision == PPL_PRECISION_FP8;
        /* components/quantization/float8.py:238 and mx.py:171 register the linear
         * converters; the output layer kept in bf16 as the plan costs it (mx filters
         * it by default, job_config.py MXLinear.filter_fqns) */
        json_array_append_new(converters,
                              json_string(fp8 ? "quantize.linear.float8" : "quantize.linear.mx"));
        json_t *linear = json_object(), *kind = json_object(), *skip = json_array();
        json_array_append_new(skip, json_string("output"));
        json_object_set_new(kind, "filter_fqns", skip);
        if (fp8)
            set_str(kind, "recipe_name", "tensorwise");
        else
            set_str(kind, "recipe_name", "mxfp8_cublas");
        json_object_set_new(linear, fp8 ? "float8" : "mx", kind);
        quantize = json_object();
        json_object_set_new(quantize, "linear", linear);
        if (m->has_moe) { /* the experts' grouped GEMMs too (float8.py:239, mx.py:172) */
            json_array_append_new(converters, json_string(fp8 ? "quantize.grouped_mm.float8"
                                                              : "quantize.grouped_mm.mx"));
            json_t *grouped = json_object(), *gk = json_object(), *fqns = json_array();
            json_array_append_new(fqns, json_string("experts"));
            json_object_set_new(gk, "fqns", fqns);
            json_object_set_new(grouped, fp8 ? "float8" : "mx", gk);
            json_object_set_new(quantize, "grouped_mm", grouped);
        }
    }
    if (json_array_size(converters))
        json_object_set_new(model, "converters", converters);
    else
        json_decref(converters);
    json_object_set_new(tt, "model", model);

    /* train.py:196-215: accumulation = global / (local x dp); with a pipeline the
     * local batch is every microbatch of the step (pipeline_parallel.py
     * build_pipeline_schedule: n_microbatches = local / microbatch size) */
    set_int(training, "local_batch_size", c->pp > 1 ? c->mbs * c->microbatches : c->mbs);
    set_int(training, "global_batch_size", c->global_batch);
    set_int(training, "seq_len", m->seq_len);
    set_str(training, "mixed_precision_param", "bfloat16");
    json_object_set_new(tt, "training", training);

    set_int(par, "data_parallel_replicate_degree", c->dp / shard);
    set_int(par, "data_parallel_shard_degree", shard);
    if (sharded) /* ZeRO-3 gathers again for backward, ZeRO-2 keeps what forward gathered */
        set_str(par, "fsdp_reshard_after_forward", c->zero == 3 ? "always" : "never");
    set_int(par, "tensor_parallel_degree", c->tp);
    set_int(par, "pipeline_parallel_degree", c->pp);
    if (c->pp > 1) {
        set_str(par, "pipeline_parallel_schedule", schedule);
        set_int(par, "pipeline_parallel_microbatch_size", c->mbs);
        json_object_set_new(par, "module_fqns_per_model_part",
                            stage_modules(c, stage_layers, row->chunks == 2));
    }
    set_int(par, "context_parallel_degree", c->cp);
    if (c->cp > 1)
        set_str(par, "context_parallel_rotate_method",
                c->cp_comm == PPL_CP_COMM_ALLGATHER ? "allgather" : "alltoall");
    if (m->has_moe) {
        set_int(par, "expert_parallel_degree", c->ep);
        set_int(par, "expert_tensor_parallel_degree", etp);
        /* DeepEP needs ep > 1 and etp 1 (deepseek_v3 parallelize.py:98-111) */
        bool deepep = c->ep > 1 && etp == 1 && ppl_ep_mode_of(m, c, e->stack).dedup;
        set_str(par, "expert_parallel_comm_backend", deepep ? "deepep" : "standard");
    }
    json_object_set_new(tt, "parallelism", par);

    const int64_t every = c->recompute == PPL_RECOMPUTE_FULL ? layer_frequency(c) : 0;
    set_str(ac, "mode",
            c->recompute != PPL_RECOMPUTE_FULL ? "none"
            : every > 0                        ? "selective"
                                               : "full");
    if (every > 0) {
        char n[32];
        snprintf(n, sizeof n, "%lld", (long long)every);
        set_str(ac, "selective_ac_option", n);
    }
    json_object_set_new(tt, "activation_checkpoint", ac);
    if (quantize)
        json_object_set_new(tt, "quantize", quantize);
    return tt;
}
