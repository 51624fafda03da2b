/*
 * test_pools.c - mixed clusters: loading pools, the pipeline across them.
 */
#include "testutil.h"

#include <jansson.h>

#include "plan/mixed.h"
#include "studies/whatif.h"

static ppl_status load_text(const char *text, ppl_pools *p, ppl_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (!root)
        fail_msg("test JSON does not parse: %s (%s)", jerr.text, text);
    ppl_error_clear(err);
    ppl_status st = ppl_pools_from_json(root, "t.json", NULL, p, err);
    json_decref(root);
    return st;
}

#define NV "\"nvlink\": {\"bandwidth\": \"450 GB/s\"}, \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"}"
#define POOL(name, gpu, servers)                                                                   \
    "{\"name\": \"" name "\", \"gpu\": \"" gpu "\", \"servers\": " #servers                        \
    ", \"gpus_per_server\": 8, " NV "}"
#define CROSS "\"cross_pool\": {\"bandwidth\": \"12.5 GB/s\"}"

static void test_load(void **state)
{
    (void)state;
    ppl_pools *p = malloc(sizeof *p);
    ppl_error err;
    assert_int_equal(load_text("{\"pools\": [" POOL("a", "H100", 4) ", " POOL(
                                   "b", "B200", 2) "], " CROSS
                                                   ", \"transport\": {\"rtt\": \"20 us\"}}",
                               p, &err),
                     PPL_OK);
    assert_int_equal(p->n, 2);
    assert_string_equal(p->pool[0].name, "a");
    assert_string_equal(p->pool[1].name, "b");
    assert_int_equal(p->pool[0].servers, 4);
    assert_int_equal(p->pool[1].servers, 2);
    assert_close(p->pool[1].gpu.flops[PPL_PRECISION_BF16], 2250e12, 1e-12); /* B200 datasheet */
    assert_close(p->cross_bps, 12.5e9, 1e-12);
    assert_close(p->cross_latency_s, 5e-6, 1e-12);          /* the default */
    assert_close(p->pool[1].transport.rtt_s, 20e-6, 1e-12); /* the root's, shared */
    /* no pools: n = 0 */
    assert_int_equal(load_text("{\"gpu\": \"H100\"}", p, &err), PPL_OK);
    assert_int_equal(p->n, 0);
    free(p);
}

