/*
 * gpu.c - the GPU kinds parplan knows: one row each, every per-GPU figure with
 * its source (see hardware/gpu.h).
 *
 * Dense (not sparse) tensor-core peaks; memory as the datasheets state it; NVLink
 * (or Infinity Fabric) per GPU per direction (half the bidirectional figure the
 * datasheets quote).  A topology file may name one of these instead of spelling
 * the figures out ("gpu": "H100"), and `topology generate --gpu` uses them.
 *
 * Scale-up: NCCL's effective NVLink bandwidth per link over the raw link rate
 * (src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90 20.6, SM100 40.1 GB/s on links of
 * 25, 25 and 50 GB/s) and its A100 cap on the bus bandwidth (tuning.cc: 235 GB/s
 * for compute capability 8.0); NVLS from tuning.cc nvlsEfficiency (Hopper 0.85,
 * Blackwell 0.74; Volta and Ampere 0: their NVSwitches do not reduce) and
 * src/transport/nvls.cc NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32.
 *
 * Hosts, per direction: PCIe 4.0 runs 16 GT/s a lane and PCIe 5.0 32 GT/s
 * (PCI-SIG base specifications), ~32 and ~64 GB/s over x16 (31.5 and 63 after the
 * 128b/130b encoding); NVLink-C2C joins a Grace CPU to its GPU at 900 GB/s
 * bidirectional (NVIDIA GH200 Grace Hopper Superchip datasheet), 450 GB/s each way.
 * Host memory: the DGX's two sockets of 8 DDR channels each, shared by its 8 GPUs;
 * a Grace CPU's LPDDR5X at up to 500 GB/s (NVIDIA Grace Hopper Superchip
 * architecture whitepaper), one Grace per GPU on GH200, one per two GPUs on GB200.
 *
 * Kernels: A100, H100, B200, GB200 and GB300 have measured runs
 * (tests/data/runs.json).  The Blackwell kinds' GEMMs (16-bit, fp8 and mxfp8)
 * have their own fitted fractions, Blackwell Ultra's a fitted multiple of them;
 * attention runs Transformer Engine's fused kernels at cuDNN's benchmark measured
 * on H200, GB200 and GB300 (below), or FlashAttention-2's curve, Blackwell's
 * assumed Hopper's; every kind without a run takes the fractions of its
 * generation, assumed.  Element-wise kernels run at the share of HBM bandwidth streaming
 * benchmarks measure on the kind (STREAM_* below), or on a kind with the same HBM
 * part, assumed; ppl_gpu_assumed says which.
 */
#include "hardware/gpu.h"
#include "base/constants.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GIB 1073741824.0

const char *const ppl_peak_names[] = {"bf16", "fp16", "fp8", "mxfp8", "nvfp4", "tf32",
                                      "fp32", "fp64", "fp4", "mxfp4", NULL};

const char *ppl_precision_name(ppl_precision p)
{
    return (unsigned)p < PPL_PRECISION_COUNT ? ppl_peak_names[p] : "?";
}

/* The NICs the platforms ship with, per GPU, per direction: 200 Gb/s HDR
 * (DGX A100), 400 Gb/s NDR ConnectX-7 (DGX H100/H200/B200, GB200 NVL72
 * compute trays), 800 Gb/s ConnectX-8 SuperNIC (HGX B300, GB300 NVL72), AMD
 * Pensando Pollara 400 (MI355X platforms, AMD product page). */
#define NIC_HDR 25e9
#define NIC_CX7 50e9
#define NIC_CX8 100e9
#define NIC_400G 50e9

/* Scale-up figures, per generation of the links (see the head of this file). */
static const ppl_scaleup_figures SM80 = {
    20.0 / 25.0, 235e9, 0.0, 0, "NCCL's Ampere (SM80) figure, 20.0 of 25 GB/s a link (topo.h)"};
static const ppl_scaleup_figures SM90 = {
    20.6 / 25.0, 0.0, 0.85, 16, "NCCL's Hopper (SM90) figure, 20.6 of 25 GB/s a link (topo.h)"};
static const ppl_scaleup_figures SM100 = {
    40.1 / 50.0, 0.0, 0.74, 32, "NCCL's Blackwell (SM100) figure, 40.1 of 50 GB/s a link (topo.h)"};
/* AMD Infinity Fabric (xGMI): 64 GB/s raw per link, about 48 usable after CRC and
 * protocol overhead, 75% (AMD ROCm blog, Kolla et al., "Understanding RCCL
 * Bandwidth and xGMI Performance on AMD Instinct MI300X", 2025-03-02); measured on
 * MI300X, assumed for MI325X (the same links) and MI355X */
