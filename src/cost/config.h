/*
 * cost/config.h - one training configuration: the parallel layout and its knobs.
 *
 * gpus = tp * pp * cp * dp (SPEC).  MoE layers fold the same tp * cp * dp ranks of a
 * pipeline stage into etp x ep x edp, as Megatron-Core does ("MoE parallel folding",
 * megatron/core/parallel_state.py initialize_model_parallel: the expert rank
 * generator over tp=etp, ep, dp=edp in the order tp-ep-dp-pp): expert tensor
 * parallelism etp innermost, expert parallelism ep strided by etp, and the expert-
 * data-parallel replicas edp = tp*cp*dp / (etp*ep) outermost.  Pipeline stages hold
 * contiguous layers: the first and the last stage may differ from the middle ones,
 * which are equal; that is every split Megatron-LM's
 * --decoder-first/last-pipeline-num-layers can build, and the only ones parplan
 * costs, so a plan's split is always one its launch flags express.
 */
#ifndef PARPLAN_CONFIG_H
#define PARPLAN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "parplan/error.h"
#include "model/model.h"
#include "hardware/topology.h"

/* The pipeline schedules: X(ENUM, name, label), the name as flags, files and JSON
 * spell it, the label as prose prints it.  Every other fact of a schedule is its
 * row in pipeline.c (pipeline.h). */
#define PPL_SCHEDULE_LIST(X)                                                                       \
    X(1F1B, "1f1b", "1F1B")    /* PipeDream-Flush / Megatron 1F1B (interleaved: vp > 1) */         \
    X(GPIPE, "gpipe", "GPipe") /* all forwards, then all backwards */                              \
    X(ZB_H1, "zb-h1", "ZB-H1") /* Zero Bubble H1: 1F1B's memory, a third of its bubble */          \
    X(ZB_H2, "zb-h2", "ZB-H2") /* Zero Bubble H2: (almost) no bubble, 2p-1 in flight */            \
    X(ZB_V, "zb-v", "ZB-V")    /* Zero Bubble V: two chunks a rank in a V */                       \
    X(DUALPIPE, "dualpipe", "DualPipe") /* DeepSeek's bidirectional pipeline, parameters twice */  \
    X(DUALPIPEV, "dualpipev", "DualPipeV") /* DualPipe cut in half: two chunks a rank in a V */

typedef enum ppl_schedule {
#define PPL_SCHEDULE_ENUM(e, name, label) PPL_SCHEDULE_##e,
    PPL_SCHEDULE_LIST(PPL_SCHEDULE_ENUM)
#undef PPL_SCHEDULE_ENUM
        PPL_SCHEDULE_COUNT
} ppl_schedule;

typedef enum ppl_recompute {
    PPL_RECOMPUTE_NONE = 0,
    PPL_RECOMPUTE_SELECTIVE = 1,
    PPL_RECOMPUTE_FULL = 2
} ppl_recompute;

typedef enum ppl_optimizer { PPL_OPTIMIZER_ADAM = 0, PPL_OPTIMIZER_SGD = 1 } ppl_optimizer;

/* How context-parallel ranks exchange attention inputs, Megatron-Core's
 * --cp-comm-type (megatron/core/transformer/transformer_config.py, cp_comm_type):
 * P2P a ring passing K/V chunks, overlapped with attention (Megatron's default);
 * A2A DeepSpeed-Ulysses all-to-all of Q, K, V and the output, heads split over
 * the CP group; ALLGATHER K/V of the whole sequence gathered before attention;
 * A2A_P2P all-to-all inside groups of cp_a2a ranks, a ring across them
 * (--hierarchical-context-parallel-sizes). */
typedef enum ppl_cp_comm {
    PPL_CP_COMM_P2P = 0,
    PPL_CP_COMM_A2A = 1,
    PPL_CP_COMM_ALLGATHER = 2,
    PPL_CP_COMM_A2A_P2P = 3
} ppl_cp_comm;
#define PPL_CP_COMM_COUNT 4

