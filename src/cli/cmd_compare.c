/*
 * cmd_compare.c - `parplan compare PLAN.json#K ...`: plans' results costed again
 * and set side by side, the rows that differ marked, each against the first
 * (render/explain.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render/explain.h"

typedef struct compared {
    ppl_model model;
    ppl_topology topo;
    ppl_estimate e;
} compared;

/* One row of the side-by-side table: a label and each configuration's cell. */
typedef void (*cell_fn)(const compared *x, char *buf, size_t size);

static void c_cluster(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%s", x->topo.name);
}
static void c_model(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%s", x->model.name);
}
static void c_layout(const compared *x, char *b, size_t n)
{
    const ppl_config *c = &x->e.config;
    snprintf(b, n, "%lld/%lld/%lld/%lld/%lld", (long long)c->tp, (long long)c->pp, (long long)c->dp,
             (long long)c->cp, (long long)c->ep);
}
static void c_vp(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%lld", (long long)x->e.config.vp);
}
static void c_mbs(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%lld", (long long)x->e.config.mbs);
}
static void c_zero(const compared *x, char *b, size_t n)
{
    ppl_zero_label(&x->e.config, b, n);
}
static void c_recompute(const compared *x, char *b, size_t n)
{
    ppl_recompute_label(&x->e.config, b, n);
}
static void c_schedule(const compared *x, char *b, size_t n)
{
    const ppl_config *c = &x->e.config;
    snprintf(b, n, "%s", ppl_config_schedule_name(c));
}
static void c_precision(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%s", ppl_precision_name(x->e.config.precision));
}
static void c_stages(const compared *x, char *b, size_t n)
{
    ppl_stage_layers_text(&x->e.config, b, n);
}
static void c_step(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.step_time_s, b, n);
}
static void c_tokens(const compared *x, char *b, size_t n)
{
    ppl_format_count(x->e.tokens_per_s, b, n);
}
static void c_mfu(const compared *x, char *b, size_t n)
{
    snprintf(b, n, "%.1f%%", 100.0 * x->e.mfu);
}
static void c_compute(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.time.compute, b, n);
}
static void c_bubble(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.time.bubble, b, n);
}
static void c_exposed(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.time.exposed_comm, b, n);
}
static void c_host(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.time.host, b, n);
}
static void c_optimizer(const compared *x, char *b, size_t n)
{
    ppl_format_time(x->e.time.optimizer, b, n);
}
static void c_memory(const compared *x, char *b, size_t n)
{
    char t[32], cap[32];
    ppl_format_bytes(x->e.memory.total, t, sizeof t);
    ppl_format_bytes(x->e.memory.capacity, cap, sizeof cap);
    snprintf(b, n, "%s of %s%s", t, cap, x->e.memory.fits ? "" : " (over)");
}

static const struct {
    const char *label;
    cell_fn cell;
} rows[] = {
    {"model", c_model},
    {"topology", c_cluster},
    {"tp/pp/dp/cp/ep", c_layout},
    {"vp", c_vp},
    {"mbs", c_mbs},
    {"zero", c_zero},
    {"recompute", c_recompute},
    {"schedule", c_schedule},
    {"precision", c_precision},
    {"stage layers", c_stages},
    {"step", c_step},
    {"tokens/s", c_tokens},
    {"MFU", c_mfu},
    {"compute", c_compute},
    {"bubble", c_bubble},
    {"exposed comm", c_exposed},
    {"host launches", c_host},
    {"optimizer", c_optimizer},
    {"memory", c_memory},
};
#define NROWS (sizeof rows / sizeof rows[0])

ppl_status cmd_compare(cli *c)
{
    const ppl_args *a = c->args;
    const int n = a->ncompared;
    compared *xs = calloc((size_t)n, sizeof *xs);
    if (!xs)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_status st = PPL_OK;
    for (int i = 0; i < n && st == PPL_OK; i++)
        st = cli_cost_plan_result(c, a->compared[i], &xs[i].model, &xs[i].topo, NULL, &xs[i].e);
    if (st != PPL_OK) {
        free(xs);
        return st;
    }
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array();
        for (int i = 0; i < n; i++) {
            json_t *e = ppl_estimate_json(&xs[i].e, &xs[i].model);
            json_object_set_new(e, "from", json_string(a->compared[i]));
            json_object_set_new(e, "model", json_string(xs[i].model.name));
            json_object_set_new(e, "topology", json_string(xs[i].topo.name));
            if (i > 0) {
                ppl_plan_diff d;
                ppl_plan_diff_of(&xs[0].e, &xs[i].e, &d);
                json_object_set_new(e, "versus_first", ppl_plan_diff_json(&d));
            }
            json_array_append_new(list, e);
        }
        json_object_set_new(doc, "configurations", list);
        free(xs);
        return cli_emit_json(c, doc);
    }
    ppl_table t;
    char align[PPL_COMPARE_MAX + 3];
    memset(align, 'r', sizeof align);
    align[0] = 'l';
    align[1] = 'l';
    align[n + 2] = '\0';
    ppl_table_init(&t, (size_t)n + 2, align);
    char cells[PPL_COMPARE_MAX + 2][160];
    const char *row[PPL_COMPARE_MAX + 2];
    snprintf(cells[0], sizeof cells[0], "%s", "");
    snprintf(cells[1], sizeof cells[1], "%s", "");
    for (int i = 0; i < n; i++)
        snprintf(cells[i + 2], sizeof cells[i + 2], "%s", a->compared[i]);
    for (int i = 0; i < n + 2; i++)
        row[i] = cells[i];
    ppl_table_row(&t, row);
    for (size_t r = 0; r < NROWS; r++) {
        bool differs = false;
        for (int i = 0; i < n; i++) {
            rows[r].cell(&xs[i], cells[i + 2], sizeof cells[i + 2]);
            differs = differs || strcmp(cells[i + 2], cells[2]) != 0;
        }
        snprintf(cells[0], sizeof cells[0], "%s", differs ? "*" : "");
        snprintf(cells[1], sizeof cells[1], "%s", rows[r].label);
        ppl_table_row(&t, row);
    }
    ppl_table_render(&t, &c->out, "");
    ppl_table_free(&t);
    ppl_buf_printf(&c->out, "\n* differs from the first\n");
    for (int i = 1; i < n; i++) {
        ppl_plan_diff d;
        char why[512];
        ppl_plan_diff_of(&xs[0].e, &xs[i].e, &d);
        ppl_buf_printf(&c->out, "%s against %s: %s\n", a->compared[i], a->compared[0],
                       ppl_plan_diff_text(&d, why, sizeof why));
    }
    free(xs);
    return PPL_OK;
}