#define XGMI_BASIS                                                                                 \
    "AMD's xGMI figure, 48 of 64 GB/s a link, measured on MI300X (ROCm blog, Kolla et al. 2025)"
static const ppl_scaleup_figures XGMI_MI300X = {0.75, 0.0, 0.0, 0, XGMI_BASIS};
static const ppl_scaleup_figures XGMI_MI325X = {0.75, 0.0, 0.0, 0,
                                                XGMI_BASIS "; assumed the same on MI325X"};
static const ppl_scaleup_figures XGMI_MI355X = {0.75, 0.0, 0.0, 0,
                                                XGMI_BASIS "; assumed the same on MI355X"};

/* Transformer Engine's fused attention, cuDNN's kernels, as cudnn-frontend's training
 * benchmark measures them (NVIDIA/cudnn-frontend at 3929da2,
 * benchmark/sdpa_benchmark_training: the Llama 3.1 preset, 64 query and 8 key/value
 * heads 128 wide, the causal top-left mask, bf16, the non-deterministic backward;
 * TFLOP/s counting the causal half, forward 4 s^2 d h / 2 and backward 2.5 times
 * that), at 2K, 4K, 8K, 16K and 32K tokens.  Blackwell Ultra doubles the special
 * function units' exponentials a clock (NVIDIA technical blog, "Making Softmax More
 * Efficient with NVIDIA Blackwell Ultra", 2026): GB300's kernels run 10-20% faster
 * than GB200's at the same tensor-core peak.  A kind without its own takes its
 * sibling's share of its own peak: H100, H800 and GH200 H200's (the same SMs and
 * clocks), B200 GB200's, B300 GB300's. */
static const ppl_fused_attention_figures CUDNN_H200 = {
    "H200",
    989e12,
    {484, 591, 644, 673, 688},
    {370, 474, 541, 579, 581},
    "cuDNN 9.19.1 on H200 (cudnn-frontend benchmark/sdpa_benchmark_training/results/"
    "h200_919_only_cudnn/llama3.1_20260227_034703.csv)"};
static const ppl_fused_attention_figures CUDNN_GB200 = {
    "GB200",
    2500e12,
    {1097, 1408, 1574, 1708, 1622},
    {885, 1148, 1332, 1328, 1226},
    "cuDNN 9.22.0 on GB200 (cudnn-frontend benchmark/sdpa_benchmark_training/results/"
    "llama3.1/gb200/llama3.1_20260424_100750.csv)"};
static const ppl_fused_attention_figures CUDNN_GB300 = {
    "GB300",
    2500e12,
    {1373, 1703, 1856, 1915, 1953},
    {967, 1248, 1435, 1507, 1490},
    "cuDNN 9.22.0 on GB300 (cudnn-frontend benchmark/sdpa_benchmark_training/results/"
    "llama3.1/gb300/llama3.1_20260424_100757.csv)"};

/* Hosts (see the head of this file). */
static const ppl_host_figures HOST_DGX_A100 = {
    32e9, 51.2e9, 128e9,
    "PCIe 4.0 x16; DGX A100: 2x AMD EPYC 7742, 8 channels DDR4-3200 each (409.6 GB/s), "
    "1 TB, for 8 GPUs"};
static const ppl_host_figures HOST_DGX_H100 = {
    64e9, 76.8e9, 256e9,
    "PCIe 5.0 x16; DGX H100: 2x Xeon Platinum 8480C, 8 channels DDR5-4800 each (614.4 "
    "GB/s), 2 TB, for 8 GPUs"};
static const ppl_host_figures HOST_DGX_B200 = {
    64e9, 89.6e9, 256e9,
    "PCIe 5.0 x16; DGX B200: 2x Xeon Platinum 8570, 8 channels DDR5-5600 each (716.8 GB/s), "
    "2 TB, for 8 GPUs"};
static const ppl_host_figures HOST_GH200 = {
    450e9, 500e9, 480e9,
    "NVLink-C2C 900 GB/s bidirectional (GH200 datasheet); one Grace, 480 GB LPDDR5X at up to "
    "500 GB/s, per GPU"};
static const ppl_host_figures HOST_GB200 = {
    225e9, 250e9, 240e9,
    "NVLink-C2C 900 GB/s bidirectional per GB200 superchip (GB200 NVL72 datasheet), assumed "
    "shared by its two GPUs; one Grace (480 GB LPDDR5X, 500 GB/s) per two GPUs"};
/* No row's host: a DGX H100's, an assumption. */
#define HOST_ASSUMED HOST_DGX_H100

