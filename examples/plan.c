/*
 * plan.c - plans a model on a cluster through libparplan's public interface
 * (parplan/parplan.h), no command line.
 *
 *     build/plan_example [MODEL [TOPOLOGY [GLOBAL_BATCH]]]
 *
 * Opens a catalogue model and topology (names or JSON paths), searches every knob
 * but the global batch with the newest stack profile and the committed constants,
 * and prints the three best configurations: step time in seconds, memory per GPU
 * in GiB, and the layout.  Every handle is released with its _close or _free;
 * errors come back in ppl_error and are printed here, by the caller.
 */
#include <stdio.h>
#include <string.h>

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
    const char *batch = argc > 3 ? argv[3] : "1536";
    ppl_error err;
    ppl_model *model = NULL;
    ppl_topology *topo = NULL;
    ppl_context *ctx = NULL;
    ppl_pins *pins = NULL;
    ppl_plan *plan = NULL;
    int status = 0;

    /* the header and the library it links must be the same release */
    if (strcmp(ppl_version(), PPL_VERSION_STRING) != 0) {
        fprintf(stderr, "plan_example: header %s, library %s\n", PPL_VERSION_STRING, ppl_version());
        return 4;
    }
    /* a catalogue name or a path, the model on the cluster under the newest stack */
    if (ppl_model_open(model_name, &model, &err) != PPL_OK ||
        ppl_topology_open(topo_name, &topo, &err) != PPL_OK ||
        ppl_context_open(model, topo, NULL, &ctx, &err) != PPL_OK) {
        status = fail(&err);
        goto out;
    }
    /* pin the global batch, leave every other knob to the search */
    if (!(pins = ppl_pins_new())) {
        fprintf(stderr, "plan_example: out of memory\n");
        status = 4;
        goto out;
    }
    if (ppl_pins_set(pins, "global_batch", batch, &err) != PPL_OK ||
        ppl_plan_search(ctx, pins, 3, &plan, &err) != PPL_OK) {
        status = fail(&err);
        goto out;
    }
    printf("%s on %s, global batch %s: the %zu best\n", ppl_model_title(model),
           ppl_topology_title(topo), batch, ppl_plan_count(plan));
    for (size_t i = 0; i < ppl_plan_count(plan); i++) {
        const ppl_result *r = ppl_plan_result(plan, i);
        char layout[512];
        ppl_result_describe(r, layout, sizeof layout);
        printf("%zu  %.3f s  %.1f GiB  %s\n", i + 1, ppl_result_step_time_s(r),
               ppl_result_memory_bytes(r) / 1073741824.0, layout);
    }
out:
    ppl_plan_free(plan);
    ppl_pins_free(pins);
    ppl_context_close(ctx);
    ppl_topology_close(topo);
    ppl_model_close(model);
    return status;
}
