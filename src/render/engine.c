/*
 * engine.c - an inference engine layout as vLLM and SGLang launch it (see
 * render/engine.h).  The flags are vLLM's v0.11.0 (b8b302c: vllm/engine/
 * arg_utils.py, e.g. --tensor-parallel-size :655, --data-parallel-size :660,
 * --enable-expert-parallel :698, --max-num-seqs :885; --headless in
 * vllm/entrypoints/openai/cli_args.py:246) and SGLang's v0.5.4
 * (python/sglang/srt/server_args.py: --max-running-requests :1806, --tp-size
 * :1928, --dp-size :2233, --ep-size :2532, --enable-dp-attention :2945);
 * tests/cli/engine_check.py parses each command as they do and applies their
 * checks with file and line.
 *
 * Without expert parallelism a replica is tp GPUs of one server.  SGLang runs a
 * server's replicas as one engine with data parallelism (--dp-size: a
 * scheduler and a whole model each); so does vLLM for a dense model, but its
 * data-parallel ranks of a MoE model share the expert layers (FusedMoE's
 * groups span tp x dp: vllm/model_executor/layers/fused_moe/config.py:695-701),
 * so each replica of a MoE model is a vLLM process of its own, on its GPUs
 * (CUDA_VISIBLE_DEVICES) and port.
 *
 * With expert parallelism a replica is ep GPUs: ep / tp data-parallel
 * attention ranks of tp GPUs, each with its own batch, and the experts spread
 * over all ep (vLLM: --enable-expert-parallel, ep = tp x dp, config.py:713-722;
 * SGLang: --enable-dp-attention with --tp-size ep and --dp-size ep / tp, the
 * attention at tp_size / dp_size, layers/dp_attention.py:212, and --ep-size ep).
 * Both dispatch with DeepEP (vLLM's low-latency kernels; SGLang's --deepep-mode
 * auto, low-latency for decode batches), the dispatch the cost model takes (one
 * copy of a token a server: serve.c).  SGLang takes the batch and
 * the prefill chunk for the whole replica and divides them over its ranks
 * (server_args.py:1173-1176, managers/tp_worker.py:279-288); vLLM takes them a
 * rank.  A replica over several servers runs a command on each, which names
 * the first server's address ${HEAD_ADDR} for the launcher to fill in (vLLM's
 * --data-parallel-address and, beyond the first, --headless and
 * --data-parallel-start-rank: docs/serving/expert_parallel_deployment.md;
 * SGLang's --dist-init-addr, --nnodes and --node-rank).
 *
 * A replica of pp stages, each a server, spans pp servers too: SGLang runs it
 * with --pp-size and the same --dist-init-addr, --nnodes and --node-rank; vLLM
 * v0.11.0 runs stages across servers over a Ray cluster (its --nnodes came
 * later): not written yet, so vLLM's says so.
 * The batch is the engine's cap on sequences decoded together (max_num_seqs,
 * max_running_requests), the prefill chunk the cost model's
 * (PPL_SERVE_CHUNK_TOKENS), the longest sequence the prompt and response.
 */
#include "render/engine.h"

#include <jansson.h>
#include <stdio.h>

#include "cost/serve.h"
#include "render/hfcheckpoint.h"

/* The HTTP port of the i-th process of a server that runs several (vLLM's
 * default 8000, SGLang's 30000: either is free to move). */
#define ENGINE_PORT 8000
/* ... a thousand apart: SGLang derives its internal ports from the HTTP one (a few
 * hundred above it), which must not meet the next engine's */
#define ENGINE_PORT_STEP 1000
/* The port a replica over several servers meets on at its first server. */
#define ENGINE_HEAD_PORT 13345
#define ENGINE_HEAD_ADDR "${HEAD_ADDR}"

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

/* Where a command sits in its replica: the i-th of `nodes` servers (0 of 1 when
 * the replica is within one). */