static void test_errors(void **state)
{
    (void)state;
    ppl_pools *p = malloc(sizeof *p);
    ppl_error err;
    static const struct {
        const char *text, *key;
    } cases[] = {
        {"{\"pools\": [" POOL("a", "H100", 4) "]}", "cross_pool"},
        {"{\"pools\": [" POOL("a", "H100", 4) "], \"cross_pool\": {\"bandwidth\": 0}}",
         "cross_pool.bandwidth"},
        {"{\"pools\": [" POOL("a", "H100", 4) "], \"cross_pool\": {\"bandwidth\": \"1 GB/s\", "
                                              "\"latency\": -1}}",
         "cross_pool.latency"},
        {"{\"pools\": [" POOL("a", "H100", 0) "], " CROSS "}", "pools[0].servers"},
        {"{\"pools\": [" POOL("a", "H100", 4) ", " POOL("b", "X900", 4) "], " CROSS "}",
         "pools[1].gpu"},
        {"{\"pools\": [" POOL("a", "H100", 4) ", " POOL("a", "B200", 4) "], " CROSS "}",
         "pools[1].name"},
        {"{\"pools\": [], " CROSS "}", "pools"},
        {"{\"pools\": [" POOL("a", "H100", 4) "], \"gpu\": \"H100\", " CROSS "}", "gpu"},
        {"{\"pools\": [{\"name\": \"a\", \"gpu\": \"H100\", \"gpus_per_server\": 8, " NV
         "}], " CROSS "}",
         "pools[0].servers"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(load_text(cases[i].text, p, &err), PPL_EINPUT);
        if (strcmp(err.key, cases[i].key) != 0)
            fail_msg("case %zu: key %s, expected %s (%s)", i, err.key, cases[i].key, err.message);
    }
    free(p);
}

/*
 * A send across pools: latency + bytes / bandwidth.  One microbatch of 2,048
 * tokens of hidden 4,096 in 16 bits is 16,777,216 bytes, tp 8 ranks send 1/8
 * each, 2,097,152 bytes, over 12.5 GB/s: 167.77 us, + 5 us = 172.77 us.
 */
static void test_send(void **state)
{
    (void)state;
    assert_close(ppl_mixed_send_s(2097152.0, 12.5e9, 5e-6), 172.77216e-6, 1e-9);
}

/*
 * Layers of two pools' stages by their speed: two stages a pool, a layer taking
 * 1 s on the slow pool and 0.5 s on the fast one, 12 layers.  The slowest stage z
 * holds n_k <= z / tau_k layers: z = 2 gives 2 + 2 + 4 + 4 = 12, and any z < 2
 * gives at most 1 + 1 + 3 + 3 = 8: layers 2, 2, 4, 4, z = 2.  With room for 3
 * layers a GPU on the fast pool, it takes 3 + 3 and the slow pool the other 6:
 * 3, 3, 3, 3, z = 3.
 */
static void test_split_by_speed_and_memory(void **state)
{
    (void)state;
    const double tau[4] = {1.0, 1.0, 0.5, 0.5}, c[4] = {0}, mu[4] = {1, 1, 1, 1};
    double cap[4] = {100, 100, 100, 100}, z = 0;
    int64_t n[4];
    assert_int_equal(ppl_balance_solve(4, 12, tau, c, mu, cap, n, &z), PPL_OK);
    assert_int_equal(n[0], 2);
    assert_int_equal(n[1], 2);
    assert_int_equal(n[2], 4);
    assert_int_equal(n[3], 4);
    assert_close(z, 2.0, 1e-9);
    cap[2] = cap[3] = 3.0;
    assert_int_equal(ppl_balance_solve(4, 12, tau, c, mu, cap, n, &z), PPL_OK);
    for (int k = 0; k < 4; k++)
        assert_int_equal(n[k], 3);
    assert_close(z, 3.0, 1e-9);
}

/* A pipeline of a GPT of 16 layers on an H100 pool and a B200 pool. */
static void test_cost_h100_b200(void **state)
{
    (void)state;
    ppl_pools *p = malloc(sizeof *p);
    ppl_error err;
    assert_int_equal(
        load_text(
            "{\"pools\": [" POOL("h", "H100", 4) ", " POOL(
                "b", "B200", 4) "], \"cross_pool\": {\"bandwidth\": \"12.5 GB/s\", \"latency\": "
                                "\"5 us\"}}",
            p, &err),
        PPL_OK);
    ppl_model m = test_gpt(16, 4096, 32, 2048);
    ppl_eval_ctx ctx[2];
    /* the kernels alone: at tp 8 a layer this small launches for longer than it
     * runs (stage.c), and the host would pace both pools alike */
    for (int i = 0; i < 2; i++) {
        ppl_eval_ctx_init(&ctx[i], &m, &p->pool[i], PPL_STACK_NEMO_2025);
        ctx[i].stack.host_op_s = 0.0;
    }
    ppl_mixed_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.config = test_config(32, 8, 4, 1, 16, &m); /* tp 8, dp 1 */
    plan.config.dp = 1;
    plan.config.microbatches = 16;
    plan.config.zero = 1;
    plan.config.sequence_parallel = true;
    plan.config.flash_attention = true;
    plan.npools = 2;
    plan.order[0] = 0;
    plan.order[1] = 1;
    plan.stages[0] = plan.stages[1] = 2;
    assert_int_equal(ppl_mixed_cost(ctx, p, &plan, &err), PPL_OK);
    assert_int_equal(plan.config.pp, 4);
    assert_int_equal(plan.gpus[0], 16);
    assert_int_equal(plan.gpus[1], 16);
    /* the send across pools, as derived above */
    assert_close(plan.cross_send_s, 172.77216e-6, 1e-9);
    int64_t sum = 0;
    for (int k = 0; k < 4; k++)
        sum += plan.layers[k];
    assert_int_equal(sum, 16);
    /* the B200 (2,250 TFLOP/s, 8 TB/s) runs a layer faster than the H100 (989,
     * 3.35): its stages hold more of them */
    assert_true(plan.layers[2] + plan.layers[3] > plan.layers[0] + plan.layers[1]);
    /* the step is the estimator's, each stage under its pool: paced by the slowest
     * stage, m x it plus at most one pass through the others (the bubble; Narayanan
     * et al. SC'21 §2.2's closed form with unequal stages, exact only for equal
     * ones: here the slowest stage is the last, 4.25 ms, and the bubble is the
     * others' 11.05 ms, the bound itself, to rounding), never below the pipeline's
     * lower bound, and its parts add up to it (compute, bubble, exposed
     * communication, optimizer, overhead) */
    const ppl_estimate *e = &plan.estimate;
    double worst = 0, total = 0;
    for (int k = 0; k < 4; k++) {
        worst = fmax(worst, plan.stage_s[k]);
        total += plan.stage_s[k];
    }
    assert_true(e->time.bubble > 0.0 && e->time.bubble <= (total - worst) * (1.0 + 1e-9));
    assert_true(e->step_time_s >= e->floor_s);
    assert_close(e->step_time_s,
                 e->time.compute + e->time.bubble + e->time.exposed_comm + e->time.host +
                     e->time.optimizer + e->time.overhead,
                 1e-9);
    assert_close(e->tokens_per_s, 16.0 * 2048.0 / e->step_time_s, 1e-12);
    assert_true(e->time.optimizer > 0); /* costed, as every step's is */
    /* MFU against each pool's own peak: 16 H100 and 16 B200 GPUs */
    assert_close(e->mfu, e->model_tflops_per_gpu * 1e12 * 32.0 / (16.0 * 989e12 + 16.0 * 2250e12),
                 1e-9);
    /* the boundary stages pay the cross-pool send: the same pools joined by a link
     * 100 times faster take less time */
    ppl_mixed_plan fast = plan;
    p->cross_bps *= 100.0;
    assert_int_equal(ppl_mixed_cost(ctx, p, &fast, &err), PPL_OK);
    assert_true(fast.cross_send_s < plan.cross_send_s);
    assert_true(fast.estimate.step_time_s < plan.estimate.step_time_s);
    /* what the mixed model does not cost is refused, not guessed */
    ppl_mixed_plan cp = plan;
    cp.config.cp = 2;
    assert_int_equal(ppl_mixed_cost(ctx, p, &cp, &err), PPL_EUSAGE);
    /* more GPUs than a pool has */
    ppl_mixed_plan big = plan;
    big.stages[0] = 5;
    assert_int_equal(ppl_mixed_cost(ctx, p, &big, &err), PPL_EUSAGE);
    free(p);
}

/* The searches' cluster: two H100 servers and one B200 server joined by the
 * cross-pool link, and each pool's context for model m (free the pools). */
static ppl_pools *h100_b200(const ppl_model *m, ppl_eval_ctx ctx[2])
{
    ppl_pools *p = malloc(sizeof *p);
    ppl_error err;
    assert_non_null(p);
    assert_int_equal(
        load_text("{\"pools\": [" POOL("h", "H100", 2) ", " POOL("b", "B200", 1) "], " CROSS "}", p,
                  &err),
        PPL_OK);
    for (int i = 0; i < 2; i++)
        ppl_eval_ctx_init(&ctx[i], m, &p->pool[i], PPL_STACK_NEMO_2025);
    return p;
}

/* The search across the pools: every plan it returns fits, uses every pool, and is
 * no slower than the ones after it.  Ranked with each pool's own full search, the
 * list is ordered too, and the pools alone come from ppl_search. */
static void test_search(void **state)
{
    (void)state;
    ppl_error err;
    ppl_model m = test_gpt(12, 2048, 16, 2048);
    ppl_eval_ctx ctx[2];
    ppl_pools *p = h100_b200(&m, ctx);
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = 32;
    ppl_mixed_plan out[40];
    ppl_mixed_search_stats st = {0, 0, 0, 0};
    size_t n = ppl_mixed_search(ctx, p, &pins, out, 5, &st);
    assert_true(n > 0 && n <= 5);
    assert_true(st.feasible >= n && st.evaluated >= st.feasible);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].npools, 2);
        assert_int_equal(out[i].config.global_batch, 32);
        assert_true(out[i].estimate.memory.fits);
        if (i > 0)
            assert_true(out[i].estimate.step_time_s >= out[i - 1].estimate.step_time_s);
    }
    ppl_search_opts o = {.pins = &pins, .top = 40, .objective = PPL_OBJECTIVE_TIME};
    n = ppl_mixed_plan_all(ctx, p, &o, out, &st, &err);
    assert_int_equal(n, 40);
    bool alone = false;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            assert_true(out[i].estimate.step_time_s >= out[i - 1].estimate.step_time_s);
        if (out[i].npools == 1) { /* a pool's own full search: its estimate's layers */
            alone = true;
            assert_int_equal(out[i].gpus[0], out[i].estimate.config.gpus);
        }
    }
    assert_true(alone);
    free(p);
}

