/*
 * test_topology.c - topology loading and derived fabric figures.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/catalog.h"
#include "hardware/topology.h"

static int warned;
static char warning[512];

static void collect(void *ctx, const char *file, const char *key, const char *message)
{
    (void)ctx;
    warned++;
    snprintf(warning, sizeof warning, "%s: %s: %s", file, key, message);
}

static ppl_status load_text(const char *text, ppl_topology *t, ppl_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (!root)
        fail_msg("test JSON does not parse: %s (%s)", jerr.text, text);
    ppl_diag diag = {.warn = collect, .ctx = NULL};
    ppl_error_clear(err);
    ppl_status st = ppl_topology_from_json(root, "t.json", "", &diag, t, err);
    json_decref(root);
    return st;
}

#define GPU                                                                                        \
    "\"gpu\": {\"memory\": \"80 GiB\", \"flops\": {\"bf16\": \"989 TFLOP/s\"}, "                   \
    "\"hbm_bandwidth\": \"3.35 TB/s\"}"

/*
 * DGX H100 SuperPOD, 4 SUs (NVIDIA RA-11333-001): 128 servers x 8 NICs of 400 Gb/s,
 * a leaf per rail per SU of 32 servers, radix-64 switches, non-blocking.
 *  leaf: a leaf serves 32 servers of its rail with 32 down and 32 up ports;
 *        8 rails x 4 SUs = 32 leaves; uplinks 32 x 32 = 1024
 *  spine (top): 1024 ports in / 64 ports each = 16 spines
 *  cables: 1024 server-leaf + 1024 leaf-spine = 2048
 *  bisection: 1024 GPUs x 50 GB/s / 2 = 25.6 TB/s, one direction
 */
static void test_dgx_h100_superpod(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_topology_figures f;
    t = test_topology("dgx-h100-superpod");
    ppl_topology_derive(&t, &f);
    assert_int_equal(f.gpus, 1024);
    assert_int_equal(t.ntiers, 2);
    assert_int_equal(f.tiers[0].switches, 32);
    assert_int_equal(f.tiers[1].switches, 16);
    assert_int_equal(f.cables, 2048);
    assert_close(f.nic_bandwidth_per_gpu_bps, 50e9, 1e-15);
    assert_close(f.bisection_bps, 25.6e12, 1e-15);
    assert_close(t.gpu.flops[PPL_PRECISION_FP8], 1979e12, 1e-15);
}

/*
 * A radix-64 three-tier fat tree (Al-Fares et al. SIGCOMM'08) serves k^3/4 = 65,536
 * NIC ports with 5k^2/4 = 5,120 switches: 2,048 leaves, 2,048 aggregation, 1,024 core.
 * 8,192 servers x 8 rails = 65,536 ports: h100-64k is exactly that tree.
 */
static void test_h100_64k_fat_tree(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_topology_figures f;
    t = test_topology("h100-64k");
    ppl_topology_derive(&t, &f);
    assert_int_equal(f.gpus, 65536);
    assert_int_equal(f.tiers[0].switches, 2048);
    assert_int_equal(f.tiers[1].switches, 2048);
    assert_int_equal(f.tiers[2].switches, 1024);
    assert_int_equal(f.switches, 5120);
    ppl_topology r;
    r = test_topology("h100-64k-rail-only");
    assert_true(r.rail_only);
    assert_false(t.rail_only);
}

/*
 * Meta's 24K cluster (Llama 3 paper §3.3.1): pods of 3,072 GPUs at full bisection,
 * 1:7 between pods.  Traffic leaving a pod gets 50 GB/s / 7 = 7.14 GB/s per GPU;
 * the bisection is 24,576 x 50 GB/s / 2 / 7 = 87.8 TB/s.
 */
