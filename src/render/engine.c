/*
 * engine.c - an inference engine layout as vLLM and SGLang launch it (see
 * render/engine.h).  The flags are vLLM's v0.11.0 and SGLang's v0.5.4 (their
 * argument parsers: vllm/engine/arg_utils.py, e.g. --pipeline-parallel-size
 * :735, --max-num-seqs :1013 as read at 99d7eb5d; python/sglang/srt/
 * server_args.py, --tp-size :831, --pp-size :838, --max-running-requests :767
 * at 7d81985a); tests/cli/engine_check.py parses each command as they do and
 * applies their checks with file and line.
 *
 * A replica is tp GPUs of one server; a server runs its replicas as one engine
 * with data parallelism (vLLM's --data-parallel-size, SGLang's --dp-size), each
 * replica a tensor-parallel group, and the servers stand behind a load
 * balancer.  A replica of pp stages spans pp servers, each of which needs the
 * first's address and its own rank at launch (SGLang's --dist-init-addr and
 * --node-rank, vLLM's Ray cluster): not written yet, so such layouts say so.  The batch is the
 * engine's cap on sequences decoded together (max_num_seqs, max_running_requests), the prefill
 * chunk the cost model's (PPL_SERVE_CHUNK_TOKENS), the longest sequence the prompt and response.
 */
#include "render/engine.h"

#include <jansson.h>
#include <stdio.h>

#include "cost/serve.h"
#include "render/hfcheckpoint.h"

static void add_str(json_t *argv, const char *s)
{
    json_array_append_new(argv, json_string(s));
}

static void add_int(json_t *argv, const char *flag, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    add_str(argv, flag);
    add_str(argv, buf);
}

static void add_share(json_t *argv, const char *flag, double share)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", share);
    add_str(argv, flag);
    add_str(argv, buf);
}

/* The engine's dtype and quantization of a bf16 checkpoint for the precision,
 * or NULL: vLLM's and SGLang's fp8 quantize the weights as they load, and the
 * KV cache is kept in fp8 beside them (serve.h: one byte a value). */
typedef struct engine_precision {
    const char *dtype, *quantization;
} engine_precision;

static bool precision_of(ppl_precision p, engine_precision *out)
{
    switch (p) {
    case PPL_PRECISION_BF16: *out = (engine_precision){"bfloat16", NULL}; return true;
    case PPL_PRECISION_FP16: *out = (engine_precision){"float16", NULL}; return true;
    case PPL_PRECISION_FP8: *out = (engine_precision){"bfloat16", "fp8"}; return true;
    default: return false;
    }
}

/* An engine, one row: its command and the flag that sets each figure of the
 * layout (arg_utils.py, server_args.py). */
typedef struct engine_row {
    const char *key, *version;
    const char *head[3];    /* the command before the checkpoint */
    const char *model_flag; /* NULL: the checkpoint is the first argument */
    const char *tp, *dp, *batch, *max_len, *chunk, *share;
    const char *kv_fp8;  /* the KV cache's fp8 dtype, by the engine's name */
    const char *release; /* colocated: the engine's memory given back while training */
} engine_row;

static const engine_row engines[] = {
    {.key = "vllm",
     .version = "v0.11.0",
     .head = {"vllm", "serve", NULL},
     .model_flag = NULL,
     .tp = "--tensor-parallel-size",
     .dp = "--data-parallel-size",
     .batch = "--max-num-seqs",
     .max_len = "--max-model-len",
     .chunk = "--max-num-batched-tokens",
     .share = "--gpu-memory-utilization",
     .kv_fp8 = "fp8",
     .release = "--enable-sleep-mode"},
    {.key = "sglang",
     .version = "v0.5.4",
     .head = {"python3", "-m", "sglang.launch_server"},
     .model_flag = "--model-path",
     .tp = "--tp-size",
     .dp = "--dp-size",
     .batch = "--max-running-requests",
     .max_len = "--context-length",
     .chunk = "--chunked-prefill-size",
     .share = "--mem-fraction-static",
     .kv_fp8 = "fp8_e4m3",
     .release = "--enable-memory-saver"},
};

/* A server's command for its dp replicas of the layout. */
static json_t *argv_of(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                       const engine_precision *p, int64_t dp)
{
    json_t *argv = json_array();
    for (size_t i = 0; i < sizeof r->head / sizeof r->head[0] && r->head[i]; i++)
        add_str(argv, r->head[i]);
    if (r->model_flag)
        add_str(argv, r->model_flag);
    add_str(argv, hf);
    add_int(argv, r->tp, e->tp);
    add_int(argv, r->dp, dp);
    add_int(argv, r->batch, e->batch);
    add_int(argv, r->max_len, e->max_len_tokens);
    add_int(argv, r->chunk, PPL_SERVE_CHUNK_TOKENS);
    add_share(argv, r->share, e->memory_share);
    add_str(argv, "--dtype");
    add_str(argv, p->dtype);
    if (p->quantization) {
        add_str(argv, "--quantization");
        add_str(argv, p->quantization);
        add_str(argv, "--kv-cache-dtype");
        add_str(argv, r->kv_fp8);
    }
    if (e->colocated)
        add_str(argv, r->release);
    return argv;
}

