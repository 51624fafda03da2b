/*
 * gpu.c - datasheet figures of the GPU kinds parplan knows by name.
 *
 * Dense (not sparse) tensor-core peaks; memory as the datasheets state it; NVLink
 * (or Infinity Fabric) per GPU per direction (half the bidirectional figure the
 * datasheets quote).
 * A topology file may name one of these instead of spelling the figures out
 * ("gpu": "H100"), and `topology generate --gpu` uses them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "parplan/topology.h"

#define GIB 1073741824.0

/* The NICs the platforms ship with, per GPU, per direction: 200 Gb/s HDR
 * (DGX A100), 400 Gb/s NDR ConnectX-7 (DGX H100/H200/B200, GB200 NVL72
 * compute trays), 800 Gb/s ConnectX-8 SuperNIC (HGX B300, GB300 NVL72), AMD
 * Pensando Pollara 400 (MI355X platforms, AMD product page). */
#define NIC_HDR 25e9
#define NIC_CX7 50e9
#define NIC_CX8 100e9
#define NIC_400G 50e9

/*
 * One row per kind: the positional fields of ppl_gpu_spec up to the source, the
 * rest by name.  Block-scaled peaks: NVIDIA's datasheets give one FP8 figure
 * and one FP4 figure per part; MXFP8 runs at the FP8 rate and NVFP4 and MXFP4
 * at the FP4 rate on Blackwell's tensor cores (NVIDIA Blackwell architecture
 * technical brief, 2024: "FP4, FP6, FP8 with micro-tensor scaling").  NVIDIA's
 * FP4 figures are quoted with sparsity: halved here.
 */
