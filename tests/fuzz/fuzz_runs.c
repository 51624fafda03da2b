/*
 * fuzz_runs.c - libFuzzer harness: a measured-runs file (inline models and
 * topologies; catalogue names resolve against the source tree).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "modules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return 0;
    ppl_run *runs;
    size_t n;
    ppl_error err;
    if (ppl_runs_from_json(root, "fuzz.json", NULL, &runs, &n, &err) == PPL_OK)
        ppl_runs_free(runs);
    json_decref(root);
    return 0;
}
