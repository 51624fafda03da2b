/*
 * cmd_estimate.c - `parplan estimate`: one configuration in full detail.
 */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

ppl_status cmd_estimate(cli *c)
{
    ppl_model model;
    ppl_topology topo;
    ppl_eval_ctx ctx;
    ppl_config cfg;
    ppl_status st = cli_args_from_plan(c);
    if (st != PPL_OK)
        return st;
    st = cli_setup(c, &model, &topo, &ctx, &cfg);
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
    char note[1024];
    bool assumed = ppl_gpu_assumed(&topo.gpu, cfg.precision, note, sizeof note);
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