/* How fp8 tensors are scaled (Megatron-Core --fp8-recipe, transformer_config.py
 * fp8_recipe): delayed, from the amax history of earlier steps (the default);
 * tensorwise, from the tensor's own amax (current scaling: one more read of the
 * tensor before the cast); blockwise, an fp32 scale per 1x128 tile of activations
 * and gradients and per 128x128 block of weights (DeepSeek-V3 report §3.3.2). */
typedef enum ppl_fp8_recipe {
    PPL_FP8_DELAYED = 0,
    PPL_FP8_TENSORWISE = 1,
    PPL_FP8_BLOCKWISE = 2
} ppl_fp8_recipe;

/* What a step captures in CUDA graphs (Megatron-Core --cuda-graph-impl and
 * --cuda-graph-scope, core_v0.16.0: megatron/training/arguments.py:1430-1442,
 * transformer_config.py:1716-1800): each captured region is launched as one graph,
 * not op by op, so the host's launches and dispatch (ppl_layer_host_ops) shrink to
 * one a region.  attn: each layer's self-attention block (TransformerLayer.
 * _forward_attention); moe_router: each MoE layer's norm and router and the
 * dispatcher's preprocessing (scopes moe_router and moe_preprocess); layer: each
 * whole transformer layer (the empty scope, "full" before); iteration: the whole
 * step, forward and backward of every microbatch (--cuda-graph-impl local,
 * full_iteration).  Pinned only, never searched: Megatron's default is none. */
typedef enum ppl_cuda_graphs {
    PPL_CUDA_GRAPHS_NONE = 0,
    PPL_CUDA_GRAPHS_ATTN = 1,
    PPL_CUDA_GRAPHS_MOE_ROUTER = 2,
    PPL_CUDA_GRAPHS_ATTN_MOE_ROUTER = 3,
    PPL_CUDA_GRAPHS_LAYER = 4,
    PPL_CUDA_GRAPHS_ITERATION = 5
} ppl_cuda_graphs;
#define PPL_CUDA_GRAPHS_COUNT 6

/* A scope's row: what a layer launches as one graph (its attention block, a MoE
 * layer's router and token counts, the whole layer, or nothing a layer: the whole
 * step) and the modules Megatron-Core lists for it (core_v0.16's
 * --cuda-graph-scope, the pinned Core's cuda_graph_modules; none listed: the
 * whole layer, or under the whole-step graph nothing). */
typedef struct ppl_cuda_graphs_row {
    bool attn, router, layer, step;
    const char *modules[3];
} ppl_cuda_graphs_row;
/* The scope's row (none's out of range, which ppl_config_check refuses). */
const ppl_cuda_graphs_row *ppl_cuda_graphs_of(int graphs);

/* The words of each knob's values, in enum order, NULL-terminated: the command
 * line and measured-runs files take the same ones. */
extern const char *const ppl_recompute_names[];
/* the training precisions: bf16, fp16, fp8, mxfp8, nvfp4 */
extern const char *const ppl_precision_names[];
extern const char *const ppl_optimizer_names[];
/* the schedules' names, in enum order (PPL_SCHEDULE_LIST) */
extern const char *const ppl_schedule_names[];
extern const char *const ppl_cp_comm_names[];    /* p2p, a2a, allgather, a2a+p2p */
extern const char *const ppl_fp8_recipe_names[]; /* delayed, tensorwise, blockwise */
/* none, attn, moe_router, attn+moe_router, layer, iteration */
extern const char *const ppl_cuda_graphs_names[];
const char *ppl_recompute_name(int recompute);   /* "?" out of range */
const char *ppl_cp_comm_name(int cp_comm);
const char *ppl_cuda_graphs_name(int graphs);
const char *ppl_optimizer_name(int optimizer);

#define PPL_UNSET (-1) /* an integer knob nobody pinned */

/*
 * What the user, or a measured run, fixed of a configuration; PPL_UNSET where the
 * search is free.  precision, optimizer and schedule always hold a value (bf16,
 * Adam, 1F1B unless given).  Errors about a pin name the knob as its field is
 * named here ("tp", "first_stage_layers"); the command line maps a knob to its
 * flag.
 */
