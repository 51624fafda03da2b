/*
 * base/constants.h - every fitted constant of the cost model, in one place.
 *
 * The step-time model has a handful of constants no datasheet gives: how close
 * each GPU generation's GEMMs, attention and element-wise kernels get to peak, how
 * much communication the overlapping stacks hide, and a per-step cost.  They are
 * fitted by `parplan validate --fit` on measured runs; constants.c holds the
 * committed values with the record of how they were fitted, and every command that
 * costs a configuration takes `--constants FILE` (what `validate --fit --json`
 * writes) instead.  Each constant has a unit, a meaning and the bounds the fit
 * keeps it within (ppl_constant_infos).
 *
 * Beside them, the assumed constants: figures the model needs that no datasheet,
 * paper or measured run here gives and no fit pins, set by judgement, each with
 * its reason (ppl_assumed_infos).  They are read from here and nowhere else, and
 * docs/accuracy.md lists them.
 */
#ifndef PARPLAN_CONSTANTS_H
#define PARPLAN_CONSTANTS_H

#include <stddef.h>

#include "parplan/error.h"

struct json_t;

typedef struct ppl_constants {
    double a100_gemm;          /* large 16-bit GEMMs on A100-class GPUs, of the 16-bit peak */
    double h100_gemm;          /* large 16-bit GEMMs on H100 and later, of the 16-bit peak */
    double h100_gemm_fp8;      /* large fp8 GEMMs on H100 and later, of the fp8 peak (2023-24
                                  kernels: megatron-core, NeMo 24.x) */
    double h100_gemm_fp8_2025; /* the same with 2025+ kernels (the nemo-2025 profile) */
    double b200_gemm;          /* large 16-bit GEMMs on Blackwell kinds, of the 16-bit peak */
    double b200_gemm_fp8;      /* large fp8 and mxfp8 GEMMs on Blackwell kinds, of the fp8 peak */
    double b300_sustained;     /* Blackwell Ultra's GEMMs over Blackwell's fractions */
    double h100_attention;     /* flash attention on H100 and later, of the 16-bit peak */
    double width_half;         /* per-GPU GEMM width (hidden / tp) at which efficiency halves */
    double overlap_cost;       /* compute slowdown per second of communication hidden under it */
    double step_overhead_s;    /* per-step cost outside the model, seconds (Megatron's, DeepSpeed's) */
    double fsdp_step_overhead_s; /* the same under the fsdp profile (Composer), seconds */
    double host_op_s;          /* host time per operation a layer launches, seconds */
    double zero3_2021_bus;     /* DeepSpeed 2021 ZeRO-3 collectives, of the ring's bus bandwidth */
} ppl_constants;

typedef struct ppl_constant_info {
    const char *name;    /* as in a constants file: "h100_gemm" */
    const char *unit;    /* "fraction of peak", "elements", "s" */
    const char *meaning; /* one line */
    size_t offset;       /* of the double in ppl_constants */
    double lo, hi;       /* the range the fit keeps it in */
} ppl_constant_info;

/* The constants' descriptions, `*count` of them, in a fixed order. */
const ppl_constant_info *ppl_constant_infos(size_t *count);
double *ppl_constant_at(ppl_constants *k, const ppl_constant_info *info);

/* The committed constants (what the last recorded fit returned). */
const ppl_constants *ppl_constants_committed(void);
/* Where a fit starts unless told otherwise: round, hand-set values. */
const ppl_constants *ppl_constants_start(void);

/* The assumed constants (see the head of this file). */
typedef struct ppl_assumed {
    double tail_loss_timeout_s;  /* a lost tail packet's wait for retransmission (RoCE) */
    double scaleup_efficiency;   /* effective share of the NVLink rate, a GPU without a row */
    double nvlink_latency_s;     /* topology defaults: an NVLink hop, */
    double rail_latency_s;       /* NIC to the first switch, */
    double tier_latency_s;       /* a switch hop, */
    double rtt_s;                /* an RDMA round trip, */
    double mtu_bytes;            /* and the MTU, when a topology file gives none */
    double cross_pool_latency_s; /* a transfer between two pools of a mixed cluster */
    double cpu_adam_share;       /* CPU Adam: share of the GPU's host memory bandwidth used */
    double fragmentation;        /* the caching allocator's loss, of the activations */
    double host_copy_bps;        /* a checkpoint's device-to-host copy, per GPU */
    double restart_s;            /* a job's restart after a failure */
    double spare_restart_s;      /* the same onto a hot spare */
    double repair_s;             /* a failed server's repair, back to the pool */
} ppl_assumed;

typedef struct ppl_assumed_info {
    const char *name; /* "tail_loss_timeout_s" */
    const char *unit;
    const char *why; /* the reasoning behind the value, one sentence */
    size_t offset;   /* of the double in ppl_assumed */
} ppl_assumed_info;

/* The assumed constants' values, and their descriptions (`*count`, fixed order). */
const ppl_assumed *ppl_assumed_values(void);
const ppl_assumed_info *ppl_assumed_infos(size_t *count);

/* Reads a constants file: {"constants": {NAME: VALUE, ...}, "fit": {...}}; names
 * left out keep the committed value; an unknown name or a value outside its
 * bounds is PPL_EINPUT naming the key. */
ppl_status ppl_constants_load(const char *path, const ppl_diag *diag, ppl_constants *out,
                              ppl_error *err);
/* The same from the {NAME: VALUE, ...} object at key path `path` of a document
 * already read (a plan's inputs.constants). */
ppl_status ppl_constants_from_json(const struct json_t *k, const char *file, const char *path,
                                   const ppl_diag *diag, ppl_constants *out, ppl_error *err);
/* The first constant whose value differs between a and b (*va, *vb its values);
 * NULL when they are equal. */
const char *ppl_constants_first_difference(const ppl_constants *a, const ppl_constants *b,
                                           double *va, double *vb);
/* {"constants": {...}} with every constant, for a constants file. */
struct json_t *ppl_constants_json(const ppl_constants *k);

#endif
