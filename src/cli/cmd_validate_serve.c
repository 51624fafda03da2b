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

typedef struct serve_summary {
    size_t runs, not_predicted;
    double mean_abs, max_abs, within_10;
} serve_summary;

/* The summary of the runs whose family is `family` (NULL: every run). */
static void summarize(const ppl_serve_run *runs, const ppl_serve_prediction *p, size_t n,
                      const char *family, serve_summary *s)
{
    memset(s, 0, sizeof *s);
    size_t within = 0;
    for (size_t i = 0; i < n; i++) {
        if (family && strcmp(runs[i].family, family) != 0)
            continue;
        if (!p[i].predicted) {
            s->not_predicted++;
            continue;
        }
        const double e = fabs(p[i].error);
        s->runs++;
        s->mean_abs += e;
        s->max_abs = fmax(s->max_abs, e);
        within += e <= 0.10;
    }
    if (s->runs) {
        s->mean_abs /= (double)s->runs;
        s->within_10 = (double)within / (double)s->runs;
    }
}

static void summary_json(json_t *o, const serve_summary *s)
{
    json_object_set_new(o, "runs", json_integer((json_int_t)s->runs));
    json_object_set_new(o, "not_predicted", json_integer((json_int_t)s->not_predicted));
    json_object_set_new(o, "mean_abs_error", ppl_json_real(s->mean_abs));
    json_object_set_new(o, "max_abs_error", ppl_json_real(s->max_abs));
    json_object_set_new(o, "within_10_percent", ppl_json_real(s->within_10));
}

/* Whether run i is the first of its family. */
static bool first_of_family(const ppl_serve_run *runs, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(runs[j].family, runs[i].family) == 0)
            return false;
    return true;
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
    serve_summary all;
    summarize(runs, p, n, NULL, &all);
    ppl_status st;
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array(), *agg = json_object(),
               *fams = json_array();
        json_object_set_new(doc, "runs_file", json_string(a->runs));
        json_object_set_new(doc, "kind", json_string("serve"));
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_object(), *m = json_object(), *q = json_object();
            json_object_set_new(o, "id", json_string(runs[i].id));
            json_object_set_new(o, "family", json_string(runs[i].family));
            json_object_set_new(m, "output_tokens_per_s", ppl_json_real(runs[i].tokens_per_s));
            json_object_set_new(o, "measured", m);
            if (p[i].predicted) {
                json_object_set_new(q, "output_tokens_per_s", ppl_json_real(p[i].tokens_per_s));
                json_object_set_new(q, "batch", json_integer(p[i].batch));
                json_object_set_new(q, "decode_bound",
                                    json_string(p[i].memory_bound ? "memory" : "compute"));
                json_object_set_new(o, "predicted", q);
                json_object_set_new(o, "error", ppl_json_real(p[i].error));
            } else {
                json_decref(q);
                json_object_set_new(o, "predicted", json_null());
                json_object_set_new(o, "error", json_null());
            }
            json_array_append_new(list, o);
        }
        json_object_set_new(doc, "results", list);
        summary_json(agg, &all);
        for (size_t i = 0; i < n; i++) {
            if (!first_of_family(runs, i))
                continue;
            serve_summary s;
            summarize(runs, p, n, runs[i].family, &s);
            json_t *f = json_object();
            json_object_set_new(f, "family", json_string(runs[i].family));
            summary_json(f, &s);
            json_array_append_new(fams, f);
        }
        json_object_set_new(agg, "families", fams);
        json_object_set_new(doc, "aggregate", agg);
        st = cli_emit_json(c, doc);
    } else {
        ppl_table t;
        ppl_table_init(&t, 7, "lrrrrrl");
        static const char *const header[] = {"run", "measured", "predicted", "error",
                                             "tp",  "batch",    "bound"};
        ppl_table_row(&t, header);
        for (size_t i = 0; i < n; i++) {
            char meas[32], pred[32], err[32], tp[16], batch[16];
            snprintf(meas, sizeof meas, "%.0f tok/s", runs[i].tokens_per_s);
            snprintf(tp, sizeof tp, "%lld", (long long)runs[i].tp);
            snprintf(pred, sizeof pred, p[i].predicted ? "%.0f tok/s" : "-", p[i].tokens_per_s);
            snprintf(err, sizeof err, p[i].predicted ? "%+.1f%%" : "-", 100.0 * p[i].error);
            snprintf(batch, sizeof batch, p[i].predicted ? "%lld" : "-", (long long)p[i].batch);
            const char *row[7] = {runs[i].id,
                                  meas,
                                  pred,
                                  err,
                                  tp,
                                  batch,
                                  !p[i].predicted     ? "does not fit"
                                  : p[i].memory_bound ? "memory"
                                                      : "compute"};
            ppl_table_row(&t, row);
        }
        ppl_table_render(&t, &c->out, "");
        ppl_table_free(&t);
        ppl_buf_printf(&c->out,
                       "\noutput tokens a second over %zu serving runs (the engine model's best "
                       "batch; nothing fitted): mean absolute error %.1f%%, max %.1f%%, %.0f%% "
                       "within 10%%\n",
                       all.runs, 100.0 * all.mean_abs, 100.0 * all.max_abs, 100.0 * all.within_10);
        if (all.not_predicted > 0)
            ppl_buf_printf(&c->out, "not predicted: %zu run%s\n", all.not_predicted,
                           all.not_predicted == 1 ? "" : "s");
        ppl_table_init(&t, 5, "lrrrr");
        static const char *const fh[] = {"source family", "runs", "mean abs. error", "max",
                                         "within 10%"};
        ppl_table_row(&t, fh);
        for (size_t i = 0; i < n; i++) {
            if (!first_of_family(runs, i))
                continue;
            serve_summary s;
            summarize(runs, p, n, runs[i].family, &s);
            char nr[24], mean[24], max[24], within[24];
            snprintf(nr, sizeof nr, "%zu", s.runs);
            snprintf(mean, sizeof mean, s.runs ? "%.1f%%" : "-", 100.0 * s.mean_abs);
            snprintf(max, sizeof max, s.runs ? "%.1f%%" : "-", 100.0 * s.max_abs);
            snprintf(within, sizeof within, s.runs ? "%.0f%%" : "-", 100.0 * s.within_10);
            const char *row[5] = {runs[i].family, nr, mean, max, within};
            ppl_table_row(&t, row);
        }
        ppl_buf_printf(&c->out, "\nby source family:\n");
        ppl_table_render(&t, &c->out, "");
        ppl_table_free(&t);
        st = PPL_OK;
    }
    const size_t failed = all.not_predicted;
    free(p);
    ppl_serve_runs_free(runs);
    if (st == PPL_OK && failed > 0)
        return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "", "%zu of %zu runs not predicted",
                             failed, n);
    return st;
}
