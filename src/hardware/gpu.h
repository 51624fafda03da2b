/*
 * hardware/gpu.h - the GPU kinds parplan knows: one row per kind with every
 * per-GPU figure the cost model reads.
 *
 * A row holds the datasheet (memory, dense peaks per precision, HBM, NVLink, the
 * platform's NVLink domain and NIC), how NCCL drives its scale-up links (the
 * effective share of the link rate, a bus-bandwidth cap, NVLink SHARP), whose
 * fitted kernel efficiencies apply (and whether a run of the kind was measured),
 * and its host (the GPU-host link, the GPU's share of the host's memory bandwidth
 * and capacity, for optimizer offload).  A figure group a row cannot cite is NULL
 * there: the model then uses a stated assumption and says so (ppl_gpu_assumed).
 *
 * A kind is selected by its name exactly ("H100"), by its full name
 * ("H100-SXM5-80GB"), or by either followed by '-' and more ("H100-SXM5-80GB-custom",
 * "B200-GB200-NVL72-186GB"): never by a substring found elsewhere in a name.
 * Adding a GPU kind is one row in gpu.c plus, if it should be planned on, a
 * topology in topologies/.
 */
#ifndef PARPLAN_GPU_H
#define PARPLAN_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parplan/error.h"

/* The training precisions first (ppl_precision_names in config.h indexes them),
 * then the peaks a topology may state that no training runs in.  MXFP8 and
 * NVFP4 are block-scaled formats (OCP Microscaling v1.0: 32 elements share an
 * 8-bit power-of-two scale; NVFP4: 16 FP4 elements share an FP8 E4M3 scale):
 * a part runs them only where its tensor cores scale blocks (Blackwell; MXFP8
 * and MXFP4 on MI355X), so each has its own peak, 0 where unsupported. */
typedef enum ppl_precision {
    PPL_PRECISION_BF16 = 0,
    PPL_PRECISION_FP16 = 1,
    PPL_PRECISION_FP8 = 2,
    PPL_PRECISION_MXFP8 = 3,
    PPL_PRECISION_NVFP4 = 4,
    PPL_PRECISION_TF32 = 5,
    PPL_PRECISION_FP32 = 6,
    PPL_PRECISION_FP64 = 7,
    PPL_PRECISION_FP4 = 8,
    PPL_PRECISION_MXFP4 = 9,
    PPL_PRECISION_COUNT = 10
} ppl_precision;

/* Every precision a topology's gpu.flops may name, in enum order, NULL-terminated. */
extern const char *const ppl_peak_names[];
const char *ppl_precision_name(ppl_precision p); /* "?" out of range */

/* How NCCL drives a kind's scale-up links (NVLink or Infinity Fabric). */
typedef struct ppl_scaleup_figures {
    double efficiency;      /* effective bandwidth over the link rate */
    double busbw_cap_bps;   /* NCCL's cap on the bus bandwidth; 0: none */
    double nvls_efficiency; /* NVLink SHARP's share; 0: the switch does not reduce */
    int nvls_channels;
    const char *basis; /* where the figures come from, as estimate reports it */
} ppl_scaleup_figures;

/* The host side of one GPU. */
typedef struct ppl_host_figures {
    double link_bps;       /* GPU <-> host, per direction */
    double memory_bps;     /* the GPU's share of the host's memory bandwidth */
    double capacity_bytes; /* the GPU's share of the host's memory */
    const char *source;
} ppl_host_figures;

/* What a streaming kernel (copy, triad) reaches of a GPU's HBM bandwidth, as
 * measured on one kind: element-wise kernels' share (compute.c). */
typedef struct ppl_stream_figures {
    const char *kind; /* the kind it was measured on: "H100" */
    double share;     /* of the datasheet HBM bandwidth */
    const char *source;
} ppl_stream_figures;

/* Whose fitted kernel efficiencies a kind's GEMMs, attention and element-wise
 * kernels take (constants.h: the a100_* and h100_* constants; Blackwell's GEMMs
 * their own, b200_gemm and b200_gemm_fp8, the rest as Hopper's). */
typedef enum ppl_kernels {
    PPL_KERNELS_AMPERE = 0,
    PPL_KERNELS_HOPPER = 1,
    PPL_KERNELS_BLACKWELL = 2
} ppl_kernels;

/* The attention kernels a software stack runs: FlashAttention-2's, or Transformer
 * Engine's fused attention (cuDNN's kernels on Hopper and later GPUs, FlashAttention-2
 * on Ampere). */
typedef enum ppl_attn_kernel { PPL_ATTN_FA2 = 0, PPL_ATTN_FUSED = 1 } ppl_attn_kernel;

/* A fused-attention kernel benchmark on one kind (gpu.c): forward and backward
 * TFLOP/s at 2K, 4K, 8K, 16K and 32K tokens, causal, 16-bit, heads 128 wide. */
typedef struct ppl_fused_attention_figures {
    const char *kind; /* the kind it was measured on: "GB200" */
    double peak;      /* that kind's 16-bit dense peak, FLOP/s */
    double fwd[5], bwd[5];
    const char *source;
} ppl_fused_attention_figures;