/* The engine's launch {version, nodes}: each node's [{count, gpus, argv}], the
 * full servers first, then the one that holds the replicas left. */
static json_t *launch_of(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                         const engine_precision *p, int64_t per_server)
{
    json_t *nodes = json_array();
    const int64_t a_node = per_server / e->tp; /* replicas a full server holds */
    const int64_t full = e->replicas / a_node, left = e->replicas % a_node;
    struct {
        int64_t count, dp;
    } groups[2] = {{full, a_node}, {left > 0, left}};
    for (int i = 0; i < 2; i++) {
        if (groups[i].count == 0)
            continue;
        json_t *n = json_object();
        json_object_set_new(n, "count", json_integer(groups[i].count));
        json_object_set_new(n, "gpus", json_integer(groups[i].dp * e->tp));
        json_object_set_new(n, "argv", argv_of(r, hf, e, p, groups[i].dp));
        json_array_append_new(nodes, n);
    }
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(r->version));
    json_object_set_new(o, "nodes", nodes);
    return o;
}

json_t *ppl_launch_engines(const ppl_model *m, const ppl_engine_layout *e, int64_t per_server)
{
    json_t *o = json_object();
    char why[512] = "";
    ppl_hf_checkpoint_miss miss;
    const ppl_hf_checkpoint *ck = ppl_hf_checkpoint_of(m, &miss);
    engine_precision p = {.dtype = NULL};
    if (!ck) {
        if (miss.near)
            snprintf(why, sizeof why,
                     "the engines load a Hugging Face checkpoint: %s's %s is %lld where the "
                     "model has %lld",
                     miss.near->hf_model, miss.key, (long long)miss.checkpoint,
                     (long long)miss.model);
        else
            snprintf(why, sizeof why,
                     "the engines load a Hugging Face checkpoint, and none launched here has "
                     "%lld layers of width %lld with %lld heads (Llama 3 8B/70B, Llama 3.1 405B, "
                     "Qwen3 30B-A3B/235B-A22B, DeepSeek-V3)",
                     (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    } else if (e->pp > 1) {
        snprintf(why, sizeof why,
                 "a replica of %lld pipeline stages spans %lld servers, each needing the first's "
                 "address and its rank at launch (SGLang's --dist-init-addr and --node-rank, "
                 "vLLM's Ray cluster): not written yet",
                 (long long)e->pp, (long long)e->pp);
    } else if (e->disaggregated) {
        snprintf(why, sizeof why,
                 "prefill/decode disaggregation is not launched yet: its KV transfer backend and "
                 "router are not written");
    } else if (!precision_of(e->precision, &p)) {
        snprintf(why, sizeof why,
                 "%s is not a quantization either engine applies to a bf16 checkpoint as it "
                 "loads; they serve checkpoints quantized beforehand",
                 ppl_precision_names[e->precision]);
    } else if (e->max_len_tokens > ck->max_positions) {
        snprintf(why, sizeof why,
                 "the longest sequence, %lld tokens, is above %s's max_position_embeddings "
                 "(%lld), which both engines refuse",
                 (long long)e->max_len_tokens, ck->hf_model, (long long)ck->max_positions);
    } else if (e->tp < 1 || per_server % e->tp != 0 || m->heads % e->tp != 0 || e->replicas < 1 ||
               e->batch < 1 || !(e->memory_share > 0.0) || e->memory_share > 1.0) {
        snprintf(why, sizeof why,
                 "tp %lld, %lld replicas, batch %lld and a memory share of %g are no engine "
                 "layout on servers of %lld GPUs",
                 (long long)e->tp, (long long)e->replicas, (long long)e->batch, e->memory_share,
                 (long long)per_server);
    }
    json_object_set_new(o, "hf_model", ck ? json_string(ck->hf_model) : json_null());
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        const engine_row *r = &engines[i];
        if (why[0]) {
            char key[32];
            snprintf(key, sizeof key, "%s_error", r->key);
            json_object_set_new(o, r->key, json_null());
            json_object_set_new(o, key, json_string(why));
        } else {
            json_object_set_new(o, r->key, launch_of(r, ck->hf_model, e, &p, per_server));
        }
    }
    return o;
}
