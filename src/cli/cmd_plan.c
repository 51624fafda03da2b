/*
 * cmd_plan.c - `parplan plan`: search the space, rank, hand the best to launchers.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "render/explain.h"
#include "cost/rules.h"

static void table_row(ppl_table *t, size_t rank, const ppl_estimate *e, double price)
{
    const ppl_config *c = &e->config;
    char cells[14][128];
    snprintf(cells[0], 128, "%zu", rank);
    snprintf(cells[1], 128, "%lld/%lld/%lld/%lld/%lld", (long long)c->tp, (long long)c->pp,
             (long long)c->dp, (long long)c->cp, (long long)c->ep);
    if (ppl_config_etp(c) != c->tp) /* experts split otherwise than the dense layers */
        snprintf(cells[1] + strlen(cells[1]), 128 - strlen(cells[1]), " etp%lld",
                 (long long)ppl_config_etp(c));
    snprintf(cells[2], 128, "%lld", (long long)c->vp);
    snprintf(cells[3], 128, "%lld", (long long)c->mbs);
    ppl_zero_label(c, cells[4], 128);
    ppl_recompute_label(c, cells[5], 128);
    snprintf(cells[6], 128, "%s%s%s%s", c->sequence_parallel ? "sp" : "-",
             c->flash_attention ? ",fa" : "", c->cp > 1 ? "," : "",
             c->cp > 1 ? ppl_cp_comm_name(c->cp_comm) : "");
    ppl_format_time(e->step_time_s, cells[7], 128);
    ppl_format_count(e->tokens_per_s, cells[8], 128);
    snprintf(cells[9], 128, "%.1f%%", 100.0 * e->mfu);
    snprintf(cells[10], 128, "%.1f/%.0f", e->memory.total / 1073741824.0,
             e->memory.capacity / 1073741824.0);
    double share = e->step_time_s > 0 ? e->time.exposed_comm / e->step_time_s : 0.0;
    snprintf(cells[11], 128, "%.1f%%%s%s", 100.0 * share, e->bottleneck_level[0] ? " " : "",
             e->bottleneck_level);
    snprintf(cells[12], 128, "%s", e->bottleneck);
    ppl_stage_layers_text(c, cells[13], 128);
    const char *row[15];
    for (int i = 0; i < 14; i++)
        row[i] = cells[i];
    char cost[32];
    if (price > 0) { /* --gpu-hour-price: every row's cost per million tokens */
        snprintf(cost, sizeof cost, "%.3g",
                 ppl_cost_per_million_tokens(price, c->gpus, e->tokens_per_s));
        row[14] = cost;
    }
    ppl_table_row(t, row);
}

/* ---- a mixed cluster ----------------------------------------------------------- */

#define MIXED_COLUMNS 12

static void mixed_row(ppl_table *t, size_t rank, const ppl_pools *pools, const ppl_mixed_plan *p)
{
    char cells[MIXED_COLUMNS][160];
    const ppl_estimate *e = &p->estimate;
    const ppl_config *c = &e->config;
    snprintf(cells[0], 160, "%zu", rank);
    ppl_pooled_assignment_text(pools, p, cells[1], 160);
    snprintf(cells[2], 160, "%lld/%lld/%lld/%lld/%lld", (long long)c->tp, (long long)c->pp,
             (long long)c->dp, (long long)c->cp, (long long)c->ep);
    snprintf(cells[3], 160, "%lld", (long long)c->vp);
    snprintf(cells[4], 160, "%lld", (long long)c->mbs);
    ppl_zero_label(c, cells[5], 160);
    ppl_recompute_label(c, cells[6], 160);
    snprintf(cells[7], 160, "%lld", (long long)c->gpus);
    ppl_format_time(e->step_time_s, cells[8], 160);
    ppl_format_count(e->tokens_per_s, cells[9], 160);
    snprintf(cells[10], 160, "%.1f%%", 100.0 * e->mfu);
    ppl_pooled_layers_text(p->layers, c->pp, cells[11], 160);
    const char *row[MIXED_COLUMNS];
    for (int i = 0; i < MIXED_COLUMNS; i++)
        row[i] = cells[i];
    ppl_table_row(t, row);
}

