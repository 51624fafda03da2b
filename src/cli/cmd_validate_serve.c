/*
 * cmd_validate_serve.c - `parplan validate` on a serving runs file: each
 * measured engine run against the engine model's best throughput, the error
 * overall and by source family (studies/serveruns.h).  Nothing is fitted.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The summary of the runs of one kind (RL steps or engine runs) whose family is
 * `family` (NULL: every one). */
static void summarize(const ppl_serve_run *runs, const ppl_serve_prediction *p, size_t n, bool rl,
                      const char *family, ppl_calib_summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].rl != rl || (family && strcmp(runs[i].family, family) != 0))
            continue;
        if (!p[i].predicted) {
            s->not_predicted++;
            continue;
        }
        const double e = fabs(p[i].error);
        s->runs++;
        s->mean_abs += e;
        s->max_abs = fmax(s->max_abs, e);
        s->within_10 += e <= 0.10;
    }
    if (s->runs) {
        s->mean_abs /= (double)s->runs;
        s->share_within_10 = (double)s->within_10 / (double)s->runs;
    }
}

/* Whether run i is the first of its kind and family. */
static bool first_of_family(const ppl_serve_run *runs, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (runs[j].rl == runs[i].rl && strcmp(runs[j].family, runs[i].family) == 0)
            return false;
    return true;
}

/* The aggregate of one kind, with its families; null when the file has none. */
static json_t *aggregate_json(const ppl_serve_run *runs, const ppl_serve_prediction *p, size_t n,
                              bool rl)
{
    ppl_calib_summary all;
    summarize(runs, p, n, rl, NULL, &all);
    if (all.runs + all.not_predicted == 0)
        return json_null();
    json_t *agg = json_object(), *fams = json_array();
    cli_summary_json(agg, &all, true);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].rl != rl || !first_of_family(runs, i))
            continue;
        ppl_calib_summary s;
        summarize(runs, p, n, rl, runs[i].family, &s);
        json_t *f = json_object();
        json_object_set_new(f, "family", json_string(runs[i].family));
        cli_summary_json(f, &s, true);
        json_array_append_new(fams, f);
    }
    json_object_set_new(agg, "families", fams);
    return agg;
}

/* One run's result in --json. */
static json_t *result_json(const ppl_serve_run *r, const ppl_serve_prediction *p)
{
    json_t *o = json_object(), *m = json_object();
    json_object_set_new(o, "id", json_string(r->id));
    json_object_set_new(o, "kind", json_string(r->rl ? "rl" : "serve"));
    json_object_set_new(o, "family", json_string(r->family));
    if (!r->rl)
        json_object_set_new(o, "phase", json_string(ppl_serve_phase_names[r->phase]));
    if (r->rl)
        json_object_set_new(m, "step_time_s", ppl_json_real(r->step_time_s));
    else
        json_object_set_new(m, ppl_serve_phase_figure(r->phase), ppl_json_real(r->tokens_per_s));
    json_object_set_new(o, "measured", m);
    if (!p->predicted) {
        json_object_set_new(o, "predicted", json_null());
        json_object_set_new(o, "error", json_null());
        json_object_set_new(o, "why", json_string(p->why));
        return o;
    }
    json_t *q = json_object();
    if (r->rl) {
        const ppl_rl_plan *pl = &p->plan;
        json_object_set_new(q, "step_time_s", ppl_json_real(pl->step_s));
        json_object_set_new(q, "placement", json_string(ppl_rl_placement_name(pl->placement)));
        json_object_set_new(q, "pipeline", json_string(ppl_rl_pipeline_name(pl->pipeline)));
        json_object_set_new(q, "rollout_gpus", json_integer(pl->rollout_gpus));
        json_object_set_new(q, "train_gpus", json_integer(pl->train_gpus));
        json_object_set_new(q, "engine_tp", json_integer(pl->rollout.engine.tp));
        json_object_set_new(q, "rollout_s", ppl_json_real(pl->rollout.time_s));
        json_object_set_new(q, "train_s", ppl_json_real(pl->train_s));
        json_object_set_new(q, "trainer", ppl_config_json(&pl->train.config, &r->model));
    } else {
        json_object_set_new(q, ppl_serve_phase_figure(r->phase), ppl_json_real(p->tokens_per_s));
        json_object_set_new(q, "batch", json_integer(p->batch));
        json_object_set_new(q, "decode_bound",
                            r->phase == PPL_SERVE_PREFILL
                                ? json_null()
                                : json_string(p->memory_bound ? "memory" : "compute"));
    }
    json_object_set_new(o, "predicted", q);
    json_object_set_new(o, "error", ppl_json_real(p->error));
    return o;
}

/* The summary line and the families' table of one kind, in text. */
static void render_kind(ppl_buf *out, const ppl_serve_run *runs, const ppl_serve_prediction *p,
                        size_t n, bool rl)
{
    ppl_calib_summary all;
    summarize(runs, p, n, rl, NULL, &all);
    ppl_buf_printf(out,
                   rl ? "\nstep time over %zu RL steps (parplan rl's fastest plan under the "
                        "stated pins; nothing fitted): mean absolute error %.1f%%, max %.1f%%, "
                        "%.0f%% within 10%%\n"
                      : "\ntokens a second over %zu serving runs (a replica's output under load "
                        "at the engine model's best batch, or a GPU's in one phase alone at its "
                        "batch; nothing fitted): mean absolute error %.1f%%, max %.1f%%, %.0f%% "
                        "within 10%%\n",
                   all.runs, 100.0 * all.mean_abs, 100.0 * all.max_abs,
                   100.0 * all.share_within_10);
    if (all.not_predicted > 0)
        ppl_buf_printf(out, "not predicted: %zu run%s\n", all.not_predicted,
                       all.not_predicted == 1 ? "" : "s");
    ppl_table t;
    cli_families_table_init(&t);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].rl != rl || !first_of_family(runs, i))
            continue;
        ppl_calib_summary s;
        summarize(runs, p, n, rl, runs[i].family, &s);
        cli_families_table_row(&t, runs[i].family, &s);
    }
    ppl_buf_printf(out, "by source family:\n");
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
}

