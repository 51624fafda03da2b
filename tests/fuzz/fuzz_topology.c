/*
 * fuzz_topology.c - libFuzzer harness: a topology file, its derived figures, the
 * network pass, group placement and one collective of each kind.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "modules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return 0;
    ppl_topology t;
    ppl_error err;
    if (ppl_topology_from_json(root, "fuzz.json", "", NULL, &t, &err) == PPL_OK) {
        ppl_topology_figures f;
        ppl_topology_derive(&t, &f);
        ppl_net net;
        ppl_net_init(&net, &t);
        int64_t servers = t.servers < 64 ? t.servers : 64;
        ppl_group g;
        ppl_group_servers(&net, servers, t.gpus_per_server, &g);
        for (int op = PPL_OP_ALLREDUCE; op <= PPL_OP_SENDRECV; op++) {
            ppl_coll r;
            ppl_collective(&net, (ppl_collective_op)op, &g, 1048576.0, PPL_ALGO_AUTO, &r);
        }
        ppl_group_place(&net, 8, t.gpus_per_server, 0, &g);
    }
    json_decref(root);
    return 0;
}