/* Where each stage of a pipeline across pools runs, and how full each pool is. */
static void assignment_table(ppl_buf *out, const ppl_pools *pools, const ppl_mixed_plan *p)
{
    static const char *const header[] = {"pool", "GPU",           "stages",    "layers per stage",
                                         "GPUs", "slowest stage", "memory GiB"};
    ppl_table t;
    ppl_table_init(&t, 7, "lllrrrr");
    ppl_table_row(&t, header);
    int64_t first = 0;
    for (int i = 0; i < p->npools; i++) {
        const ppl_topology *pool = &pools->pool[p->order[i]];
        char cells[7][160];
        double worst = 0.0;
        for (int64_t k = first; k < first + p->stages[i]; k++)
            if (p->stage_s[k] > worst)
                worst = p->stage_s[k];
        snprintf(cells[0], 160, "%s", pool->name);
        snprintf(cells[1], 160, "%s", pool->gpu.name);
        snprintf(cells[2], 160, "%lld-%lld", (long long)first,
                 (long long)(first + p->stages[i] - 1));
        ppl_pooled_layers_text(p->layers + first, p->stages[i], cells[3], 160);
        snprintf(cells[4], 160, "%lld", (long long)p->gpus[i]);
        ppl_format_time(worst, cells[5], 160);
        snprintf(cells[6], 160, "%.1f/%.0f", p->memory[i] / 1073741824.0,
                 p->capacity[i] / 1073741824.0);
        const char *row[7];
        for (int j = 0; j < 7; j++)
            row[j] = cells[j];
        ppl_table_row(&t, row);
        first += p->stages[i];
    }
    ppl_table_render(&t, out, "  ");
    ppl_table_free(&t);
}

