/*
 * fuzz_args.c - libFuzzer harness: the command-line parser.  The input is split
 * into arguments at NUL bytes and newlines; the first is the command.  A parse
 * that succeeds for a configuration command is also checked against a small model
 * and topology, as estimate and memory would.
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "modules.h"

static const char model_json[] =
    "{\"layers\": 24, \"hidden\": 2048, \"heads\": 16, \"vocab\": 51200, \"seq_len\": 2048}";
static const char topo_json[] =
    "{\"gpu\": \"H100\", \"servers\": 16, \"gpus_per_server\": 8,"
    " \"nvlink\": {\"bandwidth\": \"450 GB/s\"}, \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"},"
    " \"tiers\": [{\"servers\": 4, \"rail_optimized\": true}, {\"servers\": 16}]}";

static void require(bool ok)
{
    if (!ok)
        abort();
}

static ppl_estimate estimate_with(const ppl_eval_ctx *ctx, ppl_config c, ppl_recompute r)
{
    ppl_estimate e;
    c.recompute = r;
    c.recompute_layers = 0;
    ppl_estimate_config(ctx, &c, &e);
    return e;
}

static void check_estimate(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    ppl_estimate e;
    ppl_estimate_config(ctx, c, &e);
    require(isfinite(e.step_time_s) && e.step_time_s > 0.0);
    require(isfinite(e.memory.total) && e.memory.total > 0.0 && e.memory.activations >= 0.0);
    ppl_estimate none = estimate_with(ctx, *c, PPL_RECOMPUTE_NONE);
    ppl_estimate sel = estimate_with(ctx, *c, PPL_RECOMPUTE_SELECTIVE);
    ppl_estimate full = estimate_with(ctx, *c, PPL_RECOMPUTE_FULL);
    double tol = 1e-9 * none.memory.total;
    require(sel.memory.total <= none.memory.total + tol);
    int64_t fewest = c->split.first < c->split.last ? c->split.first : c->split.last;
    if (c->pp > 2 && c->split.middle < fewest)
        fewest = c->split.middle;
    if (fewest / c->vp >= 2)
        require(full.memory.total <= none.memory.total + tol);
}

/* The best plan with up to `gpus` GPUs offered; 0 when nothing fits. */
static double best_with(const ppl_eval_ctx *ctx, ppl_pins pins, int64_t gpus)
{
    ppl_search_result r;
    ppl_error err;
    pins.gpus = gpus;
    ppl_search_opts o = {.pins = &pins, .top = 1, .gpus_at_most = true};
    double best = ppl_search(ctx, &o, &r, &err) == PPL_OK ? r.results[0].step_time_s : 0.0;
    ppl_search_free(&r);
    return best;
}

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
            check_estimate(&ctx, &c);
        }
        json_decref(mj);
        json_decref(tj);
    } else if (ppl_args_parse(argc, argv, &a, &err) == PPL_OK && a.command == PPL_CMD_PLAN &&
               a.pins.gpus > 0 && a.pins.gpus <= 64 && a.pins.global_batch > 0 &&
               a.pins.global_batch <= 256) {
        json_t *mj = json_loads(model_json, 0, NULL), *tj = json_loads(topo_json, 0, NULL);
        ppl_model m;
        ppl_topology t;
        if (mj && tj && ppl_model_from_json(mj, "m", "", NULL, &m, &err) == PPL_OK &&
            ppl_topology_from_json(tj, "t", "", NULL, &t, &err) == PPL_OK) {
            ppl_eval_ctx ctx;
            ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
            double fewer = best_with(&ctx, a.pins, a.pins.gpus);
            double more = best_with(&ctx, a.pins, 2 * a.pins.gpus);
            /* pins that fix dp or the GPU count's factors may fit neither */
            if (fewer > 0.0 && a.pins.dp == PPL_UNSET)
                require(more > 0.0 && more <= fewer * (1.0 + 1e-12));
        }
        json_decref(mj);
        json_decref(tj);
    }
    free(buf);
    return 0;
}
