/*
 * cost/compute.h - GPU time of the work one pipeline stage does per microbatch.
 *
 * FLOPs follow Korthikanti et al. 2022 (Eq.7 for the model, Eq.8 with selective
 * recomputation) generalised to GQA, gated MLPs and MoE; time divides GEMM FLOPs by
 * the GPU's peak for the precision times an efficiency that falls for narrow
 * (tensor-parallel-split) GEMMs, attention by a flash-attention or batched-GEMM
 * efficiency at 16-bit rates (fp8 applies to the GEMMs only), and element-wise work
 * (norms, activations, dropout, residuals, softmax, optimizer) by bytes moved over
 * HBM.  The efficiency constants are fitted on published runs (parplan validate
 * --fit) per generation of GPU kernels (gpu.h).
 */
#ifndef PARPLAN_COMPUTE_H
#define PARPLAN_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "cost/config.h"
#include "model/model.h"
#include "base/constants.h"
#include "hardware/topology.h"

/* Efficiencies of one GPU family (fractions of the datasheet peaks). */
typedef struct ppl_gpu_efficiency {
    double gemm;       /* large 16-bit GEMMs, of the bf16/fp16 peak */
    double gemm_fp8;   /* large fp8 GEMMs, of the fp8 peak */
    double width_half; /* per-GPU GEMM width (hidden / tp) where efficiency is half of gemm */
    double attention;  /* flash attention, of the 16-bit peak: FlashAttention-2's on H100
                          at 4,096 tokens, heads 128 wide; other kernels, kinds, sequences
                          and widths by their benchmarks' ratio to it (gpu.c) */
    ppl_attn_kernel attention_kernel; /* the stack's (ppl_stack_attention_kernel) */
    double bmm;        /* unfused attention batched GEMMs (QK^T, AV), of the 16-bit peak */
    double hbm;        /* element-wise kernels, of the HBM bandwidth */
} ppl_gpu_efficiency;

/* The efficiencies of the topology's GPU (its kind's generation, gpu.h) under the
 * fitted constants k; what is assumed of them, ppl_gpu_assumed says. */
void ppl_gpu_efficiency_for(const ppl_topology *topo, const ppl_constants *k,
                            ppl_gpu_efficiency *out);
/* Work of one transformer layer for one microbatch on one GPU, forward. */
/* The linear layers around which a layer's tensor-parallel collectives run: the
 * attention's QKV (column-parallel: its input gathered, its input gradient
 * reduced) and output projection (row-parallel: its output reduced, its output
 * gradient gathered), and a dense MLP's fc1 and fc2 likewise; a MoE layer's
 * experts have collectives of their own (the dispatcher's). */
typedef enum ppl_tp_gemm {
    PPL_GEMM_QKV,
    PPL_GEMM_PROJ,
    PPL_GEMM_FC1,
    PPL_GEMM_FC2,
    PPL_TP_GEMMS
} ppl_tp_gemm;

typedef struct ppl_layer_work {
    double gemm_flops;        /* weights' GEMMs */
    double col_gemm_flops;    /* of which the column-parallel layers' (QKV, and fc1 of a
                                 dense MLP), whose backward reduces the input gradient */
    double tp_gemm_flops[PPL_TP_GEMMS]; /* of which each GEMM a tensor-parallel
                                           collective pairs with (ppl_tp_gemm) */
    double skew_gemm_flops;   /* MoE: what the busiest expert's GPU computes above the mean
                                 (ppl_moe_load_factor); time, not model FLOPs */
    double expert_gemm_flops; /* of which the experts', at the expert tensor-parallel width */
    double attn_flops;        /* attention core as executed (causal flash skips half) */
    double attn_model_flops;  /* attention core as the model counts it (Eq.7: full s x s) */
    double head_dim;          /* a query head's width (its q_cols x tp / heads) */
    double elementwise_bytes; /* HBM traffic of norms, activations, dropout, residuals, softmax */
    double scores;                 /* attention scores of the microbatch: T x heads/tp x s */
    double softmax_bytes;          /* of which the unfused attention's softmax and dropout */
    double softmax_bytes_backward; /* their backward's (not twice the forward's) */
} ppl_layer_work;

