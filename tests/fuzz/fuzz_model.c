/*
 * fuzz_model.c - libFuzzer harness: a model file, then everything derived from it.
 * Any input must give PPL_OK or a one-line error, never a crash or a leak.
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
    ppl_model m;
    ppl_error err;
    if (ppl_model_from_json(root, "fuzz.json", "", NULL, &m, &err) == PPL_OK) {
        ppl_model_figures f;
        ppl_model_derive(&m, &f);
        char line[2048];
        ppl_error_format(&err, line, sizeof line);
    } else {
        char line[2048];
        ppl_error_format(&err, line, sizeof line);
    }
    json_decref(root);
    return 0;
}
