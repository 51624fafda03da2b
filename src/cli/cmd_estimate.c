/*
 * cmd_estimate.c - `parplan estimate`: one configuration in full detail.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --from PLAN.json[#K]: result K's configuration as pins, and the plan's model and
 * topology where the command line names none (kept in `names`). */
static ppl_status from_plan(cli *c, ppl_args *a, char names[2][256])
{
    char path[1024];
    const char *hash = strrchr(a->from_plan, '#');
    size_t len = hash ? (size_t)(hash - a->from_plan) : strlen(a->from_plan);
    if (len == 0 || len >= sizeof path)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--from",
                             "expected PLAN.json or PLAN.json#K");
    memcpy(path, a->from_plan, len);
    path[len] = '\0';
    long rank = 1;
    if (hash) {
        char *end;
        rank = strtol(hash + 1, &end, 10);
        if (end == hash + 1 || *end != '\0' || rank < 1 || rank > 100000)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--from",
                                 "expected a result number from 1 after '#', found '%.20s'",
                                 hash + 1);
    }
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc && jerr.line < 1) /* not read at all */
        return ppl_error_set(&c->err, PPL_EINPUT, path, "", "%s", jerr.text);
    if (!doc)
        return ppl_error_set(&c->err, PPL_EINPUT, path, "", "%d:%d: %s", jerr.line, jerr.column,
                             jerr.text);
    const json_t *results = json_object_get(doc, "results");
    const json_t *entry = json_array_get(results, (size_t)rank - 1);
    ppl_status st = PPL_OK;
    if (!json_is_array(results))
        st = ppl_error_set(&c->err, PPL_EINPUT, path, "results",
                           "expected the array of a plan's results (the --json output of 'parplan "
                           "plan')");
    else if (!entry)
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", "--from", "%s has %zu results, not %ld", path,
                           json_array_size(results), rank);
    char where[64];
    snprintf(where, sizeof where, "results[%ld].config", rank - 1);
    if (st == PPL_OK)
        st = ppl_pins_from_config_json(json_object_get(entry, "config"), path, where, &a->pins,
                                       &c->err);
    /* the plan's model and topology, by name, unless given */
    const char *keys[2] = {"model", "topology"};
    const char **dest[2] = {&a->model, &a->topology};
    for (int i = 0; i < 2 && st == PPL_OK; i++) {
        if (*dest[i])
            continue;
        const char *name = json_string_value(json_object_get(doc, keys[i]));
        if (!name)
            st = ppl_error_set(&c->err, PPL_EINPUT, path, keys[i], "missing: give --%s", keys[i]);
        else {
            snprintf(names[i], 256, "%s", name);
            *dest[i] = names[i];
        }
    }
    json_decref(doc);
    return st;
}

ppl_status cmd_estimate(cli *c)
{
    ppl_model model;
    ppl_topology topo;
    ppl_eval_ctx ctx;
    ppl_config cfg;
    /* static: main reads c->args after this returns (the output file) */
    static ppl_args local;
    static char names[2][256];
    if (c->args->from_plan) {
        local = *c->args;
        ppl_status fst = from_plan(c, &local, names);
        if (fst != PPL_OK)
            return fst;
        c->args = &local;
    }
    ppl_status st = cli_setup(c, &model, &topo, &ctx, &cfg);
    if (st != PPL_OK)
        return st;
    ppl_estimate e;
    ppl_estimate_config(&ctx, &cfg, &e);
    if ((st = ppl_estimate_check(&e, &c->err)) != PPL_OK)
        return st;
    const ppl_family *outside = ppl_search_outside(&ctx, &cfg);
    char allow[96];
    if (outside)
        ppl_diag_warn(&c->diag, "", "",
                      "this configuration lies outside plan's default search (%s); plan searches "
                      "it with %s",
                      outside->why, cli_family_allow(outside, allow, sizeof allow));
    ppl_status result = e.memory.fits ? PPL_OK : PPL_INFEASIBLE;
    /* efficiencies no run measured: said, with the part they are borrowed from */
    char note[512];
    bool assumed = ppl_gpu_efficiency_note(&topo, cfg.precision, note, sizeof note);
    if (c->args->json) {
        json_t *doc = ppl_json_document();
        if (!doc)
            return cli_emit_json(c, NULL);
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "stack", json_string(ppl_stack_name(ctx.stack.stack)));
        if (assumed)
            json_object_set_new(doc, "efficiency_assumed", json_string(note));
        json_t *result_obj = ppl_estimate_json(&e, &model);
        json_object_update(doc, result_obj);
        json_decref(result_obj);
        st = cli_emit_json(c, doc);
        return st != PPL_OK ? st : result;
    }
    char desc[512];
    ppl_config_describe(&cfg, desc, sizeof desc);
    ppl_buf_printf(&c->out, "model       %s on %s, %lld GPUs, %s stack\n", model.name, topo.name,
                   (long long)cfg.gpus, ppl_stack_name(ctx.stack.stack));
    ppl_buf_printf(&c->out, "config      %s\n", desc);
    if (assumed)
        ppl_buf_printf(&c->out, "assumed     %s\n", note);
    ppl_estimate_text(&e, &c->out);
    return result;
}