ppl_status cli_validate_serve(cli *c, ppl_serve_run *runs, size_t n)
{
    const ppl_args *a = c->args;
    if (a->fit || a->cv_folds != 0 || a->constants_path) {
        ppl_serve_runs_free(runs);
        return ppl_error_set(&c->err, PPL_EUSAGE, "",
                             a->fit             ? "--fit"
                             : a->cv_folds != 0 ? "--cv"
                                                : "--constants",
                             "%s is a serving runs file: the engine model has no fitted constant "
                             "to fit, cross-validate or replace",
                             a->runs);
    }
    ppl_serve_prediction *p = calloc(n, sizeof *p);
    if (!p) {
        ppl_serve_runs_free(runs);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        ppl_serve_run_predict(&runs[i], &p[i]);
    size_t nrl = 0, failed = 0;
    for (size_t i = 0; i < n; i++)
        nrl += runs[i].rl, failed += !p[i].predicted;
    ppl_status st;
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *agg = json_object();
        json_object_set_new(doc, "runs_file", json_string(a->runs));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(list, result_json(&runs[i], &p[i]));
        json_object_set_new(doc, "results", list);
        json_object_set_new(agg, "serve", aggregate_json(runs, p, n, false));
        json_object_set_new(agg, "rl", aggregate_json(runs, p, n, true));
        json_object_set_new(doc, "aggregate", agg);
        st = cli_emit_json(c, doc);
    } else {
        for (int rl = 0; rl < 2; rl++) {
            if ((rl ? nrl : n - nrl) == 0)
                continue;
            ppl_table t;
            ppl_table_init(&t, 7, "lrrrrrl");
            static const char *const hs[] = {"serving run", "measured", "predicted", "error",
                                             "tp",          "batch",    "bound"};
            static const char *const hr[] = {"RL step",         "measured", "predicted", "error",
                                             "GPUs roll/train", "engine",   "placement"};
            ppl_table_row(&t, rl ? hr : hs);
            for (size_t i = 0; i < n; i++) {
                if (runs[i].rl != (rl == 1))
                    continue;
                const ppl_serve_prediction *q = &p[i];
                char meas[32], pred[32], err[32], c4[32], c5[32], c6[64];
                if (rl) {
                    snprintf(meas, sizeof meas, "%.1f s", runs[i].step_time_s);
                    snprintf(pred, sizeof pred, q->predicted ? "%.1f s" : "-", q->value);
                    snprintf(c4, sizeof c4, q->predicted ? "%lld/%lld" : "-",
                             (long long)q->plan.rollout_gpus, (long long)q->plan.train_gpus);
                    snprintf(c5, sizeof c5, q->predicted ? "tp%lld b%lld" : "-",
                             (long long)q->plan.rollout.engine.tp,
                             (long long)q->plan.rollout.batch);
                    snprintf(c6, sizeof c6, "%s",
                             !q->predicted                           ? q->why
                             : q->plan.placement == PPL_RL_COLOCATED ? "colocated"
                             : q->plan.pipeline == PPL_RL_ASYNC ? "disaggregated, one-step-async"
                                                                : "disaggregated, sync");
                } else {
                    snprintf(meas, sizeof meas, "%.0f tok/s", runs[i].tokens_per_s);
                    snprintf(pred, sizeof pred, q->predicted ? "%.0f tok/s" : "-", q->value);
                    if (runs[i].ep > 0)
                        snprintf(c4, sizeof c4, "%lld ep%lld", (long long)runs[i].tp,
                                 (long long)runs[i].ep);
                    else
                        snprintf(c4, sizeof c4, "%lld", (long long)runs[i].tp);
                    snprintf(c5, sizeof c5, q->predicted ? "%lld" : "-", (long long)q->batch);
                    snprintf(c6, sizeof c6, "%s",
                             !q->predicted                        ? "does not fit"
                             : runs[i].phase == PPL_SERVE_PREFILL ? "prefill"
                             : q->memory_bound                    ? "memory"
                                                                  : "compute");
                }
                snprintf(err, sizeof err, q->predicted ? "%+.1f%%" : "-", 100.0 * q->error);
                const char *row[7] = {runs[i].id, meas, pred, err, c4, c5, c6};
                ppl_table_row(&t, row);
            }
            ppl_buf_printf(&c->out, rl && nrl < n ? "\n" : "");
            ppl_table_render(&t, &c->out, "");
            ppl_table_free(&t);
            render_kind(&c->out, runs, p, n, rl == 1);
        }
        st = PPL_OK;
    }
    free(p);
    ppl_serve_runs_free(runs);
    if (st == PPL_OK && failed > 0)
        return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "", "%zu of %zu runs not predicted",
                             failed, n);
    return st;
}
