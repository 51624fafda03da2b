/*
 * cost/serve.h - one inference engine's layout costed: its KV cache, a prompt's
 * prefill and a decode step (serve.c).
 *
 * The first piece of serving and RL post-training plans (issue 33): an engine
 * replica of tp GPUs inside one NVLink domain (or pp pipeline stages of them, or
 * ep GPUs holding the experts) holds the weights and the KV cache of `batch`
 * sequences; a prefill is the
 * prompt's forward pass under the training kernel model (compute.h); a decode step
 * reads every weight its tokens touch and every cached key and value over HBM,
 * or computes its GEMMs, whichever takes longer, plus the tensor-parallel
 * all-reduces on the topology.  No CUDA-graph or host time, no speculative
 * decoding, no prefix cache, no queueing: what is not costed is said here.
 */
#ifndef PARPLAN_SERVE_H
#define PARPLAN_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/evalctx.h"

/* The tokens an engine prefills in one forward: TensorRT-LLM's max_num_tokens
 * default (BuildConfig), the chunk vLLM's chunked prefill also works in on large
 * GPUs.  Prompts queued together are prefilled together up to it, so the weights
 * (all of a MoE's experts) are read once a chunk, not once a prompt. */
#define PPL_SERVE_CHUNK_TOKENS 8192

/* The requests: prompt and response lengths in tokens. */
typedef struct ppl_serve_workload {
    int64_t input_tokens, output_tokens;
} ppl_serve_workload;

/* An engine replica: tp GPUs (of one NVLink domain, or whole servers when tp
 * spans several), or pp stages of them, `batch` sequences decoded together,
 * weights and KV cache in `precision` (bf16: 2 B a value, fp8: 1 B).  With
 * expert parallelism (ep > 1, a MoE model, pp 1) the replica is ep GPUs: the
 * routed experts spread over them, E / ep each, and the attention and the rest
 * of the weights at tp in ep / tp data-parallel groups, each decoding `batch`
 * sequences of its own (SGLang's DP attention, vLLM's --enable-expert-parallel
 * beside data parallelism; serve.c). */
typedef struct ppl_serve_layout {
    int64_t tp, batch;
    ppl_precision precision;
    double reserved_bytes; /* per GPU, held by something else (a colocated trainer's
                              model states): out of the engine's capacity */
    int64_t pp;            /* pipeline stages of tp GPUs each, on servers of their
                              own (0 or 1: none; serve.c ppl_serve_cost) */
    int64_t ep;            /* GPUs the routed experts are spread over (0 or 1: none,
                              each expert split over tp), a multiple of tp */
    int64_t chunk_tokens;  /* tokens an attention group prefills a forward (0:
                              PPL_SERVE_CHUNK_TOKENS) */
    bool kv_16bit;         /* the KV cache in 16-bit beside fp8 weights (DeepSeek's
                              engines keep MLA's core in bf16) */
} ppl_serve_layout;

/* A replica's shape at some tp: pipeline stages (pp) or the experts spread
 * (ep; 0: not), at most one of them. */
typedef struct ppl_serve_shape {
    int64_t pp, ep;
} ppl_serve_shape;
/* tp alone; at most 63 counts of stages and 63 of ep in an int64_t */
#define PPL_SERVE_SHAPES (1 + 63 + 63)

/* The shapes of a replica of at most `gpus` GPUs at tp, into out[PPL_SERVE_SHAPES]
 * (none when tp does not divide the heads): tp alone; pipeline stages of whole
 * servers each at the server's tp, as many as the servers and the layers allow
 * (where `stages`); a MoE model's experts over ep GPUs, ep = 2, 4, ... times tp,
 * whole servers once above one, dividing the experts (each GPU the same count). */
size_t ppl_serve_shapes(const ppl_model *model, const ppl_topology *topo, int64_t tp, int64_t gpus,
                        bool stages, ppl_serve_shape *out);

/* Bytes a weight or a cached value takes in `precision`: 1 in fp8, else 2. */
double ppl_serve_value_bytes(ppl_precision precision);

/* The GPUs of one replica: ep with expert parallelism, else tp x pp. */
int64_t ppl_serve_replica_gpus(const ppl_serve_layout *layout);
/* The sequences a replica decodes together: `batch` in each of its ep / tp
 * attention groups (one group without expert parallelism). */
int64_t ppl_serve_replica_batch(const ppl_serve_layout *layout);
/* Its attention groups: ep / tp, or 1. */
int64_t ppl_serve_attention_groups(const ppl_serve_layout *layout);

