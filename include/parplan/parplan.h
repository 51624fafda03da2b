/*
 * parplan/parplan.h - the whole public interface of libparplan in one include.
 *
 * Modules, one header each: error (status and error record), units (quantities),
 * model (transformer description, parameters, FLOPs), topology (cluster fabric),
 * catalog (finding files by name), output (buffers, JSON,
 * tables, atomic writes), calibrate (measured runs: prediction, error, fit,
 * cross-validation).  Every public name starts with ppl_.
 */
#ifndef PARPLAN_PARPLAN_H
#define PARPLAN_PARPLAN_H

#include "parplan/calibrate.h"
#include "parplan/catalog.h"
#include "parplan/comm.h"
#include "parplan/compute.h"
#include "parplan/config.h"
#include "parplan/constants.h"
#include "parplan/error.h"
#include "parplan/memory.h"
#include "parplan/model.h"
#include "parplan/output.h"
#include "parplan/report.h"
#include "parplan/runs.h"
#include "parplan/schedule.h"
#include "parplan/search.h"
#include "parplan/topology.h"
#include "parplan/units.h"

#endif
