/*
 * offload.c - the host link of each GPU family and one step's optimizer offload
 * (see parplan/offload.h).
 *
 * Host links, per direction: PCIe 4.0 runs 16 GT/s a lane and PCIe 5.0 32 GT/s
 * (PCI-SIG base specifications), ~32 and ~64 GB/s over x16 (31.5 and 63 after the
 * 128b/130b encoding); NVLink-C2C joins a Grace CPU to its GPU at 900 GB/s
 * bidirectional (NVIDIA GH200 Grace Hopper Superchip datasheet), 450 GB/s each way.
 * Host memory: the DGX's two sockets of 8 DDR channels each, shared by its 8 GPUs;
 * a Grace CPU's LPDDR5X at up to 500 GB/s (NVIDIA Grace Hopper Superchip
 * architecture whitepaper), one Grace per GPU on GH200, one per two GPUs on GB200.
 *
 * CPU Adam: memory-bound, PPL_ADAM_BYTES_PER_PARAM bytes a parameter streamed at
 * PPL_CPU_ADAM_EFFICIENCY of the GPU's share of the host's memory bandwidth.  The
 * share is an assumption: ZeRO-Offload (Ren et al. ATC'21, §5 "Optimized CPU
 * Execution") vectorises and tiles its CPU-Adam to run 5-7x faster than PyTorch's
 * CPU Adam (DeepSpeed's ZeRO-Offload tutorial) without a bandwidth figure, and no
 * measured run here calibrates it.
 */
#include "parplan/offload.h"

#include <math.h>

#include "parplan/schedule.h"

static const struct {
    const char *family; /* matched in the GPU's name, first match wins */
    double link_bps, memory_bps, capacity_bytes;
    const char *source;
} links[] = {
    /* before H200 and B200: "GH200" contains "H200", "GB200" "B200" */
    {"GH200", 450e9, 500e9, 480e9,
     "NVLink-C2C 900 GB/s bidirectional (GH200 datasheet); one Grace, 480 GB LPDDR5X at up to "
     "500 GB/s, per GPU"},
    {"GB200", 225e9, 250e9, 240e9,
     "NVLink-C2C 900 GB/s bidirectional per GB200 superchip (GB200 NVL72 datasheet), assumed "
     "shared by its two GPUs; one Grace (480 GB LPDDR5X, 500 GB/s) per two GPUs"},
    {"A100", 32e9, 51.2e9, 128e9,
     "PCIe 4.0 x16; DGX A100: 2x AMD EPYC 7742, 8 channels DDR4-3200 each (409.6 GB/s), "
     "1 TB, for 8 GPUs"},
    {"B200", 64e9, 89.6e9, 256e9,
     "PCIe 5.0 x16; DGX B200: 2x Xeon Platinum 8570, 8 channels DDR5-5600 each (716.8 GB/s), "
     "2 TB, for 8 GPUs"},
    {"H", 64e9, 76.8e9, 256e9, /* H100, H800, H200 */
     "PCIe 5.0 x16; DGX H100: 2x Xeon Platinum 8480C, 8 channels DDR5-4800 each (614.4 "
     "GB/s), 2 TB, for 8 GPUs"},
};

void ppl_host_link_of(const ppl_gpu *gpu, ppl_host_link *out)
{
    size_t n = sizeof links / sizeof links[0], pick = n - 1; /* unknown: a PCIe 5.0 host */
    for (size_t i = 0; i + 1 < n; i++)
        if (ppl_gpu_name_has(gpu->name, links[i].family)) {
            pick = i;
            break;
        }
    out->link_bps = gpu->host_link_bps > 0 ? gpu->host_link_bps : links[pick].link_bps;
    out->memory_bps = links[pick].memory_bps;
    out->capacity_bytes = links[pick].capacity_bytes;
    out->source = gpu->host_link_bps > 0 ? "the topology's gpu.host_bandwidth" : links[pick].source;
}

void ppl_offload_time_of(double params, double grad_bytes, double weight_bytes,
                         const ppl_host_link *link, bool overlapped, ppl_offload_time *out)
{
    /* hybrid_optimizer.py:114 copies each offloaded gradient to pinned host memory,
     * the CPU optimizer steps it, and :124 copies the updated parameter back */
    out->down_s = params * grad_bytes / link->link_bps;
    out->up_s = params * weight_bytes / link->link_bps;
    out->cpu_s = params * PPL_ADAM_BYTES_PER_PARAM / (link->memory_bps * PPL_CPU_ADAM_EFFICIENCY);
    /* overlapped, one CPU optimizer per parameter with its copies on their own
     * streams (hybrid_optimizer.py:204-221): the slowest of the three; else in turn */
    out->total_s = overlapped ? fmax(out->down_s, fmax(out->cpu_s, out->up_s))
                              : out->down_s + out->cpu_s + out->up_s;
}

double ppl_optimizer_step_time(const ppl_eval_ctx *ctx, const ppl_config *c, double params)
{
    const double f = c->offload_optimizer > 0.0 ? c->offload_optimizer : 0.0;
    double gpu_s = ppl_optimizer_time((1.0 - f) * params, ctx->topo, &ctx->eff, c->optimizer);
    if (f <= 0.0)
        return gpu_s;
    ppl_host_link link;
    ppl_offload_time t;
    ppl_host_link_of(&ctx->topo->gpu, &link);
    ppl_offload_time_of(f * params, ppl_grad_bytes(&ctx->memory, c->precision),
                        ctx->memory.weight_bytes, &link, ppl_stack_overlaps(ctx->stack.stack), &t);
    return fmax(gpu_s, t.total_s);
}

bool ppl_stack_offloads(int stack)
{
    return stack == PPL_STACK_NEMO_2025 || stack == PPL_STACK_MEGATRON_DEEPSPEED ||
           stack == PPL_STACK_DEEPSPEED_ZERO3_2021;
}

double ppl_host_capacity_bytes(const ppl_gpu *gpu)
{
    ppl_host_link link;
    ppl_host_link_of(gpu, &link);
    return link.capacity_bytes;
}