typedef struct engine_place {
    int64_t node, nodes;
    int64_t port; /* 0: the engine's default */
    /* prefill/decode disaggregation (SGLang's --disaggregation-mode): the role,
     * NULL when aggregated; a prefill engine is told the decode engines' tp and
     * dp; several engines on a server each take a bootstrap port of their own */
    const char *role;
    int64_t decode_tp, decode_dp, bootstrap_port;
    bool round_robin; /* decode engines of several data-parallel ranks */
} engine_place;

struct engine_row;
/* The flags of expert parallelism for a replica at `at`. */
typedef void (*engine_ep_args)(const struct engine_row *r, json_t *argv, const ppl_engine_layout *e,
                               const engine_place *at, int64_t per_server);

/* An engine, one row: its command and the flag that sets each figure of the
 * layout (arg_utils.py, server_args.py). */
typedef struct engine_row {
    const char *key, *name, *version;
    const char *head[3];    /* the command before the checkpoint */
    const char *model_flag; /* NULL: the checkpoint is the first argument */
    const char *tp, *dp, *batch, *max_len, *chunk, *share, *port;
    const char *kv_fp8;  /* the KV cache's fp8 dtype, by the engine's name */
    const char *release; /* colocated: the engine's memory given back while training */
    bool moe_dp_shared;  /* data-parallel ranks of a MoE model share its experts */
    bool replica_totals; /* expert parallelism: tp, batch and chunk are the replica's */
    const char *pp;      /* pipeline stages, NULL: not launched (vLLM v0.11.0 runs
                            stages across servers over a Ray cluster) */
    bool pd;             /* prefill/decode disaggregation launched */
    int64_t http_port;   /* the server's default port */
    const char *host;    /* the flag that binds every interface, NULL: the default */
    engine_ep_args nodes_args; /* a replica over several servers, NULL: in ep_args */
    const char *ep_env[2]; /* expert parallelism: the environment it needs, key and value */
    engine_ep_args ep_args;
} engine_row;

/* vLLM: --enable-expert-parallel; over several servers each runs ep / tp /
 * servers ranks, the first the API server, the others headless from their
 * first rank (expert_parallel_deployment.md; data_parallel_size_local <=
 * data_parallel_size, config/parallel.py:383-386). */
static void vllm_ep(const engine_row *r, json_t *argv, const ppl_engine_layout *e,
                    const engine_place *at, int64_t per_server)
{
    (void)r;
    add_str(argv, "--enable-expert-parallel");
    if (at->nodes <= 1)
        return;
    const int64_t local = per_server / e->tp;
    add_int(argv, "--data-parallel-size-local", local);
    add_str(argv, "--data-parallel-address");
    add_str(argv, ENGINE_HEAD_ADDR);
    add_int(argv, "--data-parallel-rpc-port", ENGINE_HEAD_PORT);
    if (at->node > 0) {
        add_int(argv, "--data-parallel-start-rank", at->node * local);
        add_str(argv, "--headless");
    }
}

/* SGLang: DP attention and --ep-size over the replica's GPUs, DeepEP's
 * dispatch (which sets ep to tp: server_args.py:1202-1216). */
static void sglang_ep(const engine_row *r, json_t *argv, const ppl_engine_layout *e,
                      const engine_place *at, int64_t per_server)
{
    (void)r, (void)at, (void)per_server;
    add_str(argv, "--enable-dp-attention");
    add_int(argv, "--ep-size", e->ep);
    add_str(argv, "--moe-a2a-backend"); /* its --deepep-mode auto: low-latency decode */
    add_str(argv, "deepep");
}

/* SGLang, a replica over several servers (its experts or its stages): the same
 * command on each but its --node-rank (check_server_args: tp x pp divisible by
 * the nodes, server_args.py:3348-3351). */
