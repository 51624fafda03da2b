/*
 * test_sizing.c - the fewest GPUs for N tokens in D days, and for one replica.
 */
#include "testutil.h"

#include <jansson.h>

#include "studies/sizing.h"

static ppl_pins pins_with_batch(int64_t batch)
{
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = batch;
    return pins;
}

/*
 * llama3-8b on 1T tokens in 30 days at a batch of 512 on the superpod (8 GPUs a
 * server).  Doubling plans 1, 2, 4 and 8 servers: 4 are too slow, 8 fast enough;
 * bisection then plans 6 (fast enough) and 5 (too slow): 6 servers, 48 GPUs,
 * after 6 searches.  The answer is the least in whole servers: 40 GPUs miss the
 * deadline.  GPU-hours = 48 x days x 24; at 2 per GPU-hour the cost is twice that.
 */
static void test_in_time(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins = pins_with_batch(512);
    ppl_sizing_opts o = {.pins = &pins, .tokens = 1e12, .days = 30, .gpu_hour_price = 2};
    ppl_sizing r;
    ppl_error err;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_OK);
    assert_int_equal(r.gpus, 48);
    assert_int_equal(r.search.plans, 6);
    assert_false(r.global_batch_assumed);
    assert_int_equal(r.best.config.global_batch, 512);
    assert_true(r.best.config.gpus <= 48);
    assert_true(r.days <= 30.0);
    /* failure-free 1e12 tokens / tokens per s; wall-clock that / goodput, where a
     * 48-GPU job fails every 50,680 / 48 = 1,056 h: goodput above 99% */
    assert_close(r.failure_free_s, 1e12 / (512.0 * 8192.0 / r.best.step_time_s), 1e-12);
    assert_true(r.goodput.goodput > 0.99 && r.goodput.goodput < 1.0);
    assert_close(r.seconds, r.failure_free_s / r.goodput.goodput, 1e-12);
    assert_close(r.days, r.seconds / 86400.0, 1e-15);
    assert_close(r.gpu_hours, 48.0 * r.days * 24.0, 1e-12);
    assert_close(r.cost, 2.0 * r.gpu_hours, 1e-15);

    /* one server fewer misses the deadline */
    pins.gpus = 40;
    ppl_estimate e;
    ppl_search_totals totals = {0};
    ppl_search_opts so = {.objective = PPL_OBJECTIVE_TIME};
    assert_int_equal(ppl_best_plan(&ctx, &pins, &so, &e, &totals, &err), PPL_OK);
    assert_true(ppl_time_to_train_days(1e12, e.tokens_per_s) > 30.0);
}

/*
 * One replica of llama3-8b: 8.03e9 parameters x 16 bytes (bf16 weights and
 * gradients, 2 + 2; Adam's fp32 master weights, momentum and variance, 12) =
 * 128.5 GB, more than one 80 GiB (85.9 GB) GPU holds with dp 1 (nothing to shard
 * over); halved over 2 GPUs, 64.2 GB, it fits.  Counts tried: 1, 2.  No batch is
 * given: the default, 512 sequences of 8192 tokens.  That is with the optimizer on
 * the GPU (pinned); free to offload it, one GPU keeps 8.03e9 x 4 = 32.1 GB (bf16
 * weights and gradients) and its host share holds 8.03e9 x 14 = 112.4 GB (Adam's
 * 12 and a bf16 gradient copy, under the 256 GB of a DGX H100's 2 TB per GPU).
 */
static void test_fit_only(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins = pins_with_batch(PPL_UNSET);
    pins.offload_optimizer = 0.0;
    ppl_sizing_opts o = {.pins = &pins, .fit_only = true};
    ppl_sizing r;
    ppl_error err;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_OK);
    assert_int_equal(r.gpus, 2);
    assert_int_equal(r.search.plans, 2);
    assert_int_equal(r.best.config.dp, 1);
    assert_true(r.global_batch_assumed);
    assert_int_equal(r.best.config.global_batch, 512);
    pins.offload_optimizer = PPL_UNSET;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_OK);
    assert_int_equal(r.gpus, 1);
    assert_close(r.best.config.offload_optimizer, 1.0, 0);
    assert_close(r.best.memory.weights + r.best.memory.gradients, 4.0 * r.best.memory.params,
                 1e-12);
    assert_close(r.best.memory.host, 14.0 * r.best.memory.params, 1e-12);
    assert_close(r.seconds, 0.0, 0);
    assert_close(r.gpu_hours, 0.0, 0);

    /* with tp, pp and cp pinned to 1 one replica is one GPU, which cannot hold
     * it with its optimizer; ZeRO-3 over 2 GPUs would (64.2 GB each), but that is
     * two replicas */
    pins.offload_optimizer = 0.0;
    pins.tp = pins.pp = pins.cp = 1;
    pins.zero = 3;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_INFEASIBLE);
    assert_string_equal(err.message, "one replica of llama3-8b does not fit on all 1024 GPUs of "
                                     "dgx-h100-superpod");
}