/* Streaming HBM bandwidth, measured: the share of the datasheet bandwidth a copy
 * or triad kernel reaches on the kind named (each row points at its own, or at
 * the figure of a kind with the same HBM part, assumed). */
static const ppl_stream_figures STREAM_A100 = {
    "A100", 1.725 / 2.039,
    "BabelStream 5.0 Triad, 1,725 of 2,039 GB/s on A100-SXM4-80GB (ukri-bench/benchmark-"
    "BabelStream README, Tursa)"};
static const ppl_stream_figures STREAM_H100 = {
    "H100", 3.003 / 3.35,
    "PyTorch's bf16 copy (torch.clone), 3,003 of 3,350 GB/s on H100 SXM5 (Dao-AILab/quack, "
    "AI/hadamard_roofline_analysis.md); BabelStream Triad 2.97 TB/s (Azure/AI-benchmarking-"
    "guide, ND_H100_v5_results.md)"};
static const ppl_stream_figures STREAM_H200 = {
    "H200", 4.18 / 4.8,
    "BabelStream Triad, 4.18 of 4.8 TB/s on H200 (Azure/AI-benchmarking-guide, "
    "ND_H200_v5_results.md)"};
static const ppl_stream_figures STREAM_B200 = {
    "B200", 6.669 / 8.0,
    "OpenCL-Benchmark coalesced read, 6,669 of 8,000 GB/s on B200 (ProjectPhysX/OpenCL-"
    "Benchmark README)"};
static const ppl_stream_figures STREAM_GB300 = {
    "GB300", 7.14 / 8.0,
    "bf16 triad, 7.14 of 8 TB/s on GB300 (meta-pytorch/KernelAgent, Oink benchmarks README)"};
static const ppl_stream_figures STREAM_MI300X = {
    "MI300X", 4.256 / 5.3,
    "BabelStream 5.0 HIP Copy, 4,256 of 5,300 GB/s on MI300X (ROCm/system-acceptance-docs, "
    "MI300X performance benchmarks)"};

/*
 * One row per kind: the positional fields of ppl_gpu_spec up to the source, the
 * rest by name.  Block-scaled peaks: NVIDIA's datasheets give one FP8 figure
 * and one FP4 figure per part; MXFP8 runs at the FP8 rate and NVFP4 and MXFP4
 * at the FP4 rate on Blackwell's tensor cores (NVIDIA Blackwell architecture
 * technical brief, 2024: "FP4, FP6, FP8 with micro-tensor scaling").  NVIDIA's
 * FP4 figures are quoted with sparsity: halved here.
 */
