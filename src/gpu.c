/*
 * gpu.c - datasheet figures of the GPU kinds parplan knows by name.
 *
 * Dense (not sparse) tensor-core peaks; memory as the datasheets state it; NVLink
 * per GPU per direction (half the bidirectional figure the datasheets quote).
 * A topology file may name one of these instead of spelling the figures out
 * ("gpu": "H100"), and `topology generate --gpu` uses them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "parplan/topology.h"

#define GIB 1073741824.0

static const ppl_gpu_spec specs[] = {
    {"A100", "A100-SXM4-80GB", 80.0 * GIB, 312e12, 0.0, 2.039e12, 300e9, 8,
     "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB): 312 TFLOP/s BF16 dense, 2,039 GB/s "
     "HBM2e, NVLink 600 GB/s bidirectional"},
    {"H100", "H100-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 450e9, 8,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s BF16 and 1,979 FP8 dense, "
     "3.35 TB/s HBM3, NVLink 900 GB/s bidirectional"},
    {"H800", "H800-SXM5-80GB", 80.0 * GIB, 989e12, 1979e12, 3.35e12, 200e9, 8,
     "NVIDIA H800 Tensor Core GPU datasheet (SXM5): H100's tensor cores and HBM3 (989 TFLOP/s "
     "BF16, 1,979 FP8 dense, 3.35 TB/s), NVLink 400 GB/s bidirectional; DeepSeek-V3 report "
     "§3.2.2 measures 160 GB/s"},
    {"H200", "H200-SXM-141GB", 141e9, 989e12, 1979e12, 4.8e12, 450e9, 8,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e at 4.8 TB/s, H100's tensor "
     "cores (989 TFLOP/s BF16, 1,979 FP8 dense), NVLink 900 GB/s bidirectional"},
    {"B200", "B200-SXM-180GB", 180e9, 2250e12, 4500e12, 8e12, 900e9, 8,
     "NVIDIA DGX B200 datasheet: 8 GPUs with 1,440 GB HBM3e and 64 TB/s (180 GB and 8 TB/s "
     "each), 72 PFLOP/s FP8 training (4.5 dense per GPU; BF16 half), NVLink 5 1.8 TB/s "
     "bidirectional"},
    {"GB200", "B200-GB200-NVL72", 186e9, 2500e12, 5000e12, 8e12, 900e9, 72,
     "NVIDIA GB200 NVL72 datasheet: 72 GPUs, 13.4 TB HBM3e at 576 TB/s (186 GB and 8 TB/s "
     "each), 360 PFLOP/s FP16/BF16 and 720 FP8 sparse (2.5 and 5 dense per GPU), one 72-GPU "
     "NVLink 5 domain at 1.8 TB/s bidirectional per GPU"},
};

const ppl_gpu_spec *ppl_gpu_lookup(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        size_t n = strlen(specs[i].kind);
        /* "H100", "h100", "H100-SXM5-80GB" all name the H100; "GB200" is not a "B200" */
        if (strncasecmp(name, specs[i].kind, n) == 0 && (name[n] == '\0' || name[n] == '-'))
            return &specs[i];
        if (strcasecmp(name, specs[i].full_name) == 0)
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
