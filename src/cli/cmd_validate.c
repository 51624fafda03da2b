/*
 * cmd_validate.c - `parplan validate`: predict measured runs, report the error;
 * with --fit, fit the efficiency constants to them first; with --cv K or --cv
 * family, predict each run with constants fitted on the other folds (K-fold, or
 * leave one source family out) and report the error per family.
 *
 * The predictions, the fit and its sensitivity ranges, and the cross-validation
 * are the library's (studies/calibrate.h); this file reads the runs, calls it and
 * renders the table, the JSON document or the constants file.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cli.h"

/* The table's "predicted configuration": "tp8 pp12 dp16 vp8 mbs1 z0 full". */
static void describe_short(const ppl_config *c, char *buf, size_t size)
{
    char cp[32] = "", rc[32];
    if (c->cp > 1)
        snprintf(cp, sizeof cp, " cp%lld:%s", (long long)c->cp, ppl_cp_comm_name(c->cp_comm));
    snprintf(buf, size, "tp%lld pp%lld dp%lld%s vp%lld mbs%lld z%d %s%s%s", (long long)c->tp,
             (long long)c->pp, (long long)c->dp, cp, (long long)c->vp, (long long)c->mbs, c->zero,
             ppl_recompute_label(c, rc, sizeof rc), c->sequence_parallel ? " sp" : "",
             c->flash_attention ? " flash" : "");
}

/* The fit's progress, on a terminal, as a line on stderr per round: "parplan: fit
 * round 2: objective 0.0426", prefixed with "cv fold F/K: " within
 * cross-validation; nothing when stderr is not a terminal. */
static void fit_progress(void *ctx, const char *what, int round, double objective)
{
    (void)ctx;
    if (!isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "parplan: %s%sfit round %d: objective %.4f\n", what, what[0] ? ": " : "", round,
            objective);
}

/* Family g's summary; returns its name (that of its first run). */
static const char *family_summary(const ppl_run *runs, const ppl_calib_prediction *pred, size_t n,
                                  const int *family, int g, ppl_calib_summary *s)
{
    ppl_calib_summarize_group(runs, pred, n, family, g, s);
    size_t first = 0;
    while (family[first] != g)
        first++;
    return runs[first].family;
}

/* Cross-validation's error per source family, beside the aggregate. */
static json_t *cv_json(const ppl_run *runs, const ppl_calib_prediction *pred, size_t n,
                       const int *family, int nfamilies, bool by_family, int folds,
                       const ppl_calib_summary *all)
{
    json_t *cv = json_object(), *list = json_array();
    json_object_set_new(cv, "by", json_string(by_family ? "family" : "k-fold"));
    json_object_set_new(cv, "folds", json_integer(folds));
    cli_summary_json(cv, all, false);
    for (int g = 0; g < nfamilies; g++) {
        ppl_calib_summary s;
        json_t *f = json_object();
        json_object_set_new(f, "family",
                            json_string(family_summary(runs, pred, n, family, g, &s)));
        cli_summary_json(f, &s, true);
        json_array_append_new(list, f);
    }
    json_object_set_new(cv, "families", list);
    return cv;
}

static void render_families(ppl_buf *out, const ppl_run *runs, const ppl_calib_prediction *pred,
                            size_t n, const int *family, int nfamilies, bool by_family)
{
    ppl_table t;
    cli_families_table_init(&t);
    for (int g = 0; g < nfamilies; g++) {
        ppl_calib_summary s;
        const char *name = family_summary(runs, pred, n, family, g, &s);
        cli_families_table_row(&t, name, &s);
    }
    ppl_buf_printf(out, "\n%s, by source family:\n",
                   by_family ? "each family predicted with constants fitted on the others"
                             : "k-fold errors");
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
}

/* The spanned settings as the table's configuration names them. */
static const char *const spanned_short[PPL_CALIB_SPANNED] = {"recompute", "sp", "zero", "flash",
                                                             "vp"};

/* The names of the spanned settings in mask, as a JSON array. */
static json_t *spanned_json(unsigned mask)
{
    json_t *list = json_array();
    for (size_t k = 0; k < PPL_CALIB_SPANNED; k++)
        if (mask & (1u << k))
            json_array_append_new(list, json_string(ppl_calib_spanned[k]));
    return list;
}

/* After the tuned configuration: " / unsaid: recompute zero vp, kept: vp" (the
 * settings the run leaves unsaid, and those its defaults end keeps), or
 * " / unsaid: zero, no default runs". */
