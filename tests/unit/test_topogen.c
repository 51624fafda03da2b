/*
 * test_topogen.c - a topology for a parametric cluster: tier sizes, switch counts,
 * the document, and errors that name the option.
 */
#include <math.h>

#include "testutil.h"

#include <jansson.h>

#include "hardware/comm.h"
#include "hardware/topogen.h"

/* n H100 servers of 8 GPUs and 8 rails of 400 Gb/s in leaf groups of k: the
 * DGX H100 server (NVIDIA RA-11333-001), everything else at its default. */
static ppl_topogen_opts h100(int64_t servers, int64_t leaf)
{
    ppl_topogen_opts o;
    ppl_topogen_opts_init(&o);
    o.gpu = "H100";
    o.servers = servers;
    o.gpus_per_server = 8;
    o.rails = 8;
    o.nic_bandwidth_bps = 50e9; /* 400 Gb/s */
    o.leaf_servers = leaf;
    return o;
}

/* Generates, expecting success; fills the topology and its derived figures. */
static json_t *generate(const ppl_topogen_opts *o, ppl_topology *t, ppl_topology_figures *f)
{
    json_t *doc = NULL;
    ppl_error err;
    ppl_error_clear(&err);
    if (ppl_topogen(o, &doc, t, &err) != PPL_OK)
        fail_msg("ppl_topogen: %s: %s", err.key, err.message);
    assert_non_null(doc);
    ppl_topology_derive(t, f);
    return doc;
}

/* Generates, expecting a usage error; returns it. */
static ppl_error generate_error(const ppl_topogen_opts *o)
{
    json_t *doc = (json_t *)1;
    ppl_topology t;
    ppl_error err;
    ppl_error_clear(&err);
    assert_int_equal(ppl_topogen(o, &doc, &t, &err), PPL_EUSAGE);
    assert_null(doc);
    assert_int_equal(err.status, PPL_EUSAGE);
    return err;
}

static int64_t tier_int(const json_t *doc, size_t i, const char *key)
{
    return json_integer_value(
        json_object_get(json_array_get(json_object_get(doc, "tiers"), i), key));
}

static const char *tier_str(const json_t *doc, size_t i, const char *key)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(doc, "tiers"), i), key));
}

/* The defaults are the command line's: radix 64, non-blocking, as many tiers as
 * needed, the GPU kind's NVLink domain, not rail-only, the name made up. */