static void sglang_nodes(const engine_row *r, json_t *argv, const ppl_engine_layout *e,
                         const engine_place *at, int64_t per_server)
{
    (void)r, (void)e, (void)per_server;
    add_str(argv, "--dist-init-addr");
    char addr[64];
    snprintf(addr, sizeof addr, "%s:%d", ENGINE_HEAD_ADDR, ENGINE_HEAD_PORT);
    add_str(argv, addr);
    add_int(argv, "--nnodes", at->nodes);
    add_int(argv, "--node-rank", at->node);
}

static const engine_row engines[] = {
    {.key = "vllm",
     .name = "vLLM",
     .version = "v0.11.0",
     .head = {"vllm", "serve", NULL},
     .model_flag = NULL,
     .tp = "--tensor-parallel-size",
     .dp = "--data-parallel-size",
     .batch = "--max-num-seqs",
     .max_len = "--max-model-len",
     .chunk = "--max-num-batched-tokens",
     .share = "--gpu-memory-utilization",
     .port = "--port",
     .kv_fp8 = "fp8",
     .release = "--enable-sleep-mode",
     .moe_dp_shared = true,
     .replica_totals = false,
     .pp = NULL,
     .pd = false,
     .http_port = 8000, /* entrypoints/openai/cli_args.py:75; host None: every interface */
     .host = NULL,
     .nodes_args = NULL,
     .ep_env = {"VLLM_ALL2ALL_BACKEND", "deepep_low_latency"}, /* vllm/envs.py:1240-1246 */
     .ep_args = vllm_ep},
    {.key = "sglang",
     .name = "SGLang",
     .version = "v0.5.4",
     .head = {"python3", "-m", "sglang.launch_server"},
     .model_flag = "--model-path",
     .tp = "--tp-size",
     .dp = "--dp-size",
     .batch = "--max-running-requests",
     .max_len = "--context-length",
     .chunk = "--chunked-prefill-size",
     .share = "--mem-fraction-static",
     .port = "--port",
     .kv_fp8 = "fp8_e4m3",
     .release = "--enable-memory-saver",
     .moe_dp_shared = false,
     .replica_totals = true,
     .pp = "--pp-size", /* server_args.py:1935; overlap off: :1254-1259 */
     .pd = true,
     .http_port = 30000, /* server_args.py:205-206, bound to 127.0.0.1 unless --host */
     .host = "--host",
     .nodes_args = sglang_nodes,
     .ep_env = {NULL, NULL},
     .ep_args = sglang_ep},
};

/* A command for dp replicas of the layout (without expert parallelism), or for
 * one replica's part at `at` (with it). */
static json_t *argv_of(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                       const engine_precision *p, int64_t dp, const engine_place *at,
                       int64_t per_server)
{
    const bool ep = e->ep > 1;
    /* a replica's totals: its GPUs, and each rank's batch and chunk times its ranks */
    const int64_t ranks = ep ? e->ep / e->tp : 1, scale = ep && r->replica_totals ? ranks : 1;
    json_t *argv = json_array();
    for (size_t i = 0; i < sizeof r->head / sizeof r->head[0] && r->head[i]; i++)
        add_str(argv, r->head[i]);
    if (r->model_flag)
        add_str(argv, r->model_flag);
    add_str(argv, hf);
    add_int(argv, r->tp, ep && r->replica_totals ? e->ep : e->tp);
    add_int(argv, r->dp, ep ? ranks : dp);
    add_int(argv, r->batch, e->batch * scale);
    add_int(argv, r->max_len, e->max_len_tokens);
    add_int(argv, r->chunk, (int64_t)PPL_SERVE_CHUNK_TOKENS * scale);
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
    if (e->pp > 1)
        add_int(argv, r->pp, e->pp);
    if (r->host) { /* reached by the load balancer or router from other hosts */
        add_str(argv, r->host);
        add_str(argv, "0.0.0.0");
    }
    if (at->port > 0)
        add_int(argv, r->port, at->port);
    if (at->role) { /* server_args.py: --disaggregation-mode :3154, its checks :1424-1451 */
        add_str(argv, "--disaggregation-mode");
        add_str(argv, at->role);
        add_str(argv, "--disaggregation-transfer-backend");
        add_str(argv, "mooncake");
        if (at->bootstrap_port > 0)
            add_int(argv, "--disaggregation-bootstrap-port", at->bootstrap_port);
        if (at->role[0] == 'p') {
            add_int(argv, "--disaggregation-decode-tp", at->decode_tp);
            add_int(argv, "--disaggregation-decode-dp", at->decode_dp);
            if (at->round_robin) {
                add_str(argv, "--load-balance-method");
                add_str(argv, "round_robin");
            }
        } else if (at->round_robin) {
            add_str(argv, "--prefill-round-robin-balance");
        }
    }
    if (ep)
        r->ep_args(r, argv, e, at, per_server);
    if (at->nodes > 1 && r->nodes_args)
        r->nodes_args(r, argv, e, at, per_server);
    return argv;
}