/* 1e15 tokens in a day is beyond the whole superpod: PPL_INFEASIBLE saying what
 * all 1,024 GPUs achieve. */
static void test_not_in_time(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins = pins_with_batch(512);
    ppl_sizing_opts o = {.pins = &pins, .tokens = 1e15, .days = 1};
    ppl_sizing r;
    ppl_error err;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_INFEASIBLE);
    assert_contains(err.message, "not within 1 days: all 1024 GPUs of dgx-h100-superpod train "
                                 "1e+15 tokens in ");
    assert_contains(err.message, " at best");
}

/* One server of 8 GPUs with 2 GiB each, 16 GiB in all, against llama3-8b's
 * 128.5 GB: nothing fits, with or without a deadline. */
static void test_nothing_fits(void **state)
{
    (void)state;
    char path[1024];
    json_t *doc;
    ppl_error err;
    snprintf(path, sizeof path, "%s/topologies/dgx-h100-superpod.json", PPL_TEST_SOURCE_ROOT);
    assert_int_equal(ppl_topology_document(path, NULL, &doc, &err), PPL_OK);
    json_object_set_new(doc, "name", json_string("tiny"));
    json_object_del(doc, "tiers");
    assert_int_equal(ppl_topology_patch(doc, "servers", "1", &err), PPL_OK);
    assert_int_equal(ppl_topology_patch(doc, "gpu.memory", "2 GiB", &err), PPL_OK);
    ppl_topology t;
    assert_int_equal(ppl_topology_from_json(doc, "tiny.json", "", NULL, &t, &err), PPL_OK);
    json_decref(doc);
    ppl_model m = test_model("llama3-8b");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins = pins_with_batch(512);
    ppl_sizing_opts o = {.pins = &pins, .tokens = 1e12, .days = 10};
    ppl_sizing r;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_INFEASIBLE);
    assert_string_equal(err.message, "not within 10 days: nothing fits on tiny");
    o.fit_only = true;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_INFEASIBLE);
    assert_string_equal(err.message, "one replica of llama3-8b does not fit on all 8 GPUs of tiny");
}

/*
 * The same job with failures every 80 GPU-hours (a 48-GPU job every 1.67 h, so
 * a 10-minute restart alone costs 600 s / 6,000 s = 10%): the 48 GPUs that train
 * it in 26.9 failure-free days (test_in_time) take more than 30 with failures,
 * and size answers the next server, 56 GPUs, on its days with failures.
 */
static void test_failures_cost_gpus(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins = pins_with_batch(512);
    ppl_goodput_opts g;
    ppl_goodput_opts_init(&g);
    g.mtbf_gpu_hours = 80.0;
    ppl_sizing_opts o = {.pins = &pins, .tokens = 1e12, .days = 30, .goodput = &g};
    ppl_sizing r;
    ppl_error err;
    assert_int_equal(ppl_size(&ctx, &o, &r, &err), PPL_OK);
    assert_int_equal(r.gpus, 56);
    assert_true(r.days <= 30.0);
    assert_close(r.goodput.job_mtbf_s, 80.0 * 3600.0 / (double)r.best.config.gpus, 1e-12);
    assert_close(r.seconds, r.failure_free_s / r.goodput.goodput, 1e-12);

    /* 48 GPUs: in time without failures, late with them */
    pins.gpus = 48;
    ppl_estimate e;
    ppl_search_totals totals = {0};
    ppl_search_opts so = {.objective = PPL_OBJECTIVE_TIME};
    assert_int_equal(ppl_best_plan(&ctx, &pins, &so, &e, &totals, &err), PPL_OK);
    double free_days = ppl_time_to_train_days(1e12, e.tokens_per_s);
    ppl_goodput at48;
    ppl_goodput_of(&g, ctx.figures.params_total, &ctx.memory, &e.config, ctx.stack.stack, &at48);
    assert_close(at48.job_mtbf_s, 6000.0, 1e-12);
    assert_true(free_days < 30.0);
    assert_true(free_days / at48.goodput > 30.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_time),
        cmocka_unit_test(test_fit_only),
        cmocka_unit_test(test_not_in_time),
        cmocka_unit_test(test_nothing_fits),
        cmocka_unit_test(test_failures_cost_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