static void test_meta_oversubscription(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_topology_figures f;
    t = test_topology("meta-24k-roce");
    ppl_topology_derive(&t, &f);
    assert_int_equal(f.gpus, 24576);
    assert_int_equal(f.tiers[1].gpus_per_group, 3072);
    assert_close(f.tiers[1].gpu_bandwidth_bps, 50e9, 1e-15);
    assert_close(f.tiers[2].gpu_bandwidth_bps, 50e9 / 7.0, 1e-12);
    assert_close(f.bisection_bps, 24576.0 * 50e9 / 2.0 / 7.0, 1e-12);
    assert_int_equal(t.transport.protocol, PPL_PROTOCOL_ROCEV2);
}

static void test_multi_server_nvlink(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_topology_figures f;
    t = test_topology("gb200-nvl72");
    ppl_topology_derive(&t, &f);
    assert_int_equal(t.nvlink.domain_gpus, 72);
    assert_int_equal(f.nvlink_domains, f.gpus / 72);
    t = test_topology("gh200-nvl256");
    assert_int_equal(t.nvlink.domain_gpus, 256);
}

static void test_defaults(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_error err;
    ppl_topology_figures f;
    warned = 0;
    /* no tiers: one non-blocking layer; no transport: InfiniBand, go-back-N, 4 KiB MTU */
    assert_int_equal(load_text("{" GPU ", \"servers\": 4, \"gpus_per_server\": 8,"
                               " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
                               " \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"}}",
                               &t, &err),
                     PPL_OK);
    assert_int_equal(warned, 0);
    assert_int_equal(t.ntiers, 1);
    assert_int_equal(t.tiers[0].servers, 4);
    assert_int_equal(t.nvlink.domain_gpus, 8);
    assert_int_equal(t.rails.count, 8);
    assert_int_equal(t.transport.mtu_bytes, 4096);
    assert_int_equal(t.transport.retransmit, PPL_RETRANSMIT_GO_BACK_N);
    /* fp16 stands in for a missing bf16 and the other way round */
    assert_close(t.gpu.flops[PPL_PRECISION_FP16], 989e12, 1e-15);
    ppl_topology_derive(&t, &f);
    /* 32 GPUs x 50 GB/s / 2 */
    assert_close(f.bisection_bps, 800e9, 1e-15);
}

/* A gpu object naming a known kind takes the datasheet for what it leaves out:
 * H100 with only a bf16 peak keeps its fp8 peak (1979 TFLOP/s dense, gpu.c) and
 * fp16 follows the given bf16.  Names match families in any case: "a100" is an
 * A100, whose NVLink all-reduce NCCL caps at 235 GB/s (net.c). */
static void test_known_gpu_defaults(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_error err;
    assert_int_equal(
        load_text("{\"gpu\": {\"name\": \"H100\", \"flops\": {\"bf16\": \"900 TFLOP/s\"}},"
                  " \"servers\": 4, \"gpus_per_server\": 8,"
                  " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
                  " \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"}}",
                  &t, &err),
        PPL_OK);
    assert_close(t.gpu.flops[PPL_PRECISION_BF16], 900e12, 1e-15);
    assert_close(t.gpu.flops[PPL_PRECISION_FP16], 900e12, 1e-15);
    assert_close(t.gpu.flops[PPL_PRECISION_FP8], 1979e12, 1e-15);
    assert_non_null(t.gpu.spec);
    assert_string_equal(t.gpu.spec->kind, "H100");
    /* a kind by its name or full name, alone or followed by '-', any case; never by
     * a substring elsewhere in the name */
    assert_string_equal(ppl_gpu_lookup("a100-sxm4-80gb")->kind, "A100");
    assert_string_equal(ppl_gpu_lookup("GB200")->kind, "GB200");
    assert_string_equal(ppl_gpu_lookup("B200-GB200-NVL72-186GB")->kind, "GB200");
    assert_string_equal(ppl_gpu_lookup("GH200-H100-96GB")->kind, "GH200");
    assert_string_equal(ppl_gpu_lookup("B300-GB300-NVL72")->kind, "GB300");
    assert_null(ppl_gpu_lookup("NVIDIA H800 PCIe"));
    assert_null(ppl_gpu_lookup("H1000"));
    assert_null(ppl_gpu_lookup("XH100"));
}

