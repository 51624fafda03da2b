/*
 * cmd_serve.c - `parplan serve`: the layouts of an inference engine for a
 * model and workload on the GPUs given, ranked by output tokens a second under
 * the latency targets (cost/serve.h; issue 33's first piece: tensor parallelism
 * in one NVLink domain, the batch, replicas of it).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* The largest batch tried: an engine's max_num_seqs is of this order (vLLM's
 * default 256; SGLang's max_running_requests up to thousands). */
#define SERVE_MAX_BATCH 4096
/* Prefill layouts a disaggregated row may take: tp (at most 63 powers of two in
 * an int64_t), each alone or with the experts over ep GPUs (at most 63 more). */
#define SERVE_PREFILL_LAYOUTS (63 * 64)

typedef struct serve_row {
    ppl_serve_layout layout; /* the (decode) replicas' */
    int64_t replicas;
    ppl_serve_estimate e;
    bool disaggregated; /* prefill replicas apart (d) */
    ppl_serve_disagg d;
    double ttft_s, tpot_s; /* what a request sees, unqueued */
    double total_tokens_per_s;
    int64_t gpus;
} serve_row;

static int by_throughput(const void *a, const void *b)
{
    const serve_row *x = a, *y = b;
    if (x->total_tokens_per_s != y->total_tokens_per_s)
        return x->total_tokens_per_s > y->total_tokens_per_s ? -1 : 1;
    if (x->tpot_s != y->tpot_s)
        return x->tpot_s < y->tpot_s ? -1 : 1;
    if (x->disaggregated != y->disaggregated)
        return x->disaggregated ? 1 : -1;
    if (x->d.prefill_tp != y->d.prefill_tp)
        return x->d.prefill_tp < y->d.prefill_tp ? -1 : 1;
    if (x->d.prefill_ep != y->d.prefill_ep)
        return x->d.prefill_ep < y->d.prefill_ep ? -1 : 1;
    if (x->layout.ep != y->layout.ep)
        return x->layout.ep < y->layout.ep ? -1 : 1;
    if (x->layout.tp != y->layout.tp)
        return x->layout.tp < y->layout.tp ? -1 : 1;
    if (x->layout.pp != y->layout.pp)
        return x->layout.pp < y->layout.pp ? -1 : 1;
    return x->layout.batch < y->layout.batch ? -1 : x->layout.batch > y->layout.batch;
}

/* Whether a row's latencies are within --tpot and --ttft (each when given). */
static bool meets_targets(const ppl_args *a, const serve_row *r)
{
    return !(a->tpot_s > 0 && r->tpot_s > a->tpot_s) && !(a->ttft_s > 0 && r->ttft_s > a->ttft_s);
}

/* The engines' launch of a row (render/engine.h). */
static json_t *launch_json(const serve_row *r, const ppl_model *m, const ppl_topology *t,
                           const ppl_serve_workload *w)
{
    const ppl_engine_layout e = {
        .tp = r->layout.tp,
        .pp = r->layout.pp,
        .ep = r->layout.ep,
        .batch = r->layout.batch,
        .replicas = r->replicas,
        .max_len_tokens = w->input_tokens + w->output_tokens,
        .precision = r->layout.precision,
        .memory_share = r->e.capacity_bytes / t->gpu.memory_bytes,
        .disaggregated = r->disaggregated,
        .prefill_tp = r->d.prefill_tp,
        .prefill_ep = r->d.prefill_ep,
        .prefill_batch = r->d.prefill.prefill_prompts,
        .prefill_replicas = r->d.prefill_replicas,
    };
    return ppl_launch_engines(m, &e, t->gpus_per_server);
}

/* A replica's ep in the table: "-" without expert parallelism. */
static void ep_cell(const ppl_serve_layout *l, char *buf, size_t size)
{
    if (l->ep > 1)
        snprintf(buf, size, "%lld", (long long)l->ep);
    else
        snprintf(buf, size, "-");
}