static void test_defaults(void **state)
{
    (void)state;
    ppl_topogen_opts o;
    memset(&o, 0xff, sizeof o);
    ppl_topogen_opts_init(&o);
    assert_int_equal(o.switch_radix, 64);
    assert_int_equal(o.tiers, 0);
    assert_int_equal(o.ntier_servers, 0);
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        assert_close(o.oversubscription[i], 1.0, 0);
    assert_int_equal(o.nvlink_domain_gpus, 0);
    assert_false(o.rail_only);
    assert_null(o.name);
    assert_null(o.gpu);
    assert_int_equal(o.servers, 0);
    assert_int_equal(o.leaf_servers, 0);
    /* required options left unset are errors, not a cluster */
    ppl_error err;
    assert_int_equal(ppl_topogen_check(&o, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "gpu");
    o.gpu = "H100";
    assert_int_equal(ppl_topogen_check(&o, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "servers");
}

/*
 * 8,192 H100 servers (65,536 GPUs), leaf groups of 32, radix 64, non-blocking
 * (the README's and tests/cli/test_cli.sh's h100-64k):
 *  ports: down = floor(64 x 1/2) = 32, up = 32 at every tier below the top
 *  leaf:  32 servers <= 32 down ports: one switch per rail, 8 switches per group
 *  pod:   a pod switch has 32 down ports for 8 leaf switches per group:
 *         32 / 8 = 4 leaf groups, 4 x 32 = 128 servers
 *  top:   128 x 64 = 8,192 >= 8,192: the top joins all 64 pods
 * Switches (ppl_topology_derive, Al-Fares et al.'s k = 64 fat tree: 5k^2/4 = 5,120):
 *  leaf:  256 groups x 8 = 2,048
 *  spine: 64 pods x (4 x 8 leaves x 32 uplinks = 1,024 ports / 32 down) = 2,048
 *  core:  2,048 spines x 32 uplinks = 65,536 ports / 64 = 1,024
 */
static void test_h100_64k(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(8192, 32);
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    assert_int_equal(t.ntiers, 3);
    assert_int_equal(t.tiers[0].servers, 32);
    assert_int_equal(t.tiers[1].servers, 128);
    assert_int_equal(t.tiers[2].servers, 8192);
    assert_int_equal(f.gpus, 65536);
    assert_int_equal(f.tiers[0].switches, 2048);
    assert_int_equal(f.tiers[1].switches, 2048);
    assert_int_equal(f.tiers[2].switches, 1024);
    assert_int_equal(f.switches, 5120);
    /* the document: what `topology generate` prints */
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "H100-8192x8");
    assert_string_equal(json_string_value(json_object_get(doc, "gpu")), "H100");
    assert_int_equal(json_integer_value(json_object_get(doc, "switch_radix")), 64);
    assert_true(json_is_false(json_object_get(doc, "rail_only")));
    assert_string_equal(tier_str(doc, 0, "name"), "leaf");
    assert_string_equal(tier_str(doc, 1, "name"), "spine");
    assert_string_equal(tier_str(doc, 2, "name"), "core");
    assert_int_equal(tier_int(doc, 1, "servers"), 128);
    assert_true(json_is_true(
        json_object_get(json_array_get(json_object_get(doc, "tiers"), 0), "rail_optimized")));
    assert_true(json_is_false(
        json_object_get(json_array_get(json_object_get(doc, "tiers"), 1), "rail_optimized")));
    /* gpu.c: H100 NVLink 900 GB/s bidirectional = 450 per direction; 8 GPUs a domain */
    const json_t *nv = json_object_get(doc, "nvlink");
    assert_string_equal(json_string_value(json_object_get(nv, "bandwidth")), "450 GB/s");
    assert_int_equal(json_integer_value(json_object_get(nv, "domain_gpus")), 8);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "rails"), "nic_bandwidth")),
        "400 Gb/s");
    assert_close(t.rails.nic_bandwidth_bps, 50e9, 1e-15);
    json_decref(doc);

    /* three tiers asked for give the same; two cannot hold the servers:
     * 32 x 64 = 2,048 < 8,192 */
    o.tiers = 3;
    doc = generate(&o, &t, &f);
    assert_int_equal(t.ntiers, 3);
    assert_int_equal(t.tiers[1].servers, 128);
    json_decref(doc);
    o.tiers = 2;
    ppl_error err = generate_error(&o);
    assert_string_equal(err.key, "tiers");
    assert_string_equal(err.message,
                        "2 tiers of radix-64 switches hold at most 2048 servers in leaf groups "
                        "of 32");
    /* four cannot be filled: pods of 128 (32 switches each) join no further */
    o.tiers = 4;
    err = generate_error(&o);
    assert_string_equal(err.key, "leaf_servers");
    assert_contains(err.message, "cannot join groups of 128 servers (32 switches each)");
    assert_contains(err.message, "give tier_servers explicitly");
}

/*
 * DGX H100 SuperPOD of 4 SUs (NVIDIA RA-11333-001): 128 servers x 8 rails, a leaf
 * per rail per SU of 32 servers, radix-64 switches.
 *  sizing: 32 x 64 = 2,048 >= 128: the second tier is the top, all 128 servers
 *  leaf:   8 rails x 4 SUs = 32 switches, 32 x 32 = 1,024 uplinks
 *  spine:  1,024 ports / 64 = 16 switches
 */
static void test_dgx_h100_4su(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(128, 32);
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    assert_int_equal(t.ntiers, 2);
    assert_int_equal(t.tiers[0].servers, 32);
    assert_int_equal(t.tiers[1].servers, 128);
    assert_int_equal(f.tiers[0].switches, 32);
    assert_int_equal(f.tiers[1].switches, 16);
    assert_int_equal(f.cables, 2048); /* 1,024 server-leaf + 1,024 leaf-spine */
    assert_string_equal(tier_str(doc, 1, "name"), "spine");
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "H100-128x8");
    json_decref(doc);
}

