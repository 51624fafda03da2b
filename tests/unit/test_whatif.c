/*
 * test_whatif.c - sweeps, topology patches, the default batch, time to train,
 * GPU-hours and the best plan at a point.
 */
#include "testutil.h"

#include <jansson.h>

#include "studies/whatif.h"

static json_t *topology_doc(const char *name)
{
    char path[1024];
    json_t *doc = NULL;
    ppl_error err;
    snprintf(path, sizeof path, "%s/topologies/%s.json", PPL_TEST_SOURCE_ROOT, name);
    if (ppl_topology_document(path, NULL, &doc, &err) != PPL_OK)
        fail_msg("%s: %s", path, err.message);
    return doc;
}

static ppl_topology load_doc(const json_t *doc)
{
    ppl_topology t;
    ppl_error err;
    if (ppl_topology_from_json(doc, "t.json", "", NULL, &t, &err) != PPL_OK)
        fail_msg("%s: %s", err.key, err.message);
    return t;
}

/* 4M tokens per step (4,194,304) in a power of two of sequences, rounded in log
 * space:
 *   8192-token sequences: 4194304 / 8192 = 512 = 2^9
 *   2048: 2048 = 2^11
 *   5000: 838.9, log2 = 9.71, rounds to 10: 1024 (not 512: the nearer power in
 *         ratio)
 *   6000: 699.1, log2 = 9.45, rounds to 9: 512
 *   8M tokens: half a sequence, at least one: 1 */
static void test_default_batch(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    assert_int_equal(m.seq_len, 8192);
    assert_int_equal(ppl_default_global_batch(&m), 512);
    m = test_model("gpt3-175b");
    assert_int_equal(ppl_default_global_batch(&m), 2048);
    m.seq_len = 5000;
    assert_int_equal(ppl_default_global_batch(&m), 1024);
    m.seq_len = 6000;
    assert_int_equal(ppl_default_global_batch(&m), 512);
    m.seq_len = 8388608;
    assert_int_equal(ppl_default_global_batch(&m), 1);
}

/* Time to train = tokens / (global_batch * seq_len / step time).  A batch of 512
 * sequences of 8192 tokens is 4,194,304 tokens; a step of 4.194304 s makes
 * 1e6 tokens/s, so 1e12 tokens take 1e6 s = 11.574 days.  GPU-hours = gpus x
 * days x 24: 1024 GPUs x 11.574 days x 24 = 284,444.4. */
static void test_time_to_train_and_gpu_hours(void **state)
{
    (void)state;
    double tokens_per_s = 512.0 * 8192.0 / 4.194304;
    assert_close(tokens_per_s, 1e6, 1e-15);
    assert_close(ppl_time_to_train_s(1e12, tokens_per_s), 1e6, 1e-15);
    assert_close(ppl_time_to_train_days(1e12, tokens_per_s), 11.574074074074074, 1e-14);
    assert_close(ppl_gpu_hours(1024, 1e6), 284444.44444444444, 1e-14);
    assert_close(ppl_gpu_hours(1024, 1e6), 1024 * ppl_time_to_train_days(1e12, tokens_per_s) * 24,
                 1e-14);
    assert_close(ppl_gpu_hours(1, 3600.0), 1.0, 1e-15);
}