/* clang-format off */
static const ppl_gpu_spec specs[] = {
    {"A100", "A100-SXM4-80GB", 80.0 * GIB, 312e12, 0.0, 2.039e12, 300e9, 8,
     "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB): 312 TFLOP/s BF16 dense, 2,039 GB/s "
     "HBM2e, NVLink 600 GB/s bidirectional; DGX A100 datasheet: 200 Gb/s HDR per GPU",
     .nic_bps = NIC_HDR, .nic = "ConnectX-6 HDR 200 Gb/s", .kernels = PPL_KERNELS_AMPERE,
     .measured = true, .scaleup = &SM80, .host = &HOST_DGX_A100, .stream = &STREAM_A100},
    {"H100", "H100-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 450e9, 8,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s BF16 and 1,979 FP8 dense, "
     "3.35 TB/s HBM3, NVLink 900 GB/s bidirectional; DGX H100 datasheet: ConnectX-7 400 Gb/s "
     "per GPU",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_HOPPER,
     .measured = true, .scaleup = &SM90, .host = &HOST_DGX_H100, .stream = &STREAM_H100,
     .fused_attention = &CUDNN_H200},
    {"H800", "H800-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 200e9, 8,
     "NVIDIA H800 Tensor Core GPU datasheet (SXM5): H100's tensor cores and HBM3 (989 TFLOP/s "
     "BF16, 1,979 FP8 dense, 3.35 TB/s), NVLink 400 GB/s bidirectional; DeepSeek-V3 report "
     "§3.2.2 measures 160 GB/s",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_HOPPER,
     .scaleup = &SM90, .host = &HOST_DGX_H100, .stream = &STREAM_H100,
     .fused_attention = &CUDNN_H200},
    {"H200", "H200-SXM-141GB", 141e9, 989e12, 1979e12, 4.8e12, 450e9, 8,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e at 4.8 TB/s, H100's tensor "
     "cores (989 TFLOP/s BF16, 1,979 FP8 dense), NVLink 900 GB/s bidirectional",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_HOPPER,
     .scaleup = &SM90, .host = &HOST_DGX_H100, .stream = &STREAM_H200,
     .fused_attention = &CUDNN_H200},
    /* GH200: the H100 GPU of a Grace Hopper superchip, 96 GB HBM3, one Grace per GPU;
     * DGX GH200 joins 256 of them in one NVLink domain */
    {"GH200", "GH200-H100-96GB", 96e9, 989e12, 1979e12, 4e12, 450e9, 256,
     "NVIDIA GH200 Grace Hopper Superchip datasheet: H100 GPU with 96 GB HBM3 at 4 TB/s, 989 "
     "TFLOP/s BF16/FP16 and 1,979 FP8 dense, NVLink 900 GB/s bidirectional; DGX GH200: 256 "
     "superchips in one NVLink domain, one ConnectX-7 400 Gb/s per superchip",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_HOPPER,
     .scaleup = &SM90, .host = &HOST_GH200, .stream = &STREAM_H100, .fused_attention = &CUDNN_H200},
    {"B200", "B200-SXM-180GB", 180e9, 2250e12, 4500e12, 8e12, 900e9, 8,
     "NVIDIA DGX B200 datasheet: 8 GPUs with 1,440 GB HBM3e and 64 TB/s (180 GB and 8 TB/s "
     "each), 72 PFLOP/s FP8 training (4.5 dense per GPU; BF16 half), 144 PFLOP/s FP4 "
     "inference (sparse: 9 dense per GPU), NVLink 5 1.8 TB/s bidirectional, 8 ConnectX-7 "
     "400 Gb/s",
     .mxfp8_flops = 4500e12, .nvfp4_flops = 9000e12, .mxfp4_flops = 9000e12, .nic_bps = NIC_CX7,
     .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_BLACKWELL, .measured = true,
     .scaleup = &SM100, .host = &HOST_DGX_B200, .stream = &STREAM_B200,
     .fused_attention = &CUDNN_GB200},
    {"GB200", "B200-GB200-NVL72", 186e9, 2500e12, 5000e12, 8e12, 900e9, 72,
     "NVIDIA GB200 NVL72 datasheet: 72 GPUs, 13.4 TB HBM3e at 576 TB/s (186 GB and 8 TB/s "
     "each), 360 PFLOP/s FP16/BF16, 720 FP8 and 1,440 FP4 sparse (2.5, 5 and 10 dense per "
     "GPU), one 72-GPU NVLink 5 domain at 1.8 TB/s bidirectional per GPU; DGX SuperPOD GB200 "
     "RA-11338-001: one ConnectX-7 400 Gb/s per GPU",
     .mxfp8_flops = 5000e12, .nvfp4_flops = 10000e12, .mxfp4_flops = 10000e12, .nic_bps = NIC_CX7,
     .nic = "ConnectX-7 400 Gb/s", .kernels = PPL_KERNELS_BLACKWELL, .measured = true,
     .scaleup = &SM100, .host = &HOST_GB200, .stream = &STREAM_B200,
     .fused_attention = &CUDNN_GB200},
    /* HBM bandwidth: the HGX B300 table gives none per GPU that the stored
     * corpus confirms; 8 TB/s is Blackwell's (B200) and GB300 NVL72's 576/72 */
    {"B300", "B300-SXM-288GB", 288e9, 2250e12, 4500e12, 8e12, 900e9, 8,
     "NVIDIA HGX B300 specification table (nvidia.com HGX platform page, 2025): 8 GPUs, "
     "FP4 144 PFLOP/s sparse | 108 dense (13.5 dense per GPU), FP8/FP6 72 and FP16/BF16 36 "
     "PFLOP/s sparse (4.5 and 2.25 dense per GPU), up to 2.3 TB HBM3e (288 GB per GPU), NVLink "
     "5 1.8 TB/s bidirectional per GPU, networking 1.6 TB/s = 8 ConnectX-8 800 Gb/s; HBM "
     "bandwidth not confirmed in that table: 8 TB/s as B200 and GB300",
     .mxfp8_flops = 4500e12, .nvfp4_flops = 13500e12, .mxfp4_flops = 13500e12, .nic_bps = NIC_CX8,
     .nic = "ConnectX-8 800 Gb/s", .kernels = PPL_KERNELS_BLACKWELL, .scaleup = &SM100,
     .stream = &STREAM_GB300, .fused_attention = &CUDNN_GB300, .ultra = true},
    {"GB300", "B300-GB300-NVL72", 278e9, 2500e12, 5000e12, 8e12, 900e9, 72,
     "NVIDIA GB300 NVL72 datasheet (2025): 72 GPUs, FP4 1,440 PFLOP/s sparse | 1,080 dense "
     "(15 dense per GPU), FP8/FP6 720 and FP16/BF16 360 PFLOP/s sparse (5 and 2.5 dense per "
     "GPU), 20 TB HBM3e at 576 TB/s (278 GB and 8 TB/s per GPU; 288 GB a GPU as marketed), one "
     "72-GPU NVLink 5 domain at 130 TB/s (1.8 TB/s bidirectional per GPU), 72 ConnectX-8 "
     "800 Gb/s SuperNICs",
     .mxfp8_flops = 5000e12, .nvfp4_flops = 15000e12, .mxfp4_flops = 15000e12, .nic_bps = NIC_CX8,
     .nic = "ConnectX-8 800 Gb/s", .kernels = PPL_KERNELS_BLACKWELL, .measured = true,
     .scaleup = &SM100, .stream = &STREAM_GB300, .fused_attention = &CUDNN_GB300, .ultra = true},
    /* AMD: 8 GPUs a node, each joined to the 7 others by its own Infinity
     * Fabric link (nvlink.fabric "mesh"): bandwidth is the sum of the 7 links
     * per direction.  AMD gives no NIC with MI300X/MI325X platforms: 400 Gb/s a
     * GPU, as the clusters built on them use, is an assumption. */
    {"MI300X", "MI300X-OAM-192GB", 192e9, 1307.4e12, 2614.9e12, 5.3e12, 448e9, 8,
     "AMD Instinct MI300X data sheet (2023): 192 GB HBM3 at 5.3 TB/s, 1,307.4 TFLOP/s BF16 "
     "and 2,614.9 FP8 dense (5,229.8 with sparsity), 7 Infinity Fabric links of 128 GB/s "
     "bidirectional (7 x 64 = 448 GB/s per direction), fully connected 8-GPU platform; NIC "
     "not part of the platform: 400 Gb/s assumed",
     .mesh = true, .nic_bps = NIC_400G, .nic = "400 Gb/s (assumed)", .kernels = PPL_KERNELS_HOPPER,
     .scaleup = &XGMI_MI300X, .stream = &STREAM_MI300X},
    {"MI325X", "MI325X-OAM-256GB", 256e9, 1307.4e12, 2614.9e12, 6e12, 448e9, 8,
     "AMD Instinct MI325X data sheet (2024): 256 GB HBM3E at 6 TB/s, MI300X's compute "
     "(1,307.4 TFLOP/s BF16, 2,614.9 FP8 dense), 7 Infinity Fabric links of 128 GB/s "
     "bidirectional (448 GB/s per direction); NIC not part of the platform: 400 Gb/s assumed",
     .mesh = true, .nic_bps = NIC_400G, .nic = "400 Gb/s (assumed)", .kernels = PPL_KERNELS_HOPPER,
     .scaleup = &XGMI_MI325X, .stream = &STREAM_MI300X},
    /* peaks from the CU count and clock: 256 CUs (ROCm GPU specifications
     * table), 8,192 dense FP8 FLOP per CU per clock (AMD, ISSCC 2026), 2.4 GHz
     * (AMD, Hot Chips 2025): 256 x 8192 x 2.4e9 = 5,033.2 TFLOP/s FP8, half for
     * BF16, twice for MXFP4, matching the data sheet's rounded 2.5/5/10 PFLOP/s;
     * the same derivation gives MI300X's 304 x 4096 x 2.1e9 = 2,614.9 */
    {"MI355X", "MI355X-OAM-288GB", 288e9, 2516.6e12, 5033.2e12, 8e12, 537.6e9, 8,
     "AMD Instinct MI355X data sheet (2025): 288 GB HBM3E at 8 TB/s, 2.5 PFLOP/s BF16, 5 FP8 "
     "and MXFP8, 10 MXFP6/MXFP4 dense (2,516.6, 5,033.2 and 10,066.3 TFLOP/s from 256 CUs x "
     "8,192 FP8 FLOP/clock x 2.4 GHz); 7 Infinity Fabric links of 153.6 GB/s bidirectional "
     "(537.6 GB/s per direction: the per-link figure is not confirmed from AMD's data sheet "
     "here, only from a third-party summary); no NVFP4; AMD Pensando Pollara 400 NIC",
     .mxfp8_flops = 5033.2e12, .mxfp4_flops = 10066.3e12, .mesh = true, .nic_bps = NIC_400G,
     .nic = "AMD Pensando Pollara 400 Gb/s", .kernels = PPL_KERNELS_HOPPER, .scaleup = &XGMI_MI355X,
     .stream = &STREAM_MI300X},
};
/* clang-format on */