/* The search across the pools prunes (the microbatches times the least slowest
 * stage of any split on the stages' time lines; the pipeline's bound before it
 * is run) without changing its answer: the same plans, in the same order, as
 * costing every assignment, for a top of 1, 5 and 40, and for a ceiling set by
 * plans elsewhere.  Costing every assignment, none is below the bound (a bound
 * 10% higher finds some). */
static void test_search_pruned_equals_exhaustive(void **state)
{
    (void)state;
    ppl_model m = test_gpt(24, 4096, 32, 4096);
    ppl_eval_ctx ctx[2];
    ppl_pools *p = h100_b200(&m, ctx);
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = 64;
    static ppl_mixed_plan a[40], b[40];
    size_t pruned = 0;
    const size_t tops[] = {1, 5, 40};
    for (size_t t = 0; t < 4; t++) {
        size_t top = t < 3 ? tops[t] : 5;
        /* the fourth: a ceiling at the exhaustive list's third plan */
        double ceiling = t < 3 ? INFINITY : b[2].estimate.step_time_s;
        ppl_mixed_search_stats sa = {0, 0, 0, 0}, sb = {0, 0, 0, 0};
        size_t na = ppl_mixed_search_within(ctx, p, &pins, false, ceiling, a, top, &sa);
        size_t nb = ppl_mixed_search_within(ctx, p, &pins, true, INFINITY, b, top, &sb);
        assert_int_equal(sb.pruned, 0);
        assert_int_equal(sb.bounds_broken, 0);
        pruned += sa.pruned;
        size_t expect = nb;
        if (t == 3) /* those at most the ceiling (the pools alone would fill the rest) */
            for (expect = 0; expect < nb && b[expect].estimate.step_time_s <= ceiling; expect++)
                ;
        /* past the ceiling, what the bounds let through ranks after the rest */
        assert_true(na >= expect);
        for (size_t i = expect; i < na; i++)
            assert_true(a[i].estimate.step_time_s > ceiling);
        for (size_t i = 0; i < expect; i++) {
            assert_true(a[i].estimate.step_time_s == b[i].estimate.step_time_s);
            assert_int_equal(a[i].config.tp, b[i].config.tp);
            assert_int_equal(a[i].config.dp, b[i].config.dp);
            assert_int_equal(a[i].config.recompute, b[i].config.recompute);
            for (int k = 0; k < a[i].npools; k++)
                assert_int_equal(a[i].stages[k], b[i].stages[k]);
        }
    }
    assert_true(pruned > 0);
    free(p);
}