static void span_note(const ppl_calib_prediction *p, char *buf, size_t size)
{
    size_t len = 0;
    len += (size_t)snprintf(buf, size, " / unsaid:");
    for (size_t k = 0; k < PPL_CALIB_SPANNED && len < size; k++)
        if (p->unstated & (1u << k))
            len += (size_t)snprintf(buf + len, size - len, " %s", spanned_short[k]);
    if (len < size && !p->ranged)
        len += (size_t)snprintf(buf + len, size - len, ", no default runs");
    else if (len < size) {
        len += (size_t)snprintf(buf + len, size - len, ", kept:");
        for (size_t k = 0; k < PPL_CALIB_SPANNED && len < size; k++)
            if (p->defaults_kept & (1u << k))
                len += (size_t)snprintf(buf + len, size - len, " %s", spanned_short[k]);
    }
}

/* A prediction's span: the settings the run leaves unsaid, and the estimate
 * under its software's defaults (null when no default could have run). */
static json_t *span_json(const ppl_run *r, const ppl_calib_prediction *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "unsaid", spanned_json(p->unstated));
    json_object_set_new(o, "defaults_kept", spanned_json(p->ranged ? p->defaults_kept : 0));
    json_object_set_new(o, "low_s", ppl_json_real(p->lo_s));
    json_object_set_new(o, "high_s", ppl_json_real(p->hi_s));
    json_object_set_new(o, "defaults",
                        p->ranged ? ppl_estimate_json(&p->unasked, &r->model) : json_null());
    return o;
}