/* One GPU kind: every per-GPU figure, each group with its source. */
typedef struct ppl_gpu_spec {
    const char *kind;      /* "H100" */
    const char *full_name; /* "H100-SXM5-80GB" */
    double memory_bytes;
    double bf16_flops; /* dense peak */
    double fp8_flops;  /* dense peak, 0 when unsupported */
    double hbm_bandwidth_bps;
    double nvlink_bps;   /* per GPU, per direction */
    int64_t domain_gpus; /* default NVLink domain */
    const char *source;
    /* dense peaks of the block-scaled formats, 0 where the part has none */
    double mxfp8_flops;
    double nvfp4_flops;
    double mxfp4_flops;
    bool mesh;       /* point-to-point links (AMD Infinity Fabric), not a switch */
    double nic_bps;  /* the NIC the platform ships with, per GPU, per direction */
    const char *nic; /* "ConnectX-7 400 Gb/s" */
    ppl_kernels kernels;
    bool measured; /* a calibration run on this kind exists (tests/data/runs.json) */
    bool ultra;    /* Blackwell Ultra: its GEMMs take the b300_sustained constant (compute.c) */
    const ppl_scaleup_figures *scaleup; /* NULL: assumed (ppl_gpu_scaleup) */
    const ppl_host_figures *host;       /* NULL: assumed (ppl_gpu_host) */
    const ppl_stream_figures *stream;   /* its own, or a kind's with the same HBM part */
    const ppl_fused_attention_figures *fused_attention; /* its own, a sibling's (assumed), or
                                                           NULL: FlashAttention-2's curve */
} ppl_gpu_spec;

/* A topology's GPU: its figures as the file states them (a known kind's
 * datasheet filling what it leaves out) and the kind's row, if it names one. */
typedef struct ppl_gpu {
    char name[PPL_NAME_MAX];
    double memory_bytes;
    double flops[PPL_PRECISION_COUNT]; /* dense peak FLOP/s per precision, 0 = unsupported */
    double hbm_bandwidth_bps;          /* bytes/s */
    double host_link_bps;              /* to host memory, per direction; 0: the kind's */
    const ppl_gpu_spec *spec;          /* the kind's row; NULL for a GPU parplan does not know */
} ppl_gpu;

/* The row of "H100", "h100", "H100-SXM5-80GB" or "H100-SXM5-80GB-anything"; NULL
 * when the name names no kind. */
const ppl_gpu_spec *ppl_gpu_lookup(const char *name);
/* Every row, in table order; *count their number. */
const ppl_gpu_spec *ppl_gpu_specs(size_t *count);
/* "A100, H100, H800, H200, B200, GB200, ..." */
void ppl_gpu_kinds(char *buf, size_t size);
/* Names the GPU and takes its row: gpu->spec = ppl_gpu_lookup(name).  Only the
 * name and the row: the figures stay as they are. */
void ppl_gpu_set_name(ppl_gpu *gpu, const char *name);
/* The datasheet figures of a row, its full name and the row itself into gpu. */
void ppl_gpu_from_spec(const ppl_gpu_spec *spec, ppl_gpu *gpu);

/* The scale-up figures of the GPU's kind; an unknown kind, or one whose row has
 * none, gets the assumed share of the link rate (constants.h), no cap and no NVLink SHARP
 * (returns false: assumed). */
bool ppl_gpu_scaleup(const ppl_gpu *gpu, ppl_scaleup_figures *out);
/* NVLink SHARP's share of the effective NVLink bandwidth: NCCL's nvlsEfficiency x
 * (channels - 1) / channels (tuning.cc, nvls.cc); 0 where the switch does not
 * reduce or the kind is unknown. */
double ppl_gpu_nvls_efficiency(const ppl_gpu *gpu);
/* The GPU's host: its kind's, the topology's gpu.host_link overriding the link;
 * an unknown host is a DGX H100's (PCIe 5.0 x16, 2 sockets of DDR5-4800 for 8
 * GPUs), assumed (returns false). */
bool ppl_gpu_host(const ppl_gpu *gpu, ppl_host_figures *out);
/* The share of the GPU's HBM bandwidth streaming kernels reach (its row's figure;
 * H100's for an unknown kind); false when it was not measured on this kind. */
bool ppl_gpu_stream(const ppl_gpu *gpu, ppl_stream_figures *out);
/* The precision whose dense peak GEMMs asked to run at `precision` run at on the
 * GPU: that one, or bf16 where the GPU has no figure for it. */
ppl_precision ppl_gpu_gemm_precision(const ppl_gpu *gpu, int precision);
/* The GPU's share of its host's memory (what offloaded state may fill). */
double ppl_gpu_host_capacity_bytes(const ppl_gpu *gpu);
/* The kernels' generation (Hopper for an unknown kind) and whether a run of the
 * kind was measured (false for an unknown kind). */
ppl_kernels ppl_gpu_kernels(const ppl_gpu *gpu, bool *measured);
/* The share of the 16-bit peak flash attention reaches on a generation at a
 * sequence of `tokens` and heads `head_dim` wide, over Hopper's at 4,096 tokens
 * and 128 (where the fitted h100_attention holds): FlashAttention-2's published
 * benchmark (gpu.c), Blackwell assumed Hopper's; *source names it. */
double ppl_kernels_attention_ratio(ppl_kernels gen, double tokens, double head_dim,
                                   const char **source);
/* The forward's and the backward's shares of the 16-bit peak that `kernel` reaches
 * on the GPU at a sequence of `tokens` and heads `head_dim` wide, over the same
 * kernel's on H100 at 4,096 tokens and 128, forward and backward together (where
 * the fitted h100_attention holds): the fused kernel's benchmark on the kind (its
 * row's fused_attention, whose source names it), else FlashAttention-2's curve
 * (both shares the ratio above).  Returns the kernel whose figures were used. */
ppl_attn_kernel ppl_gpu_attention_ratios(const ppl_gpu *gpu, ppl_attn_kernel kernel, double tokens,
                                         double head_dim, double *forward, double *backward);

/* One sentence on what of the GPU is assumed rather than cited or measured,
 * under `precision` (kernel efficiencies borrowed from another kind, a
 * block-scaled precision no run used, scale-up and host figures without a
 * source); false, and buf empty, when nothing is. */
bool ppl_gpu_assumed(const ppl_gpu *gpu, ppl_precision precision, char *buf, size_t size);

#endif
