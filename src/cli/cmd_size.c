/*
 * cmd_size.c - `parplan size`: the fewest GPUs that train N tokens in D days
 * (or, with --fit-only, that hold one replica), as text or JSON.
 *
 * The search over GPU counts, the time to train, the GPU-hours and the cost are
 * the library's (studies/sizing.h); this file parses, calls and renders.
 */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

ppl_status cmd_size(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_status st;
    if ((st = cli_load(c, &model, &topo)) != PPL_OK)
        return st;
    if (a->pins.global_batch == PPL_UNSET)
        cli_note_batch(ppl_default_global_batch(&model), &model);
    ppl_eval_ctx ctx;
    cli_eval_ctx(c, &ctx, &model, &topo);
    ppl_goodput_opts gopts;
    cli_goodput_opts(a, &gopts);
    ppl_sizing_opts opts = {.goodput = &gopts,
                            .pins = &a->pins,
                            .search = {.objective = a->objective,
                                       .within = a->within,
                                       .allow_tp_across_servers = a->allow_tp_across_servers},
                            .fit_only = a->fit_only,
                            .tokens = a->tokens,
                            .days = a->days,
                            .gpu_hour_price = a->gpu_hour_price};
    /* on a terminal: each GPU count's search, as it runs */
    cli_progress prog = {.what = "size: searching a GPU count"};
    opts.search.progress = cli_progress_show;
    opts.search.progress_ctx = &prog;
    ppl_sizing r;
    st = ppl_size(&ctx, &opts, &r, &c->err);
    cli_progress_done(&prog);
    if (st != PPL_OK)
        return st;
    const ppl_estimate *best = &r.best;
    if (a->json) {
        json_t *doc = ppl_json_document();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "gpus", json_integer(r.gpus));
        json_object_set_new(doc, "global_batch", json_integer(best->config.global_batch));
        json_object_set_new(doc, "global_batch_assumed", json_boolean(r.global_batch_assumed));
        if (!a->fit_only) {
            json_object_set_new(doc, "tokens", ppl_json_real(a->tokens));
            json_object_set_new(doc, "days", ppl_json_real(r.days));
            json_object_set_new(doc, "days_failure_free",
                                ppl_json_real(r.failure_free_s / 86400.0));
            json_object_set_new(doc, "goodput", ppl_json_real(r.goodput.goodput));
            json_object_set_new(doc, "checkpoint_interval_s", ppl_json_real(r.goodput.interval_s));
            json_object_set_new(doc, "spares", json_integer(r.goodput.spare_gpus));
            if (r.goodput.spare_gpus > 0) {
                json_object_set_new(doc, "spare_free", ppl_json_real(r.goodput.spare_free));
                json_object_set_new(doc, "days_without_spares",
                                    ppl_json_real(r.seconds_without_spares / 86400.0));
            }
            json_object_set_new(doc, "days_allowed", ppl_json_real(a->days));
            json_object_set_new(doc, "gpu_hours", ppl_json_real(r.gpu_hours));
            if (a->gpu_hour_price > 0)
                json_object_set_new(doc, "cost", ppl_json_real(r.cost));
        }
        json_object_set_new(doc, "result", ppl_estimate_json(best, &model));
        json_object_set_new(doc, "search", ppl_search_totals_json(&r.search, a->timing));
        return cli_emit_json(c, doc);
    }
    char desc[512];
    ppl_config_describe(&best->config, desc, sizeof desc);
    char batch_note[96] = "";
    if (r.global_batch_assumed)
        snprintf(batch_note, sizeof batch_note,
                 " at an assumed global batch of %lld (give --global-batch)",
                 (long long)best->config.global_batch);
    if (a->fit_only) {
        ppl_buf_printf(&c->out, "%lld GPUs hold one replica of %s on %s%s\n", (long long)r.gpus,
                       model.name, topo.name, batch_note);
    } else {
        char when[32];
        ppl_format_time(r.seconds, when, sizeof when);
        ppl_buf_printf(&c->out,
                       "%lld GPUs of %s train %s on %.4g tokens in %s (%.4g allowed)%s, "
                       "%.4g GPU-hours",
                       (long long)r.gpus, topo.name, model.name, a->tokens, when, a->days,
                       batch_note, r.gpu_hours);
        if (a->gpu_hour_price > 0)
            ppl_buf_printf(&c->out, ", cost %.4g", r.cost);
        ppl_buf_printf(&c->out, "\n");
        char free_s[32], every[32], stall[32], mtbf[32], bytes[32];
        ppl_format_time(r.failure_free_s, free_s, sizeof free_s);
        ppl_format_time(r.goodput.interval_s, every, sizeof every);
        ppl_format_time(r.goodput.checkpoint.stall_s, stall, sizeof stall);
        ppl_format_time(r.goodput.job_mtbf_s, mtbf, sizeof mtbf);
        ppl_format_bytes(r.goodput.checkpoint.bytes, bytes, sizeof bytes);
        ppl_buf_printf(&c->out,
                       "goodput  %.1f%% (%s failure-free; a failure every %s, a %s %s "
                       "checkpoint every %s stalling %s)\n",
                       100.0 * r.goodput.goodput, free_s, mtbf, bytes,
                       r.goodput.checkpoint.async ? "async" : "sync", every, stall);
        if (r.goodput.spare_gpus > 0) {
            /* the trade: GPUs bought against days saved */
            char without[32];
            ppl_format_time(r.seconds_without_spares, without, sizeof without);
            ppl_buf_printf(&c->out,
                           "spares   %lld GPUs (%.2f%% more) free at %.0f%% of server failures "
                           "(%.1f servers in repair on average): %s without them, %.3g days "
                           "saved\n",
                           (long long)r.goodput.spare_gpus,
                           100.0 * (double)r.goodput.spare_gpus / (double)r.gpus,
                           100.0 * r.goodput.spare_free, r.goodput.servers_in_repair, without,
                           (r.seconds_without_spares - r.seconds) / 86400.0);
        }
    }
    ppl_buf_printf(&c->out, "config   %s\n", desc);
    if (a->timing)
        ppl_buf_printf(&c->out, "search   %zu plans, %zu configurations costed in %.3f s\n",
                       r.search.plans, r.search.evaluated, r.search.seconds);
    ppl_buf_printf(&c->out, "\n");
    ppl_estimate_text(best, &c->out);
    return PPL_OK;
}