static json_t *row_json(const serve_row *r)
{
    json_t *o = json_object(), *mem = json_object();
    json_object_set_new(o, "mode", json_string(r->disaggregated ? "disaggregated" : "aggregated"));
    json_object_set_new(o, "tp", json_integer(r->layout.tp));
    json_object_set_new(o, "pp", json_integer(r->layout.pp));
    json_object_set_new(o, "ep", json_integer(r->layout.ep > 1 ? r->layout.ep : 1));
    json_object_set_new(o, "attention_dp",
                        json_integer(ppl_serve_replica_batch(&r->layout) / r->layout.batch));
    json_object_set_new(o, "batch", json_integer(r->layout.batch));
    json_object_set_new(o, "replicas", json_integer(r->replicas));
    json_object_set_new(o, "prefill_tp", json_integer(r->disaggregated ? r->d.prefill_tp : 0));
    json_object_set_new(o, "prefill_ep",
                        json_integer(!r->disaggregated     ? 0
                                     : r->d.prefill_ep > 1 ? r->d.prefill_ep
                                                           : 1));
    json_object_set_new(o, "prefill_replicas",
                        json_integer(r->disaggregated ? r->d.prefill_replicas : 0));
    json_object_set_new(o, "kv_transfer_s",
                        ppl_json_real(r->disaggregated ? r->d.kv_transfer_s : 0));
    json_object_set_new(o, "gpus", json_integer(r->gpus));
    json_object_set_new(o, "ttft_s", ppl_json_real(r->ttft_s));
    const ppl_serve_estimate *pf = r->disaggregated ? &r->d.prefill : &r->e;
    json_object_set_new(o, "prefill_prompts", json_integer(pf->prefill_prompts));
    json_object_set_new(o, "prefill_share_s", ppl_json_real(pf->prefill_share_s));
    json_object_set_new(o, "decode_step_s", ppl_json_real(r->e.decode_step_s));
    json_object_set_new(o, "tpot_s", ppl_json_real(r->tpot_s));
    json_object_set_new(
        o, "decode_bound",
        json_string(r->e.decode_memory_s >= r->e.decode_compute_s ? "memory" : "compute"));
    json_object_set_new(o, "replica_tokens_per_s",
                        ppl_json_real(r->disaggregated
                                          ? r->total_tokens_per_s / (double)r->d.decode_replicas
                                          : r->e.tokens_per_s));
    json_object_set_new(o, "tokens_per_s", ppl_json_real(r->total_tokens_per_s));
    json_object_set_new(o, "tokens_per_s_per_gpu",
                        ppl_json_real(r->total_tokens_per_s / (double)r->gpus));
    json_object_set_new(mem, "weights", ppl_json_real(r->e.weight_bytes));
    json_object_set_new(mem, "kv_cache", ppl_json_real(r->e.kv_bytes));
    json_object_set_new(mem, "capacity", ppl_json_real(r->e.capacity_bytes));
    json_object_set_new(o, "memory", mem);
    return o;
}

static const char not_costed[] =
    "CUDA graphs and host time, prefix caching, speculative "
    "decoding, queueing; against measured engines the throughput is off by 20.1% on "
    "average, mostly too high (validate --runs tests/data/serve-runs.json)";

typedef struct serve_prefill {
    ppl_serve_layout layout;
    ppl_serve_estimate e;
} serve_prefill;

typedef struct serve_rows {
    serve_row *v;
    size_t n, cap;
} serve_rows;

static bool push_row(serve_rows *l, const serve_row *r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        serve_row *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = *r;
    return true;
}

