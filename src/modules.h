/*
 * modules.h - every module's header of the library, bottom layer first: what the
 * command line, the tests, the fuzzers and the benchmark see of the library's
 * inside.  The library's own sources never include it: each includes the headers
 * it uses, only from its own layer or those below (docs/internals.md gives the
 * order; tests/layout checks it).  A program that links libparplan uses
 * parplan/parplan.h alone.
 */
#ifndef PARPLAN_MODULES_H
#define PARPLAN_MODULES_H

#include "parplan/error.h"
#include "base/units.h"
#include "base/jsonread.h"
#include "base/output.h"
#include "base/catalog.h"
#include "base/constants.h"
#include "base/heap.h"
#include "base/pages.h"
#include "model/hfconfig.h"
#include "model/model.h"
#include "hardware/gpu.h"
#include "hardware/topology.h"
#include "hardware/net.h"
#include "hardware/comm.h"
#include "hardware/topogen.h"
#include "cost/config.h"
#include "cost/pipeline.h"
#include "cost/linesweep.h"
#include "cost/executor.h"
#include "cost/knobs.h"
#include "cost/stack.h"
#include "cost/shard.h"
#include "cost/rules.h"
#include "cost/compute.h"
#include "cost/memory.h"
#include "cost/evalctx.h"
#include "cost/offload.h"
#include "cost/cp.h"
#include "cost/stage.h"
#include "cost/microcache.h"
#include "cost/estimate.h"
#include "cost/serve.h"
#include "plan/balance.h"
#include "plan/bounds.h"
#include "plan/families.h"
#include "plan/ranking.h"
#include "plan/candidate.h"
#include "plan/search.h"
#include "plan/mixed.h"
#include "studies/goodput.h"
#include "studies/whatif.h"
#include "studies/sizing.h"
#include "studies/rl.h"
#include "studies/runs.h"
#include "studies/serveruns.h"
#include "studies/calibrate.h"
#include "render/launch.h"
#include "render/engine.h"
#include "render/verl.h"
#include "render/report.h"
#include "render/explain.h"
#include "render/timeline.h"
#include "render/svg.h"
#include "render/htmlreport.h"
#include "render/pooled.h"

#endif