/* A process: its environment (the GPUs it takes, of several on a server; the
 * expert dispatch) and its command. */
static json_t *process_of(const engine_row *r, const ppl_engine_layout *e, int64_t first_gpu,
                          int64_t gpus, bool own_gpus, json_t *argv)
{
    json_t *env = json_object(), *o = json_object();
    if (own_gpus) {
        char list[512];
        size_t at = 0;
        for (int64_t g = first_gpu; g < first_gpu + gpus && at < sizeof list; g++) {
            int n = snprintf(list + at, sizeof list - at, "%s%lld", g > first_gpu ? "," : "",
                             (long long)g);
            if (n < 0)
                break;
            at += (size_t)n;
        }
        json_object_set_new(env, "CUDA_VISIBLE_DEVICES", json_string(list));
    }
    if (e->ep > 1 && r->ep_env[0])
        json_object_set_new(env, r->ep_env[0], json_string(r->ep_env[1]));
    json_object_set_new(o, "env", env);
    json_object_set_new(o, "argv", argv);
    return o;
}

static json_t *node_of(int64_t count, int64_t gpus, json_t *processes)
{
    json_t *n = json_object();
    json_object_set_new(n, "count", json_integer(count));
    json_object_set_new(n, "gpus", json_integer(gpus));
    json_object_set_new(n, "processes", processes);
    return n;
}

/* Whether a role's servers are listed for a router. */
static bool at_router(const engine_place *at)
{
    return at->role != NULL;
}

static json_t *node_of_role(int64_t count, int64_t gpus, json_t *processes, const char *role)
{
    json_t *n = node_of(count, gpus, processes);
    if (role)
        json_object_set_new(n, "role", json_string(role));
    return n;
}

/* The router's URL of the server numbered *server (from 1) of a role, at port:
 * http://${PREFILL_HOST_k}:port, and a prefill server's bootstrap port. */
static void add_url(json_t *router, const engine_row *r, const char *role, int64_t server,
                    int64_t port, int64_t bootstrap)
{
    if (!router)
        return;
    char url[96], boot[32];
    snprintf(url, sizeof url, "http://${%s_HOST_%lld}:%lld", role[0] == 'p' ? "PREFILL" : "DECODE",
             (long long)server, (long long)(port > 0 ? port : r->http_port));
    add_str(router, role[0] == 'p' ? "--prefill" : "--decode");
    add_str(router, url);
    if (role[0] == 'p') {
        snprintf(boot, sizeof boot, "%lld", (long long)(bootstrap > 0 ? bootstrap : 8998));
        add_str(router, boot);
    }
}

/* The node entries of the layout's replicas into `nodes`: a replica over several
 * servers an entry a server of it (count: the replicas); else the full servers,
 * then the one that holds the replicas left.  `tmpl` carries the role; each
 * role's servers are numbered from *server for the router (when not NULL). */
