/*
 * plan.c - plans a model on a cluster through libparplan's C API, no command line.
 *
 *     build/examples/plan_example [MODEL [TOPOLOGY [GLOBAL_BATCH]]]
 *
 * Loads a catalogue model and topology (names or JSON paths), searches every knob
 * but the global batch with the newest stack profile and the committed constants,
 * and prints the three best configurations: step time in seconds, memory per GPU
 * in GiB, and the layout.  Everything the library allocates is released with its
 * _free call; errors come back in ppl_error and are printed here, by the caller.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "parplan/parplan.h"

static int fail(const ppl_error *err)
{
    char line[PPL_ERROR_FILE_MAX + PPL_ERROR_KEY_MAX + PPL_ERROR_MSG_MAX + 16];
    ppl_error_format(err, line, sizeof line);
    fprintf(stderr, "plan_example: %s\n", line);
    return (int)err->status;
}

int main(int argc, char **argv)
{
    const char *model_name = argc > 1 ? argv[1] : "gpt3-175b";
    const char *topo_name = argc > 2 ? argv[2] : "dgx-h100-superpod";
    long long batch = argc > 3 ? atoll(argv[3]) : 1536;
    char path[PATH_MAX];
    ppl_error err;
    ppl_model model;
    ppl_topology topo;

    /* a catalogue name or a path; NULL diagnostics: warnings are dropped */
    if (ppl_catalog_resolve(PPL_CATALOG_MODELS, model_name, path, sizeof path, &err) != PPL_OK ||
        ppl_model_load(path, NULL, NULL, &model, &err) != PPL_OK)
        return fail(&err);
    if (ppl_catalog_resolve(PPL_CATALOG_TOPOLOGIES, topo_name, path, sizeof path, &err) != PPL_OK ||
        ppl_topology_load(path, NULL, NULL, &topo, &err) != PPL_OK)
        return fail(&err);

    /* the evaluation context: model, fabric, stack profile, fitted constants */
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &model, &topo, PPL_STACK_MODERN);

    /* pin the global batch, leave every other knob to the search */
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = batch;
    ppl_search_opts opts = {.pins = &pins, .top = 3, .objective = PPL_OBJECTIVE_TIME};
    ppl_search_result result;
    ppl_status st = ppl_search(&ctx, &opts, &result, &err);
    if (st != PPL_OK) {
        if (st == PPL_INFEASIBLE && result.empty_reason)
            fprintf(stderr, "plan_example: %s\n", result.empty_reason);
        ppl_search_free(&result);
        return st == PPL_INFEASIBLE ? 1 : fail(&err);
    }
    printf("%s on %s, global batch %lld: %zu configurations costed\n", model.name, topo.name, batch,
           result.evaluated);
    for (size_t i = 0; i < result.count; i++) {
        const ppl_estimate *e = &result.results[i];
        char layout[256];
        ppl_config_describe(&e->config, layout, sizeof layout);
        printf("%zu  %.3f s  %.1f GiB  %s\n", i + 1, e->step_time_s, e->memory.total / 1073741824.0,
               layout);
    }
    ppl_search_free(&result);
    return 0;
}
