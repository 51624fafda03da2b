/*
 * test_api.c - the public interface (parplan/parplan.h) as a program that links
 * libparplan sees it: this file is compiled with include/ alone on its include
 * path, so it can use nothing else of the library.
 *
 * The figures checked are the interface's consistency, not the cost model's
 * (the other suites derive those): a result's accessors agree with its JSON, the
 * search's #1 is no slower than what follows, a what-if grid has a point per
 * value, and every refusal names its key.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parplan/parplan.h"

typedef struct fixture {
    ppl_model *model;
    ppl_topology *topo;
    ppl_context *ctx;
} fixture;

static int setup(void **state)
{
    static fixture f;
    ppl_error err;
    setenv("PARPLAN_DATA_DIR", PPL_TEST_SOURCE_ROOT, 1);
    if (ppl_model_open("llama3-8b", &f.model, &err) != PPL_OK ||
        ppl_topology_open("dgx-h100-superpod", &f.topo, &err) != PPL_OK ||
        ppl_context_open(f.model, f.topo, NULL, &f.ctx, &err) != PPL_OK)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ppl_context_close(f->ctx);
    ppl_topology_close(f->topo);
    ppl_model_close(f->model);
    return 0;
}

static void test_version(void **state)
{
    (void)state;
    assert_string_equal(ppl_version(), PPL_VERSION_STRING);
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", PPL_VERSION_MAJOR, PPL_VERSION_MINOR, PPL_VERSION_PATCH);
    assert_string_equal(v, PPL_VERSION_STRING);
}

static void test_open_errors(void **state)
{
    (void)state;
    ppl_error err;
    ppl_model *m = (ppl_model *)&err; /* set to NULL on failure */
    assert_int_equal(ppl_model_open("no-such-model", &m, &err), PPL_EUSAGE);
    assert_null(m);
    ppl_topology *t = NULL;
    assert_int_equal(
        ppl_topology_open(PPL_TEST_SOURCE_ROOT "/tests/bad/topo-missing-gpu.json", &t, &err),
        PPL_EINPUT);
    assert_null(t);
    assert_string_equal(err.key, "gpu");
    /* NULL handles are ignored */
    ppl_model_close(NULL);
    ppl_topology_close(NULL);
    ppl_context_close(NULL);
    ppl_pins_free(NULL);
    ppl_plan_free(NULL);
    ppl_result_free(NULL);
    ppl_grid_free(NULL);
    ppl_free(NULL);
}

static void test_context(void **state)
{
    fixture *f = *state;
    ppl_error err;
    ppl_context *c = NULL;
    assert_string_equal(ppl_model_title(f->model), "llama3-8b");
    assert_string_equal(ppl_topology_title(f->topo), "dgx-h100-superpod");
    assert_int_equal(ppl_topology_gpu_count(f->topo), 1024);
    assert_int_equal(ppl_context_open(f->model, f->topo, "megatron-lm-2021", &c, &err), PPL_OK);
    ppl_context_close(c);
    assert_int_equal(ppl_context_open(f->model, f->topo, "cobol-1959", &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "stack");
}

static void test_pins(void **state)
{
    (void)state;
    ppl_error err;
    ppl_pins *p = ppl_pins_new();
    assert_non_null(p);
    assert_int_equal(ppl_pins_set(p, "tp", "4", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "recompute", "selective", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "sequence_parallel", "yes", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "tp", "four", &err), PPL_EUSAGE);
    assert_string_equal(err.key, "tp");
    assert_int_equal(ppl_pins_set(p, "tensor_parallel", "4", &err), PPL_EUSAGE);
    assert_string_equal(err.key, "tensor_parallel");
    ppl_pins_free(p);
}

/* One configuration: the accessors agree with each other and with the JSON. */
static void test_estimate(void **state)
{
    fixture *f = *state;
    ppl_error err;
    ppl_pins *p = ppl_pins_new();
    const char *knobs[][2] = {{"gpus", "64"},
                              {"tp", "2"},
                              {"pp", "2"},
                              {"mbs", "1"},
                              {"global_batch", "256"},
                              {"zero", "1"},
                              {"sequence_parallel", "yes"},
                              {"flash_attention", "yes"}};
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
        assert_int_equal(ppl_pins_set(p, knobs[i][0], knobs[i][1], &err), PPL_OK);
    ppl_result *r = NULL;
    assert_int_equal(ppl_estimate_pins(f->ctx, p, &r, &err), PPL_OK);
    assert_true(ppl_result_step_time_s(r) > 0);
    /* tokens a step: 256 sequences of the model's 8,192 */
    assert_true(fabs(ppl_result_tokens_per_s(r) * ppl_result_step_time_s(r) - 256.0 * 8192.0) <
                1e-6 * 256.0 * 8192.0);
    assert_true(ppl_result_mfu(r) > 0 && ppl_result_mfu(r) < 1);
    assert_true(ppl_result_fits(r));
    assert_true(ppl_result_memory_bytes(r) < ppl_result_capacity_bytes(r));
    char line[512];
    assert_true(ppl_result_describe(r, line, sizeof line) > 10);
    assert_non_null(strstr(line, "tp 2 x pp 2 x dp 16"));
    char *json = ppl_result_json(r);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"step_time_s\""));
    assert_non_null(strstr(json, "\"tp\": 2"));
    ppl_free(json);
    ppl_result_free(r);
    /* a rule broken (tp 64 does not divide the 32 heads): a usage error naming it */
    assert_int_equal(ppl_pins_set(p, "tp", "64", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "pp", "1", &err), PPL_OK);
    assert_int_equal(ppl_estimate_pins(f->ctx, p, &r, &err), PPL_EUSAGE);
    assert_null(r);
    assert_string_equal(err.key, "tp");
    ppl_pins_free(p);
}