void ppl_layer_work_of(const ppl_model *model, const ppl_config *config, bool moe,
                       ppl_layer_work *out);

/* Forward and backward (with recomputation) time of one layer, one microbatch. */
typedef struct ppl_layer_time {
    double forward_s;
    double backward_s;     /* backward + recomputed forward */
    double recompute_s;    /* the recomputed part of backward_s */
    double attention_s;    /* the attention core's share of forward_s */
    double attention_backward_s; /* and of backward_s (not its recomputation) */
    double wgrad_s;        /* the weight-gradient GEMMs' share of backward_s (as many
                              FLOPs as the forward's GEMMs): W of the zero-bubble split */
    double wgrad_col_s;    /* of wgrad_s, the column-parallel layers' (QKV, and fc1 of a
                              dense MLP): what their input gradients' reductions can hide
                              under when the stack runs them asynchronously (stack.h) */
    double tp_gemm_s[PPL_TP_GEMMS]; /* one forward GEMM of each kind (ppl_tp_gemm); a
                                       backward's input and weight gradients take as long */
    double flops_model;    /* forward + backward model FLOPs (no recomputation) */
    double flops_hardware; /* FLOPs executed, recomputation included */
    double host_ops;       /* operations the host launches for its forward and backward
                              (ppl_layer_host_ops) */
    double host_ops_recompute; /* and for its recomputation, when recomputed */
} ppl_layer_time;

/* Operations the host issues for one layer's forward of one microbatch, each a
 * kernel or a collective that PyTorch dispatches from Python (compute.c counts
 * them from Megatron-Core's layer); *backward those of its backward. */
void ppl_layer_host_ops(const ppl_model *model, const ppl_config *config, bool moe,
                        double *forward, double *backward);

void ppl_layer_time_of(const ppl_model *model, const ppl_topology *topo, const ppl_config *config,
                       const ppl_gpu_efficiency *eff, bool moe, ppl_layer_time *out);

/* ppl_layer_time_of in two steps: what reads neither ep nor etp (the expert
 * layout), then the layer's time from it and them.  A search computes the first
 * once for the expert layouts around one attention layout (microcache.c); the
 * two give ppl_layer_time_of's figures to the last bit. */
typedef struct ppl_layer_base {
    double gemm_flops, skew_gemm_flops; /* ppl_layer_work's, the experts' at tp's width */
    double tokens;                      /* T: a rank's tokens of the microbatch */
    double expert_weights;              /* an expert's weights a rank holds at tp's width */
    double pgemm, gemm_den;             /* the GEMMs' peak, and it x their fraction at tp */
    bool fp8;                           /* the GEMMs in a low precision */
    double attn_s, attn_backward_s, elem_s, elem_backward_s, amax_f_s, amax_b_s;
    double selective_s; /* what selective recomputation runs again (unfused attention) */
    double wgrad_col_s, tp_gemm_s[PPL_TP_GEMMS];
    double flops_model, recompute_flops;
} ppl_layer_base;
void ppl_layer_base_of(const ppl_model *model, const ppl_topology *topo, const ppl_config *config,
                       const ppl_gpu_efficiency *eff, bool moe, ppl_layer_base *out);
void ppl_layer_time_finish(const ppl_model *model, const ppl_config *config,
                           const ppl_gpu_efficiency *eff, bool moe, const ppl_layer_base *base,
                           ppl_layer_time *out);

/* Output layer and loss on the last stage, one microbatch: forward and backward. */
void ppl_output_time_of(const ppl_model *model, const ppl_topology *topo, const ppl_config *config,
                        const ppl_gpu_efficiency *eff, bool fused_loss, ppl_layer_time *out);

/* Optimizer step over `params` parameters held by one GPU (memory-bound). */
double ppl_optimizer_time(double params, const ppl_topology *topo, const ppl_gpu_efficiency *eff,
                          ppl_optimizer optimizer);

#endif