static void test_sweep_parse_good(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_sweep sw;
    ppl_error err;
    assert_int_equal(ppl_sweep_parse("rails.nic_bandwidth=200 Gb/s,400 Gb/s", doc, &sw, &err),
                     PPL_OK);
    assert_string_equal(sw.key, "rails.nic_bandwidth");
    assert_int_equal(sw.kind, PPL_SWEEP_TOPOLOGY);
    assert_int_equal(sw.nvalues, 2);
    assert_string_equal(ppl_sweep_value(&sw, 0), "200 Gb/s");
    assert_string_equal(ppl_sweep_value(&sw, 1), "400 Gb/s");
    /* a copy keeps its values (they are offsets, not pointers) */
    ppl_sweep copy = sw;
    memset(&sw, 0, sizeof sw);
    assert_string_equal(ppl_sweep_value(&copy, 1), "400 Gb/s");
    assert_int_equal(ppl_sweep_parse("gpus=1024,2048", doc, &sw, &err), PPL_OK);
    assert_int_equal(sw.kind, PPL_SWEEP_GPUS);
    assert_int_equal(sw.nvalues, 2);
    assert_string_equal(ppl_sweep_value(&sw, 1), "2048");
    assert_int_equal(ppl_sweep_parse("global_batch=512", doc, &sw, &err), PPL_OK);
    assert_int_equal(sw.kind, PPL_SWEEP_GLOBAL_BATCH);
    assert_int_equal(ppl_sweep_parse("spares=0,64", doc, &sw, &err), PPL_OK);
    assert_int_equal(sw.kind, PPL_SWEEP_SPARES);
    assert_int_equal(sw.nvalues, 2);
    /* the superpod has two tiers: 0 and 1 */
    assert_int_equal(ppl_sweep_parse("tiers[1].oversubscription=1,2,4", doc, &sw, &err), PPL_OK);
    assert_int_equal(sw.nvalues, 3);
    assert_int_equal(ppl_sweep_parse("rail_only=false,true", doc, &sw, &err), PPL_OK);
    assert_int_equal(ppl_sweep_parse("gpu.flops.fp8=1 PFLOP/s", doc, &sw, &err), PPL_OK);
    json_decref(doc);
}

