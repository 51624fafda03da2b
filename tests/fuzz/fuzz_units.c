/*
 * fuzz_units.c - libFuzzer harness: the unit-string parser, for every unit kind,
 * and the printers on whatever it returns.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (int u = PPL_UNIT_COUNT; u <= PPL_UNIT_FLOPS; u++) {
        double v = 0.0;
        char why[160], out[64];
        if (ppl_parse_quantity(text, (ppl_unit)u, &v, why, sizeof why) == PPL_OK) {
            if (!isfinite(v) || v < 0)
                abort(); /* the parser promised neither */
            ppl_format_bytes(v, out, sizeof out);
            ppl_format_bandwidth(v, out, sizeof out);
            ppl_format_time(v, out, sizeof out);
            ppl_format_flops(v, out, sizeof out);
            ppl_format_count(v, out, sizeof out);
        }
    }
    free(text);
    return 0;
}
