/*
 * htmlreport.c - a plan as one self-contained HTML page (render/htmlreport.h).
 *
 * The page is built from the estimates alone (and, for the stages the estimate
 * summarises by its worst, ppl_memory_stage and the step's timeline), so what it
 * shows is what `plan --json` says.  Its one inline script reads nothing and
 * sends nothing: it notes on <body data-check> whether every chart was laid out
 * with a size and no script error happened, for the browser test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/explain.h"
#include "render/htmlreport.h"
#include "cost/pipeline.h"
#include "render/report.h"
#include "render/svg.h"
#include "render/timeline.h"
#include "base/units.h"
#include "studies/whatif.h"

static const char page_css[] =
    ":root{color-scheme:light dark}\n"
    "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;"
    "background:#ffffff;color:#1f2328}\n"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
    "table{border-collapse:collapse;font-size:13px}\n"
    "td,th{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:right;white-space:nowrap}\n"
    "td.why{white-space:normal;font-size:12px}\n"
    "td.l,th.l{text-align:left}tr.best td{font-weight:bold}\n"
    ".note{color:#57606a;font-size:13px}\n"
    "figure{margin:12px 0}figcaption{font-size:13px;color:#57606a;max-width:900px}\n"
    "dl.kv{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:14px}\n"
    "dl.kv dt{color:#57606a}dl.kv dd{margin:0}\n"
    "@media (prefers-color-scheme: dark){body{background:#0d1117;color:#e6edf3}"
    "td,th{border-color:#30363d}.note,figcaption,dl.kv dt{color:#8b949e}}\n";

/* The self-check: every chart has a laid-out size, and no error was thrown. */
static const char page_script[] =
    "<script>\n"
    "var errors=0;window.addEventListener('error',function(){errors++;});\n"
    "window.addEventListener('load',function(){var s=document.querySelectorAll('svg.chart'),"
    "bad=0;for(var i=0;i<s.length;i++){var r=s[i].getBoundingClientRect();"
    "if(!(r.width>0&&r.height>0))bad++;}"
    "document.body.setAttribute('data-check',(bad||errors?'failed':'ok')+' charts='+s.length+"
    "' unsized='+bad+' errors='+errors);"
    "document.body.setAttribute('data-scheme',(matchMedia('(prefers-color-scheme: dark)')"
    ".matches?'dark ':'light ')+getComputedStyle(document.body).backgroundColor);});\n"
    "</script>\n";

static void esc(ppl_buf *out, const char *s)
{
    ppl_svg_escape(out, s);
}

/* <dd data-key=KEY data-value=V>TEXT</dd> */
static void kv(ppl_buf *out, const char *label, const char *key, double value, const char *text)
{
    ppl_buf_printf(out, "<dt>%s</dt><dd", label);
    if (key)
        ppl_buf_printf(out, " data-key=\"%s\" data-value=\"%.17g\"", key, value);
    ppl_buf_printf(out, ">");
    esc(out, text);
    ppl_buf_printf(out, "</dd>\n");
}

static void layout_text(const ppl_config *c, char *b, size_t n)
{
    char rc[32], z[40];
    snprintf(b, n, "tp %lld, pp %lld, dp %lld, cp %lld, ep %lld; vp %lld, mbs %lld, ZeRO %s, %s",
             (long long)c->tp, (long long)c->pp, (long long)c->dp, (long long)c->cp,
             (long long)c->ep, (long long)c->vp, (long long)c->mbs, ppl_zero_label(c, z, sizeof z),
             ppl_recompute_label(c, rc, sizeof rc));
}

static const char *schedule_label(const ppl_config *c)
{
    return ppl_config_schedule_label(c);
}