const ppl_gpu_spec *ppl_gpu_lookup(const char *name)
{
    if (!name)
        return NULL;
    /* a full name first, alone or followed by '-': "B200-GB200-NVL72-186GB" is a
     * GB200 though it begins with "B200-" */
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        size_t n = strlen(specs[i].full_name);
        if (strncasecmp(name, specs[i].full_name, n) == 0 && (name[n] == '\0' || name[n] == '-'))
            return &specs[i];
    }
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        size_t n = strlen(specs[i].kind);
        /* "H100", "h100", "H100-SXM5-80GB" all name the H100; "GB200" is not a "B200" */
        if (strncasecmp(name, specs[i].kind, n) == 0 && (name[n] == '\0' || name[n] == '-'))
            return &specs[i];
    }
    return NULL;
}

const ppl_gpu_spec *ppl_gpu_specs(size_t *count)
{
    *count = sizeof specs / sizeof specs[0];
    return specs;
}

/* The kinds, ", " between them: every one (measured_gen < 0), or those of
 * generation measured_gen with a measured run. */
static void join_kinds(char *buf, size_t size, int measured_gen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof specs / sizeof specs[0] && used < size; i++) {
        if (measured_gen >= 0 && ((int)specs[i].kernels != measured_gen || !specs[i].measured))
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", specs[i].kind);
        used += n > 0 ? (size_t)n : 0;
    }
}