typedef struct ppl_pins {
    int64_t gpus, tp, pp, dp, cp, ep, vp, mbs, global_batch;
    int64_t etp;   /* expert tensor-parallel size (MoE); unset: tp for estimate, searched by plan */
    int64_t zero;  /* 0..3 */
    int recompute; /* ppl_recompute */
    int sequence_parallel; /* 0 or 1 */
    int flash_attention;   /* 0 or 1 */
    int ep_overlap;        /* 0 or 1: Megatron-Core's 1F1B expert all-to-all overlap */
    int tp_overlap;        /* 0: the stack's tensor-parallel overlap off; else as it runs */
    int precision;         /* ppl_precision */
    int optimizer;         /* ppl_optimizer */
    int schedule;          /* ppl_schedule */
    int cp_comm;           /* ppl_cp_comm; PPL_UNSET: searched (p2p when not searched) */
    int64_t first_stage_layers, last_stage_layers;
    int64_t recompute_layers;
    int64_t shard_group; /* data-parallel ranks per sharding group (divides dp); 0: every one */
    double offload_optimizer; /* share of the optimizer state on the host, 0..1; < 0 unset */
    int fp8_recipe;           /* ppl_fp8_recipe; delayed unless given */
    int64_t bf16_layers;      /* first and last layers kept in bf16 under fp8/mxfp8; 0 none */
    int cuda_graphs;          /* ppl_cuda_graphs; none unless given */
} ppl_pins;

/* Every knob free; bf16, Adam, 1F1B. */
void ppl_pins_init(ppl_pins *pins);

/* The knobs' names, ranges and readers: the registry (knobs.h). */

typedef struct ppl_stage_split {
    int64_t first;  /* layers on stage 0 */
    int64_t last;   /* layers on stage pp-1 (== first when pp == 1) */
    int64_t middle; /* layers on each middle stage (0 when pp < 3) */
} ppl_stage_split;

typedef struct ppl_config {
    int64_t gpus, tp, pp, dp, cp, ep, vp, mbs, global_batch;
    /* expert tensor-parallel size: the ranks one expert's weights are split over;
     * 0 reads as tp, Megatron-LM's default (ppl_config_etp) */
    int64_t etp;
    int64_t microbatches; /* m = global_batch / (dp * mbs) */
    int zero;             /* 0..3 */
    ppl_recompute recompute;
    /* with full recomputation, the layers of each stage that are recomputed (the
     * rest keep their activations; Megatron-LM --recompute-method block); 0: all */
    int64_t recompute_layers;
    bool sequence_parallel;
    bool flash_attention;
    /* Megatron-Core's 1F1B all-to-all overlap (--overlap-moe-expert-parallel-comm):
     * opt-in there, off in NVIDIA's H100 performance recipes, and off here unless
     * pinned; it applies where ppl_ep_mode_of allows it */
    bool ep_overlap;
    /* the stack's tensor-parallel overlap (Transformer Engine's userbuffers,
     * Megatron-Core --tp-comm-overlap) not run: opt-in in Megatron-Core, and left off
     * by some recipes of the stacks that run it (stack.c ppl_stack_tp_hidden) */
    bool tp_overlap_off;
    ppl_precision precision;
    ppl_optimizer optimizer;
    ppl_schedule schedule;
    ppl_cp_comm cp_comm; /* with cp > 1 */
    /* with a2a+p2p: ranks of each all-to-all group (ppl_cp_a2a_size); the ring
     * joins cp / cp_a2a of them */
    int64_t cp_a2a;
    ppl_stage_split split;
    /* hierarchical sharding (shard.c): ZeRO-1/2/3 model states sharded inside
     * groups of shard_group data-parallel ranks (x cp) and replicated over the
     * dp / shard_group groups; 0 reads as dp, every rank (ppl_config_shard_group) */
    int64_t shard_group;
    /* the share of the optimizer state (fp32 master weights and moments) held and
     * stepped on the host (offload.c); 0: none */
    double offload_optimizer;
    ppl_fp8_recipe fp8_recipe; /* with fp8 */
    /* under fp8 or mxfp8, the first bf16_layers and the last bf16_layers
     * transformer layers run in bf16 (Megatron-Core --first-last-layers-bf16
     * --num-layers-at-start-in-bf16 N --num-layers-at-end-in-bf16 N); 0: none */
    int64_t bf16_layers;
    ppl_cuda_graphs cuda_graphs; /* what each step launches as CUDA graphs */
} ppl_config;