/*
 * Rail-only (Wang et al., arXiv 2307.12169, as topologies/h100-64k-rail-only.json
 * cites it): the generator sizes the same tiers and marks the fabric rail-only;
 * the network model then lets no tier carry traffic between rails (it crosses
 * over NVLink first), where the ordinary fabric's spine (tier 1, the first not
 * rail-optimized) joins them.
 */
static void test_rail_only(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(128, 32);
    ppl_topology any, only;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &any, &f);
    json_decref(doc);
    o.rail_only = true;
    doc = generate(&o, &only, &f);
    assert_true(json_is_true(json_object_get(doc, "rail_only")));
    assert_true(only.rail_only);
    assert_int_equal(only.ntiers, any.ntiers);
    assert_int_equal(only.tiers[1].servers, any.tiers[1].servers);
    ppl_net net;
    ppl_net_init(&net, &any);
    assert_int_equal(net.cross_rail_tier, 1);
    ppl_net_init(&net, &only);
    assert_int_equal(net.cross_rail_tier, only.ntiers); /* none */
    json_decref(doc);
}

/*
 * GB200 NVL72 trays of 4 GPUs (gpu.c: a 72-GPU NVLink domain), 36 servers, 4 rails
 * of 800 Gb/s, leaf groups of 18, two tiers, 2:1 below the top:
 *  leaf: down = floor(64 x 2/3) = 42 >= 18: one switch per rail
 *  the domain is the kind's 72 GPUs (larger than 4 per server); the top tier's
 *  oversubscription is written as 1 (it has no uplinks)
 */
static void test_gb200_domain_and_oversubscription(void **state)
{
    (void)state;
    ppl_topogen_opts o;
    ppl_topogen_opts_init(&o);
    o.gpu = "gb200";
    o.servers = 36;
    o.gpus_per_server = 4;
    o.rails = 4;
    o.nic_bandwidth_bps = 100e9; /* 800 Gb/s */
    o.leaf_servers = 18;
    o.tiers = 2;
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        o.oversubscription[i] = 2.0;
    o.name = "gb200-test";
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    assert_int_equal(t.nvlink.domain_gpus, 72);
    assert_int_equal(t.ntiers, 2);
    assert_int_equal(t.tiers[1].servers, 36);
    assert_close(t.tiers[0].oversubscription, 2.0, 0);
    assert_close(t.tiers[1].oversubscription, 1.0, 0);
    assert_int_equal(f.tiers[0].switches, 8); /* 4 rails x 2 groups */
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "gb200-test");
    assert_string_equal(json_string_value(json_object_get(doc, "gpu")), "GB200");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "rails"), "nic_bandwidth")),
        "800 Gb/s");
    json_decref(doc);
    /* an explicit domain wins over the kind's */
    o.nvlink_domain_gpus = 36;
    doc = generate(&o, &t, &f);
    assert_int_equal(t.nvlink.domain_gpus, 36);
    json_decref(doc);
}

/*
 * Eight tiers: 2,187 = 3^7 single-GPU servers, one rail, radix 4 at 3:1 below
 * the top: down = floor(4 x 3/4) = 3, up = 1.  A leaf group of 1 server has one
 * switch; each tier above joins 3 / 1 = 3 groups of the one below (each has one
 * switch: the inner switches' single uplink): 1, 3, 9, ..., 729; then 729 x 4 =
 * 2,916 >= 2,187 makes the eighth tier the top.  More tiers than 8 are an error:
 * 3^15 servers would need 16.
 */