static ppl_status mixed_output(cli *c, const ppl_model *model, const ppl_pools *pools,
                               const ppl_eval_ctx *ctx, const ppl_pins *pins,
                               const ppl_mixed_plan *plans, size_t n,
                               const ppl_mixed_search_stats *stats)
{
    const ppl_args *a = c->args;
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *search = json_object(),
               *cross = json_object();
        json_object_set_new(doc, "model", json_string(model->name));
        json_object_set_new(doc, "topology", json_string(pools->name));
        json_object_set_new(doc, "seq_len", json_integer(model->seq_len));
        json_object_set_new(doc, "stack", json_string(ppl_stack_name(ctx[0].stack.stack)));
        json_object_set_new(doc, "objective", json_string(ppl_objective_name(a->objective)));
        json_object_set_new(doc, "global_batch", json_integer(pins->global_batch));
        json_object_set_new(cross, "bandwidth_bps", ppl_json_real(pools->cross_bps));
        json_object_set_new(cross, "latency_s", ppl_json_real(pools->cross_latency_s));
        json_object_set_new(doc, "cross_pool", cross);
        json_object_set_new(search, "evaluated", json_integer((json_int_t)stats->evaluated));
        json_object_set_new(search, "feasible", json_integer((json_int_t)stats->feasible));
        json_object_set_new(doc, "search", search);
        for (size_t i = 0; i < n; i++) {
            json_t *e = ppl_pooled_json(pools, &plans[i], model);
            json_object_set_new(e, "rank", json_integer((json_int_t)i + 1));
            json_array_append_new(list, e);
        }
        json_object_set_new(doc, "results", list);
        json_object_set_new(doc, "across_not_costed",
                            model->has_moe ? json_string("a pipeline across pools is costed for "
                                                         "dense models only")
                                           : json_null());
        json_object_set_new(doc, "inputs", cli_plan_inputs_json(c));
        return cli_emit_json(c, doc);
    }
    ppl_buf *out = &c->out;
    char bw[32], lat[32];
    ppl_format_bandwidth(pools->cross_bps, bw, sizeof bw);
    ppl_format_time(pools->cross_latency_s, lat, sizeof lat);
    ppl_buf_printf(out, "plan      %s on %s: %d pools, global batch %lld, %s stack\n", model->name,
                   pools->name, pools->n, (long long)pins->global_batch,
                   ppl_stack_name(ctx[0].stack.stack));
    for (int i = 0; i < pools->n; i++) {
        const ppl_topology *t = &pools->pool[i];
        ppl_buf_printf(out, "pool      %s: %lld servers x %lld %s\n", t->name,
                       (long long)t->servers, (long long)t->gpus_per_server, t->gpu.name);
    }
    ppl_buf_printf(out, "between   %s per GPU, %s, each way\n", bw, lat);
    ppl_buf_printf(out,
                   "search    %zu configurations costed, %zu fit: the whole job on each pool, "
                   "and pipelines across the pools\n\n",
                   stats->evaluated, stats->feasible);
    static const char *const header[MIXED_COLUMNS] = {
        "#",         "pools x stages", "tp/pp/dp/cp/ep", "vp",       "mbs", "zero",
        "recompute", "GPUs",           "step",           "tokens/s", "MFU", "stage layers"};
    ppl_table t;
    ppl_table_init(&t, MIXED_COLUMNS, "rlrrrllrrrrl");
    ppl_table_row(&t, header);
    for (size_t i = 0; i < n; i++)
        mixed_row(&t, i + 1, pools, &plans[i]);
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
    size_t best = n;
    for (size_t i = 0; i < n && best == n; i++)
        if (plans[i].npools > 1)
            best = i;
    if (model->has_moe)
        ppl_buf_printf(out,
                       "\nacross the pools: not costed (%s is a mixture of experts; a "
                       "pipeline across pools is costed for dense models)\n",
                       model->name);
    else if (best == n)
        ppl_buf_printf(out, "\nacross the pools: none among these\n");
    else {
        const ppl_mixed_plan *b = &plans[best];
        char send[32];
        ppl_format_time(b->cross_send_s, send, sizeof send);
        ppl_buf_printf(out,
                       "\nstage assignment of #%zu, the best across the pools (each stage on tp "
                       "x dp GPUs of its pool; layers balanced to each pool's speed and "
                       "memory):\n",
                       best + 1);
        assignment_table(out, pools, b);
        ppl_buf_printf(out, "  slowest stage %lld; a send across pools %s per microbatch\n",
                       (long long)b->estimate.slowest_stage, send);
    }
    ppl_buf_printf(out, "\npools x stages: where the stages run, in pipeline order; across the "
                        "pools: 1F1B, vp 1, cp 1, ep 1, ZeRO 1, flash attention\n");
    return PPL_OK;
}

/* plan on a mixed cluster: the best plans of the job on each pool alone and across
 * the pools, ranked together, each costed by the estimator every plan is. */