/* The knobs no search varies, set on c as pins has them (each at its default
 * where unset): precision, fp8 recipe, bf16 layers, CUDA graphs, optimizer, the
 * expert all-to-all overlap (opt-in, as in Megatron-Core) and the stack's
 * tensor-parallel overlap (turned off only when pinned off).  The one place the
 * configuration builders (rules.c, search.c, mixed.c) take them from. */
void ppl_config_take_fixed(ppl_config *c, const ppl_pins *pins);

/* Bytes per element of a linear layer's GEMM input under the configuration's
 * precision and fp8 recipe, block scales included (ppl_precision_gemm_bytes, and
 * blockwise fp8's fp32 scale per 1x128 tile: 1 + 4/128). */
double ppl_config_gemm_bytes(const ppl_config *config);

/* Of the `layers` transformer layers stage `stage` holds, how many run in bf16
 * (ppl_config bf16_layers): the first ones on stage 0 and the last ones on the
 * last stage (ppl_config_check keeps them inside the first and last model chunk). */
int64_t ppl_stage_bf16_layers(const ppl_config *config, int64_t stage, int64_t layers);

/* Microbatches each virtual stage runs in a row under interleaving (Megatron-Core
 * --microbatch-group-size-per-virtual-pipeline-stage, core_v0.10.0+): pp when the
 * microbatches are a multiple of pp (its default, depth-first), else the smallest
 * N in [pp, m] with m % N == 0 or m % N >= pp, the rule
 * megatron/core/pipeline_parallel/schedules.py (forward_backward_pipelining_with_
 * interleaving) enforces so that no dependency bubble appears; 0 when m < pp. */
int64_t ppl_vp_group(const ppl_config *config);

/* The expert tensor-parallel size (etp, or tp when 0: megatron/training/arguments.py
 * validate_args sets expert_tensor_parallel_size = tensor_model_parallel_size when
 * it is not given). */
int64_t ppl_config_etp(const ppl_config *c);
/* Expert-data-parallel size: the replicas of each expert, tp*cp*dp / (etp*ep)
 * (parallel_state.py: expert_data_parallel_size = world_size / (etp*ep*pp)). */
int64_t ppl_config_edp(const ppl_config *c);
/* Data-parallel ranks per sharding group: shard_group, or dp when 0. */
int64_t ppl_config_shard_group(const ppl_config *c);
/* Sharding groups the data-parallel ranks form, dp / shard group: Megatron-Core's
 * --num-distributed-optimizer-instances. */
int64_t ppl_config_shard_replicas(const ppl_config *c);

/* Whether an all-to-all over `ranks` CP ranks can split the attention heads that
 * tensor parallelism leaves each GPU: Transformer Engine asserts that the query
 * heads and the key/value heads of each rank are divisible by the group's size
 * (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py,
 * AttnFuncWithCPAndQKVOA2A.forward: "The number of attention heads needs to be
 * divisible by CP size!").  A rank holds heads/tp query heads and kv_heads/tp
 * key/value heads, one when tp exceeds kv_heads (replicated). */
bool ppl_cp_heads_split(const ppl_model *model, int64_t tp, int64_t ranks);

/* The all-to-all group of hierarchical CP (a2a+p2p): the largest divisor of cp
 * whose ranks, tp apart, stay inside one NVLink domain and split the heads
 * (ppl_cp_heads_split); 1 when none of at least 2 does. */
int64_t ppl_cp_a2a_size(const ppl_model *model, const ppl_topology *topo, int64_t tp, int64_t cp);

/* The share of a stage's `layers` whose activations are recomputed under full
 * recomputation (1 when all are, or when recomputation is not full). */