void ppl_gpu_kinds(char *buf, size_t size)
{
    join_kinds(buf, size, -1);
}

void ppl_gpu_set_name(ppl_gpu *gpu, const char *name)
{
    snprintf(gpu->name, sizeof gpu->name, "%s", name);
    gpu->spec = ppl_gpu_lookup(name);
}

void ppl_gpu_from_spec(const ppl_gpu_spec *spec, ppl_gpu *gpu)
{
    snprintf(gpu->name, sizeof gpu->name, "%s", spec->full_name);
    gpu->spec = spec;
    gpu->memory_bytes = spec->memory_bytes;
    gpu->hbm_bandwidth_bps = spec->hbm_bandwidth_bps;
    gpu->flops[PPL_PRECISION_BF16] = gpu->flops[PPL_PRECISION_FP16] = spec->bf16_flops;
    gpu->flops[PPL_PRECISION_FP8] = spec->fp8_flops;
    gpu->flops[PPL_PRECISION_MXFP8] = spec->mxfp8_flops;
    gpu->flops[PPL_PRECISION_NVFP4] = spec->nvfp4_flops;
    gpu->flops[PPL_PRECISION_MXFP4] = spec->mxfp4_flops;
}

bool ppl_gpu_scaleup(const ppl_gpu *gpu, ppl_scaleup_figures *out)
{
    const ppl_scaleup_figures *f = gpu->spec ? gpu->spec->scaleup : NULL;
    /* no row's figures: a generic share of the link rate, assumed (constants.c) */
    const ppl_scaleup_figures generic = {
        ppl_assumed_values()->scaleup_efficiency, 0.0, 0.0, 0,
        "a generic share of the link rate (no GPU kind matched: the assumed scaleup_efficiency)"};
    *out = f ? *f : generic;
    return f != NULL;
}

double ppl_gpu_nvls_efficiency(const ppl_gpu *gpu)
{
    ppl_scaleup_figures f;
    ppl_gpu_scaleup(gpu, &f);
    if (f.nvls_channels < 2)
        return 0.0;
    return f.nvls_efficiency * (double)(f.nvls_channels - 1) / (double)f.nvls_channels;
}

bool ppl_gpu_host(const ppl_gpu *gpu, ppl_host_figures *out)
{
    const ppl_host_figures *f = gpu->spec ? gpu->spec->host : NULL;
    *out = f ? *f : HOST_ASSUMED;
    if (gpu->host_link_bps > 0) {
        out->link_bps = gpu->host_link_bps;
        out->source = "the topology's gpu.host_link";
    }
    return f != NULL;
}

bool ppl_gpu_stream(const ppl_gpu *gpu, ppl_stream_figures *out)
{
    const ppl_stream_figures *f = gpu->spec && gpu->spec->stream ? gpu->spec->stream : &STREAM_H100;
    *out = *f;
    return gpu->spec && gpu->spec->stream && strcmp(f->kind, gpu->spec->kind) == 0;
}

ppl_precision ppl_gpu_gemm_precision(const ppl_gpu *gpu, int precision)
{
    return gpu->flops[precision] > 0.0 ? (ppl_precision)precision : PPL_PRECISION_BF16;
}

double ppl_gpu_host_capacity_bytes(const ppl_gpu *gpu)
{
    const ppl_host_figures *f = gpu->spec && gpu->spec->host ? gpu->spec->host : &HOST_ASSUMED;
    return f->capacity_bytes;
}

