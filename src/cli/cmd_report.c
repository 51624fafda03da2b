/*
 * cmd_report.c - `parplan report PLAN.json`: a plan's results costed again and
 * written as one HTML page (render/htmlreport.h); `plan --report FILE` calls
 * cli_write_report with the results it has.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

ppl_status cli_write_report(cli *c, const char *path, const ppl_report_page *page)
{
    ppl_buf html;
    ppl_buf_init(&html);
    ppl_status st = ppl_report_html(page, &html, &c->err);
    if (st == PPL_OK)
        st = ppl_output_write(path, &html, &c->err);
    ppl_buf_free(&html);
    return st;
}

/* The step times the plan document states for its results, NAN where it has none. */
static ppl_status stated_times(cli *c, const json_t *doc, const char *path, double **times,
                               size_t *n)
{
    const json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results) || json_array_size(results) == 0)
        return ppl_error_set(&c->err, PPL_EINPUT, path, "results",
                             "expected the non-empty array of a plan's results (the --json "
                             "output of 'parplan plan')");
    *n = json_array_size(results);
    *times = malloc(*n * sizeof **times);
    if (!*times)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    for (size_t i = 0; i < *n; i++) {
        const json_t *t = json_object_get(json_array_get(results, i), "step_time_s");
        (*times)[i] = json_is_number(t) ? json_number_value(t) : NAN;
    }
    return PPL_OK;
}

ppl_status cmd_report(cli *c)
{
    const ppl_args *a = c->args;
    /* PLAN.json or PLAN.json#K: the charts show result K */
    char path[CLI_PLAN_PATH_MAX];
    long focus;
    ppl_status st = cli_plan_spec(c, a->positional, path, &focus);
    if (st != PPL_OK)
        return st;
    double *stated = NULL;
    size_t n = 0;
    /* read once: every result is costed from the same document */
    json_t *doc = NULL;
    st = ppl_jr_read(path, &c->diag, &doc, &c->err); /* as every input file is read */
    if (st == PPL_OK && !json_is_object(doc))
        st = ppl_error_set(&c->err, PPL_EINPUT, path, "", "expected a plan document (an object)");
    if (st == PPL_OK)
        st = stated_times(c, doc, path, &stated, &n);
    if (st != PPL_OK) {
        json_decref(doc);
        return st;
    }
    if (n > (size_t)a->top)
        n = (size_t)a->top;
    if ((size_t)focus > n) {
        free(stated);
        json_decref(doc);
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "", "%s has %zu results%s, not %ld", path, n,
                             n < (size_t)a->top ? "" : " within --top", focus);
    }
    ppl_estimate *es = calloc(n, sizeof *es);
    /* the first result's model, topology and context serve the page */
    ppl_model *model = calloc(2, sizeof *model);
    ppl_topology *topo = calloc(2, sizeof *topo);
    if (!es || !model || !topo) {
        free(es), free(model), free(topo), free(stated);
        json_decref(doc);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    ppl_eval_ctx ctx;
    for (size_t i = 0; i < n && st == PPL_OK; i++) {
        size_t k = i == 0 ? 0 : 1;
        st = cli_cost_plan_doc(c, doc, path, (long)i + 1, &model[k], &topo[k], i == 0 ? &ctx : NULL,
                               &es[i]);
        if (st == PPL_OK && i > 0 &&
            (strcmp(model[1].name, model[0].name) != 0 || strcmp(topo[1].name, topo[0].name) != 0))
            st = ppl_error_set(&c->err, PPL_EINPUT, path, "results",
                               "result %zu is of %s on %s, result 1 of %s on %s: one plan's "
                               "results share a model and a topology",
                               i + 1, model[1].name, topo[1].name, model[0].name, topo[0].name);
        /* a file made with other flags (--memory-headroom, --constants) or
         * another version costs differently: say so, the page shows what is
         * costed now */
        if (st == PPL_OK && isfinite(stated[i]) &&
            fabs(es[i].step_time_s - stated[i]) > 1e-9 * fmax(1.0, stated[i]))
            ppl_diag_warn(&c->diag, path, "",
                          "result %zu costs %.6g s a step now, the file says %.6g s (made with "
                          "other flags or another parplan?)",
                          i + 1, es[i].step_time_s, stated[i]);
    }
    if (st == PPL_OK) {
        ppl_report_page page = {.model = &model[0],
                                .topo = &topo[0],
                                .memory = &ctx.memory,
                                .results = es,
                                .nresults = n,
                                .focus = (size_t)focus - 1,
                                .origin = path,
                                .gpu_hour_price = a->gpu_hour_price};
        st = ppl_report_html(&page, &c->out, &c->err);
    }
    free(es), free(model), free(topo), free(stated);
    json_decref(doc);
    return st;
}