static void summary(const ppl_report_page *p, ppl_buf *out)
{
    const ppl_estimate *e = &p->results[p->focus];
    char a[96], b[64];
    ppl_buf_printf(out, "<h2>#%zu%s</h2>\n<dl class=\"kv\">\n", p->focus + 1,
                   p->focus > 0 ? ", the result the charts show" : "");
    layout_text(&e->config, a, sizeof a);
    kv(out, "layout", NULL, 0, a);
    kv(out, "schedule", NULL, 0, schedule_label(&e->config));
    kv(out, "precision", NULL, 0, ppl_precision_name(e->config.precision));
    snprintf(a, sizeof a, "%lld", (long long)e->config.gpus);
    kv(out, "GPUs", "config.gpus", (double)e->config.gpus, a);
    ppl_format_time(e->step_time_s, a, sizeof a);
    kv(out, "step", "step_time_s", e->step_time_s, a);
    ppl_format_count(e->tokens_per_s, b, sizeof b);
    snprintf(a, sizeof a, "%s tokens/s", b);
    kv(out, "throughput", "tokens_per_s", e->tokens_per_s, a);
    snprintf(a, sizeof a, "%.1f%%", 100.0 * e->mfu);
    kv(out, "MFU", "mfu", e->mfu, a);
    ppl_format_bytes(e->memory.total, a, sizeof a);
    ppl_format_bytes(e->memory.capacity, b, sizeof b);
    char m[224];
    snprintf(m, sizeof m, "%s of %s on stage %lld%s", a, b, (long long)e->memory.stage,
             e->memory.fits ? "" : " (does not fit)");
    kv(out, "memory", "memory.total", e->memory.total, m);
    kv(out, "bottleneck", NULL, 0, e->bottleneck);
    ppl_buf_printf(out, "</dl>\n");
}

static void step_chart(const ppl_estimate *e, ppl_buf *out)
{
    const ppl_step_time *t = &e->time;
    const char *parts[] = {"compute", "bubble", "exposed_comm", "host", "optimizer", "overhead"};
    const double step[] = {t->compute, t->bubble,    t->exposed_comm,
                           t->host,    t->optimizer, t->overhead};
    const char *cat[] = {"step"};
    ppl_buf_printf(out, "<h2>Step time</h2>\n<figure data-chart=\"time\">\n");
    ppl_svg_bars(out, &(ppl_svg_bar_chart){.title = "Where one step's time goes (critical path)",
                                           .y_label = "s",
                                           .categories = cat,
                                           .ncat = 1,
                                           .parts = parts,
                                           .nparts = 6,
                                           .values = step,
                                           .scale = 1.0,
                                           .horizontal = true,
                                           .width = 900,
                                           .height = 150});
    const char *comm[] = {"tp_comm", "cp_comm", "pp_comm", "dp_comm", "ep_comm"};
    const double cv[] = {t->tp_comm, t->cp_comm, t->pp_comm, t->dp_comm, t->ep_comm};
    ppl_svg_bars(out, &(ppl_svg_bar_chart){.title = "Communication a step, before overlap",
                                           .y_label = "s",
                                           .categories = comm,
                                           .ncat = 5,
                                           .parts = (const char *const[]){"time"},
                                           .nparts = 1,
                                           .values = cv,
                                           .scale = 1.0,
                                           .horizontal = true,
                                           .width = 900,
                                           .height = 230});
    ppl_buf_printf(out,
                   "<figcaption>The parts of the first chart add up to the step (%.4g s); "
                   "the communication in the second runs partly under compute, and only "
                   "what compute does not hide is the first chart's exposed_comm."
                   "</figcaption>\n</figure>\n",
                   e->step_time_s);
}

