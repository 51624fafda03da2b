/*
 * render/htmlreport.h - a plan as one self-contained HTML page: inline SVG and
 * CSS, no script from anywhere else, no network access, readable in light and
 * dark mode.
 *
 * For one result (#1 unless another is chosen): the step's parts (compute, bubble, exposed
 * communication, optimizer, overhead) and the communication before overlap,
 * memory per pipeline stage stacked (weights, gradients, optimizer, activations,
 * other) against capacity, the pipeline of one step (timeline.h), traffic per
 * network level; for all of them the ranked table, each runner-up against #1.
 *
 * Every figure carries its value in a data-value attribute beside the rounded
 * text, named by data-key after the plan JSON's field (results[K].step_time_s,
 * time.bubble, memory.total, ...), so a test reads the page back and holds it to
 * the JSON.
 */
#ifndef PARPLAN_HTMLREPORT_H
#define PARPLAN_HTMLREPORT_H

#include <stddef.h>

#include "cost/memory.h"
#include "model/model.h"
#include "base/output.h"
#include "cost/estimate.h"
#include "hardware/topology.h"

#define PPL_REPORT_MAX_BLOCKS 40000 /* timeline blocks drawn; a longer step is summarised */

typedef struct ppl_report_page {
    const ppl_model *model;
    const ppl_topology *topo;
    const ppl_memory_opts *memory; /* the options the estimates were costed with */
    const ppl_estimate *results;   /* ranked, best first */
    size_t nresults;
    size_t focus;          /* the result the charts show (0: #1) */
    const char *origin;    /* what the page was made from: "plan.json", a command line */
    double gpu_hour_price; /* per GPU-hour, 0: no cost column */
} ppl_report_page;

/* The page, appended to out. */
ppl_status ppl_report_html(const ppl_report_page *page, ppl_buf *out, ppl_error *err);

#endif
