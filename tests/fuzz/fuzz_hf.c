/*
 * fuzz_hf.c - libFuzzer harness: a Hugging Face config.json through the import
 * (hfconfig.c) and the model reader.  Any input gives a model with finite, positive
 * counts or a one-line error naming a key; never a crash, a leak or a NaN.
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "modules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return 0;
    json_t *doc = NULL;
    ppl_error err;
    ppl_status st = ppl_model_doc_from_hf(root, "config.json", NULL, &doc, &err);
    if (st == PPL_OK) {
        ppl_model m;
        st = ppl_model_from_json(doc, "config.json", "", NULL, &m, &err);
        if (st == PPL_OK) {
            ppl_model_figures f;
            ppl_model_derive(&m, &f);
            if (!(isfinite(f.params_total) && f.params_total > 0.0 &&
                  isfinite(f.flops_training_per_token) && f.flops_training_per_token > 0.0))
                abort();
        }
        json_decref(doc);
    }
    if (st != PPL_OK && err.message[0] == '\0')
        abort(); /* an error always says what */
    json_decref(root);
    return 0;
}