static void test_errors(void **state)
{
    (void)state;
    ppl_topology t;
    ppl_error err;
    char line[1024];
    const char *base = "{" GPU ", \"servers\": 100, \"gpus_per_server\": 8,"
                       " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
                       " \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"},"
                       " \"tiers\": [{\"servers\": 32}, {\"servers\": 100}]}";
    assert_int_equal(load_text(base, &t, &err), PPL_EINPUT);
    ppl_error_format(&err, line, sizeof line);
    assert_string_equal(line,
                        "t.json: tiers[1].servers: 100 is not a multiple of tiers[0].servers (32)");
    assert_int_equal(load_text("{" GPU ", \"servers\": 2, \"gpus_per_server\": 8,"
                               " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
                               " \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"},"
                               " \"transport\": {\"loss_rate\": 1}}",
                               &t, &err),
                     PPL_EINPUT);
    ppl_error_format(&err, line, sizeof line);
    assert_string_equal(line, "t.json: transport.loss_rate: expected a value below 1, found 1");
    /* a top tier with an oversubscription warns: it has no uplinks */
    warned = 0;
    assert_int_equal(load_text("{" GPU ", \"servers\": 64, \"gpus_per_server\": 8,"
                               " \"nvlink\": {\"bandwidth\": \"450 GB/s\"},"
                               " \"rails\": {\"nic_bandwidth\": \"400 Gb/s\"},"
                               " \"tiers\": [{\"servers\": 32}, {\"servers\": 64, "
                               "\"oversubscription\": 4}], \"trasport\": {}}",
                               &t, &err),
                     PPL_OK);
    assert_int_equal(warned, 2);
    assert_contains(warning, "tiers[1].oversubscription");
}

/* A plan embeds the topology's document (ppl_topology_load_doc): every catalogue
 * topology read back from it is the same topology (the file it came from aside);
 * a mixed cluster's document is kept by ppl_pools_load_doc and reads back to the
 * same pools. */
static void test_document_round_trip(void **state)
{
    (void)state;
    char **names;
    size_t count;
    ppl_error err;
    setenv("PARPLAN_DATA_DIR", PPL_TEST_SOURCE_ROOT, 1);
    assert_int_equal(ppl_catalog_list(PPL_CATALOG_TOPOLOGIES, &names, &count, &err), PPL_OK);
    assert_true(count >= 9);
    size_t mixed = 0;
    for (size_t i = 0; i < count; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/topologies/%s.json", PPL_TEST_SOURCE_ROOT, names[i]);
        static ppl_pools pa, pb;
        json_t *doc = NULL;
        assert_int_equal(ppl_pools_load_doc(path, NULL, NULL, &pa, &doc, &err), PPL_OK);
        if (pa.n > 0) {
            mixed++;
            assert_non_null(doc);
            assert_int_equal(ppl_pools_from_json(doc, path, NULL, &pb, &err), PPL_OK);
            assert_memory_equal(&pa, &pb, sizeof pa);
            json_decref(doc);
            continue;
        }
        assert_null(doc);
        ppl_topology a, b;
        if (ppl_topology_load_doc(path, NULL, NULL, &a, &doc, &err) != PPL_OK)
            fail_msg("%s: %s", path, err.message);
        assert_string_equal(json_string_value(json_object_get(doc, "name")), a.name);
        if (ppl_topology_from_json(doc, path, "", NULL, &b, &err) != PPL_OK)
            fail_msg("%s read back: %s", path, err.message);
        json_decref(doc);
        memcpy(b.file, a.file, sizeof b.file);
        if (memcmp(&a, &b, sizeof a) != 0)
            fail_msg("%s: read back from its document, another topology", path);
    }
    assert_true(mixed >= 1);
    ppl_catalog_free(names, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgx_h100_superpod),
        cmocka_unit_test(test_h100_64k_fat_tree),
        cmocka_unit_test(test_meta_oversubscription),
        cmocka_unit_test(test_multi_server_nvlink),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_known_gpu_defaults),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_document_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