static void launch_nodes(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                         const engine_precision *p, int64_t per_server, bool moe,
                         const engine_place *tmpl, json_t *nodes, json_t *router, int64_t *server)
{
    const bool ep = e->ep > 1;
    const int64_t unit = ep ? e->ep : e->tp * (e->pp > 1 ? e->pp : 1); /* a replica's GPUs */
    if (unit > per_server) {
        const int64_t servers = unit / per_server;
        for (int64_t k = 0; k < servers; k++) {
            engine_place at = *tmpl;
            at.node = k, at.nodes = servers, at.port = 0;
            json_t *procs = json_array();
            json_array_append_new(procs, process_of(r, e, 0, per_server, false,
                                                    argv_of(r, hf, e, p, 1, &at, per_server)));
            json_array_append_new(nodes, node_of_role(e->replicas, per_server, procs, at.role));
        }
        for (int64_t k = 0; at_router(tmpl) && k < e->replicas; k++)
            add_url(router, r, tmpl->role, (*server)++, 0, 0);
        return;
    }
    const int64_t a_node = per_server / unit; /* replicas a full server holds */
    const int64_t full = e->replicas / a_node, left = e->replicas % a_node;
    const struct {
        int64_t count, replicas;
    } groups[2] = {{full, a_node}, {left > 0, left}};
    /* a process a replica, or one for the server's replicas */
    const bool apart = ep || (moe && r->moe_dp_shared);
    for (int i = 0; i < 2; i++) {
        const int64_t k = groups[i].replicas;
        if (groups[i].count == 0)
            continue;
        const bool several = apart && k > 1;
        json_t *procs = json_array();
        for (int64_t j = 0; j < (apart ? k : 1); j++) {
            engine_place at = *tmpl;
            at.node = 0, at.nodes = 1, at.port = several ? ENGINE_PORT + ENGINE_PORT_STEP * j : 0;
            at.bootstrap_port = several && at.role ? 8998 + j : 0;
            json_array_append_new(procs,
                                  process_of(r, e, j * unit, unit, several,
                                             argv_of(r, hf, e, p, apart ? 1 : k, &at, per_server)));
        }
        json_array_append_new(nodes, node_of_role(groups[i].count, k * unit, procs, tmpl->role));
        for (int64_t c = 0; at_router(tmpl) && c < groups[i].count; c++, (*server)++)
            for (int64_t j = 0; j < (apart ? k : 1); j++)
                add_url(router, r, tmpl->role, *server,
                        several ? ENGINE_PORT + ENGINE_PORT_STEP * j : 0, several ? 8998 + j : 0);
    }
}

/* The engine's launch {version, nodes} of an aggregated layout. */
static json_t *launch_of(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                         const engine_precision *p, int64_t per_server, bool moe)
{
    json_t *nodes = json_array(), *o = json_object();
    const engine_place aggregated = {.role = NULL};
    launch_nodes(r, hf, e, p, per_server, moe, &aggregated, nodes, NULL, NULL);
    json_object_set_new(o, "version", json_string(r->version));
    json_object_set_new(o, "nodes", nodes);
    return o;
}

/* The data-parallel ranks of one of the layout's engines (SGLang's --dp-size):
 * an expert-parallel replica's attention groups, or the replicas a server runs. */
static int64_t engine_dp(const ppl_engine_layout *e, int64_t per_server)
{
    if (e->ep > 1)
        return e->ep / e->tp;
    const int64_t a_node = per_server / e->tp;
    return e->replicas < a_node ? e->replicas : a_node;
}

/* A disaggregated layout's launch {version, nodes, router}: the prefill
 * engines, told the decode engines' tp and dp (SGLang's
 * --disaggregation-decode-tp/-dp, server_args.py:1443-1451), then the decode
 * engines, then the router over both (sgl-router's launch_router
 * --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL,
 * py_src/sglang_router/router_args.py:186-200, :680-730). */
