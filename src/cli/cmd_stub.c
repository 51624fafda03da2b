/*
 * cmd_stub.c - commands whose capability is not built yet.
 *
 * They parse and check every flag and load their input files (so a bad model or
 * topology is reported as it will be later), then say plainly that the
 * computation is missing and exit 4 without writing any output.
 */
#include "cli.h"

ppl_status cmd_not_yet(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_status st;
    if (a->model && (st = cli_load_model(c, a->model, &model)) != PPL_OK)
        return st;
    if (a->topology && (st = cli_load_topology(c, a->topology, &topo)) != PPL_OK)
        return st;
    return ppl_error_set(&c->err, PPL_EINTERNAL, "", "",
                         "%s: not available in parplan %s yet; inputs were checked, nothing "
                         "was computed or written",
                         ppl_command_name(a->command), ppl_version());
}
