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
        st = cmd_plan_pools(c, pools);
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
                         .allow_tp_across_servers = a->allow_tp_across_servers,
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
    ppl_left_out wins[PPL_FAMILY_COUNT];
    size_t nwins =
        a->objective == PPL_OBJECTIVE_TIME ? ppl_search_left_out(&ctx, &o, &r.results[0], wins) : 0;
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
    char note[512];
    bool assumed = ppl_gpu_assumed(&topo.gpu, (ppl_precision)a->pins.precision, note, sizeof note);
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *search = json_object();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "stack", json_string(ppl_stack_name(ctx.stack.stack)));
        json_object_set_new(doc, "gpus_per_server", json_integer(topo.gpus_per_server));
        json_object_set_new(doc, "objective", json_string(ppl_objective_name(a->objective)));
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
        for (size_t i = 0; i < nwins; i++) {
            json_t *w = json_object();
            json_object_set_new(w, "family", json_string(wins[i].family->name));
            json_object_set_new(w, "why", json_string(wins[i].family->why));
            char allow[96];
            json_object_set_new(w, "allow",
                                json_string(cli_family_allow(wins[i].family, allow, sizeof allow)));
            json_object_set_new(w, "speedup", ppl_json_real(wins[i].speedup));
            json_object_set_new(w, "result", ppl_estimate_json(&wins[i].best, &model));
            json_array_append_new(outside, w);
        }
        json_object_set_new(doc, "not_searched", outside);
        ppl_search_free(&r);
        return cli_emit_json(c, doc);
    }
    ppl_buf *out = &c->out;
    ppl_buf_printf(
        out, "plan      %s on %s: %lld GPUs, global batch %lld, %s stack\n", model.name, topo.name,
        (long long)(a->pins.gpus != PPL_UNSET ? a->pins.gpus : topo.servers * topo.gpus_per_server),
        (long long)a->pins.global_batch, ppl_stack_name(ctx.stack.stack));
    if (assumed)
        ppl_buf_printf(out, "assumed   %s\n", note);
    ppl_buf_printf(out,
                   "search    %zu configurations, %zu costed, %zu fit, %zu pruned by the "
                   "step-time bound, %zu rebalanced",
                   r.candidates, r.evaluated, r.feasible, r.pruned, r.balanced);
    if (a->timing)
        ppl_buf_printf(out, ", %.3f s", r.seconds);
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
                        "stage, /N sharded in groups of N ranks, +off optimizer offloaded\n");
    for (size_t i = 0; i < nwins; i++) {
        const ppl_estimate *w = &wins[i].best;
        char step[32], allow[96];
        ppl_format_time(w->step_time_s, step, sizeof step);
        ppl_buf_printf(out,
                       "not searched: %lld/%lld/%lld/%lld/%lld zero %d would take %s a step, "
                       "%.1f%% faster than #1; left out because %s; allow it with %s\n",
                       (long long)w->config.tp, (long long)w->config.pp, (long long)w->config.dp,
                       (long long)w->config.cp, (long long)w->config.ep, w->config.zero, step,
                       100.0 * (wins[i].speedup - 1.0), wins[i].family->why,
                       cli_family_allow(wins[i].family, allow, sizeof allow));
    }
    ppl_search_free(&r);
    return PPL_OK;
}