static void test_search_and_report(void **state)
{
    fixture *f = *state;
    ppl_error err;
    ppl_pins *p = ppl_pins_new();
    assert_int_equal(ppl_pins_set(p, "gpus", "64", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "global_batch", "256", &err), PPL_OK);
    ppl_plan *plan = NULL;
    assert_int_equal(ppl_plan_search(f->ctx, p, 3, &plan, &err), PPL_OK);
    assert_int_equal(ppl_plan_count(plan), 3);
    for (size_t i = 1; i < ppl_plan_count(plan); i++)
        assert_true(ppl_result_step_time_s(ppl_plan_result(plan, i - 1)) <=
                    ppl_result_step_time_s(ppl_plan_result(plan, i)));
    assert_null(ppl_plan_result(plan, 3));
    char *html = NULL;
    assert_int_equal(ppl_plan_html(plan, &html, &err), PPL_OK);
    assert_non_null(strstr(html, "<html"));
    ppl_free(html);
    ppl_plan_free(plan);
    /* nothing fits: 1 GPU for 8B parameters and their Adam state, none of it on
     * the host (16 B a parameter: 128 GB) */
    assert_int_equal(ppl_pins_set(p, "gpus", "1", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "offload_optimizer", "0", &err), PPL_OK);
    assert_int_equal(ppl_pins_set(p, "global_batch", "8", &err), PPL_OK);
    assert_int_equal(ppl_plan_search(f->ctx, p, 3, &plan, &err), PPL_INFEASIBLE);
    assert_null(plan);
    assert_true(strlen(err.message) > 0);
    ppl_pins_free(p);
}

static void test_grid(void **state)
{
    fixture *f = *state;
    ppl_error err;
    ppl_grid *g = NULL;
    const char *sweeps[] = {"gpus=64,128"};
    assert_int_equal(ppl_grid_run(f->model, f->topo, sweeps, 1, NULL, 15e12, &g, &err), PPL_OK);
    assert_int_equal(ppl_grid_count(g), 2);
    assert_string_equal(ppl_grid_values(g, 0), "gpus=64");
    assert_string_equal(ppl_grid_values(g, 1), "gpus=128");
    assert_null(ppl_grid_values(g, 2));
    assert_non_null(ppl_grid_best(g, 0));
    /* twice the GPUs train no slower */
    assert_true(ppl_grid_days(g, 1) > 0 && ppl_grid_days(g, 1) <= ppl_grid_days(g, 0));
    ppl_grid_free(g);
    const char *bad[] = {"warp_drive=1,2"};
    assert_int_equal(ppl_grid_run(f->model, f->topo, bad, 1, NULL, 0, &g, &err), PPL_EUSAGE);
    assert_null(g);
}

static void test_size_and_calibrate(void **state)
{
    fixture *f = *state;
    ppl_error err;
    int64_t gpus = 0;
    ppl_result *best = NULL;
    /* 1T tokens of Llama 3 8B in 30 days */
    assert_int_equal(ppl_size_cluster(f->ctx, NULL, 1e12, 30, &gpus, &best, &err), PPL_OK);
    assert_true(gpus >= 8 && gpus <= 1024);
    assert_non_null(best);
    ppl_result_free(best);
    size_t runs = 0;
    double mean = -1, max = -1;
    assert_int_equal(ppl_calibrate_check(PPL_TEST_SOURCE_ROOT "/tests/data/balanced_split_run.json",
                                         &runs, &mean, &max, &err),
                     PPL_OK);
    assert_int_equal(runs, 1);
    assert_true(mean >= 0 && mean == max);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),  cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_context),  cmocka_unit_test(test_pins),
        cmocka_unit_test(test_estimate), cmocka_unit_test(test_search_and_report),
        cmocka_unit_test(test_grid),     cmocka_unit_test(test_size_and_calibrate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
