/*
 * fuzz_args.c - libFuzzer harness: the command-line parser.  The input is split
 * into arguments at NUL bytes and newlines; the first is the command.  A parse
 * that succeeds for a configuration command is also checked against a small model
 * and topology, as estimate and memory would.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "parplan/parplan.h"

static const char model_json[] =
    "{\"layers\": 24, \"hidden\": 2048, \"heads\": 16, \"vocab\": 51200, \"seq_len\": 2048}";
static const char topo_json[] =
    "{\"gpu\": \"H100\", \"servers\": 16, \"gpus_per_server\": 8,"
    " \"nvlink\": {\"bandwidth\": \"450 GB/s\"}, \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"},"
    " \"tiers\": [{\"servers\": 4, \"rail_optimized\": true}, {\"servers\": 16}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    char *argv[130];
    int argc = 0;
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = "parplan";
    char *start = buf;
    for (size_t i = 0; i <= size && argc < 129; i++) {
        if (i == size || buf[i] == '\0' || buf[i] == '\n') {
            buf[i] = '\0';
            argv[argc++] = start;
            start = buf + i + 1;
        }
    }
    argv[argc] = NULL;
    ppl_args a;
    ppl_error err;
    if (ppl_args_parse(argc, argv, &a, &err) == PPL_OK &&
        (a.command == PPL_CMD_ESTIMATE || a.command == PPL_CMD_MEMORY)) {
        json_t *mj = json_loads(model_json, 0, NULL), *tj = json_loads(topo_json, 0, NULL);
        ppl_model m;
        ppl_topology t;
        ppl_config c;
        if (mj && tj && ppl_model_from_json(mj, "m", "", NULL, &m, &err) == PPL_OK &&
            ppl_topology_from_json(tj, "t", "", NULL, &t, &err) == PPL_OK &&
            ppl_config_from_pins(&a.pins, &m, &t, &c, &err) == PPL_OK) {
            ppl_eval_ctx ctx;
            ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
            ppl_estimate e;
            ppl_estimate_config(&ctx, &c, &e);
        }
        json_decref(mj);
        json_decref(tj);
    }
    free(buf);
    return 0;
}
