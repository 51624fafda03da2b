/*
 * render/engine.h - an inference engine layout as vLLM and SGLang launch it
 * (engine.c): the server command of each node, from the Hugging Face checkpoint
 * that is the model (render/hfcheckpoint.h); or why an engine cannot run it.
 */
#ifndef PARPLAN_ENGINE_H
#define PARPLAN_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/gpu.h"
#include "model/model.h"

struct json_t;

/* Replicas of tp GPUs (within one server), of pp stages of them each a server,
 * or of ep GPUs holding a MoE's experts (attention at tp in ep / tp
 * data-parallel ranks), each rank decoding up to `batch` sequences of at most
 * max_len_tokens (prompt and response), weights and KV cache in `precision`, in
 * memory_share of each GPU's memory; `colocated`: the engine gives its memory
 * back while a trainer runs on the same GPUs (rl). */
typedef struct ppl_engine_layout {
    int64_t tp, batch, replicas;
    int64_t pp; /* pipeline stages of tp GPUs, each a server (0: 1): SGLang only */
    int64_t ep; /* GPUs of a replica's experts (0 or 1: none) */
    int64_t max_len_tokens;
    ppl_precision precision;
    double memory_share; /* 0 < share <= 1 */
    bool colocated;
    bool disaggregated; /* prefill on replicas of their own: tp, ep, batch and
                           replicas above are the decode ones' */
    int64_t prefill_tp, prefill_ep, prefill_batch, prefill_replicas; /* disaggregated */
} ppl_engine_layout;

/* The launch object {hf_model, vllm, vllm_error, sglang, sglang_error} of an
 * engine layout on servers of gpus_per_server GPUs: each engine's version and
 * its nodes, [{count, gpus, processes: [{env, argv}]}] (count servers each run
 * these processes on `gpus` of their GPUs; a replica over several servers names
 * its first server's address ${HEAD_ADDR}), or null and the reason.  A
 * disaggregated layout's nodes carry their role (prefill, decode) and the
 * launch a router, {argv}, that names the k-th prefill or decode server
 * ${PREFILL_HOST_k}, ${DECODE_HOST_k}. */
struct json_t *ppl_launch_engines(const ppl_model *model, const ppl_engine_layout *layout,
                                  int64_t gpus_per_server);

#endif