static ppl_status memory_chart(const ppl_report_page *p, ppl_buf *out, ppl_error *err)
{
    const ppl_estimate *e = &p->results[p->focus];
    const ppl_config *c = &e->config;
    const size_t n = (size_t)c->pp;
    double *v = calloc(n * 5, sizeof *v);
    char(*names)[24] = calloc(n, sizeof *names);
    const char **cats = calloc(n, sizeof *cats);
    if (!v || !names || !cats) {
        free(v), free(names), free(cats);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (size_t s = 0; s < n; s++) {
        ppl_memory m;
        ppl_memory_stage(p->model, p->topo, c, p->memory, (int64_t)s, &m);
        double parts[5] = {m.weights, m.gradients, m.optimizer, m.activations, m.other};
        memcpy(v + s * 5, parts, sizeof parts);
        snprintf(names[s], sizeof names[s], "%zu", s);
        cats[s] = names[s];
    }
    const char *parts[] = {"weights", "gradients", "optimizer", "activations", "other"};
    char cap[64], label[96];
    ppl_format_bytes(e->memory.capacity, cap, sizeof cap);
    snprintf(label, sizeof label, "capacity %s", cap);
    ppl_buf_printf(out, "<h2>Memory per pipeline stage</h2>\n<figure data-chart=\"memory\">\n");
    ppl_svg_bars(out, &(ppl_svg_bar_chart){.title = "Memory per GPU of each pipeline stage",
                                           .y_label = "GiB",
                                           .categories = cats,
                                           .ncat = n,
                                           .parts = parts,
                                           .nparts = 5,
                                           .values = v,
                                           .scale = 1024.0 * 1024.0 * 1024.0,
                                           .limit = e->memory.capacity,
                                           .limit_label = label,
                                           .width = 900,
                                           .height = 340});
    char hr[48] = "";
    if (e->memory.headroom > 0) {
        char h[32];
        ppl_format_bytes(e->memory.headroom, h, sizeof h);
        snprintf(hr, sizeof hr, ", keeping %s free", h);
    }
    ppl_buf_printf(out,
                   "<figcaption>Stage %lld holds the most (%.4g GiB%s).  Activations are those "
                   "of the microbatches the schedule keeps in flight on each stage; the "
                   "first and last stages also hold the embedding and output layer."
                   "</figcaption>\n</figure>\n",
                   (long long)e->memory.stage, e->memory.total / (1024.0 * 1024.0 * 1024.0), hr);
    free(v), free(names), free(cats);
    return PPL_OK;
}

static void timeline_chart(const ppl_estimate *e, ppl_buf *out)
{
    ppl_buf_printf(out, "<h2>Pipeline, one step</h2>\n<figure data-chart=\"timeline\">\n");
    ppl_timeline t;
    ppl_error err;
    if (ppl_timeline_of_estimate(e, PPL_REPORT_MAX_BLOCKS, &t, &err) != PPL_OK) {
        ppl_buf_printf(out, "<p class=\"note\">Not drawn: ");
        esc(out, err.message);
        ppl_buf_printf(out, ".</p>\n</figure>\n");
        return;
    }
    const double W = 1000, left = 70, right = 16, top = 36, row = t.stages > 32 ? 10 : 22;
    const double H = top + row * (double)t.stages + 44;
    const double span = t.makespan_s > 0 ? t.makespan_s : 1.0, scale = (W - left - right) / span;
    ppl_buf_printf(out,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%.0f\" "
                   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                   "aria-label=\"pipeline timeline\">\n<rect class=\"bg\" width=\"100%%\" "
                   "height=\"100%%\"/>\n<text x=\"12\" y=\"20\" font-weight=\"bold\">%s, %lld "
                   "stages, %lld microbatches%s: forward (blue) and backward (ochre)%s%s per "
                   "stage; gaps are the bubble</text>\n",
                   W, H, W, H, schedule_label(&e->config), (long long)t.stages,
                   (long long)t.microbatches, t.chunks > 1 ? ", chunks by shade" : "",
                   ppl_schedule_of(e->config.schedule)->splits_backward
                       ? ", deferred weight gradients (green)"
                       : "",
                   ppl_schedule_of(e->config.schedule)->overlaps_fb
                       ? ", a forward and a backward overlapped (violet)"
                       : "");
    for (int64_t s = 0; s < t.stages; s++) {
        if (t.stages <= 32 || s % 8 == 0)
            ppl_buf_printf(out,
                           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">stage %lld</text>\n",
                           left - 6, top + row * ((double)s + 0.5) + 4, (long long)s);
    }
    for (size_t i = 0; i < t.n; i++) {
        const ppl_block *b = &t.blocks[i];
        double x = left + b->start_s * scale, w = (b->end_s - b->start_s) * scale;
        double op = t.chunks > 1 ? 1.0 - 0.5 * (double)b->chunk / (double)(t.chunks - 1) : 1.0;
        ppl_buf_printf(out,
                       "<rect class=\"c%d\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                       "fill-opacity=\"%.2f\" stroke-width=\"%s\"><title>stage %d, %s of "
                       "microbatch %d%s%.0d: %.4g-%.4g s</title></rect>\n",
                       b->kind, x, top + row * b->stage + 1, w, row - 2, op, w >= 4.0 ? "0.4" : "0",
                       b->stage,
                       b->kind == PPL_BLOCK_FORWARD    ? "forward"
                       : b->kind == PPL_BLOCK_BACKWARD ? "backward"
                       : b->kind == PPL_BLOCK_WEIGHT   ? "weight gradients"
                                                       : "forward and a backward (F&B)",
                       b->microbatch, t.chunks > 1 ? ", chunk " : "", t.chunks > 1 ? b->chunk : 0,
                       b->start_s, b->end_s);
    }
    double axis_y = top + row * (double)t.stages + 4;
    double ticks[16];
    int nt = ppl_svg_ticks(0.0, span, false, 8, ticks);
    for (int i = 0; i < nt; i++) {
        if (ticks[i] > span * (1 + 1e-9))
            continue;
        double x = left + ticks[i] * scale;
        ppl_buf_printf(out,
                       "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n",
                       x, x, axis_y, axis_y + 5, x, axis_y + 18, ticks[i]);
    }
    ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">s</text>\n</svg>\n",
                   left + (W - left - right) / 2, H - 4);
    ppl_buf_printf(out,
                   "<figcaption>The pipeline executor's run of the schedule, the one the "
                   "step's pipeline time comes from: each stage runs its passes in the "
                   "schedule's order as soon as their inputs (and the sends between stages) "
                   "are there.  It ends at <span data-key=\"timeline.makespan_s\" "
                   "data-value=\"%.17g\">%.4g s</span>.  The data-parallel reduction and the "
                   "optimizer step are not drawn.</figcaption>\n</figure>\n",
                   t.makespan_s, t.makespan_s);
    ppl_timeline_free(&t);
}

