/*
 * cmd_topology.c - `parplan topologies` and `parplan topology show`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static json_t *topology_json(const ppl_topology *t, const ppl_topology_figures *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "source", json_string(t->source));
    json_object_set_new(o, "servers", json_integer(t->servers));
    json_object_set_new(o, "gpus_per_server", json_integer(t->gpus_per_server));
    json_object_set_new(o, "gpus", json_integer(f->gpus));
    json_t *gpu = json_object(), *flops = json_object();
    json_object_set_new(gpu, "name", json_string(t->gpu.name));
    json_object_set_new(gpu, "memory", ppl_json_real(t->gpu.memory_bytes));
    for (int p = 0; p < PPL_PRECISION_COUNT; p++)
        if (t->gpu.flops[p] > 0)
            json_object_set_new(flops, ppl_precision_name((ppl_precision)p),
                                ppl_json_real(t->gpu.flops[p]));
    json_object_set_new(gpu, "flops", flops);
    json_object_set_new(gpu, "hbm_bandwidth", ppl_json_real(t->gpu.hbm_bandwidth_bps));
    json_object_set_new(o, "gpu", gpu);
    json_t *nv = json_object();
    json_object_set_new(nv, "domain_gpus", json_integer(t->nvlink.domain_gpus));
    json_object_set_new(nv, "domains", json_integer(f->nvlink_domains));
    json_object_set_new(nv, "bandwidth", ppl_json_real(t->nvlink.bandwidth_bps));
    json_object_set_new(nv, "latency", ppl_json_real(t->nvlink.latency_s));
    json_object_set_new(nv, "sharp", json_boolean(t->nvlink.sharp));
    json_object_set_new(nv, "fabric", json_string(t->nvlink.mesh ? "mesh" : "switch"));
    json_object_set_new(o, "nvlink", nv);
    json_t *rails = json_object();
    json_object_set_new(rails, "count", json_integer(t->rails.count));
    json_object_set_new(rails, "nic_bandwidth", ppl_json_real(t->rails.nic_bandwidth_bps));
    json_object_set_new(rails, "gpu_bandwidth", ppl_json_real(f->nic_bandwidth_per_gpu_bps));
    json_object_set_new(rails, "latency", ppl_json_real(t->rails.latency_s));
    json_object_set_new(o, "rails", rails);
    json_t *tiers = json_array();
    for (int i = 0; i < t->ntiers; i++) {
        const ppl_tier *tier = &t->tiers[i];
        const ppl_tier_figures *tf = &f->tiers[i];
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(tier->name));
        json_object_set_new(e, "servers", json_integer(tier->servers));
        json_object_set_new(e, "gpus", json_integer(tf->gpus_per_group));
        json_object_set_new(e, "groups", json_integer(tf->groups));
        json_object_set_new(e, "rail_optimized", json_boolean(tier->rail_optimized));
        json_object_set_new(e, "oversubscription", ppl_json_real(tier->oversubscription));
        json_object_set_new(e, "latency", ppl_json_real(tier->latency_s));
        json_object_set_new(e, "gpu_bandwidth", ppl_json_real(tf->gpu_bandwidth_bps));
        json_object_set_new(e, "switches", json_integer(tf->switches));
        json_object_set_new(e, "uplink_cables", json_integer(tf->uplink_cables));
        json_array_append_new(tiers, e);
    }
    json_object_set_new(o, "tiers", tiers);
    json_object_set_new(o, "rail_only", json_boolean(t->rail_only));
    json_object_set_new(o, "switch_radix", json_integer(t->switch_radix));
    json_t *x = json_object();
    json_object_set_new(x, "protocol", json_string(ppl_protocol_name(t->transport.protocol)));
    json_object_set_new(x, "mtu", json_integer(t->transport.mtu_bytes));
    json_object_set_new(x, "loss_rate", ppl_json_real(t->transport.loss_rate));
    json_object_set_new(x, "retransmit", json_string(ppl_retransmit_name(t->transport.retransmit)));
    json_object_set_new(x, "rtt", ppl_json_real(t->transport.rtt_s));
    json_object_set_new(x, "sharp", json_boolean(t->transport.sharp));
    json_object_set_new(o, "transport", x);
    return o;
}

static ppl_status show_json(cli *c, const ppl_topology *t, const ppl_topology_figures *f)
{
    json_t *doc = ppl_json_document();
    if (!doc)
        return cli_emit_json(c, NULL);
    json_object_set_new(doc, "topology", topology_json(t, f));
    json_object_set_new(doc, "injection_bandwidth", ppl_json_real(f->injection_bps));
    json_object_set_new(doc, "bisection_bandwidth", ppl_json_real(f->bisection_bps));
    json_object_set_new(doc, "bisection_bandwidth_per_gpu",
                        ppl_json_real(f->bisection_per_gpu_bps));
    json_object_set_new(doc, "switches", json_integer(f->switches));
    json_object_set_new(doc, "cables", json_integer(f->cables));
    return cli_emit_json(c, doc);
}

static void show_text(cli *c, const ppl_topology *t, const ppl_topology_figures *f)
{
    char a[256], b[64], d[64], e[64];
    ppl_buf *out = &c->out;
    ppl_buf_printf(out, "topology   %s\n", t->name);
    if (t->source[0])
        ppl_buf_printf(out, "source     %s\n", t->source);
    ppl_buf_printf(out, "GPUs       %lld = %lld servers x %lld %s\n", (long long)f->gpus,
                   (long long)t->servers, (long long)t->gpus_per_server, t->gpu.name);
    ppl_format_bytes(t->gpu.memory_bytes, b, sizeof b);
    ppl_format_bandwidth(t->gpu.hbm_bandwidth_bps, d, sizeof d);
    ppl_buf_printf(out, "GPU        %s, HBM %s", b, d);
    for (int p = 0; p < PPL_PRECISION_COUNT; p++) {
        if (t->gpu.flops[p] <= 0)
            continue;
        ppl_format_flops(t->gpu.flops[p], e, sizeof e);
        ppl_buf_printf(out, ", %s %s", ppl_precision_name((ppl_precision)p), e);
    }
    ppl_format_time(t->transport.rtt_s, b, sizeof b);
    ppl_buf_printf(out, "\ntransport  %s, MTU %lld B, RTT %s, loss rate %g, %s\n",
                   ppl_protocol_name(t->transport.protocol), (long long)t->transport.mtu_bytes, b,
                   t->transport.loss_rate, ppl_retransmit_name(t->transport.retransmit));
    ppl_buf_printf(out, "reduction  %s in the %s, %s in the network\n\n",
                   t->nvlink.sharp ? "NVLink SHARP (NVLS)" : "none",
                   t->nvlink.mesh ? "mesh (no switch)" : "NVSwitch",
                   t->transport.sharp ? "SHARP" : "none");

    ppl_table tab;
    ppl_table_init(&tab, 8, "llrrrrrr");
    static const char *const header[] = {"level",         "group",   "groups",  "GPUs/group",
                                         "bandwidth/GPU", "uplinks", "latency", "switches"};
    ppl_table_row(&tab, header);
    {
        char groups[32], gpus[32], bw[32], lat[32];
        snprintf(a, sizeof a, "%s%s", t->nvlink.mesh ? "point-to-point mesh" : "NVLink domain",
                 t->nvlink.domain_gpus > t->gpus_per_server ? " (multi-server)" : "");
        snprintf(groups, sizeof groups, "%lld", (long long)f->nvlink_domains);
        snprintf(gpus, sizeof gpus, "%lld", (long long)t->nvlink.domain_gpus);
        ppl_format_bandwidth(t->nvlink.bandwidth_bps, bw, sizeof bw);
        ppl_format_time(t->nvlink.latency_s, lat, sizeof lat);
        const char *row[8] = {"nvlink", a, groups, gpus, bw, "-", lat, "-"};
        ppl_table_row(&tab, row);
    }
    {
        char bw[32], lat[32], nic[32];
        ppl_format_bitrate(t->rails.nic_bandwidth_bps, nic, sizeof nic);
        snprintf(a, sizeof a, "%lld x %s NICs per server%s", (long long)t->rails.count, nic,
                 t->rail_only ? ", rail-only" : "");
        ppl_format_bandwidth(f->nic_bandwidth_per_gpu_bps, bw, sizeof bw);
        ppl_format_time(t->rails.latency_s, lat, sizeof lat);
        const char *row[8] = {"rails", a, "-", "-", bw, "-", lat, "-"};
        ppl_table_row(&tab, row);
    }
    for (int i = 0; i < t->ntiers; i++) {
        const ppl_tier *tier = &t->tiers[i];
        const ppl_tier_figures *tf = &f->tiers[i];
        char groups[32], gpus[32], bw[32], up[32], lat[32], sw[32];
        snprintf(a, sizeof a, "%lld servers%s", (long long)tier->servers,
                 tier->rail_optimized ? ", a switch per rail" : "");
        snprintf(groups, sizeof groups, "%lld", (long long)tf->groups);
        snprintf(gpus, sizeof gpus, "%lld", (long long)tf->gpus_per_group);
        ppl_format_bandwidth(tf->gpu_bandwidth_bps, bw, sizeof bw);
        if (i == t->ntiers - 1)
            snprintf(up, sizeof up, "top");
        else
            snprintf(up, sizeof up, "1:%g", tier->oversubscription);
        ppl_format_time(tier->latency_s, lat, sizeof lat);
        snprintf(sw, sizeof sw, "%lld", (long long)tf->switches);
        const char *row[8] = {tier->name, a, groups, gpus, bw, up, lat, sw};
        ppl_table_row(&tab, row);
    }
    ppl_table_render(&tab, out, "");
    ppl_table_free(&tab);
    ppl_buf_printf(
        out, "\nbandwidth/GPU: per GPU and direction for traffic that reaches that level;\n"
             "uplinks: down:up at the level's uplinks (throttles traffic leaving its groups)\n\n");
    if (f->bisection_bps > 0) {
        ppl_format_bandwidth(f->bisection_bps, b, sizeof b);
        ppl_format_bandwidth(f->bisection_per_gpu_bps, d, sizeof d);
        ppl_buf_printf(out, "bisection  %s one direction (%s per GPU of either half)\n", b, d);
    } else {
        ppl_buf_printf(out, "bisection  - (one server: no network between servers)\n");
    }
    ppl_format_bandwidth(f->injection_bps, b, sizeof b);
    ppl_buf_printf(out, "injection  %s (all NICs)\n", b);
    ppl_buf_printf(out, "switches   %lld of radix %lld\n", (long long)f->switches,
                   (long long)t->switch_radix);
    ppl_buf_printf(out, "cables     %lld (%lld server-to-leaf)\n", (long long)f->cables,
                   (long long)f->server_cables);
}

ppl_status cmd_topology_show(cli *c)
{
    ppl_topology t;
    ppl_topology_figures f;
    ppl_status st = cli_load_topology(c, c->args->positional, &t);
    if (st != PPL_OK)
        return st;
    ppl_topology_derive(&t, &f);
    if (c->args->json)
        return show_json(c, &t, &f);
    show_text(c, &t, &f);
    return PPL_OK;
}

static void topology_row(const ppl_topology *tp, json_t *list, ppl_table *tab)
{
    const ppl_topology t = *tp;
    ppl_topology_figures f;
    ppl_topology_derive(&t, &f);
    if (list) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(t.name));
        json_object_set_new(e, "gpus", json_integer(f.gpus));
        json_object_set_new(e, "gpu", json_string(t.gpu.name));
        json_object_set_new(e, "source", json_string(t.source));
        json_array_append_new(list, e);
        return;
    }
    char gpus[32], shape[48], nv[48], nic[32], bis[32], bw[32];
    snprintf(gpus, sizeof gpus, "%lld", (long long)f.gpus);
    snprintf(shape, sizeof shape, "%lld x %lld", (long long)t.servers,
             (long long)t.gpus_per_server);
    ppl_format_bandwidth(t.nvlink.bandwidth_bps, bw, sizeof bw);
    snprintf(nv, sizeof nv, "%lld GPUs, %s", (long long)t.nvlink.domain_gpus, bw);
    ppl_format_bandwidth(f.nic_bandwidth_per_gpu_bps, nic, sizeof nic);
    if (f.bisection_bps > 0)
        ppl_format_bandwidth(f.bisection_per_gpu_bps, bis, sizeof bis);
    else
        snprintf(bis, sizeof bis, "-");
    const char *row[7] = {t.name, gpus, t.gpu.name, shape, nv, nic, bis};
    ppl_table_row(tab, row);
}

/* A topology a row; a mixed cluster a row per pool, "cluster/pool". */
static ppl_status topology_entry(cli *c, const char *name, json_t *list, ppl_table *tab)
{
    ppl_pools *pools = malloc(sizeof *pools);
    if (!pools)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_status st = cli_load_pools(c, name, pools);
    /* both names through copies: t->name and pools->name share one object */
    char cluster[PPL_NAME_MAX];
    snprintf(cluster, sizeof cluster, "%s", st == PPL_OK ? pools->name : "");
    for (int i = 0; st == PPL_OK && i < pools->n; i++) {
        ppl_topology *t = &pools->pool[i];
        char pool[PPL_NAME_MAX];
        snprintf(pool, sizeof pool, "%s", t->name);
        snprintf(t->name, sizeof t->name, "%.*s/%.*s", PPL_NAME_MAX / 2 - 1, cluster,
                 PPL_NAME_MAX / 2 - 1, pool);
        topology_row(t, list, tab);
    }
    if (st != PPL_OK || pools->n > 0) {
        free(pools);
        return st;
    }
    free(pools);
    ppl_topology t;
    if ((st = cli_load_topology(c, name, &t)) != PPL_OK)
        return st;
    topology_row(&t, list, tab);
    return PPL_OK;
}

ppl_status cmd_topologies(cli *c)
{
    static const char *const header[] = {"topology", "GPUs",    "GPU",          "servers x GPUs",
                                         "NVLink",   "NIC/GPU", "bisection/GPU"};
    return cli_list_catalog(c, PPL_CATALOG_TOPOLOGIES, "topologies", 7, "lrllrlr", header,
                            topology_entry);
}
