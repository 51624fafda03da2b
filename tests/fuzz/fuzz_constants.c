/*
 * fuzz_constants.c - libFuzzer harness: a constants file's object (what
 * validate --fit --json writes and a plan embeds as inputs.constants).  Any input
 * gives constants within their bounds or an error naming the constant.
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
    ppl_constants k;
    ppl_error err;
    if (ppl_constants_from_json(root, "fuzz.json", "constants", NULL, &k, &err) == PPL_OK) {
        /* every value a number within its bounds: the round trip gives it back */
        json_t *again = ppl_constants_json(&k);
        ppl_constants back;
        if (!again ||
            ppl_constants_from_json(again, "again", "constants", NULL, &back, &err) != PPL_OK)
            abort();
        double a, b;
        if (ppl_constants_first_difference(&k, &back, &a, &b) || !isfinite(a))
            abort();
        json_decref(again);
    } else if (!err.message[0] || !err.key[0]) {
        abort(); /* refused: naming the key */
    }
    json_decref(root);
    return 0;
}