static void traffic_chart(const ppl_estimate *e, ppl_buf *out)
{
    const char *levels[] = {"nvlink", "rail", "spine"};
    const double v[] = {e->traffic.nvlink, e->traffic.rail, e->traffic.spine};
    ppl_buf_printf(out, "<h2>Traffic per network level</h2>\n<figure data-chart=\"traffic\">\n");
    ppl_svg_bars(out, &(ppl_svg_bar_chart){.title = "Bytes each GPU sends a step",
                                           .y_label = "GB",
                                           .categories = levels,
                                           .ncat = 3,
                                           .parts = (const char *const[]){"bytes"},
                                           .nparts = 1,
                                           .values = v,
                                           .scale = 1e9,
                                           .horizontal = true,
                                           .width = 900,
                                           .height = 170});
    ppl_buf_printf(out, "<figcaption>nvlink: inside the NVLink domain; rail: through the first "
                        "tier of switches (under the leaf); spine: above it.</figcaption>\n"
                        "</figure>\n");
}

static void results_table(const ppl_report_page *p, ppl_buf *out)
{
    ppl_buf_printf(out, "<h2>Ranked plans</h2>\n<table>\n<tr><th>#</th><th class=\"l\">"
                        "tp/pp/dp/cp/ep</th><th>vp</th><th>mbs</th><th>ZeRO</th><th class=\"l\">"
                        "recompute</th><th class=\"l\">schedule</th><th class=\"l\">stage layers"
                        "</th><th>step</th><th>tokens/s</th><th>MFU</th><th>memory</th>");
    if (p->gpu_hour_price > 0)
        ppl_buf_printf(out, "<th>cost/Mtok</th>");
    ppl_buf_printf(out, "<th class=\"l\">against #1</th></tr>\n");
    for (size_t i = 0; i < p->nresults; i++) {
        const ppl_estimate *e = &p->results[i];
        const ppl_config *c = &e->config;
        char a[64], b[512], rc[32], st[96], z[40];
        ppl_stage_layers_text(c, st, sizeof st);
        ppl_buf_printf(out,
                       "<tr data-rank=\"%zu\"%s><td>%zu</td><td class=\"l\">%lld/%lld/%lld/%lld/"
                       "%lld</td><td>%lld</td><td>%lld</td><td>%s</td><td class=\"l\">%s</td>"
                       "<td class=\"l\">%s</td><td class=\"l\">%s</td>",
                       i + 1, i == p->focus ? " class=\"best\"" : "", i + 1, (long long)c->tp,
                       (long long)c->pp, (long long)c->dp, (long long)c->cp, (long long)c->ep,
                       (long long)c->vp, (long long)c->mbs, ppl_zero_label(c, z, sizeof z),
                       ppl_recompute_label(c, rc, sizeof rc), schedule_label(c), st);
        ppl_format_time(e->step_time_s, a, sizeof a);
        ppl_buf_printf(out, "<td data-key=\"step_time_s\" data-value=\"%.17g\">%s</td>",
                       e->step_time_s, a);
        ppl_format_count(e->tokens_per_s, a, sizeof a);
        ppl_buf_printf(out, "<td data-key=\"tokens_per_s\" data-value=\"%.17g\">%s</td>",
                       e->tokens_per_s, a);
        ppl_buf_printf(out, "<td data-key=\"mfu\" data-value=\"%.17g\">%.1f%%</td>", e->mfu,
                       100.0 * e->mfu);
        ppl_format_bytes(e->memory.total, a, sizeof a);
        ppl_buf_printf(out, "<td data-key=\"memory.total\" data-value=\"%.17g\">%s</td>",
                       e->memory.total, a);
        if (p->gpu_hour_price > 0) {
            ppl_buf_printf(
                out, "<td>%.4g</td>",
                ppl_cost_per_million_tokens(p->gpu_hour_price, c->gpus, e->tokens_per_s));
        }
        ppl_buf_printf(out, "<td class=\"l why\">");
        if (i > 0) {
            ppl_plan_diff d;
            ppl_plan_diff_of(&p->results[0], e, &d);
            esc(out, ppl_plan_diff_text(&d, b, sizeof b));
        }
        ppl_buf_printf(out, "</td></tr>\n");
    }
    ppl_buf_printf(out, "</table>\n");
}