ppl_status cmd_validate(cli *c)
{
    const ppl_args *a = c->args;
    ppl_run *runs;
    size_t n;
    /* a serving runs file goes its own way */
    ppl_serve_run *served;
    ppl_status st = ppl_serve_runs_load(a->runs, &c->diag, &served, &n, &c->err);
    if (st != PPL_OK)
        return st;
    if (n > 0)
        return cli_validate_serve(c, served, n);
    st = ppl_runs_load(a->runs, &c->diag, &runs, &n, &c->err);
    if (st != PPL_OK)
        return st;
    ppl_calib_prediction *pred = calloc(n ? n : 1, sizeof *pred);
    if (!pred) {
        ppl_runs_free(runs);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    /* the committed constants, or those of --constants; a fit starts from them */
    ppl_constants params = c->constants;
    bool by_family = a->cv_folds == PPL_CV_FAMILY;
    int folds = a->cv_folds > 0 ? (int)a->cv_folds : 0;
    if (folds > 0 && (size_t)folds > n)
        folds = (int)n;
    ppl_calib_fit_opts fit_opts = {.progress = fit_progress};
    ppl_calib_fit_record record = {0};
    if ((a->fit || a->cv_folds != 0) && !a->constants_path)
        params = *ppl_constants_start();
    /* cross-validation reports by family, and leaves them out with --cv family */
    int *family = NULL, nfamilies = 0;
    if (a->cv_folds != 0 && (family = malloc(n * sizeof *family))) /* n > 0: see runs.h */
        nfamilies = ppl_calib_families(runs, n, family);
    if (by_family)
        folds = nfamilies;
    if (a->cv_folds != 0 && !family)
        st = ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    else if (by_family)
        st = ppl_calib_cv_groups(runs, n, family, nfamilies, &params, &fit_opts, pred, &c->err);
    else if (folds > 0)
        st = ppl_calib_cv(runs, n, folds, &params, &fit_opts, pred, &c->err);
    else if (a->fit)
        st = ppl_calib_fit(runs, n, &params, &fit_opts, &record, &c->err);
    if (st != PPL_OK) {
        ppl_calib_fit_record_free(&record);
        free(family);
        free(pred);
        ppl_runs_free(runs);
        return st;
    }
    if (folds == 0) {
        cli_progress prog = {.what = "validate: predicting the runs"};
        for (size_t i = 0; i < n; i++) {
            cli_progress_show(&prog, (double)i / (double)n);
            ppl_calib_predict(&runs[i], &params, &pred[i]);
        }
        cli_progress_done(&prog);
    }
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
    const ppl_calib_range *ranges = record.ranges;

    json_t *doc = NULL, *list = NULL;
    ppl_table t;
    ppl_table_init(&t, 9, "lrrrrrrll");
    if (a->json) {
        doc = ppl_json_document();
        list = json_array();
        json_object_set_new(doc, "runs_file", json_string(a->runs));
        json_object_set_new(doc, "results", list);
    } else {
        static const char *const header[] = {
            "run",       "measured", "predicted",
            "error",     "span (s)", "TFLOP/s",
            "predicted", "stack",    "predicted configuration (tuned)"};
        ppl_table_row(&t, header);
    }
    size_t assumed = 0, over = 0, spans = 0;
    for (size_t i = 0; i < n; i++) {
        const ppl_run *r = &runs[i];
        const ppl_calib_prediction *p = &pred[i];
        const ppl_estimate *best = &p->best;
        double error = ppl_calib_error(r, p);
        if (list) {
            json_t *e = json_object(), *meas = json_object();
            json_object_set_new(e, "id", json_string(r->id));
            json_object_set_new(e, "family", json_string(r->family));
            json_object_set_new(e, "stack", json_string(ppl_stack_name(r->stack)));
            json_object_set_new(e, "stack_assumed", json_boolean(r->stack_assumed));
            if (r->software[0])
                json_object_set_new(e, "software", json_string(r->software));
            json_object_set_new(e, "predicted",
                                p->ok ? ppl_estimate_json(best, &r->model) : json_null());
            json_object_set_new(e, "predicted_step_time_s",
                                p->ok ? ppl_json_real(p->step_time_s) : json_null());
            json_object_set_new(e, "span", p->ok ? span_json(r, p) : json_null());
            if (!p->ok)
                json_object_set_new(e, "error_message", json_string(p->why));
            if (r->step_time_s > 0)
                json_object_set_new(meas, "step_time_s", ppl_json_real(r->step_time_s));
            if (r->tflops_per_gpu > 0)
                json_object_set_new(meas, "tflops_per_gpu", ppl_json_real(r->tflops_per_gpu));
            if (r->mfu > 0)
                json_object_set_new(meas, "mfu", ppl_json_real(r->mfu));
            if (r->memory_bytes > 0)
                json_object_set_new(meas, "memory_bytes", ppl_json_real(r->memory_bytes));
            json_object_set_new(e, "measured", meas);
            json_object_set_new(e, "error", isfinite(error) ? ppl_json_real(error) : json_null());
            if (p->fold > 0)
                json_object_set_new(e, "fold", json_integer(p->fold));
            json_object_set_new(e, "over_memory", json_boolean(p->over_memory));
            json_object_set_new(e, "searched", json_integer((json_int_t)p->searched));
            json_array_append_new(list, e);
            continue;
        }
        char meas[32], prd[32], errs[32], cfg[PPL_ERROR_MSG_MAX + 16], tf[32], tfp[48];
        char spn[48] = "-";
        snprintf(meas, sizeof meas, r->step_time_s > 0 ? "%.3f s" : "-", r->step_time_s);
        snprintf(tf, sizeof tf, r->tflops_per_gpu > 0 ? "%.0f" : "-", r->tflops_per_gpu);
        if (p->ok) {
            snprintf(prd, sizeof prd, "%.3f s", p->step_time_s);
            snprintf(errs, sizeof errs, isfinite(error) ? "%+.1f%%" : "-", 100.0 * error);
            describe_short(&best->config, cfg, sizeof cfg);
            if (p->unstated) {
                spans += 1;
                snprintf(spn, sizeof spn, p->lo_s < p->hi_s ? "%.3f-%.3f" : "-", p->lo_s, p->hi_s);
                span_note(p, cfg + strlen(cfg), sizeof cfg - strlen(cfg));
            }
            if (p->over_memory) {
                size_t len = strlen(cfg);
                snprintf(cfg + len, sizeof cfg - len, " (memory +%.0f%%)",
                         100.0 * PPL_CALIB_MEMORY_UNCERTAINTY);
                over += 1;
            }
            /* at the time scored: a span's centre has no one configuration's
             * hardware FLOPs */
            if (p->lo_s < p->hi_s)
                snprintf(tfp, sizeof tfp, "%.0f",
                         best->model_tflops_per_gpu * best->step_time_s / p->step_time_s);
            else
                snprintf(tfp, sizeof tfp, "%.0f (%.0f hw)", best->model_tflops_per_gpu,
                         best->hardware_tflops_per_gpu);
        } else {
            snprintf(prd, sizeof prd, "-");
            snprintf(errs, sizeof errs, "-");
            snprintf(tfp, sizeof tfp, "-");
            snprintf(cfg, sizeof cfg, "not predicted: %s", p->why);
        }
        char stack[48];
        snprintf(stack, sizeof stack, "%s%s", ppl_stack_name(r->stack),
                 r->stack_assumed ? "*" : "");
        assumed += r->stack_assumed;
        const char *row[9] = {r->id, meas, prd, errs, spn, tf, tfp, stack, cfg};
        ppl_table_row(&t, row);
    }
    ppl_calib_summary sum;
    ppl_calib_summarize(runs, pred, n, &sum);
    const size_t used = sum.runs, failed = sum.not_predicted;
    const double mean = sum.mean_abs, worst = sum.max_abs, share = sum.share_within_10;
    const char *how = folds > 0 ? "cross-validated" : a->fit ? "fitted in sample" : "as committed";
    if (doc) {
        json_t *agg = json_object();
        cli_summary_json(agg, &sum, true);
        json_object_set_new(agg, "constants", json_string(how));
        if (folds > 0)
            json_object_set_new(agg, "folds", json_integer(folds));
        json_object_set_new(doc, "aggregate", agg);
        if (folds > 0)
            json_object_set_new(doc, "cv", cv_json(runs, pred, n, family, nfamilies, by_family,
                                                   folds, &sum));
        if (a->fit && folds == 0) {
            /* a constants file (--constants): the values and how they were fitted */
            json_object_set_new(doc, "constants", ppl_constants_json(&params));
            json_t *rec = json_object(), *pins = json_object();
            json_object_set_new(rec, "runs", json_string(a->runs));
            /* the runs file was just read: a failure here would leave the offset basis */
            char runs_hash[17];
            ppl_calib_file_hash(a->runs, runs_hash, NULL);
            json_object_set_new(rec, "runs_fnv1a64", json_string(runs_hash));
            json_object_set_new(rec, "start",
                                json_string(a->constants_path ? a->constants_path : "hand-set"));
            /* what ppl_calib_fit does (studies/calibrate.h) */
            json_object_set_new(rec, "optimiser",
                                json_sprintf("coordinate descent, multiplicative steps 0.3 "
                                             "halving to 0.005, objective the mean "
                                             "absolute error, configurations re-chosen in each "
                                             "of %d rounds",
                                             record.rounds));
            json_object_set_new(rec, "mean_abs_error", ppl_json_real(mean));
            for (size_t k = 0; k < ninfo; k++) {
                json_t *r = json_array();
                json_array_append_new(r, ppl_json_real(ranges[k].lo));
                json_array_append_new(r, ppl_json_real(ranges[k].hi));
                json_object_set_new(pins, info[k].name, r);
            }
            json_object_set_new(rec, "within_half_a_point", pins);
            json_object_set_new(doc, "fit", rec);
        }
        st = cli_emit_json(c, doc);
    } else {
        ppl_table_render(&t, &c->out, "");
        ppl_buf_printf(&c->out, "\nstep time over %zu runs (%s", used, how);
        if (folds > 0)
            ppl_buf_printf(&c->out, by_family ? ", leaving out each of %d source families"
                                              : ", %d folds", folds);
        ppl_buf_printf(&c->out, "): mean absolute error %.1f%%, max %.1f%%, %.0f%% within 10%%\n",
                       100.0 * mean, 100.0 * worst, 100.0 * share);
        if (failed > 0)
            ppl_buf_printf(&c->out, "not predicted: %zu run%s\n", failed, failed == 1 ? "" : "s");
        if (folds > 0)
            render_families(&c->out, runs, pred, n, family, nfamilies, by_family);
        if (over > 0)
            ppl_buf_printf(&c->out,
                           "(memory +%.0f%%): the model puts the configuration over the GPU's "
                           "memory by less than its uncertainty; taken as faster even when "
                           "ranked slower by the share it is over\n",
                           100.0 * PPL_CALIB_MEMORY_UNCERTAINTY);
        if (spans > 0)
            ppl_buf_printf(&c->out,
                           "span: the run leaves settings unsaid; they were searched (tuned) "
                           "and set as its software sets them unasked (kept), as many as can "
                           "run; the prediction is the span's centre\n");
        if (assumed > 0)
            ppl_buf_printf(&c->out,
                           "* stack assumed: the run names no software parplan knows (flash "
                           "attention taken as megatron-core, none as megatron-lm-2021)\n");
        if (a->fit && folds == 0) {
            ppl_buf_printf(&c->out, "\nfitted constants (validate --fit --json writes a "
                                    "constants file for --constants):\n");
            ppl_buf_printf(&c->out, "  %-18s %10s  %-21s  %s\n", "constant", "value",
                           "range (+0.5 point)", "unit");
            for (size_t k = 0; k < ninfo; k++) {
                const ppl_constant_info *f = &info[k];
                bool loose = ppl_calib_loose(f, *ppl_constant_at(&params, f), &ranges[k]);
                char range[48];
                snprintf(range, sizeof range, "%.4g..%.4g", ranges[k].lo, ranges[k].hi);
                ppl_buf_printf(&c->out, "  %-18s %10.4g  %-21s  %s%s\n", f->name,
                               *ppl_constant_at(&params, f), range, f->unit,
                               loose ? "  (not pinned down by these runs)" : "");
            }
        }
    }
    ppl_table_free(&t);
    ppl_calib_fit_record_free(&record);
    free(family);
    free(pred);
    ppl_runs_free(runs);
    if (st == PPL_OK && failed > 0) {
        /* SPEC 1.1: every run is reported; exit 1 when one was not predicted */
        ppl_error_set(&c->err, PPL_INFEASIBLE, "", "", "%zu of %zu runs not predicted", failed, n);
        return PPL_INFEASIBLE;
    }
    return st;
}
