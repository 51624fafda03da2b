/*
 * parplan/parplan.h - the whole public interface of libparplan in one include.
 *
 * Link with `pkg-config --cflags --libs --static parplan` (meson install puts
 * libparplan.a, these headers and parplan.pc in place); examples/plan.c plans a
 * model on a cluster with nothing else.  Every public name starts with ppl_.
 *
 * Conventions.  Library calls never print and never exit: they return a
 * ppl_status (0 ok, 1 nothing feasible, 2 bad knob, 3 bad input file, 4 internal,
 * the command line's exit codes) and describe a failure in a caller-allocated
 * ppl_error (file, line:column or key path, message); warnings go through an
 * optional ppl_diag callback.  Structs are caller-owned values, filled by an
 * _init or a loader; what a call allocates is released by its _free
 * (ppl_search_free, ppl_classes_free, ppl_catalog_free, ppl_buf_free,
 * ppl_table_free, ppl_runs_free).  Units are in names (_s, _bytes, _bps) or in
 * the field's comment: seconds, bytes, bytes/s, FLOP/s.
 *
 * Entry points, by module (one header each):
 *   catalog   ppl_catalog_resolve (a catalogue name or a path -> a file),
 *             ppl_catalog_list / ppl_catalog_free
 *   model     ppl_model_load, ppl_model_from_json, ppl_model_derive (parameters,
 *             FLOPs per token), ppl_layer_shape_of (one layer per TP rank)
 *   topology  ppl_topology_load, ppl_topology_from_json, ppl_topology_derive
 *   topogen   ppl_topogen_opts_init, ppl_topogen (a folded-Clos topology for a
 *             parametric cluster, as a document and a loaded topology)
 *   config    ppl_pins_init (knobs free), ppl_config_from_pins (one configuration
 *             from pins, every divisibility rule checked), ppl_config_check
 *   constants ppl_constants_committed, ppl_constants_load (a file that
 *             ppl_calib_fit's record was written to), ppl_constant_infos
 *   schedule  ppl_eval_ctx_init (model + topology + stack profile, committed
 *             constants), ppl_eval_ctx_set_constants (others, e.g. loaded ones),
 *             ppl_estimate_config (step time, memory, traffic of one
 *             configuration), ppl_estimate_check, ppl_stack_for_software
 *   memory    ppl_memory_stage / ppl_memory_worst (per-GPU memory of a stage, of
 *             the heaviest one), ppl_model_state_bytes (ZeRO model states)
 *   search    ppl_search (the best configurations under pins; ppl_search_free),
 *             ppl_search_outside / ppl_search_left_out (the families the default
 *             search leaves out, and which of them would beat its #1)
 *   comm      ppl_net_init, ppl_group_place, ppl_collective (one collective's
 *             time and traffic on the fabric, nccl-tests style)
 *   runs      ppl_runs_load / ppl_runs_free (measured runs for calibration)
 *   calibrate ppl_calib_predict (a measured run's most likely configuration),
 *             ppl_calib_error / ppl_calib_summarize (the step-time errors),
 *             ppl_calib_fit / ppl_calib_fit_record_free, ppl_calib_cv
 *   whatif    ppl_topology_document + ppl_sweeps_parse, then ppl_whatif_run (the
 *             best plan, time to train and GPU-hours at every point; its building
 *             blocks ppl_whatif_point and ppl_best_plan), ppl_topology_patch,
 *             ppl_default_global_batch, ppl_cost_per_million_tokens
 *   pools     ppl_pools_load / ppl_pools_from_json (a mixed cluster's pools, each
 *             a plain topology), ppl_mixed_cost (a pipeline across pools, its
 *             layers balanced to each pool's speed and memory), ppl_mixed_search
 *   sizing    ppl_size (the fewest GPUs for N tokens in D days, or to fit at all)
 *   explain   ppl_plan_diff_of (how a plan differs from the best: knobs, the
 *             step's parts and memory), ppl_plan_diff_text / _json
 *   report    ppl_estimate_json, ppl_estimate_text (what the command line prints)
 *   output    ppl_buf_init / ppl_buf_free, ppl_table_init / ppl_table_free,
 *             ppl_json_render, ppl_output_write (atomic replacement of a file)
 *   units, error: quantities with units; ppl_error_format for one-line messages.
 */
#ifndef PARPLAN_PARPLAN_H
#define PARPLAN_PARPLAN_H

#include "modules.h"

#endif