static void expect_bad(const json_t *doc, const char *spec, const char *message)
{
    ppl_sweep sw;
    ppl_error err;
    ppl_error_clear(&err);
    assert_int_equal(ppl_sweep_parse(spec, doc, &sw, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "sweep");
    assert_string_equal(err.file, "");
    assert_string_equal(err.message, message);
}

static void test_sweep_parse_bad(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    expect_bad(
        doc, "foo=1",
        "unknown key 'foo' (use gpus, global_batch, seq_len, spares or a topology path such as "
        "rails.nic_bandwidth, nvlink.domain_gpus, tiers[1].oversubscription, rail_only, "
        "transport.loss_rate)");
    expect_bad(doc, "rails.nic_bandwith=400Gb/s",
               "unknown key 'rails.nic_bandwith' (use gpus, global_batch, seq_len, spares or a "
               "topology path such "
               "as rails.nic_bandwidth, nvlink.domain_gpus, tiers[1].oversubscription, rail_only, "
               "transport.loss_rate)");
    expect_bad(doc, "gpus=,,", "gpus: value 1 is empty");
    expect_bad(doc, "gpus=", "gpus: no values");
    /* a value left out or typed twice is a slip: neither dropped nor run twice */
    expect_bad(doc, "gpus=1024,,2048", "gpus: value 2 is empty");
    expect_bad(doc, "gpus=1024,2048,", "gpus: value 3 is empty");
    expect_bad(doc, "gpus=1024,2048,1024", "gpus: '1024' is given twice");
    expect_bad(doc, "tiers[2].servers=1",
               "unknown key 'tiers[2].servers': the topology has 2 tiers");
    expect_bad(doc, "tiers[-1].latency=1us",
               "unknown key 'tiers[-1].latency': the topology has 2 tiers");
    expect_bad(doc, "tiers[1].name=x",
               "unknown key 'tiers[1].name' (a tier has servers, oversubscription, latency, "
               "rail_optimized)");
    /* names, whole objects and precisions no training runs in are not swept */
    ppl_sweep sw;
    ppl_error err;
    const char *fixed[] = {"name=x",           "source=x",        "gpu=H100",
                           "gpu.name=x",       "gpu.flops=1",     "nvlink=1",
                           "gpu.flops.tf32=1", "tiers=1",         "tiers[].servers=1",
                           "tiers[1]=1",       "schema_version=1"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        assert_int_equal(ppl_sweep_parse(fixed[i], doc, &sw, &err), PPL_EUSAGE);
        assert_contains(err.message, "unknown key");
    }
    char spec[128];
    memset(spec, 'a', 64);
    snprintf(spec + 64, sizeof spec - 64, "=1");
    expect_bad(doc, spec, "key too long");
    /* 257 distinct values, one more than a sweep holds */
    char many[1100] = "gpus=";
    for (int i = 1; i <= 257; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "", i);
    expect_bad(doc, many, "gpus: at most 256 values");
    json_decref(doc);
}

/* A bandwidth without a unit parses as a sweep (a sweep knows no units) but the
 * point's topology is refused by the loader: a plain number is in B/s, and 800
 * B/s is below its 1 Gb/s = 125 MB/s floor. */
static void test_unitless_bandwidth(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_sweep sw;
    ppl_error err;
    assert_int_equal(ppl_sweep_parse("rails.nic_bandwidth=800", doc, &sw, &err), PPL_OK);
    ppl_pins pins;
    ppl_pins_init(&pins);
    ppl_topology t;
    int idx = 0;
    assert_int_equal(ppl_whatif_point(doc, "dgx.json", &sw, 1, &idx, &pins, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "sweep");
    assert_contains(err.message, "this point gives an invalid topology: dgx.json: "
                                 "rails.nic_bandwidth: expected at least 125 MB/s, found 800 B/s");
    assert_contains(err.message, "give a unit");
    json_decref(doc);
}

/* The grid of 3 x 2 values, the last sweep fastest: point 5 is (2, 1), point 3
 * (1, 1).  100 x 100 = 10,000 points is the most; 101 x 100 is refused. */
static void test_grid(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_sweep sw[3];
    size_t points;
    ppl_error err;
    const char *specs[] = {"gpus=8,16,32", "rail_only=false,true"};
    assert_int_equal(ppl_sweeps_parse(specs, 2, doc, sw, &points, &err), PPL_OK);
    assert_int_equal(points, 6);
    int idx[2];
    ppl_sweep_point(sw, 2, 5, idx);
    assert_int_equal(idx[0], 2);
    assert_int_equal(idx[1], 1);
    ppl_sweep_point(sw, 2, 3, idx);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 1);
    char a100[600] = "gpus=", a101[sizeof a100 + 8], b100[600] = "global_batch=";
    for (int i = 1; i <= 100; i++) {
        snprintf(a100 + strlen(a100), sizeof a100 - strlen(a100), "%s%d", i > 1 ? "," : "", i);
        snprintf(b100 + strlen(b100), sizeof b100 - strlen(b100), "%s%d", i > 1 ? "," : "", i);
    }
    snprintf(a101, sizeof a101, "%s,101", a100);
    const char *at_most[] = {a100, "rail_only=true", b100};
    assert_int_equal(ppl_sweeps_parse(at_most, 3, doc, sw, &points, &err), PPL_OK);
    assert_int_equal(points, 10000);
    /* the grid is checked after each sweep: the unknown key after it is not reached */
    const char *too_many[] = {a101, b100, "foo=1"};
    assert_int_equal(ppl_sweeps_parse(too_many, 3, doc, sw, &points, &err), PPL_EUSAGE);
    assert_string_equal(err.message, "the grid has more than 10000 points");
    json_decref(doc);
}

/* What a sweep may set is the settable rows of the loader's key table. */
static void test_settable_paths(void **state)
{
    (void)state;
    const char *settable[] = {"gpu.memory",           "gpu.hbm_bandwidth",
                              "gpu.flops.bf16",       "gpu.flops.fp16",
                              "gpu.flops.fp8",        "servers",
                              "gpus_per_server",      "nvlink.domain_gpus",
                              "nvlink.bandwidth",     "nvlink.latency",
                              "nvlink.sharp",         "transport.sharp",
                              "rails.count",          "rails.nic_bandwidth",
                              "rails.latency",        "rail_only",
                              "switch_radix",         "transport.protocol",
                              "transport.mtu",        "transport.loss_rate",
                              "transport.retransmit", "transport.rtt",
                              "tiers[].servers",      "tiers[].oversubscription",
                              "tiers[].latency",      "tiers[].rail_optimized",
                              "nvlink.fabric",        "gpu.host_link",
                              "gpu.flops.mxfp8",      "gpu.flops.nvfp4",
                              "cross_pool.bandwidth", "cross_pool.latency"};
    size_t n = 0;
    for (const ppl_topology_key *k = ppl_topology_keys; k->path; k++)
        n += k->settable;
    assert_int_equal(n, sizeof settable / sizeof *settable);
    for (size_t i = 0; i < n; i++) {
        const ppl_topology_key *k = ppl_topology_key_find(settable[i]);
        assert_non_null(k);
        assert_true(k->settable);
    }
    assert_false(ppl_topology_key_find("tiers[].name")->settable);
    assert_false(ppl_topology_key_find("gpu.flops.fp32")->settable);
    /* MXFP4 is a datasheet peak no training precision runs in */
    assert_false(ppl_topology_key_find("gpu.flops.mxfp4")->settable);
    assert_null(ppl_topology_key_find("tiers[0].servers")); /* the table's spelling only */
    assert_null(ppl_topology_key_find("rails.nic_bandwith"));
}

/* The loader knows its keys from the same table: a misspelt tier key warns with
 * the table's spelling. */
static int warnings;
static char warning[512];
static void collect(void *ctx, const char *file, const char *key, const char *message)
{
    (void)ctx;
    warnings++;
    snprintf(warning, sizeof warning, "%s: %s: %s", file, key, message);
}

static void test_loader_keys(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_diag diag = {.warn = collect};
    ppl_topology t;
    ppl_error err;
    warnings = 0;
    assert_int_equal(ppl_topology_from_json(doc, "t.json", "", &diag, &t, &err), PPL_OK);
    assert_int_equal(warnings, 0);
    json_object_set_new(json_array_get(json_object_get(doc, "tiers"), 0), "oversubscriptin",
                        json_integer(2));
    json_object_set_new(json_object_get(doc, "transport"), "mtus", json_integer(2));
    assert_int_equal(ppl_topology_from_json(doc, "t.json", "", &diag, &t, &err), PPL_OK);
    assert_int_equal(warnings, 2);
    assert_string_equal(warning, "t.json: transport.mtus: unknown key, ignored (did you mean "
                                 "'mtu'?)");
    json_decref(doc);
}

/* tiers[1].oversubscription = 4 on h100-64k (leaf, pod, core): only that value
 * changes.  Traffic leaving a pod of 128 servers then gets 50 GB/s / 4 = 12.5
 * GB/s per GPU, and the bisection, 65,536 x 50 GB/s / 2 = 1.6384 PB/s at 1:1, is
 * a quarter of that: 409.6 TB/s. */
static void test_patch_tier_oversubscription(void **state)
{
    (void)state;
    json_t *doc = topology_doc("h100-64k");
    json_t *before = json_deep_copy(doc);
    ppl_error err;
    assert_int_equal(ppl_topology_patch(doc, "tiers[1].oversubscription", "4", &err), PPL_OK);
    json_t *tier1 = json_array_get(json_object_get(doc, "tiers"), 1);
    assert_int_equal(json_integer_value(json_object_get(tier1, "oversubscription")), 4);
    assert_false(json_equal(doc, before));
    /* put the old value back: the documents are equal again, so nothing else moved */
    json_object_set_new(tier1, "oversubscription", json_real(1.0));
    assert_true(json_equal(doc, before));
    assert_int_equal(ppl_topology_patch(doc, "tiers[1].oversubscription", "4", &err), PPL_OK);
    ppl_topology t = load_doc(doc);
    assert_close(t.tiers[0].oversubscription, 1.0, 0);
    assert_close(t.tiers[1].oversubscription, 4.0, 0);
    assert_close(t.tiers[2].oversubscription, 1.0, 0);
    ppl_topology_figures f;
    ppl_topology_derive(&t, &f);
    assert_close(f.tiers[2].gpu_bandwidth_bps, 12.5e9, 1e-15);
    assert_close(f.bisection_bps, 409.6e12, 1e-15);
    /* a path no sweep may set leaves the document as it was */
    json_t *patched = json_deep_copy(doc);
    assert_int_equal(ppl_topology_patch(doc, "tiers[1].name", "x", &err), PPL_EUSAGE);
    assert_int_equal(ppl_topology_patch(doc, "tiers[3].servers", "1", &err), PPL_EUSAGE);
    assert_contains(err.message, "the topology has 3 tiers");
    assert_int_equal(ppl_topology_patch(doc, "gpus", "8", &err), PPL_EUSAGE);
    assert_true(json_equal(doc, patched));
    json_decref(patched);
    json_decref(before);
    json_decref(doc);
}

/* "gpu": "H100" patched at gpu.memory becomes {"name": "H100", "memory": ...}:
 * the H100 datasheet fills the rest (989 TFLOP/s bf16), the memory is 40 GiB. */
static void test_patch_gpu_kind(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    json_object_set_new(doc, "gpu", json_string("H100"));
    ppl_error err;
    assert_int_equal(ppl_topology_patch(doc, "gpu.memory", "40GiB", &err), PPL_OK);
    json_t *gpu = json_object_get(doc, "gpu");
    assert_true(json_is_object(gpu));
    assert_string_equal(json_string_value(json_object_get(gpu, "name")), "H100");
    ppl_topology t = load_doc(doc);
    assert_close(t.gpu.memory_bytes, 40.0 * 1073741824.0, 1e-15);
    assert_close(t.gpu.flops[PPL_PRECISION_BF16], 989e12, 1e-15);
    json_decref(doc);
}

static void test_value_json(void **state)
{
    (void)state;
    json_t *v = ppl_sweep_value_json("4");
    assert_true(json_is_integer(v) && json_integer_value(v) == 4);
    json_decref(v);
    v = ppl_sweep_value_json("0.001");
    assert_true(json_is_real(v));
    assert_close(json_real_value(v), 0.001, 1e-15);
    json_decref(v);
    v = ppl_sweep_value_json("1e16"); /* beyond 9e15: kept a real */
    assert_true(json_is_real(v));
    json_decref(v);
    v = ppl_sweep_value_json("yes");
    assert_true(json_is_true(v));
    v = ppl_sweep_value_json("no");
    assert_true(json_is_false(v));
    v = ppl_sweep_value_json("400Gb/s");
    assert_string_equal(json_string_value(v), "400Gb/s");
    json_decref(v);
    v = ppl_sweep_value_json("nan");
    assert_string_equal(json_string_value(v), "nan");
    json_decref(v);
}

/* A point sets the swept pins and topology: gpus=64 x rail_only=true on the
 * superpod (128 servers x 8 = 1,024 GPUs); 200 Gb/s NICs are 25e9 bytes/s. */
static void test_point(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_sweep sw[3];
    size_t points;
    ppl_error err;
    const char *specs[] = {"gpus=64,2048,1.5", "rail_only=true", "rails.nic_bandwidth=200 Gb/s"};
    assert_int_equal(ppl_sweeps_parse(specs, 3, doc, sw, &points, &err), PPL_OK);
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.global_batch = 512;
    ppl_topology t;
    int idx[3] = {0, 0, 0};
    assert_int_equal(ppl_whatif_point(doc, "dgx.json", sw, 3, idx, &pins, &t, &err), PPL_OK);
    assert_int_equal(pins.gpus, 64);
    assert_int_equal(pins.global_batch, 512);
    assert_true(t.rail_only);
    assert_close(t.rails.nic_bandwidth_bps, 25e9, 1e-15);
    /* the document itself is not patched */
    assert_true(json_is_false(json_object_get(doc, "rail_only")));
    idx[0] = 1;
    assert_int_equal(ppl_whatif_point(doc, "dgx.json", sw, 3, idx, &pins, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.message, "gpus=2048 exceeds the topology's 1024 GPUs");
    idx[0] = 2;
    assert_int_equal(ppl_whatif_point(doc, "dgx.json", sw, 3, idx, &pins, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.message, "gpus=1.5: expected a positive integer");
    json_decref(doc);
}

/* The best plan at a point is the search's first; nothing fitting is
 * PPL_INFEASIBLE with the error record left alone.  gpt3-175b holds 175e9 x 16
 * bytes of weights, gradients and Adam state, 2.8 TB: not on one 80 GiB GPU. */
static void test_best_plan(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_pins pins;
    ppl_pins_init(&pins);
    pins.gpus = 8;
    pins.global_batch = 64;
    ppl_search_opts opts = {.objective = PPL_OBJECTIVE_TIME};
    ppl_estimate best;
    ppl_search_totals totals = {0};
    ppl_error err;
    assert_int_equal(ppl_best_plan(&ctx, &pins, &opts, &best, &totals, &err), PPL_OK);
    assert_int_equal(best.config.gpus, 8);
    assert_int_equal(best.config.global_batch, 64);
    assert_int_equal(totals.plans, 1);
    assert_true(totals.feasible > 0 && totals.feasible <= totals.evaluated);
    /* tokens/s = 64 x 8192 / step time, the rate time to train divides by */
    assert_close(best.tokens_per_s, 64.0 * 8192.0 / best.step_time_s, 1e-12);
    assert_close(ppl_time_to_train_days(1e12, best.tokens_per_s),
                 1e12 / (64.0 * 8192.0 / best.step_time_s) / 86400.0, 1e-12);
    ppl_search_opts top = {.pins = &pins, .top = 1};
    ppl_search_result r;
    assert_int_equal(ppl_search(&ctx, &top, &r, &err), PPL_OK);
    assert_true(r.results[0].step_time_s == best.step_time_s);
    ppl_search_free(&r);

    ppl_model big = test_model("gpt3-175b");
    ppl_eval_ctx_init(&ctx, &big, &t, PPL_STACK_MODERN);
    pins.gpus = 1;
    pins.global_batch = 8;
    ppl_error_set(&err, PPL_EUSAGE, "", "", "untouched");
    assert_int_equal(ppl_best_plan(&ctx, &pins, &opts, &best, &totals, &err), PPL_INFEASIBLE);
    assert_string_equal(err.message, "untouched");
    assert_int_equal(totals.plans, 2);
}

/* 1,024 GPUs at 2.00 per GPU-hour training at 1M tokens/s: a million tokens take
 * one second, 1,024 GPU-seconds = 0.28444 GPU-hours, so 0.56889. */
static void test_cost_per_million_tokens(void **state)
{
    (void)state;
    double cost = ppl_cost_per_million_tokens(2.0, 1024, 1e6);
    assert_true(fabs(cost - 2.0 * 1024.0 / 3600.0) < 1e-12);
    assert_true(fabs(cost - 0.568888889) < 1e-8);
}

/* A whole what-if run: Llama 3 8B on the DGX H100 SuperPOD at a batch of 64,
 * gpus=8,16,32 (every count up to N offered) and 1e12 tokens.  Each point is the
 * best plan with up to N GPUs (ppl_best_plan with gpus_at_most, searched alone):
 * the same configuration, though the run searches above the previous ceiling
 * only (its best seeding the list), with no more work; never slower with
 * more GPUs offered; its time to train is 1e12 / tokens/s and its GPU-hours the
 * GPUs it uses for that long; a point where nothing fits (GPT-3 175B on up to one
 * GPU) is not ok and does not stop the run; a gpus value beyond the topology is
 * a usage error that does. */
static void test_whatif_run(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_model m = test_model("llama3-8b");
    const char *specs[] = {"gpus=8,16,32"};
    ppl_sweep sw[1];
    size_t points;
    ppl_error err;
    assert_int_equal(ppl_sweeps_parse(specs, 1, doc, sw, &points, &err), PPL_OK);
    assert_int_equal(points, 3);
    ppl_whatif_opts o = {
        .model = &m, .topology = doc, .file = "t", .sweeps = sw, .nsweeps = 1, .tokens = 1e12};
    ppl_pins_init(&o.pins);
    o.pins.global_batch = 64;
    ppl_whatif_result r[3];
    assert_int_equal(ppl_whatif_run(&o, r, 3, &err), PPL_OK);
    ppl_topology t = load_doc(doc);
    for (int i = 0; i < 3; i++) {
        assert_true(r[i].ok && r[i].idx[0] == i && r[i].search.plans == 1);
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
        ppl_pins pins = o.pins;
        pins.gpus = 8 << i;
        ppl_search_opts so = {.gpus_at_most = true};
        ppl_estimate best;
        ppl_search_totals totals = {0};
        assert_int_equal(ppl_best_plan(&ctx, &pins, &so, &best, &totals, &err), PPL_OK);
        assert_true(best.step_time_s == r[i].best.step_time_s);
        assert_int_equal(ppl_ranking_compare(PPL_OBJECTIVE_TIME, &best, &r[i].best), 0);
        if (i > 0)
            assert_true(r[i].search.evaluated <= totals.evaluated);
        /* failure-free: tokens / tokens per s; with failures: that / goodput */
        assert_close(r[i].failure_free_s, 1e12 / r[i].best.tokens_per_s, 1e-12);
        assert_true(r[i].goodput.goodput > 0.99 && r[i].goodput.goodput < 1.0);
        assert_close(r[i].time_to_train_s, r[i].failure_free_s / r[i].goodput.goodput, 1e-12);
        assert_close(r[i].time_to_train_days, r[i].time_to_train_s / 86400.0, 1e-12);
        assert_close(r[i].gpu_hours, r[i].time_to_train_s * (double)r[i].best.config.gpus / 3600.0,
                     1e-12);
    }
    assert_true(r[1].best.step_time_s <= r[0].best.step_time_s);
    assert_true(r[2].best.step_time_s <= r[1].best.step_time_s);

    ppl_model big = test_model("gpt3-175b");
    const char *one[] = {"gpus=1"};
    assert_int_equal(ppl_sweeps_parse(one, 1, doc, sw, &points, &err), PPL_OK);
    o.model = &big;
    assert_int_equal(ppl_whatif_run(&o, r, 1, &err), PPL_OK);
    assert_false(r[0].ok);
    const char *beyond[] = {"gpus=99999"};
    assert_int_equal(ppl_sweeps_parse(beyond, 1, doc, sw, &points, &err), PPL_OK);
    assert_int_equal(ppl_whatif_run(&o, r, 1, &err), PPL_EUSAGE);
    json_decref(doc);
}

/* seq_len is a sweep key: each point trains the model at that length.  Llama 3 8B
 * on 64 H100 with no global batch given: each point takes ~4M tokens a step in a
 * power of two of sequences (512 of 8,192, 32 of 131,072), and its tokens/s is
 * batch x seq_len / step time.  seq_len is no topology path. */
static void test_whatif_seq_len(void **state)
{
    (void)state;
    json_t *doc = topology_doc("dgx-h100-superpod");
    ppl_model m = test_model("llama3-8b");
    const char *specs[] = {"seq_len=8192,131072", "gpus=64"};
    ppl_sweep sw[2];
    size_t points;
    ppl_error err;
    assert_int_equal(ppl_sweeps_parse(specs, 2, doc, sw, &points, &err), PPL_OK);
    assert_int_equal(sw[0].kind, PPL_SWEEP_SEQ_LEN);
    ppl_whatif_opts o = {.model = &m,
                         .topology = doc,
                         .file = "t",
                         .sweeps = sw,
                         .nsweeps = 2,
                         .default_batch = true};
    ppl_pins_init(&o.pins);
    ppl_whatif_result r[2];
    assert_int_equal(ppl_whatif_run(&o, r, 2, &err), PPL_OK);
    const double seq[2] = {8192.0, 131072.0}, batch[2] = {512.0, 32.0};
    for (int i = 0; i < 2; i++) {
        assert_true(r[i].ok);
        assert_true((double)r[i].best.config.global_batch == batch[i]);
        assert_close(r[i].best.tokens_per_s, batch[i] * seq[i] / r[i].best.step_time_s, 1e-12);
    }
    assert_int_equal(m.seq_len, 8192); /* the caller's model is left as it was */
    assert_int_equal(ppl_topology_patch(doc, "seq_len", "4096", &err), PPL_EUSAGE);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whatif_run),
        cmocka_unit_test(test_whatif_seq_len),
        cmocka_unit_test(test_cost_per_million_tokens),
        cmocka_unit_test(test_default_batch),
        cmocka_unit_test(test_time_to_train_and_gpu_hours),
        cmocka_unit_test(test_sweep_parse_good),
        cmocka_unit_test(test_sweep_parse_bad),
        cmocka_unit_test(test_unitless_bandwidth),
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_settable_paths),
        cmocka_unit_test(test_loader_keys),
        cmocka_unit_test(test_patch_tier_oversubscription),
        cmocka_unit_test(test_patch_gpu_kind),
        cmocka_unit_test(test_value_json),
        cmocka_unit_test(test_point),
        cmocka_unit_test(test_best_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
