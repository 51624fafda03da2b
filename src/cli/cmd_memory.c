/*
 * cmd_memory.c - `parplan memory`: the per-GPU memory of one configuration.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void gib(double bytes, char *buf, size_t size)
{
    snprintf(buf, size, "%.2f", bytes / 1073741824.0);
}

static void stage_row(ppl_table *t, const ppl_memory *m)
{
    char cells[9][32];
    snprintf(cells[0], sizeof cells[0], "%lld", (long long)m->stage);
    snprintf(cells[1], sizeof cells[1], "%lld", (long long)m->layers);
    snprintf(cells[2], sizeof cells[2], "%.2f", m->in_flight);
    gib(m->weights, cells[3], sizeof cells[3]);
    gib(m->gradients, cells[4], sizeof cells[4]);
    gib(m->optimizer, cells[5], sizeof cells[5]);
    gib(m->activations, cells[6], sizeof cells[6]);
    gib(m->other, cells[7], sizeof cells[7]);
    gib(m->total, cells[8], sizeof cells[8]);
    const char *row[9];
    for (int i = 0; i < 9; i++)
        row[i] = cells[i];
    ppl_table_row(t, row);
}

ppl_status cmd_memory(cli *c)
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
    const ppl_memory_opts *opts = &ctx.memory;
    ppl_memory worst;
    ppl_memory_worst(&model, &topo, &cfg, opts, &worst);
    ppl_status result = worst.fits ? PPL_OK : PPL_INFEASIBLE;

    if (c->args->json) {
        json_t *doc = ppl_json_document();
        if (!doc)
            return cli_emit_json(c, NULL);
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "config", ppl_config_json(&cfg, &model));
        json_object_set_new(doc, "memory", ppl_memory_json(&worst));
        json_t *stages = json_array();
        for (int64_t k = 0; k < cfg.pp; k++) {
            ppl_memory m;
            ppl_memory_stage(&model, &topo, &cfg, opts, k, &m);
            json_t *e = ppl_memory_json(&m);
            json_object_del(e, "worst_stage");
            json_object_set_new(e, "stage", json_integer(k));
            json_object_set_new(e, "layers", json_integer(m.layers));
            json_object_set_new(e, "in_flight_microbatches", ppl_json_real(m.in_flight));
            json_object_set_new(e, "params", ppl_json_real(m.params));
            json_array_append_new(stages, e);
        }
        json_object_set_new(doc, "stages", stages);
        st = cli_emit_json(c, doc);
        return st != PPL_OK ? st : result;
    }

    char desc[512], a[64], b[64];
    ppl_config_describe(&cfg, desc, sizeof desc);
    ppl_buf *out = &c->out;
    ppl_buf_printf(out, "model     %s on %s, %lld GPUs\n", model.name, topo.name,
                   (long long)cfg.gpus);
    ppl_buf_printf(out, "config    %s\n\n", desc);
    ppl_buf_printf(out,
                   "worst stage %lld of %lld: %lld layers, %.2f microbatches in flight, %.3g "
                   "parameters per GPU\n",
                   (long long)worst.stage, (long long)cfg.pp, (long long)worst.layers,
                   worst.in_flight, worst.params);
    ppl_table t;
    ppl_table_init(&t, 2, "lr");
    struct {
        const char *name;
        double bytes;
    } rows[] = {{"  weights", worst.weights},     {"  gradients", worst.gradients},
                {"  optimizer", worst.optimizer}, {"  activations", worst.activations},
                {"  other", worst.other},         {"  total", worst.total},
                {"  capacity", worst.capacity}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ppl_format_bytes(rows[i].bytes, a, sizeof a);
        const char *row[2] = {rows[i].name, a};
        ppl_table_row(&t, row);
    }
    ppl_table_render(&t, out, "");
    ppl_table_free(&t);
    const double usable = worst.capacity - worst.headroom;
    char kept[96] = "";
    if (worst.headroom > 0) {
        ppl_format_bytes(worst.headroom, b, sizeof b);
        snprintf(kept, sizeof kept, " (keeping %s free)", b);
    }
    ppl_format_bytes(usable - worst.total, b, sizeof b);
    if (worst.fits)
        ppl_buf_printf(out, "  fits, %s to spare%s\n", b, kept);
    else if (worst.total <= usable)
        ppl_buf_printf(out, "  does not fit: the offloaded state overflows the host's share\n");
    else {
        ppl_format_bytes(worst.total - usable, b, sizeof b);
        ppl_buf_printf(out, "  does not fit: %s over%s\n", b, kept);
    }
    if (worst.host > 0.0) { /* the offloaded optimizer state (offload.h) */
        ppl_format_bytes(worst.host, a, sizeof a);
        ppl_format_bytes(ppl_gpu_host_capacity_bytes(&topo.gpu), b, sizeof b);
        ppl_buf_printf(out, "  host         %s of the GPU's %s share of host memory\n", a, b);
    }

    ppl_buf_printf(out, "\nper stage (GiB):\n");
    ppl_table_init(&t, 9, "rrrrrrrrr");
    static const char *const header[] = {"stage",       "layers", "in flight",
                                         "weights",     "grads",  "optimizer",
                                         "activations", "other",  "total"};
    ppl_table_row(&t, header);
    for (int64_t k = 0; k < cfg.pp; k++) {
        ppl_memory m;
        ppl_memory_stage(&model, &topo, &cfg, opts, k, &m);
        stage_row(&t, &m);
    }
    ppl_table_render(&t, out, "  ");
    ppl_table_free(&t);
    return result;
}