static json_t *launch_disaggregated(const engine_row *r, const char *hf, const ppl_engine_layout *e,
                                    const engine_precision *p, int64_t per_server, bool moe)
{
    ppl_engine_layout pre = *e;
    pre.tp = e->prefill_tp, pre.ep = e->prefill_ep, pre.batch = e->prefill_batch;
    pre.replicas = e->prefill_replicas;
    const int64_t decode_dp = engine_dp(e, per_server);
    /* the decode engines' --tp-size: the replica's GPUs with expert parallelism */
    const int64_t decode_tp = e->ep > 1 ? e->ep : e->tp;
    json_t *nodes = json_array(), *router = json_array(), *o = json_object(),
           *route = json_object();
    add_str(router, "python3");
    add_str(router, "-m");
    add_str(router, "sglang_router.launch_router");
    add_str(router, "--pd-disaggregation");
    int64_t server = 1;
    const engine_place prefill = {.role = "prefill",
                                  .decode_tp = decode_tp,
                                  .decode_dp = decode_dp,
                                  .round_robin = decode_dp > 1};
    launch_nodes(r, hf, &pre, p, per_server, moe, &prefill, nodes, router, &server);
    server = 1;
    const engine_place decode = {.role = "decode", .round_robin = decode_dp > 1};
    launch_nodes(r, hf, e, p, per_server, moe, &decode, nodes, router, &server);
    add_str(router, "--host");
    add_str(router, "0.0.0.0");
    add_int(router, "--port", ENGINE_PORT);
    json_object_set_new(route, "argv", router);
    json_object_set_new(o, "version", json_string(r->version));
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "router", route);
    return o;
}

