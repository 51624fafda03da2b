/*
 * cmd_collective.c - `parplan collective`: one collective, nccl-tests style.
 *
 * algbw = size / time; busbw = algbw x the factor nccl-tests uses to compare
 * with link bandwidth (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n for
 * all-gather, reduce-scatter and all-to-all, 1 for send/recv.
 */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

ppl_status cmd_collective(cli *c)
{
    const ppl_args *a = c->args;
    ppl_topology topo;
    ppl_status st = cli_load_topology(c, a->topology, &topo);
    if (st != PPL_OK)
        return st;
    if (a->servers > topo.servers)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--servers",
                             "%lld exceeds the topology's %lld servers", (long long)a->servers,
                             (long long)topo.servers);
    int64_t per_server =
        a->gpus_per_server == PPL_UNSET ? topo.gpus_per_server : a->gpus_per_server;
    if (per_server > topo.gpus_per_server)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--gpus-per-server",
                             "%lld exceeds the topology's %lld GPUs per server",
                             (long long)per_server, (long long)topo.gpus_per_server);
    ppl_net net;
    ppl_net_init(&net, &topo);
    ppl_group g;
    ppl_group_servers(&net, a->servers, per_server, &g);
    if (g.n < 2)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--servers",
                             "a collective needs at least 2 GPUs (1 server x 1 GPU given)");
    double lo = a->size_min_bytes > 0 ? a->size_min_bytes : 1048576.0;
    double hi = a->size_max_bytes > 0 ? a->size_max_bytes : 8589934592.0;

    ppl_coll probe;
    if (!ppl_collective(&net, (ppl_collective_op)a->op, &g, lo, (ppl_algo)a->algo, &probe)) {
        /* the real cause: the switches' missing reduction, before the group's shape */
        const char *name = ppl_algo_name(a->algo), *op = ppl_collective_op_name(a->op);
        bool all_reduce = a->op == PPL_OP_ALLREDUCE;
        if (all_reduce && a->algo == PPL_ALGO_NVLS && g.nodes <= 1 && !topo.nvlink.sharp)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--algo",
                                 "nvls needs NVSwitches that reduce: %s does not declare "
                                 "nvlink.sharp",
                                 topo.name);
        if (all_reduce && a->algo == PPL_ALGO_SHARP && g.nodes > 1 && !topo.transport.sharp)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--algo",
                                 "sharp needs switches that reduce: %s does not declare "
                                 "transport.sharp",
                                 topo.name);
        return ppl_error_set(
            &c->err, PPL_EUSAGE, "", "--algo", "%s does not apply to %s on %s", name, op,
            g.nodes > 1 ? "a group across NVLink domains" : "a group inside one NVLink domain");
    }

    json_t *doc = NULL, *results = NULL;
    const char *level = g.tier < 0 ? "nvlink" : topo.tiers[g.tier].name;
    if (a->json) {
        doc = ppl_json_document();
        results = json_array();
        if (!doc || !results) {
            json_decref(doc);
            json_decref(results);
            return cli_emit_json(c, NULL);
        }
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "op", json_string(ppl_collective_op_name(a->op)));
        json_object_set_new(doc, "ranks", json_integer(g.n));
        json_object_set_new(doc, "servers", json_integer(a->servers));
        json_object_set_new(doc, "gpus_per_server", json_integer(per_server));
        json_object_set_new(doc, "nvlink_nodes", json_integer(g.nodes));
        json_object_set_new(doc, "level", json_string(level));
        json_object_set_new(doc, "results", results);
    } else {
        ppl_buf_printf(&c->out,
                       "# %s on %s: %lld servers x %lld GPUs = %lld ranks, %lld NVLink node%s, "
                       "highest level %s, algorithm %s\n",
                       ppl_collective_op_name(a->op), topo.name, (long long)a->servers,
                       (long long)per_server, (long long)g.n, (long long)g.nodes,
                       g.nodes == 1 ? "" : "s", level, ppl_algo_name(a->algo));
        ppl_buf_printf(&c->out, "#%15s %12s %10s %10s  %s\n#%15s %12s %10s %10s\n", "size", "time",
                       "algbw", "busbw", "algorithm", "(B)", "(us)", "(GB/s)", "(GB/s)");
    }
    for (double bytes = lo; bytes <= hi * (1.0 + 1e-9); bytes *= 2.0) {
        ppl_coll r;
        ppl_collective(&net, (ppl_collective_op)a->op, &g, bytes, (ppl_algo)a->algo, &r);
        double algbw, busbw;
        ppl_coll_bandwidths((ppl_collective_op)a->op, g.n, bytes, &r, &algbw, &busbw);
        if (results) {
            json_t *e = json_object();
            json_object_set_new(e, "bytes", ppl_json_real(bytes));
            json_object_set_new(e, "time_s", ppl_json_real(r.time_s));
            json_object_set_new(e, "algbw", ppl_json_real(algbw));
            json_object_set_new(e, "busbw", ppl_json_real(busbw));
            json_object_set_new(e, "algorithm", json_string(ppl_algo_name(r.algo)));
            json_array_append_new(results, e);
        } else {
            ppl_buf_printf(&c->out, " %15.0f %12.2f %10.2f %10.2f  %s\n", bytes, r.time_s * 1e6,
                           algbw / 1e9, busbw / 1e9, ppl_algo_name(r.algo));
        }
        if (lo == hi)
            break;
    }
    if (doc)
        return cli_emit_json(c, doc);
    return PPL_OK;
}