static void test_eight_tiers(void **state)
{
    (void)state;
    ppl_topogen_opts o;
    ppl_topogen_opts_init(&o);
    o.gpu = "H100";
    o.servers = 2187;
    o.gpus_per_server = 1;
    o.rails = 1;
    o.nic_bandwidth_bps = 50e9;
    o.leaf_servers = 1;
    o.switch_radix = 4;
    o.nvlink_domain_gpus = 1;
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        o.oversubscription[i] = 3.0;
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    static const int64_t sizes[] = {1, 3, 9, 27, 81, 243, 729, 2187};
    assert_int_equal(t.ntiers, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(t.tiers[i].servers, sizes[i]);
    assert_string_equal(tier_str(doc, 0, "name"), "tier0");
    assert_string_equal(tier_str(doc, 7, "name"), "tier7");
    assert_true(json_is_false(
        json_object_get(json_array_get(json_object_get(doc, "tiers"), 0), "rail_optimized")));
    json_decref(doc);
    o.servers = 14348907; /* 3^15 */
    ppl_error err = generate_error(&o);
    assert_string_equal(err.key, "servers");
    assert_string_equal(err.message, "14348907 servers need more than 8 tiers of radix-4 switches");
}

/* Explicit tier sizes are taken as given; the loader judges them. */
static void test_explicit_tiers(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(8192, 32);
    o.ntier_servers = 4;
    o.tier_servers[0] = 32;
    o.tier_servers[1] = 256;
    o.tier_servers[2] = 1024;
    o.tier_servers[3] = 8192;
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    assert_int_equal(t.ntiers, 4);
    assert_int_equal(t.tiers[1].servers, 256);
    assert_string_equal(tier_str(doc, 3, "name"), "tier3");
    json_decref(doc);
    /* 100 servers do not hold whole leaf groups of 32: the loader's error, about the
     * generated document */
    o.ntier_servers = 3;
    o.tier_servers[1] = 100;
    o.tier_servers[2] = 8192;
    ppl_error err = generate_error(&o);
    assert_string_equal(err.file, "(generated)");
    assert_string_equal(err.key, "tiers[1].servers");
    /* a count that disagrees with the sizes given */
    o.tiers = 2;
    err = generate_error(&o);
    assert_string_equal(err.key, "tiers");
}

/* A bad option is an error that names it by its field, and nothing is written. */
static void test_errors_name_the_option(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(128, 32);
    ppl_error err;

    o.switch_radix = 1; /* a switch below the top needs a port down and one up */
    err = generate_error(&o);
    assert_string_equal(err.key, "switch_radix");
    assert_string_equal(err.message, "expected at least 2 ports, found 1");
    o.switch_radix = 0;
    assert_string_equal(generate_error(&o).key, "switch_radix");
    o.switch_radix = 64;

    o.gpu = "X900";
    err = generate_error(&o);
    assert_string_equal(err.key, "gpu");
    assert_string_equal(err.message,
                        "unknown GPU kind 'X900' (known: A100, H100, H800, H200, GH200, "
                        "B200, GB200, B300, GB300, MI300X, MI325X, MI355X)");
    o.gpu = "H100-SXM5-80GB"; /* the full name is the kind too */
    assert_int_equal(ppl_topogen_check(&o, &err), PPL_OK);

    o.rails = 3;
    err = generate_error(&o);
    assert_string_equal(err.key, "rails");
    assert_string_equal(err.message, "3 must divide gpus_per_server (8)");
    o.rails = 8;

    o.leaf_servers = 48;
    err = generate_error(&o);
    assert_string_equal(err.key, "leaf_servers");
    assert_string_equal(err.message, "48 must divide servers (128)");
    o.leaf_servers = 32;

    o.oversubscription[1] = 0;
    assert_string_equal(generate_error(&o).key, "oversubscription");
    o.oversubscription[1] = 1;

    o.nic_bandwidth_bps = -50e9; /* 0 takes the kind's NIC (test_nic_from_kind) */
    assert_string_equal(generate_error(&o).key, "nic_bandwidth_bps");
    o.nic_bandwidth_bps = NAN;
    assert_string_equal(generate_error(&o).key, "nic_bandwidth_bps");
    o.nic_bandwidth_bps = 50e9;

    o.tiers = PPL_MAX_TIERS + 1;
    assert_string_equal(generate_error(&o).key, "tiers");
    o.tiers = 0;

    /* 160 servers in groups of 32: a pod of 128 does not divide 160, nor do 96 or
     * 64, and three tiers were asked for */
    o.servers = 160;
    o.tiers = 3;
    err = generate_error(&o);
    assert_string_equal(err.key, "servers");
    assert_string_equal(err.message, "160 servers do not split into groups of tier 1; give "
                                     "tier_servers explicitly");
}

/*
 * An oversubscription so large that floor(R o/(o+1)) rounds to R leaves a switch
 * no uplinks: radix 4, o = 1e20 gives down 4, up 0.  Leaf groups of 4 single-rail
 * servers (one switch) join into 16 under the next tier; the tier after that would
 * divide by the leaf's 0 uplinks.  An error about the option, not a crash.
 */
static void test_no_uplinks(void **state)
{
    (void)state;
    ppl_topogen_opts o;
    ppl_topogen_opts_init(&o);
    o.gpu = "H100";
    o.servers = 1048576;
    o.gpus_per_server = 1;
    o.rails = 1;
    o.nic_bandwidth_bps = 50e9;
    o.leaf_servers = 4;
    o.switch_radix = 4;
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        o.oversubscription[i] = 1e20;
    ppl_error err = generate_error(&o);
    assert_string_equal(err.key, "oversubscription");
    assert_contains(err.message, "at tier 0 leaves its radix-4 switches no uplinks");
}

/* The document alone, or the topology alone. */
static void test_outputs_optional(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(128, 32);
    ppl_topology t;
    ppl_error err;
    assert_int_equal(ppl_topogen(&o, NULL, &t, &err), PPL_OK);
    assert_int_equal(t.servers, 128);
    json_t *doc = NULL;
    assert_int_equal(ppl_topogen(&o, &doc, NULL, &err), PPL_OK);
    assert_int_equal(json_integer_value(json_object_get(doc, "servers")), 128);
    json_decref(doc);
}

/* The NIC defaults to the platform's, one per GPU (gpu.c): B300 and GB300 ship
 * ConnectX-8 at 800 Gb/s = 100e9 B/s a GPU, H100 ConnectX-7 at 400 Gb/s = 50e9.
 * With 4 rails on an 8-GPU H100 server each NIC carries two GPUs' share:
 * 50e9 x 8 / 4 = 100e9 B/s, so a GPU still has 50e9. */
static void test_nic_from_kind(void **state)
{
    (void)state;
    ppl_topogen_opts o = h100(16, 16);
    o.rails = 0;
    o.nic_bandwidth_bps = 0.0;
    o.gpu = "B300";
    ppl_topology t;
    ppl_topology_figures f;
    json_t *doc = generate(&o, &t, &f);
    assert_int_equal(t.rails.count, 8);
    assert_close(t.rails.nic_bandwidth_bps, 100e9, 1e-9);
    json_decref(doc);
    o.gpu = "H100";
    o.rails = 4;
    doc = generate(&o, &t, &f);
    assert_int_equal(t.rails.count, 4);
    assert_close(t.rails.nic_bandwidth_bps, 100e9, 1e-9);
    assert_close(f.nic_bandwidth_per_gpu_bps, 50e9, 1e-9);
    json_decref(doc);
    o.nic_bandwidth_bps = 25e9; /* given: kept */
    doc = generate(&o, &t, &f);
    assert_close(t.rails.nic_bandwidth_bps, 25e9, 1e-9);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_h100_64k),
        cmocka_unit_test(test_dgx_h100_4su),
        cmocka_unit_test(test_rail_only),
        cmocka_unit_test(test_gb200_domain_and_oversubscription),
        cmocka_unit_test(test_eight_tiers),
        cmocka_unit_test(test_explicit_tiers),
        cmocka_unit_test(test_errors_name_the_option),
        cmocka_unit_test(test_no_uplinks),
        cmocka_unit_test(test_outputs_optional),
        cmocka_unit_test(test_nic_from_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