static ppl_status plan_mixed(cli *c, const ppl_pools *pools)
{
    const ppl_args *a = c->args;
    /* the page draws one pool's stages, memory and traffic: not a pipeline across pools */
    if (a->report_path)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--report",
                             "on a mixed cluster plan writes no HTML page yet; use --json");
    ppl_status st = cli_pins_check_mixed(c);
    ppl_model model;
    if (st == PPL_OK)
        st = cli_load_model(c, a->model, &model);
    if (st != PPL_OK)
        return st;
    ppl_eval_ctx ctx[PPL_MAX_POOLS];
    for (int i = 0; i < pools->n; i++)
        cli_eval_ctx(c, &ctx[i], &model, &pools->pool[i]);
    ppl_pins pins = a->pins;
    if (pins.global_batch == PPL_UNSET)
        pins.global_batch = ppl_default_global_batch(&model);
    ppl_search_opts o = {.pins = &pins,
                         .top = a->top > 0 ? (size_t)a->top : 1,
                         .objective = a->objective,
                         .within = a->within,
                         .allow_tp_across_servers = a->allow_tp_across_servers};
    ppl_mixed_plan *plans = calloc(o.top, sizeof *plans);
    if (!plans)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_mixed_search_stats stats = {0, 0, 0, 0};
    ppl_error_clear(&c->err);
    size_t n = ppl_mixed_plan_all(ctx, pools, &o, plans, &stats, &c->err);
    if (n == 0 && c->err.status != PPL_OK)
        st = c->err.status;
    else if (n == 0)
        st = ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                           "nothing fits on any pool nor across the pools (%zu configurations "
                           "costed); add GPUs or pin --recompute full or a larger --pp",
                           stats.evaluated);
    else
        st = mixed_output(c, &model, pools, ctx, &pins, plans, n, &stats);
    free(plans);
    return st;
}