ppl_status cmd_serve(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_precision precision;
    int64_t gpus;
    ppl_status st = cli_load_engine(c, &model, &topo, &precision, &gpus);
    if (st != PPL_OK)
        return st;
    ppl_eval_ctx ctx;
    cli_eval_ctx(c, &ctx, &model, &topo);
    const ppl_serve_workload w = {a->input_len, a->output_len};
    /* tp within one NVLink domain and one server, dividing the heads */
    const int64_t domain = ppl_topology_server_domain(&topo);
    /* the prefill layouts a disaggregated row may take, each costed once */
    serve_prefill *prefills = calloc(SERVE_PREFILL_LAYOUTS, sizeof *prefills);
    serve_rows rows = {0};
    if (!prefills)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    size_t n_prefills = 0, fitting = 0;
    ppl_serve_shape shapes[PPL_SERVE_SHAPES];
    for (int64_t tp = 1; tp <= domain && tp < gpus; tp *= 2) {
        const size_t k = ppl_serve_shapes(&model, &topo, tp, gpus - 1, false, shapes);
        for (size_t i = 0; i < k && n_prefills < SERVE_PREFILL_LAYOUTS; i++) {
            serve_prefill *p = &prefills[n_prefills];
            p->layout = ppl_serve_prefill_layout(tp, shapes[i].ep, precision, &w);
            ppl_serve_cost(&ctx, &p->layout, &w, &p->e);
            n_prefills += p->e.fits;
        }
    }
    /* aggregated layouts, and disaggregated ones beside each prefill layout */
    bool ok = true;
    for (int64_t tp = 1; ok && tp <= domain && tp <= gpus; tp *= 2) {
        const size_t k = ppl_serve_shapes(&model, &topo, tp, gpus, true, shapes);
        for (size_t i = 0; ok && i < k; i++)
            for (int64_t batch = 1; ok && batch <= SERVE_MAX_BATCH; batch *= 2) {
                serve_row r = {.layout = {.tp = tp,
                                          .batch = batch,
                                          .precision = precision,
                                          .pp = shapes[i].pp,
                                          .ep = shapes[i].ep}};
                const int64_t replica = ppl_serve_replica_gpus(&r.layout);
                r.replicas = gpus / replica;
                ppl_serve_cost(&ctx, &r.layout, &w, &r.e);
                if (!r.e.fits)
                    break; /* a larger batch holds more cache */
                fitting++;
                r.total_tokens_per_s = (double)r.replicas * r.e.tokens_per_s;
                r.gpus = r.replicas * replica;
                r.ttft_s = r.e.prefill_s, r.tpot_s = r.e.tpot_s;
                if (meets_targets(a, &r))
                    ok = push_row(&rows, &r);
                /* the same decode replicas beside prefill replicas of their own (no
                 * pipeline yet) */
                for (size_t j = 0; ok && r.layout.pp == 1 && j < n_prefills; j++) {
                    serve_row q = r;
                    q.disaggregated = true;
                    if (!ppl_serve_disagg_cost(&ctx, &prefills[j].layout, &prefills[j].e, &r.layout,
                                               &r.e, &w, gpus, &q.d))
                        continue;
                    q.replicas = q.d.decode_replicas;
                    q.gpus = q.d.prefill_replicas * ppl_serve_replica_gpus(&prefills[j].layout) +
                             q.d.decode_replicas * replica;
                    q.ttft_s = q.d.ttft_s, q.tpot_s = q.d.tpot_s;
                    q.total_tokens_per_s = q.d.tokens_per_s;
                    if (meets_targets(a, &q))
                        ok = push_row(&rows, &q);
                }
            }
    }
    free(prefills);
    if (!ok) {
        free(rows.v);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    const size_t n = rows.n;
    if (n == 0) {
        free(rows.v);
        if (fitting == 0) {
            char why[512];
            ppl_serve_unfit(&ctx, precision, domain < gpus ? domain : gpus, true, why, sizeof why);
            return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "", "%s", why);
        }
        return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                             "no layout meets the latency targets (%zu fit): loosen --tpot or "
                             "--ttft",
                             fitting);
    }
    qsort(rows.v, n, sizeof *rows.v, by_throughput);
    const size_t shown = n < (size_t)a->top ? n : (size_t)a->top;
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *wl = json_object(),
               *targets = json_object();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "gpus", json_integer(gpus));
        json_object_set_new(doc, "precision", json_string(ppl_precision_name(precision)));
        json_object_set_new(wl, "input_tokens", json_integer(w.input_tokens));
        json_object_set_new(wl, "output_tokens", json_integer(w.output_tokens));
        json_object_set_new(doc, "workload", wl);
        json_object_set_new(targets, "tpot_s",
                            a->tpot_s > 0 ? ppl_json_real(a->tpot_s) : json_null());
        json_object_set_new(targets, "ttft_s",
                            a->ttft_s > 0 ? ppl_json_real(a->ttft_s) : json_null());
        json_object_set_new(doc, "targets", targets);
        json_object_set_new(doc, "kv_bytes_per_token",
                            ppl_json_real(rows.v[0].e.kv_bytes_per_token));
        for (size_t i = 0; i < shown; i++) {
            json_t *r = row_json(&rows.v[i]);
            json_object_set_new(r, "rank", json_integer((json_int_t)i + 1));
            json_object_set_new(r, "launch", launch_json(&rows.v[i], &model, &topo, &w));
            json_array_append_new(list, r);
        }
        json_object_set_new(doc, "results", list);
        json_object_set_new(doc, "not_costed", json_string(not_costed));
        free(rows.v);
        return cli_emit_json(c, doc);
    }
    ppl_buf *out = &c->out;
    ppl_buf_printf(out,
                   "serve     %s on %s: %lld GPUs, %s, %lld-token prompts, %lld-token "
                   "responses\n",
                   model.name, topo.name, (long long)gpus, ppl_precision_name(precision),
                   (long long)w.input_tokens, (long long)w.output_tokens);
    ppl_buf_printf(out, "kv cache  %.0f B a token (%.3g GiB a 1,000-token sequence)\n\n",
                   rows.v[0].e.kv_bytes_per_token,
                   rows.v[0].e.kv_bytes_per_token * 1000.0 / 1073741824.0);
    static const char *const header[] = {"#",    "mode", "tp",    "ep",       "batch",   "replicas",
                                         "TTFT", "TPOT", "bound", "tokens/s", "per GPU", "mem GiB"};
    enum { COLS = 12 };
    ppl_table t;
    ppl_table_init(&t, COLS, "rlrrrrrrlrrr");
    ppl_table_row(&t, header);
    for (size_t i = 0; i < shown; i++) {
        const serve_row *r = &rows.v[i];
        char cells[COLS][48];
        snprintf(cells[0], 48, "%zu", i + 1);
        snprintf(cells[1], 48, "%s", r->disaggregated ? "disaggregated" : "aggregated");
        /* disaggregated: prefill+decode */
        char ep[24];
        ep_cell(&r->layout, ep, sizeof ep);
        if (r->disaggregated) {
            char prefill_ep[24];
            const ppl_serve_layout p = {.tp = r->d.prefill_tp, .ep = r->d.prefill_ep};
            ep_cell(&p, prefill_ep, sizeof prefill_ep);
            snprintf(cells[2], 48, "%lld+%lld", (long long)r->d.prefill_tp,
                     (long long)r->layout.tp);
            snprintf(cells[3], 48, "%s+%s", prefill_ep, ep);
            snprintf(cells[5], 48, "%lld+%lld", (long long)r->d.prefill_replicas,
                     (long long)r->replicas);
        } else {
            if (r->layout.pp > 1) /* tp x pp stages */
                snprintf(cells[2], 48, "%lldx%lld", (long long)r->layout.tp,
                         (long long)r->layout.pp);
            else
                snprintf(cells[2], 48, "%lld", (long long)r->layout.tp);
            snprintf(cells[3], 48, "%s", ep);
            snprintf(cells[5], 48, "%lld", (long long)r->replicas);
        }
        snprintf(cells[4], 48, "%lld", (long long)r->layout.batch);
        snprintf(cells[6], 48, "%.1f ms", r->ttft_s * 1e3);
        snprintf(cells[7], 48, "%.2f ms", r->tpot_s * 1e3);
        snprintf(cells[8], 48, "%s",
                 r->e.decode_memory_s >= r->e.decode_compute_s ? "memory" : "compute");
        snprintf(cells[9], 48, "%.0f", r->total_tokens_per_s);
        snprintf(cells[10], 48, "%.0f", r->total_tokens_per_s / (double)r->gpus);
        snprintf(cells[11], 48, "%.1f/%.0f", (r->e.weight_bytes + r->e.kv_bytes) / 1073741824.0,
                 r->e.capacity_bytes / 1073741824.0);
        ppl_table_row_fixed(&t, cells[0], sizeof cells[0]);
    }
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
    ppl_buf_printf(
        out,
        "\nmode: aggregated (each replica prefills and decodes) or disaggregated "
        "(prefill replicas send each prompt's KV cache to decode replicas; tp and "
        "replicas prefill+decode); tp: tensor-parallel GPUs of a replica, tp x pp with "
        "pp pipeline stages of a server each; ep: the GPUs a replica spreads a MoE's experts "
        "over, its attention at tp in ep / tp groups of `batch` sequences each; TTFT: one prompt's "
        "prefill (and its cache's "
        "transfer), unqueued; TPOT: the time between a sequence's tokens, the batch's "
        "decode step at the mean context and, aggregated, the prefills spread over "
        "the steps; tokens/s: output tokens of every replica.\nnot costed yet: %s\n",
        not_costed);
    free(rows.v);
    return PPL_OK;
}
