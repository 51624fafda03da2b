/*
 * explain.c - how a runner-up differs from the best plan (render/explain.h).
 */
#include "render/explain.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/output.h"
#include "cost/knobs.h"
#include "render/report.h"
#include "base/units.h"

static void knob(ppl_plan_diff *d, const char *name, const char *from, const char *to)
{
    if (strcmp(from, to) == 0 || d->nknobs >= PPL_DIFF_MAX_KNOBS)
        return;
    ppl_diff_knob *k = &d->knobs[d->nknobs++];
    k->name = name;
    snprintf(k->from, sizeof k->from, "%s", from);
    snprintf(k->to, sizeof k->to, "%s", to);
}

void ppl_stage_layers_text(const ppl_config *c, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    /* runs of equal counts: "7 8x14 7" */
    for (int64_t k = 0; k < c->pp && used + 16 < size;) {
        int64_t n = ppl_stage_layers(c, k), run = 1;
        while (k + run < c->pp && ppl_stage_layers(c, k + run) == n)
            run++;
        used += (size_t)snprintf(buf + used, size - used, "%s", used ? " " : "");
        if (run > 1)
            used += (size_t)snprintf(buf + used, size - used, "%lldx%lld", (long long)n,
                                     (long long)run);
        else
            used += (size_t)snprintf(buf + used, size - used, "%lld", (long long)n);
        k += run;
    }
}

void ppl_plan_diff_of(const ppl_estimate *best, const ppl_estimate *other, ppl_plan_diff *out)
{
    memset(out, 0, sizeof *out);
    const ppl_config *a = &best->config, *b = &other->config;
    char x[24], y[24];
    size_t n;
    const ppl_knob *k = ppl_knob_rows(&n);
    /* every knob the registry has the diff show, where it applies to either plan */
    for (size_t i = 0; i < n; i++) {
        if (!k[i].diffed || !(k[i].diffed(a) || k[i].diffed(b)))
            continue;
        ppl_knob_text(&k[i], a, NULL, x, sizeof x);
        ppl_knob_text(&k[i], b, NULL, y, sizeof y);
        knob(out, k[i].name, x, y);
    }
    ppl_stage_layers_text(a, x, sizeof x);
    ppl_stage_layers_text(b, y, sizeof y);
    knob(out, "stage_layers", x, y);

    /* estimate.h: step = compute + bubble + exposed communication + the host's
     * launches waited for + optimizer + overhead */
    static const char *const names[PPL_DIFF_PARTS] = {"compute", "bubble",    "exposed_comm",
                                                      "host",    "optimizer", "overhead"};
    const double pa[PPL_DIFF_PARTS] = {best->time.compute,      best->time.bubble,
                                       best->time.exposed_comm, best->time.host,
                                       best->time.optimizer,    best->time.overhead};
    const double pb[PPL_DIFF_PARTS] = {other->time.compute,      other->time.bubble,
                                       other->time.exposed_comm, other->time.host,
                                       other->time.optimizer,    other->time.overhead};
    for (int i = 0; i < PPL_DIFF_PARTS; i++) {
        out->part_names[i] = names[i];
        out->part_delta_s[i] = pb[i] - pa[i];
    }
    out->step_delta_s = other->step_time_s - best->step_time_s;
    out->memory_delta_bytes = other->memory.total - best->memory.total;
}

static void signed_time(double s, char *buf, size_t size)
{
    char t[32];
    /* under the last place ppl_format_time shows (0.01 ns), a difference of two
     * step times equal but for their rounding: 0, not "+0.00 ns" */
    if (fabs(s) < 0.005e-9)
        s = 0.0;
    ppl_format_time(fabs(s), t, sizeof t);
    snprintf(buf, size, "%s%s", s < 0 ? "-" : "+", t);
}

const char *ppl_plan_diff_text(const ppl_plan_diff *d, char *buf, size_t size)
{
    size_t used = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (used < size)                                                                           \
            used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__);                        \
    } while (0)
    buf[0] = '\0';
    if (d->nknobs == 0)
        PUT("the same knobs");
    for (int i = 0; i < d->nknobs; i++)
        PUT("%s%s %s->%s", i ? ", " : "", d->knobs[i].name, d->knobs[i].from, d->knobs[i].to);
    char t[40];
    signed_time(d->step_delta_s, t, sizeof t);
    PUT("; %s a step", t);
    /* the two parts that moved most */
    int first = -1, second = -1;
    for (int i = 0; i < PPL_DIFF_PARTS; i++) {
        double m = fabs(d->part_delta_s[i]);
        if (m < 1e-9)
            continue;
        if (first < 0 || m > fabs(d->part_delta_s[first])) {
            second = first;
            first = i;
        } else if (second < 0 || m > fabs(d->part_delta_s[second])) {
            second = i;
        }
    }
    for (int k = 0, idx = first; k < 2 && idx >= 0; k++, idx = second) {
        signed_time(d->part_delta_s[idx], t, sizeof t);
        PUT("%s %s %s", k ? "," : ":", d->part_names[idx], t);
    }
    char m[32];
    ppl_format_bytes(fabs(d->memory_delta_bytes), m, sizeof m);
    PUT("; memory %s%s", d->memory_delta_bytes < 0 ? "-" : "+", m);
#undef PUT
    return buf;
}

json_t *ppl_plan_diff_json(const ppl_plan_diff *d)
{
    json_t *o = json_object(), *knobs = json_object(), *parts = json_object();
    for (int i = 0; i < d->nknobs; i++) {
        json_t *pair = json_array();
        json_array_append_new(pair, json_string(d->knobs[i].from));
        json_array_append_new(pair, json_string(d->knobs[i].to));
        json_object_set_new(knobs, d->knobs[i].name, pair);
    }
    for (int i = 0; i < PPL_DIFF_PARTS; i++)
        json_object_set_new(parts, d->part_names[i], ppl_json_real(d->part_delta_s[i]));
    json_object_set_new(o, "knobs", knobs);
    json_object_set_new(o, "step_delta_s", ppl_json_real(d->step_delta_s));
    json_object_set_new(o, "parts_delta_s", parts);
    json_object_set_new(o, "memory_delta_bytes", ppl_json_real(d->memory_delta_bytes));
    return o;
}