/* Why the layout is no engine's, in `why` (empty when it is). */
static void refusal(const ppl_model *m, const ppl_engine_layout *e, int64_t per_server,
                    const ppl_hf_checkpoint *ck, const ppl_hf_checkpoint_miss *miss,
                    engine_precision *p, char *why, size_t size)
{
    const bool ep = e->ep > 1;
    const int64_t unit = ep ? e->ep : e->tp * (e->pp > 1 ? e->pp : 1);
    if (!ck) {
        if (miss->near)
            snprintf(why, size,
                     "the engines load a Hugging Face checkpoint: %s's %s is %lld where the "
                     "model has %lld",
                     miss->near->hf_model, miss->key, (long long)miss->checkpoint,
                     (long long)miss->model);
        else
            snprintf(why, size,
                     "the engines load a Hugging Face checkpoint, and none launched here has "
                     "%lld layers of width %lld with %lld heads (Llama 3 8B/70B, Llama 3.1 405B, "
                     "Qwen3 30B-A3B/235B-A22B, DeepSeek-V3)",
                     (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    } else if (e->pp > 1 && (ep || e->tp != per_server)) {
        snprintf(why, size,
                 "pipeline stages are launched a server each (tp %lld of %lld GPUs a server), "
                 "without expert parallelism",
                 (long long)e->tp, (long long)per_server);
    } else if (e->disaggregated &&
               (e->prefill_tp < 1 || e->prefill_tp > per_server || m->heads % e->prefill_tp != 0 ||
                e->prefill_replicas < 1 || e->prefill_batch < 1 ||
                (e->prefill_ep > 1 &&
                 (m->moe.experts % e->prefill_ep != 0 || e->prefill_ep % e->prefill_tp != 0)))) {
        snprintf(why, size, "prefill replicas of tp %lld, ep %lld and %lld of them are no layout",
                 (long long)e->prefill_tp, (long long)e->prefill_ep,
                 (long long)e->prefill_replicas);
    } else if (e->disaggregated &&
               ((e->prefill_replicas * (e->prefill_ep > 1 ? e->prefill_ep : e->prefill_tp)) %
                        per_server !=
                    0 ||
                (e->replicas * (e->ep > 1 ? e->ep : e->tp)) % per_server != 0)) {
        /* each role on servers of its own: a part-full server of one would take a
         * server the plan counts for the other */
        snprintf(why, size,
                 "the prefill or decode replicas leave a server part full, and each role runs on "
                 "servers of its own: the launch would take more servers than the plan's GPUs");
    } else if (e->disaggregated && e->ep <= 1 && e->replicas % (per_server / e->tp) != 0 &&
               e->replicas > per_server / e->tp) {
        /* a prefill engine is told one dp of the decode engines' (--disaggregation-decode-dp) */
        snprintf(why, size,
                 "the decode replicas leave a server part full, an engine of another "
                 "data-parallel size than the others', and a prefill engine is told one "
                 "(--disaggregation-decode-dp)");
    } else if (!precision_of(e->precision, p)) {
        snprintf(why, size,
                 "%s is not a quantization either engine applies to a bf16 checkpoint as it "
                 "loads; they serve checkpoints quantized beforehand",
                 ppl_precision_names[e->precision]);
    } else if (e->max_len_tokens > ck->max_positions) {
        snprintf(why, size,
                 "the longest sequence, %lld tokens, is above %s's max_position_embeddings "
                 "(%lld), which both engines refuse",
                 (long long)e->max_len_tokens, ck->hf_model, (long long)ck->max_positions);
    } else if (ep && (!m->has_moe || m->moe.experts % e->ep != 0 || e->ep % e->tp != 0)) {
        snprintf(why, size,
                 "expert parallelism over %lld GPUs at tp %lld: SGLang holds the same count of "
                 "experts on each (layers/moe/fused_moe_triton/layer.py:167-168), and %s",
                 (long long)e->ep, (long long)e->tp,
                 m->has_moe ? "the experts do not split so" : "the model has none");
    } else if (e->tp < 1 || e->tp > per_server || m->heads % e->tp != 0 || e->replicas < 1 ||
               e->batch < 1 || !(e->memory_share > 0.0) || e->memory_share > 1.0 ||
               (unit <= per_server ? per_server % unit != 0 : unit % per_server != 0)) {
        snprintf(why, size,
                 "tp %lld, ep %lld, %lld replicas, batch %lld and a memory share of %g are no "
                 "engine layout on servers of %lld GPUs",
                 (long long)e->tp, (long long)e->ep, (long long)e->replicas, (long long)e->batch,
                 e->memory_share, (long long)per_server);
    }
}

json_t *ppl_launch_engines(const ppl_model *m, const ppl_engine_layout *e, int64_t per_server)
{
    json_t *o = json_object();
    char why[512] = "";
    ppl_hf_checkpoint_miss miss;
    const ppl_hf_checkpoint *ck = ppl_hf_checkpoint_of(m, &miss);
    engine_precision p = {.dtype = NULL};
    refusal(m, e, per_server, ck, &miss, &p, why, sizeof why);
    json_object_set_new(o, "hf_model", ck ? json_string(ck->hf_model) : json_null());
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        const engine_row *r = &engines[i];
        char own[256] = "";
        if (!why[0] && e->pp > 1 && !r->pp)
            snprintf(own, sizeof own,
                     "a replica of %lld pipeline stages spans %lld servers, which %s %s runs "
                     "over a Ray cluster: not written yet (SGLang's launch runs it)",
                     (long long)e->pp, (long long)e->pp, r->name, r->version);
        else if (!why[0] && e->disaggregated && !r->pd)
            snprintf(own, sizeof own,
                     "%s %s disaggregates through a KV connector and a proxy outside the engine: "
                     "not written yet (SGLang's launch runs it)",
                     r->name, r->version);
        if (why[0] || own[0]) {
            char key[32];
            snprintf(key, sizeof key, "%s_error", r->key);
            json_object_set_new(o, r->key, json_null());
            json_object_set_new(o, key, json_string(why[0] ? why : own));
        } else {
            json_object_set_new(
                o, r->key,
                e->disaggregated
                    ? launch_disaggregated(r, ck->hf_model, e, &p, per_server, m->has_moe)
                    : launch_of(r, ck->hf_model, e, &p, per_server, m->has_moe));
        }
    }
    return o;
}