ppl_status ppl_report_html(const ppl_report_page *p, ppl_buf *out, ppl_error *err)
{
    if (p->nresults == 0)
        return ppl_error_set(err, PPL_EINPUT, "", "results", "no result to report");
    ppl_buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width\">\n"
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                        "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                        "<title>parplan: ");
    esc(out, p->model->name);
    ppl_buf_printf(out, " on ");
    esc(out, p->topo->name);
    ppl_buf_printf(out,
                   "</title>\n<style>\n%s%s</style>\n%s</head>\n<body data-focus=\"%zu\">\n<h1>",
                   page_css, ppl_svg_css, page_script, p->focus + 1);
    esc(out, p->model->name);
    ppl_buf_printf(out, " on ");
    esc(out, p->topo->name);
    ppl_buf_printf(out, "</h1>\n<p class=\"note\">From ");
    esc(out, p->origin ? p->origin : "a plan");
    ppl_buf_printf(out,
                   "; %zu result%s, costed by parplan's step and memory models.  Hover a "
                   "mark for its figure.</p>\n",
                   p->nresults, p->nresults == 1 ? "" : "s");
    if (p->focus >= p->nresults)
        return ppl_error_set(err, PPL_EUSAGE, "", "", "no result %zu to show: the plan has %zu",
                             p->focus + 1, p->nresults);
    const ppl_estimate *best = &p->results[p->focus];
    summary(p, out);
    step_chart(best, out);
    ppl_status st = memory_chart(p, out, err);
    if (st != PPL_OK)
        return st;
    timeline_chart(best, out);
    traffic_chart(best, out);
    results_table(p, out);
    ppl_buf_printf(out, "</body>\n</html>\n");
    return PPL_OK;
}