double ppl_recomputed_share(const ppl_config *c, int64_t layers);

/* Layers held by pipeline stage `stage` (0-based). */
int64_t ppl_stage_layers(const ppl_config *c, int64_t stage);
/* Index of the first layer of stage `stage` (vp == 1). */
int64_t ppl_stage_first_layer(const ppl_config *c, int64_t stage);

/* Whether the split can be interleaved vp ways, as Megatron-Core builds it
 * (megatron/core/transformer/transformer_config.py, "Uneven PP" and
 * account_for_embedding/loss_in_pipeline_split): the first, every middle and the
 * last stage's layers each divisible by vp, or ends one layer short of equal
 * stages whose layers vp divides (the embedding and the loss counted as layers);
 * or, with an explicit layout (Megatron-Core 0.13+), any split of at least a
 * layer a chunk. */
bool ppl_split_allows_vp(const ppl_config *c, int64_t vp);
/* The same without the explicit layout: what the first/last-stage and account
 * flags build (the splits the search interleaves unless vp is pinned). */
bool ppl_split_flags_allow_vp(const ppl_config *c, int64_t vp);
/* Layers of chunk `chunk` (0 .. vp-1) of stage `stage` under an explicit layout:
 * the stage's layers as even as can be, the larger chunks first. */
int64_t ppl_split_chunk_layers(const ppl_config *c, int64_t stage, int64_t chunk);

/* Which Megatron-LM flags build the split interleaved vp ways (vp 1: none):
 * EVEN needs none; ENDS --decoder-first/last-pipeline-num-layers; ACCOUNT
 * --account-for-embedding-in-pipeline-split (*embedding) and/or
 * --account-for-loss-in-pipeline-split (*loss); LAYOUT
 * --pipeline-model-parallel-layout (Megatron-Core 0.13+; ppl_split_chunk_layers);
 * NONE: no flags can. */
typedef enum ppl_split_form {
    PPL_SPLIT_NONE = 0,
    PPL_SPLIT_EVEN,
    PPL_SPLIT_ENDS,
    PPL_SPLIT_ACCOUNT,
    PPL_SPLIT_LAYOUT
} ppl_split_form;
ppl_split_form ppl_split_form_of(const ppl_config *c, int64_t vp, bool *embedding, bool *loss);

/* The default split of L layers over pp stages: equal when pp divides L; else the
 * split closest to even with equal middle stages, the first and last stages a
 * little lighter where that is possible (Llama 3 ran 126 layers on 16 stages as
 * 7, 8 x 14, 7), else a little heavier. */
ppl_stage_split ppl_stage_split_default(int64_t layers, int64_t pp);
/* Whether two splits put the same layers on every stage. */
bool ppl_stage_split_equal(const ppl_stage_split *a, const ppl_stage_split *b);
/* The split with the first and/or last stage's layers pinned (PPL_UNSET: free);
 * a usage error naming the flag when the rest cannot be shared evenly. */
ppl_status ppl_stage_split_pinned(int64_t layers, int64_t pp, int64_t first_stage_layers,
                                  int64_t last_stage_layers, ppl_stage_split *split,
                                  ppl_error *err);

/* fp8, mxfp8 or nvfp4: the precisions the linear layers' GEMMs run in below 16
 * bits (Megatron-Core --fp8-format/--fp8-recipe, --fp4-format); the attention
 * core, norms, softmax, embeddings and the output layer stay 16-bit, and so do
 * master weights (fp32), gradients and optimizer states. */
bool ppl_precision_low(ppl_precision precision);
/* Bytes per element of a GEMM operand kept in the precision, block scales
 * included: 1 (fp8), 1 + 1/32 (mxfp8), 0.5 + 1/16 (nvfp4), 2 otherwise. */
double ppl_precision_gemm_bytes(ppl_precision precision);
/* The global batch when none is given: about 4M tokens per step (GPT-3's 3.2M,
 * Llama 2's 4M) in a power of two of sequences, at least one: 512 sequences of
 * 8,192 tokens, 2,048 of 2,048. */
int64_t ppl_default_global_batch(const ppl_model *model);

#endif