/* whatif's paths into a pool: "pools[1].servers" sets that pool's key, through
 * the same loader; a pool the file does not have, or a key no pool has, is a
 * usage error. */
static void test_patch(void **state)
{
    (void)state;
    ppl_pools *p = malloc(sizeof *p);
    ppl_error err;
    json_error_t jerr;
    json_t *doc = json_loads(
        "{\"pools\": [" POOL("a", "H100", 4) ", " POOL("b", "B200", 2) "], " CROSS "}", 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(ppl_topology_patch(doc, "pools[1].servers", "16", &err), PPL_OK);
    assert_int_equal(ppl_topology_patch(doc, "pools[0].gpu.memory", "96GiB", &err), PPL_OK);
    assert_int_equal(ppl_topology_patch(doc, "cross_pool.bandwidth", "50GB/s", &err), PPL_OK);
    assert_int_equal(ppl_pools_from_json(doc, "t.json", NULL, p, &err), PPL_OK);
    assert_int_equal(p->pool[1].servers, 16);
    assert_int_equal(p->pool[0].servers, 4);
    assert_close(p->pool[0].gpu.memory_bytes, 96.0 * 1073741824.0, 1e-12);
    assert_close(p->cross_bps, 50e9, 1e-12);
    assert_int_equal(ppl_topology_patch(doc, "pools[2].servers", "16", &err), PPL_EUSAGE);
    assert_contains(err.message, "2 pools");
    assert_int_equal(ppl_topology_patch(doc, "pools[0].name", "x", &err), PPL_EUSAGE);
    json_decref(doc);
    free(p);
}

/* On one pool, a pipeline costed as a mixed plan against the full estimator for
 * the same configuration: the same estimator, with the balancer's split of the
 * layers instead of the default one, so the two agree closely (GPT-3 175B on the
 * DGX H100 SuperPOD, 96 layers on 4 stages; within 3%). */
static void test_one_pool_agrees_with_estimate(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_pools *p = calloc(1, sizeof *p);
    p->n = 1;
    p->pool[0] = test_topology("dgx-h100-superpod");
    p->cross_bps = 12.5e9;
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &p->pool[0], PPL_STACK_NEMO_2025);
    const int64_t tp[2] = {8, 4}, dp[2] = {8, 16};
    for (int i = 0; i < 2; i++) {
        ppl_config c = test_config(tp[i] * 4 * dp[i], tp[i], 4, 1, 256, &m);
        c.zero = 1;
        c.sequence_parallel = c.flash_attention = true;
        ppl_estimate e;
        ppl_estimate_config(&ctx, &c, &e);
        assert_true(e.memory.fits);
        ppl_mixed_plan plan;
        memset(&plan, 0, sizeof plan);
        plan.config = c;
        plan.npools = 1;
        plan.stages[0] = 4;
        ppl_error err;
        assert_int_equal(ppl_mixed_cost(&ctx, p, &plan, &err), PPL_OK);
        assert_close(plan.estimate.step_time_s, e.step_time_s, 0.03);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_send),
        cmocka_unit_test(test_split_by_speed_and_memory),
        cmocka_unit_test(test_cost_h100_b200),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_search_pruned_equals_exhaustive),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_one_pool_agrees_with_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