static const ppl_gpu_spec specs[] = {
    {"A100", "A100-SXM4-80GB", 80.0 * GIB, 312e12, 0.0, 2.039e12, 300e9, 8,
     "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB): 312 TFLOP/s BF16 dense, 2,039 GB/s "
     "HBM2e, NVLink 600 GB/s bidirectional; DGX A100 datasheet: 200 Gb/s HDR per GPU",
     .nic_bps = NIC_HDR, .nic = "ConnectX-6 HDR 200 Gb/s"},
    {"H100", "H100-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 450e9, 8,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s BF16 and 1,979 FP8 dense, "
     "3.35 TB/s HBM3, NVLink 900 GB/s bidirectional; DGX H100 datasheet: ConnectX-7 400 Gb/s "
     "per GPU",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s"},
    {"H800", "H800-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 200e9, 8,
     "NVIDIA H800 Tensor Core GPU datasheet (SXM5): H100's tensor cores and HBM3 (989 TFLOP/s "
     "BF16, 1,979 FP8 dense, 3.35 TB/s), NVLink 400 GB/s bidirectional; DeepSeek-V3 report "
     "§3.2.2 measures 160 GB/s",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s"},
    {"H200", "H200-SXM-141GB", 141e9, 989e12, 1979e12, 4.8e12, 450e9, 8,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e at 4.8 TB/s, H100's tensor "
     "cores (989 TFLOP/s BF16, 1,979 FP8 dense), NVLink 900 GB/s bidirectional",
     .nic_bps = NIC_CX7, .nic = "ConnectX-7 400 Gb/s"},
    {"B200", "B200-SXM-180GB", 180e9, 2250e12, 4500e12, 8e12, 900e9, 8,
     "NVIDIA DGX B200 datasheet: 8 GPUs with 1,440 GB HBM3e and 64 TB/s (180 GB and 8 TB/s "
     "each), 72 PFLOP/s FP8 training (4.5 dense per GPU; BF16 half), 144 PFLOP/s FP4 "
     "inference (sparse: 9 dense per GPU), NVLink 5 1.8 TB/s bidirectional, 8 ConnectX-7 "
     "400 Gb/s",
     .mxfp8_flops = 4500e12, .nvfp4_flops = 9000e12, .mxfp4_flops = 9000e12, .nic_bps = NIC_CX7,
     .nic = "ConnectX-7 400 Gb/s"},
    {"GB200", "B200-GB200-NVL72", 186e9, 2500e12, 5000e12, 8e12, 900e9, 72,
     "NVIDIA GB200 NVL72 datasheet: 72 GPUs, 13.4 TB HBM3e at 576 TB/s (186 GB and 8 TB/s "
     "each), 360 PFLOP/s FP16/BF16, 720 FP8 and 1,440 FP4 sparse (2.5, 5 and 10 dense per "
     "GPU), one 72-GPU NVLink 5 domain at 1.8 TB/s bidirectional per GPU; DGX SuperPOD GB200 "
     "RA-11338-001: one ConnectX-7 400 Gb/s per GPU",
     .mxfp8_flops = 5000e12, .nvfp4_flops = 10000e12, .mxfp4_flops = 10000e12, .nic_bps = NIC_CX7,
     .nic = "ConnectX-7 400 Gb/s"},
    /* HBM bandwidth: the HGX B300 table gives none per GPU that the stored
     * corpus confirms; 8 TB/s is Blackwell's (B200) and GB300 NVL72's 576/72 */
    {"B300", "B300-SXM-288GB", 288e9, 2250e12, 4500e12, 8e12, 900e9, 8,
     "NVIDIA HGX B300 specification table (nvidia.com HGX platform page, 2025): 8 GPUs, "
     "FP4 144 PFLOP/s sparse | 108 dense (13.5 dense per GPU), FP8/FP6 72 and FP16/BF16 36 "
     "PFLOP/s sparse (4.5 and 2.25 dense per GPU), up to 2.3 TB HBM3e (288 GB per GPU), NVLink "
     "5 1.8 TB/s bidirectional per GPU, networking 1.6 TB/s = 8 ConnectX-8 800 Gb/s; HBM "
     "bandwidth not confirmed in that table: 8 TB/s as B200 and GB300",
     .mxfp8_flops = 4500e12, .nvfp4_flops = 13500e12, .mxfp4_flops = 13500e12, .nic_bps = NIC_CX8,
     .nic = "ConnectX-8 800 Gb/s"},
    {"GB300", "B300-GB300-NVL72", 278e9, 2500e12, 5000e12, 8e12, 900e9, 72,
     "NVIDIA GB300 NVL72 datasheet (2025): 72 GPUs, FP4 1,440 PFLOP/s sparse | 1,080 dense "
     "(15 dense per GPU), FP8/FP6 720 and FP16/BF16 360 PFLOP/s sparse (5 and 2.5 dense per "
     "GPU), 20 TB HBM3e at 576 TB/s (278 GB and 8 TB/s per GPU; 288 GB a GPU as marketed), one "
     "72-GPU NVLink 5 domain at 130 TB/s (1.8 TB/s bidirectional per GPU), 72 ConnectX-8 "
     "800 Gb/s SuperNICs",
     .mxfp8_flops = 5000e12, .nvfp4_flops = 15000e12, .mxfp4_flops = 15000e12, .nic_bps = NIC_CX8,
     .nic = "ConnectX-8 800 Gb/s"},
    /* AMD: 8 GPUs a node, each joined to the 7 others by its own Infinity
     * Fabric link (nvlink.fabric "mesh"): bandwidth is the sum of the 7 links
     * per direction.  AMD gives no NIC with MI300X/MI325X platforms: 400 Gb/s a
     * GPU, as the clusters built on them use, is an assumption. */
    {"MI300X", "MI300X-OAM-192GB", 192e9, 1307.4e12, 2614.9e12, 5.3e12, 448e9, 8,
     "AMD Instinct MI300X data sheet (2023): 192 GB HBM3 at 5.3 TB/s, 1,307.4 TFLOP/s BF16 "
     "and 2,614.9 FP8 dense (5,229.8 with sparsity), 7 Infinity Fabric links of 128 GB/s "
     "bidirectional (7 x 64 = 448 GB/s per direction), fully connected 8-GPU platform; NIC "
     "not part of the platform: 400 Gb/s assumed",
     .mesh = true, .nic_bps = NIC_400G, .nic = "400 Gb/s (assumed)"},
    {"MI325X", "MI325X-OAM-256GB", 256e9, 1307.4e12, 2614.9e12, 6e12, 448e9, 8,
     "AMD Instinct MI325X data sheet (2024): 256 GB HBM3E at 6 TB/s, MI300X's compute "
     "(1,307.4 TFLOP/s BF16, 2,614.9 FP8 dense), 7 Infinity Fabric links of 128 GB/s "
     "bidirectional (448 GB/s per direction); NIC not part of the platform: 400 Gb/s assumed",
     .mesh = true, .nic_bps = NIC_400G, .nic = "400 Gb/s (assumed)"},
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
     .nic = "AMD Pensando Pollara 400 Gb/s"},
};

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

bool ppl_gpu_name_has(const char *name, const char *family)
{
    size_t n = strlen(family);
    for (; *name; name++)
        if (strncasecmp(name, family, n) == 0)
            return true;
    return false;
}

void ppl_gpu_kinds(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof specs / sizeof specs[0] && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", specs[i].kind);
}