/* Flash attention's share of peak by sequence length and head width, as
 * FlashAttention-2's forward + backward benchmark measures it with the causal
 * mask (Dao-AILab/flash-attention README.md, Performance: assets/flash2_a100_fwd_
 * bwd_benchmark.png and flash2_h100_fwd_bwd_benchmark.png, panels c and d), in
 * TFLOP/s at 512, 1K, 2K, 4K, 8K and 16K tokens.  The same kernels reach about
 * twice the share of Ampere's peak that they reach of Hopper's (they do not use
 * Hopper's asynchronous tensor-core instructions: 1.83-1.92 at head width 128);
 * the share rises with the sequence (the tiles' fixed costs spread over more
 * keys) and the head width (more FLOPs a byte of Q, K and V).  Blackwell is
 * assumed to follow Hopper's curve. */
typedef struct fa2_curve {
    double peak;            /* 16-bit dense, FLOP/s */
    double d64[6], d128[6]; /* TFLOP/s, head width 64 and 128 */
} fa2_curve;
static const fa2_curve FA2_A100 = {
    312e12, {88, 119, 140, 156, 165, 171}, {99, 133, 155, 173, 182, 189}};
static const fa2_curve FA2_H100 = {
    989e12, {141, 192, 232, 257, 273, 284}, {163, 221, 265, 294, 308, 328}};
static const struct {
    const fa2_curve *curve; /* its own, or the generation's it is assumed to follow */
    const char *source;
} ATTENTION[] = {
    [PPL_KERNELS_AMPERE] = {&FA2_A100, "FlashAttention-2 benchmark, A100 SXM4 80GB"},
    [PPL_KERNELS_HOPPER] = {&FA2_H100, "FlashAttention-2 benchmark, H100 SXM5"},
    [PPL_KERNELS_BLACKWELL] = {&FA2_H100, "assumed H100's FlashAttention-2 curve"},
};

/* the share of peak on curve c: interpolated in log2 of the tokens (held at
 * the ends of the measured range) and linearly in the head width between 64 and
 * 128 (held beyond) */
static double attention_share(const fa2_curve *c, double tokens, double head_dim)
{
    double x = log2(tokens > 512.0 ? tokens : 512.0) - 9.0; /* 0 at 512 */
    if (x > 5.0)
        x = 5.0;
    int i = (int)x < 4 ? (int)x : 4;
    double f = x - (double)i;
    double a = c->d64[i] + f * (c->d64[i + 1] - c->d64[i]);
    double b = c->d128[i] + f * (c->d128[i + 1] - c->d128[i]);
    double w = (head_dim - 64.0) / 64.0;
    w = w < 0.0 ? 0.0 : w > 1.0 ? 1.0 : w;
    return (a + w * (b - a)) * 1e12 / c->peak;
}

/* The generation's row of ATTENTION (Hopper's for an unknown one), and the share
 * the fitted h100_attention holds at: FlashAttention-2 on H100 at 4,096 tokens and
 * heads 128 wide, 294 of 989 TFLOP/s */
static unsigned attention_row(ppl_kernels gen)
{
    return (unsigned)gen < sizeof ATTENTION / sizeof ATTENTION[0] ? (unsigned)gen
                                                                  : PPL_KERNELS_HOPPER;
}
#define FA2_REFERENCE_SHARE (FA2_H100.d128[3] * 1e12 / FA2_H100.peak)

double ppl_kernels_attention_ratio(ppl_kernels gen, double tokens, double head_dim,
                                   const char **source)
{
    unsigned g = attention_row(gen);
    if (source)
        *source = ATTENTION[g].source;
    return attention_share(ATTENTION[g].curve, tokens, head_dim) / FA2_REFERENCE_SHARE;
}

/* The fused kernel's share of its kind's peak at heads 128 wide, interpolated in
 * log2 of the tokens between the measured lengths and held at their ends; shorter
 * sequences and other head widths take FlashAttention-2's proportions on the
 * generation (the benchmark measured neither) */
static void fused_shares(const ppl_fused_attention_figures *f, double tokens, double *fwd,
                         double *bwd)
{
    double x = log2(tokens < 2048.0 ? 2048.0 : tokens > 32768.0 ? 32768.0 : tokens) - 11.0;
    int i = (int)x < 3 ? (int)x : 3;
    double w = x - (double)i;
    *fwd = (f->fwd[i] + w * (f->fwd[i + 1] - f->fwd[i])) * 1e12 / f->peak;
    *bwd = (f->bwd[i] + w * (f->bwd[i + 1] - f->bwd[i])) * 1e12 / f->peak;
}

