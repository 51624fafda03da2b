/*
 * fuzz_plan.c - libFuzzer harness: a plan file as estimate --from, compare and
 * report read it (cli_pins_from_plan_doc, then the embedded or catalogue model
 * and topology and the configuration, as cli_setup builds them).  Any input gives
 * a configuration whose step and memory are finite and positive, or a one-line
 * error; never a crash, a leak or a hang; a field is never opened as a path (a
 * name the catalogue does not hold is refused before any file is opened).
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return 0;
    static char *argv[] = {"parplan", "estimate", "--from", "fuzz.json", NULL};
    static ppl_args args, local;
    static char names[2][256];
    cli c;
    memset(&c, 0, sizeof c);
    if (ppl_args_parse(4, argv, &args, &c.err) != PPL_OK)
        abort();
    c.args = &args;
    c.constants = *ppl_constants_committed();
    local = args;
    ppl_status st = cli_pins_from_plan_doc(&c, doc, "fuzz.json", 1, &local, names);
    if (st == PPL_OK) {
        ppl_model model;
        ppl_topology topo;
        ppl_eval_ctx ctx;
        ppl_config cfg;
        c.args = &local;
        st = cli_setup(&c, &model, &topo, &ctx, &cfg);
        if (st == PPL_OK) {
            ppl_estimate e;
            ppl_estimate_config(&ctx, &cfg, &e);
            if (!(isfinite(e.step_time_s) && e.step_time_s > 0.0 && isfinite(e.memory.total) &&
                  e.memory.total > 0.0))
                abort();
        }
    }
    if (st != PPL_OK && !c.err.message[0])
        abort(); /* an error always says what */
    cli_from_clear(&c);
    json_decref(c.model_doc);
    json_decref(c.topology_doc);
    json_decref(doc);
    return 0;
}