typedef struct ppl_serve_estimate {
    double kv_bytes_per_token; /* the whole model's cache of one token */
    double weight_bytes;       /* per GPU */
    double kv_bytes;           /* per GPU: the batch's sequences at full length */
    double capacity_bytes;     /* per GPU: what an engine may take (90%, vLLM's default) */
    bool fits;
    double prefill_s;         /* one prompt's forward: time to first token, unqueued */
    int64_t prefill_prompts;  /* prompts an engine prefills together: as many as fit a
                                 chunk (chunk_tokens), at most the batch */
    double prefill_share_s;   /* a prompt's share of such a chunk's forward */
    double decode_read_bytes; /* HBM bytes one decode step reads per GPU, mean context */
    double decode_memory_s;   /* those bytes at the streaming share of HBM bandwidth */
    double decode_compute_s;  /* the step's GEMMs at the GEMM efficiency */
    double decode_tp_s;       /* its tensor-parallel all-reduces */
    double decode_hop_s;      /* pp > 1: a stage's activations to the next stage */
    double decode_ep_s;       /* ep > 1: the MoE layers' dispatch and combine */
    double decode_step_s;     /* one token for each sequence, nothing else: pp stages
                                 of the batch's pp groups, pp x (the stage's
                                 max(memory, compute) + its all-reduces) and pp - 1
                                 hops, and the expert all-to-alls (serve.c) */
    double tpot_s;            /* time per output token under continuous batching: the
                                 decode step and the prefills of the prompts that take
                                 finished sequences' places, spread over the steps:
                                 decode_step_s + batch / output x prefill_share_s */
    double tokens_per_s;      /* output tokens a second of the replica: its batch
                                 (ppl_serve_replica_batch) / tpot_s */
} ppl_serve_estimate;

/* The KV cache of one token over every layer (the multi-token-prediction modules
 * not run), `bytes` a value: 2 x kv_heads x head_dim a layer under multi- or
 * grouped-query attention; under MLA the latent and the rotary key, kv_lora_rank +
 * qk_rope_head_dim, which is what DeepSeek-V3's engines cache. */
double ppl_kv_bytes_per_token(const ppl_model *model, double bytes);

/* The expected share of a MoE layer's routed experts that `tokens` tokens touch,
 * each picking top_k of E uniformly: 1 - (1 - k/E)^tokens. */
double ppl_experts_touched(const ppl_model *model, double tokens);

/* Costs the layout on the context's model and topology (ctx from ppl_eval_ctx_init:
 * its efficiencies and network). */
void ppl_serve_cost(const ppl_eval_ctx *ctx, const ppl_serve_layout *layout,
                    const ppl_serve_workload *workload, ppl_serve_estimate *out);

/* Prefill/decode disaggregation on `gpus` GPUs: prefill replicas of layout
 * `prefill` (its tp and ep; the batch a chunk's prompts) prefill prompts in
 * chunks and send each prompt's KV cache to a decode replica of layout
 * `decode`, which decodes without prefills between its steps (the DistServe
 * and Splitwise layouts; Zhong et al., OSDI 2024; Patel et al., ISCA 2024).
 * The replicas are split so that the prefill and decode rates match as nearly
 * as whole replicas allow. */
typedef struct ppl_serve_disagg {
    int64_t prefill_tp, prefill_ep, prefill_replicas, decode_replicas;
    ppl_serve_estimate prefill, decode; /* a prefill replica's (queued prompts
                                           chunked), a decode replica's */
    double kv_transfer_s;               /* a prompt's cache into its decode GPUs (each its shard) */
    double ttft_s;       /* the prompt's prefill and its cache's transfer, unqueued */
    double tpot_s;       /* the decode step */
    double tokens_per_s; /* output x min(prompts a second prefilled, requests a
                            second decoded) */
} ppl_serve_disagg;

/* The prefill layout of tp and ep (0 or 1: none) for the workload: a chunk's
 * prompts at once (PPL_SERVE_CHUNK_TOKENS). */
ppl_serve_layout ppl_serve_prefill_layout(int64_t tp, int64_t ep, ppl_precision precision,
                                          const ppl_serve_workload *workload);

/* false when no split of the GPUs holds a replica of each kind.  `prefill_cost`
 * and `decode_cost` are ppl_serve_cost's of the two layouts (a search costs
 * each layout once). */
bool ppl_serve_disagg_cost(const ppl_eval_ctx *ctx, const ppl_serve_layout *prefill,
                           const ppl_serve_estimate *prefill_cost, const ppl_serve_layout *decode,
                           const ppl_serve_estimate *decode_cost,
                           const ppl_serve_workload *workload, int64_t gpus, ppl_serve_disagg *out);

/* Why no engine layout of tp up to tp_max holds the weights and one sequence's
 * cache, in one sentence: the weights a GPU at tp_max against the engine's share
 * of its memory, and fp8 where fp8 weights would fit, else (where `stages`: the
 * layouts tried had pipeline stages) more servers. */
void ppl_serve_unfit(const ppl_eval_ctx *ctx, ppl_precision precision, int64_t tp_max, bool stages,
                     char *buf, size_t size);

#endif