ppl_status cmd_plan(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_status st;
    ppl_pools *pools = malloc(sizeof *pools);
    if (!pools)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    st = cli_load_pools(c, a->topology, pools);
    if (st == PPL_OK && pools->n > 0) /* a mixed cluster */
        st = plan_mixed(c, pools);
    if (st != PPL_OK || pools->n > 0) {
        free(pools);
        return st;
    }
    free(pools);
    if ((st = cli_load(c, &model, &topo)) != PPL_OK)
        return st;
    ppl_eval_ctx ctx;
    cli_eval_ctx(c, &ctx, &model, &topo);
    if ((st = ppl_precision_check(a->pins.precision, &topo, &c->err)) != PPL_OK)
        return st;
    cli_progress prog = {.what = "searching"};
    ppl_search_opts o = {.pins = &a->pins,
                         .top = (size_t)a->top,
                         .objective = a->objective,
                         .within = a->within,
                         .allow_tp_across_servers = a->allow_tp_across_servers,
                         .left_out = true,
                         .progress = cli_progress_show,
                         .progress_ctx = &prog};
    ppl_search_result r;
    st = ppl_search(&ctx, &o, &r, &c->err);
    cli_progress_done(&prog);
    if (st == PPL_INFEASIBLE) {
        char need[32], cap[32];
        ppl_format_bytes(r.smallest_memory, need, sizeof need);
        ppl_format_bytes(r.capacity, cap, sizeof cap);
        if (r.evaluated == 0)
            ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                          "nothing to plan: %zu configurations enumerated, none satisfies the "
                          "divisibility rules (global batch %lld, %lld GPUs); try another "
                          "--global-batch or --gpus",
                          r.candidates, (long long)a->pins.global_batch,
                          (long long)(a->pins.gpus != PPL_UNSET
                                          ? a->pins.gpus
                                          : topo.servers * topo.gpus_per_server));
        else
            ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                          "nothing fits: the smallest configuration needs %s per GPU, the GPU has "
                          "%s (%zu configurations costed); add GPUs or pin --recompute full, "
                          "--zero 1 or a larger --pp",
                          need, cap, r.evaluated);
        ppl_search_free(&r);
        return PPL_INFEASIBLE;
    }
    if (st != PPL_OK) {
        ppl_search_free(&r);
        return st;
    }
    if (a->report_path) {
        char origin[600];
        snprintf(origin, sizeof origin, "parplan plan --model %s --topology %s", a->model,
                 a->topology);
        ppl_report_page page = {.model = &model,
                                .topo = &topo,
                                .memory = &ctx.memory,
                                .results = r.results,
                                .nresults = r.count,
                                .origin = origin,
                                .gpu_hour_price = a->gpu_hour_price};
        if ((st = cli_write_report(c, a->report_path, &page)) != PPL_OK) {
            ppl_search_free(&r);
            return st;
        }
    }
    char note[1024];
    bool assumed = ppl_gpu_assumed(&topo.gpu, (ppl_precision)a->pins.precision, note, sizeof note);
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *search = json_object();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "seq_len", json_integer(model.seq_len));
        json_object_set_new(doc, "stack", json_string(ppl_stack_name(ctx.stack.stack)));
        json_object_set_new(doc, "gpus_per_server", json_integer(topo.gpus_per_server));
        json_object_set_new(doc, "objective", json_string(ppl_objective_name(a->objective)));
        if (r.step_ceiling_s > 0.0)
            json_object_set_new(doc, "step_ceiling_s", ppl_json_real(r.step_ceiling_s));
        if (assumed)
            json_object_set_new(doc, "efficiency_assumed", json_string(note));
        json_object_set_new(search, "candidates", json_integer((json_int_t)r.candidates));
        json_object_set_new(search, "evaluated", json_integer((json_int_t)r.evaluated));
        json_object_set_new(search, "feasible", json_integer((json_int_t)r.feasible));
        json_object_set_new(search, "pruned", json_integer((json_int_t)r.pruned));
        json_object_set_new(search, "balanced", json_integer((json_int_t)r.balanced));
        /* wall time varies run to run: reported with --timing, else null, so that
         * the same input gives byte-identical output */
        json_object_set_new(search, "seconds", a->timing ? ppl_json_real(r.seconds) : json_null());
        json_object_set_new(doc, "search", search);
        for (size_t i = 0; i < r.count; i++) {
            json_t *e = ppl_estimate_json(&r.results[i], &model);
            json_object_set_new(e, "rank", json_integer((json_int_t)i + 1));
            if (i > 0) { /* how it differs from #1 (explain.h) */
                ppl_plan_diff d;
                ppl_plan_diff_of(&r.results[0], &r.results[i], &d);
                json_object_set_new(e, "versus_best", ppl_plan_diff_json(&d));
            }
            if (a->gpu_hour_price > 0)
                json_object_set_new(
                    e, "cost_per_million_tokens",
                    ppl_json_real(ppl_cost_per_million_tokens(
                        a->gpu_hour_price, r.results[i].config.gpus, r.results[i].tokens_per_s)));
            json_array_append_new(list, e);
        }
        json_object_set_new(doc, "results", list);
        /* what the default search left out and would have won */
        json_t *outside = json_array();
        for (size_t i = 0; i < r.n_left_out; i++) {
            json_t *w = json_object();
            json_object_set_new(w, "family", json_string(r.left_out[i].family->name));
            json_object_set_new(w, "why", json_string(r.left_out[i].family->why));
            char allow[96];
            json_object_set_new(w, "allow",
                                json_string(cli_family_allow(r.left_out[i].family, allow, sizeof allow)));
            json_object_set_new(w, "speedup", ppl_json_real(r.left_out[i].speedup));
            json_object_set_new(w, "result", ppl_estimate_json(&r.left_out[i].best, &model));
            json_array_append_new(outside, w);
        }
        json_object_set_new(doc, "not_searched", outside);
        json_object_set_new(doc, "inputs", cli_plan_inputs_json(c));
        ppl_search_free(&r);
        return cli_emit_json(c, doc);
    }
    ppl_buf *out = &c->out;
    ppl_buf_printf(
        out, "plan      %s on %s: %lld GPUs, global batch %lld, %s stack\n", model.name, topo.name,
        (long long)(a->pins.gpus != PPL_UNSET ? a->pins.gpus : topo.servers * topo.gpus_per_server),
        (long long)a->pins.global_batch, ppl_stack_name(ctx.stack.stack));
    if (a->pins.cuda_graphs != PPL_CUDA_GRAPHS_NONE)
        ppl_buf_printf(out, "graphs    %s: each captured region one CUDA graph launch\n",
                       ppl_cuda_graphs_name(a->pins.cuda_graphs));
    if (assumed)
        ppl_buf_printf(out, "assumed   %s\n", note);
    ppl_buf_printf(out,
                   "search    %zu configurations, %zu costed, %zu fit, %zu skipped by a bound "
                   "(alone or as a group), %zu rebalanced",
                   r.candidates, r.evaluated, r.feasible, r.pruned, r.balanced);
    if (a->timing)
        ppl_buf_printf(out, ", %.3f s", r.seconds);
    if (r.step_ceiling_s > 0.0) {
        char ceiling[32];
        ppl_format_time(r.step_ceiling_s, ceiling, sizeof ceiling);
        ppl_buf_printf(out,
                       "\nkept      by %s, of the plans within %g%% of the fastest step (up to "
                       "%s; --within)",
                       ppl_objective_name(a->objective), 100.0 * a->within, ceiling);
    }
    ppl_buf_printf(out, "\n\n");
    ppl_table t;
    const bool priced = a->gpu_hour_price > 0;
    ppl_table_init(&t, priced ? 15 : 14, "rlrrrllrrrrlllr");
    static const char *const header[] = {
        "#",          "tp/pp/dp/cp/ep", "vp",       "mbs", "zero",    "recompute",
        "opt",        "step",           "tokens/s", "MFU", "mem GiB", "exposed comm",
        "bottleneck", "stage layers",   "cost/Mtok"};
    ppl_table_row(&t, header);
    for (size_t i = 0; i < r.count; i++)
        table_row(&t, i + 1, &r.results[i], a->gpu_hour_price);
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
    /* why #1 wins: what each runner-up changes and what that moves */
    if (r.count > 1)
        ppl_buf_printf(out, "\nagainst #1 (knobs changed; the step's parts that moved most):\n");
    for (size_t i = 1; i < r.count && i < 10; i++) {
        ppl_plan_diff d;
        char why[512];
        ppl_plan_diff_of(&r.results[0], &r.results[i], &d);
        ppl_buf_printf(out, "  #%zu  %s\n", i + 1, ppl_plan_diff_text(&d, why, sizeof why));
    }
    if (a->gpu_hour_price > 0 && r.count > 0) {
        const ppl_estimate *b = &r.results[0];
        ppl_buf_printf(
            out, "\ncost of the best: %.2f per million tokens at %.2f per GPU-hour\n",
            ppl_cost_per_million_tokens(a->gpu_hour_price, b->config.gpus, b->tokens_per_s),
            a->gpu_hour_price);
    }
    ppl_buf_printf(out, "\nopt: sp = sequence parallelism, fa = flash attention, and with cp > 1 "
                        "the context-parallel algorithm (p2p, a2a, allgather, a2a+p2p); exposed "
                        "comm: share of the step, and the level of the largest part; zero: the "
                        "stage, /N sharded in groups of N ranks, +off optimizer offloaded; MFU: "
                        "model FLOPs over the dense peak of %s, the precision the GEMMs run at\n",
                   r.count > 0 ? ppl_precision_names[r.results[0].mfu_precision] : "bf16");
    for (size_t i = 0; i < r.n_left_out; i++) {
        const ppl_estimate *w = &r.left_out[i].best;
        char step[32], allow[96];
        ppl_format_time(w->step_time_s, step, sizeof step);
        ppl_buf_printf(out,
                       "not searched: %lld/%lld/%lld/%lld/%lld zero %d would take %s a step, "
                       "%.1f%% faster than #1; left out because %s; allow it with %s\n",
                       (long long)w->config.tp, (long long)w->config.pp, (long long)w->config.dp,
                       (long long)w->config.cp, (long long)w->config.ep, w->config.zero, step,
                       100.0 * (r.left_out[i].speedup - 1.0), r.left_out[i].family->why,
                       cli_family_allow(r.left_out[i].family, allow, sizeof allow));
    }
    ppl_search_free(&r);
    return PPL_OK;
}