ppl_attn_kernel ppl_gpu_attention_ratios(const ppl_gpu *gpu, ppl_attn_kernel kernel, double tokens,
                                         double head_dim, double *forward, double *backward)
{
    const ppl_kernels gen = ppl_gpu_kernels(gpu, NULL);
    const ppl_fused_attention_figures *f = gpu->spec ? gpu->spec->fused_attention : NULL;
    if (kernel != PPL_ATTN_FUSED || !f) {
        *forward = *backward = ppl_kernels_attention_ratio(gen, tokens, head_dim, NULL);
        return PPL_ATTN_FA2;
    }
    const fa2_curve *c = ATTENTION[attention_row(gen)].curve;
    /* FlashAttention-2's proportions where the benchmark measured nothing (1 at heads
     * 128 wide from 2K tokens on, the usual case, so not worked out there) */
    double proportion = 1.0;
    if (head_dim != 128.0 || tokens < 2048.0)
        proportion = attention_share(c, tokens, head_dim) /
                     attention_share(c, tokens < 2048.0 ? 2048.0 : tokens, 128.0);
    double fwd, bwd;
    fused_shares(f, tokens, &fwd, &bwd);
    *forward = fwd * proportion / FA2_REFERENCE_SHARE;
    *backward = bwd * proportion / FA2_REFERENCE_SHARE;
    return PPL_ATTN_FUSED;
}

ppl_kernels ppl_gpu_kernels(const ppl_gpu *gpu, bool *measured)
{
    if (measured)
        *measured = gpu->spec && gpu->spec->measured;
    return gpu->spec ? gpu->spec->kernels : PPL_KERNELS_HOPPER;
}

/* appends to buf at *used, "; " between parts */
static void say(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    if (*used > 0) {
        int n = snprintf(buf + *used, size - *used, "; ");
        *used += n > 0 ? (size_t)n : 0;
        if (*used >= size)
            return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    *used += n > 0 ? (size_t)n : 0;
}

bool ppl_gpu_assumed(const ppl_gpu *gpu, ppl_precision precision, char *buf, size_t size)
{
    bool measured;
    const ppl_kernels gen = ppl_gpu_kernels(gpu, &measured);
    const bool blackwell = gen == PPL_KERNELS_BLACKWELL;
    const char *from = gen == PPL_KERNELS_AMPERE ? "A100's" : "H100's";
    /* mxfp8 was measured on the measured Blackwell kinds (tests/data/runs.json);
     * nvfp4 nowhere */
    bool block =
        (precision == PPL_PRECISION_MXFP8 && !measured) || precision == PPL_PRECISION_NVFP4;
    ppl_scaleup_figures scaleup;
    ppl_host_figures host;
    bool scaleup_known = ppl_gpu_scaleup(gpu, &scaleup);
    bool host_known = ppl_gpu_host(gpu, &host) || gpu->host_link_bps > 0;
    size_t used = 0;
    buf[0] = '\0';
    ppl_stream_figures stream;
    bool stream_known = ppl_gpu_stream(gpu, &stream);
    if (measured && !blackwell && !block && scaleup_known && host_known && stream_known)
        return false;
    char kinds[64];
    if (blackwell)
        join_kinds(kinds, sizeof kinds, (int)gen);
    if (!measured && blackwell)
        say(buf, size, &used,
            "%s: no measured run; GEMM efficiencies assumed the measured Blackwell kinds' "
            "(%s), attention cuDNN's measured share of peak (FlashAttention-2's: H100's)",
            gpu->name, kinds);
    else if (!measured)
        say(buf, size, &used,
            "%s: no measured run; GEMM and attention efficiencies assumed equal to %s "
            "(fractions of its own peaks)",
            gpu->name, from);
    else if (blackwell)
        say(buf, size, &used,
            "%s: GEMM efficiencies measured (16-bit, fp8, mxfp8); attention cuDNN's measured "
            "share of peak (FlashAttention-2's assumed equal to H100's)",
            gpu->name);
    if (block)
        say(buf, size, &used, "%s GEMMs assumed at %s measured fp8 efficiency (no %s run)",
            ppl_precision_name(precision), blackwell ? "the Blackwell kinds'" : from,
            ppl_precision_name(precision));
    if (!stream_known)
        say(buf, size, &used, "HBM streaming share assumed %s's measured %.0f%%", stream.kind,
            100.0 * stream.share);
    say(buf, size, &used, "scale-up efficiency: %s", scaleup.basis);
    if (!host_known)
        say(buf, size, &used, "host link and memory assumed a DGX H100's (%s)", host.source);
    return true;
}
