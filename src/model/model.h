/*
 * model/model.h - transformer model description and its derived figures.
 *
 * A model file (a models/ JSON file, SPEC "Model file") is loaded into a ppl_model;
 * ppl_model_derive() turns it into parameter counts and FLOPs per token.
 *
 * Parameter count: Narayanan et al. SC'21 Eq.2, P = 12Lh^2 (1 + 13/(12h) + (V+s)/(12Lh)),
 * generalised term by term to grouped-query attention, gated (SwiGLU) MLPs, models
 * without biases, RMSNorm, rotary/ALiBi positions, untied output layers and
 * mixture-of-experts layers.  FLOPs: Korthikanti et al. 2022 Eq.7 (model FLOPs,
 * no recomputation) generalised the same way, and Narayanan Eq.3 with full
 * recomputation.
 */
#ifndef PARPLAN_MODEL_H
#define PARPLAN_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "parplan/error.h"

struct json_t;

typedef enum ppl_norm_kind { PPL_NORM_LAYERNORM = 0, PPL_NORM_RMSNORM = 1 } ppl_norm_kind;

typedef enum ppl_position_kind {
    PPL_POSITION_LEARNED = 0, /* a learned s x h table (GPT) */
    PPL_POSITION_ROPE = 1,    /* rotary: no parameters */
    PPL_POSITION_ALIBI = 2,   /* linear biases: no parameters */
    PPL_POSITION_NONE = 3
} ppl_position_kind;

/* How a router turns its logits into expert scores (Megatron-Core
 * moe_router_score_function): softmax (Mixtral, Qwen3) or sigmoid (DeepSeek-V3). */
typedef enum ppl_router_score { PPL_ROUTER_SOFTMAX = 0, PPL_ROUTER_SIGMOID = 1 } ppl_router_score;

typedef struct ppl_moe {
    int64_t experts;            /* E, routed experts */
    int64_t top_k;              /* routed experts each token visits */
    int64_t ffn_hidden;         /* hidden size of one routed expert's MLP */
    int64_t every;              /* every n-th layer after the dense ones is MoE (1 = all) */
    int64_t shared_experts;     /* experts every token visits (DeepSeek-V3: 1); 0: none */
    int64_t shared_ffn_hidden;  /* hidden size of each shared expert's MLP */
    int64_t first_dense_layers; /* leading layers that stay dense (DeepSeek-V3: 3) */
    double capacity_factor;     /* tokens an expert takes, x its fair share; 0: dropless */
    int64_t router_node_limit;  /* servers a token's experts may span (DeepSeek-V3: 4); 0: any */
    double routing_skew;        /* the busiest expert's tokens over the mean, >= 1 */
    /* the router, as the launch flags build it (no parameters or FLOPs of its own
     * beyond the h x E gate): its score function, the auxiliary-loss-free bias added
     * to the scores before the top-k (a buffer, not a weight; DeepSeek-V3 §2.1.2),
     * and the factor the top-k weights are scaled by (1: none) */
    ppl_router_score router_score;
    bool router_expert_bias;
    double router_topk_scale;
} ppl_moe;

/* Routing skew when the file gives none: busiest expert over the mean under
 * auxiliary-loss-free balancing (DeepSeek-V3, Megatron-Core
 * --moe-router-enable-expert-bias), MaxVio_global 0.04 in Wang et al. 2024,
 * "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts" (arXiv
 * 2408.15664), Table 2, 1B and 3B models.  The same table measures 0.52-0.72
 * (1.52-1.72) under auxiliary-loss balancing: a file says so with routing_skew. */
#define PPL_ROUTING_SKEW_DEFAULT 1.04

/* The longest sequence parplan accepts, in tokens (a model file's seq_len,
 * --seq-len, a plan file's seq_len): far beyond any real run. */
#define PPL_MAX_SEQ_LEN (1 << 26)
/* The most layers a model file may give (and a pipeline stage hold). */
#define PPL_MAX_LAYERS 100000

typedef enum ppl_attention_kind {
    PPL_ATTENTION_STANDARD = 0, /* multi-head or grouped-query (heads, kv_heads, head_dim) */
    PPL_ATTENTION_MLA = 1       /* multi-head latent attention (DeepSeek-V2/V3) */
} ppl_attention_kind;

/* Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1.2): queries and
 * keys/values pass through low-rank latents; each head's query and key are a
 * qk_nope_head_dim part and a qk_rope_head_dim rotary part, its value v_head_dim wide. */
typedef struct ppl_mla {
    int64_t q_lora_rank; /* 0: queries projected directly from the hidden state */
    int64_t kv_lora_rank;
    int64_t qk_nope_head_dim;
    int64_t qk_rope_head_dim;
    int64_t v_head_dim;
} ppl_mla;

typedef struct ppl_model {
    char name[PPL_NAME_MAX];
    char source[PPL_SOURCE_MAX];
    int64_t layers;       /* L */
    int64_t hidden;       /* h */
    int64_t heads;        /* a */
    int64_t kv_heads;     /* key/value heads; < heads is grouped-query attention */
    int64_t head_dim;     /* d, each head's width: hidden / heads unless the file gives it
                             (Qwen3: 128 with hidden 2048 and 32 heads) */
    int64_t ffn_hidden;   /* MLP hidden size (4h in GPT) */
    int64_t vocab;        /* V */
    int64_t seq_len;      /* s */
    bool gated_mlp;       /* SwiGLU-style: three weight matrices */
    bool tied_embeddings; /* output layer reuses the input embedding */
    bool bias;            /* linear layers carry biases */
    bool final_norm;      /* a norm before the output layer (Eq.2 does not count it) */
    bool embedding_norm;  /* a norm right after the embedding (BLOOM) */
    bool dropout;         /* trained with dropout: its masks are kept for backward */
    ppl_norm_kind norm;
    ppl_position_kind position_embedding;
    double rope_theta; /* rotary embeddings' base (Llama 3: 500000); 0: the launcher's
                          default (Megatron-LM's 10000) */
    bool qk_norm;      /* a norm over each query and key head, head_dim weights each
                          (Qwen3; Megatron-Core qk_layernorm) */
    bool has_moe;
    ppl_moe moe;
    ppl_attention_kind attention;
    ppl_mla mla;            /* with attention == PPL_ATTENTION_MLA */
    int64_t mtp_layers;     /* multi-token-prediction modules (DeepSeek-V3: 1), each a layer
                               of the model's last kind plus a 2h x h projection and two norms,
                               on the last pipeline stage; they share the embedding and output */
    double params_declared; /* the file's "params" cross-check, 0 when absent */
} ppl_model;

/* Parameter counts and FLOPs per token, all derived from a ppl_model. */
typedef struct ppl_model_figures {
    double params_total;       /* every weight */
    double params_active;      /* weights one token touches (MoE: top_k experts) */
    double params_embedding;   /* input embedding (+ learned positions, embedding norm) */
    double params_output;      /* untied output layer and final norm */
    double params_dense_layer; /* one non-MoE transformer layer */
    double params_moe_layer;   /* one MoE layer, all experts */
    double params_moe_layer_active;
    double params_attention; /* attention part of one layer (weights + biases) */
    double params_norms;     /* norms of one layer */
    double params_mtp;       /* the multi-token-prediction modules (in params_total) */
    int64_t moe_layers;      /* how many layers are MoE (the MTP modules not counted) */
    /* bytes: every weight in bf16 (2 B) and in fp8 (1 B); mixed-precision Adam's
     * model states, 2 + 2 + 12 B a parameter (Rajbhandari et al. SC'20 §3.1) */
    double weight_bytes_bf16, weight_bytes_fp8, training_state_bytes;
    /* FLOPs per token (Korthikanti Eq.7 convention: full s x s attention, no bias/norm FLOPs) */
    double flops_forward_per_token;        /* one forward pass */
    double flops_training_per_token;       /* forward + backward = 3 x forward (model FLOPs) */
    double flops_full_recompute_per_token; /* + a recomputed forward of the layers (Eq.3) */
} ppl_model_figures;

/* Loads a model file; `display` names the file in messages (NULL: path). */
ppl_status ppl_model_load(const char *path, const char *display, const ppl_diag *diag,
                          ppl_model *model, ppl_error *err);
/* The same, and the model's document (*doc, the caller's to free): the file's, a
 * Hugging Face config.json's as converted, with the name the model was given;
 * ppl_model_from_json reads it back to the same model (a plan embeds it). */
ppl_status ppl_model_load_doc(const char *path, const char *display, const ppl_diag *diag,
                              ppl_model *model, struct json_t **doc, ppl_error *err);

/* Reads a model from a JSON object already parsed (e.g. inside a runs file);
 * key paths in messages start with `path` ("" at the top level). */
ppl_status ppl_model_from_json(const struct json_t *obj, const char *file, const char *path,
                               const ppl_diag *diag, ppl_model *model, ppl_error *err);

void ppl_model_derive(const ppl_model *model, ppl_model_figures *out);

/* Trains the model at another sequence length (--seq-len, a whatif seq_len
 * sweep): 1 to 2^26 tokens, else a usage error naming seq_len.  Learned
 * position embeddings grow with it. */
ppl_status ppl_model_set_seq_len(ppl_model *model, int64_t seq_len, ppl_error *err);

/* Narayanan et al. SC'21 Eq.2 for a GPT of L layers, hidden h, vocab V, sequence s. */
double ppl_gpt_params_eq2(double layers, double hidden, double vocab, double seq_len);

const char *ppl_norm_name(ppl_norm_kind kind);
const char *ppl_router_score_name(ppl_router_score score);
const char *ppl_position_name(ppl_position_kind kind);

/* Key (or value) columns each of tp GPUs holds: head_dim x kv_heads/tp, at least one
 * head (K/V heads are replicated when tp exceeds them). */
double ppl_kv_columns_per_gpu(const ppl_model *model, int64_t tp);

/*
 * One transformer layer as each of tp tensor-parallel ranks holds it (tp = 1: the
 * whole layer), in parameters.  Megatron-LM's layout: QKV and the first MLP matrix
 * (two when gated) column-parallel, their weights and biases split over tp; the
 * output projection and the last MLP matrix row-parallel, their weights split and
 * their biases replicated; norms and the MoE router replicated; K and V heads
 * replicated when tp exceeds them.  The model's parameter counts and FLOPs
 * (model.c), the per-GPU weights and activations of the memory model (memory.c)
 * and the GEMM and attention FLOPs and element-wise traffic of the compute model
 * (compute.c) all derive from this one description.
 */
typedef struct ppl_layer_shape {
    double q_cols;         /* query (and key, under MLA) columns per rank: heads x d / tp */
    double v_cols;         /* value (and projection input) columns per rank; = q_cols but
                              under MLA (heads x v_head_dim / tp) */
    double kv_cols;        /* key and value columns per rank, each (MLA: their mean) */
    double latent_cols;    /* MLA: the latents every rank holds whole (q_lora_rank +
                              kv_lora_rank + qk_rope_head_dim); 0 otherwise */
    double ffn_cols;       /* the dense MLP's inner columns per rank: ffn_hidden/tp */
    double expert_cols;    /* one expert's inner columns per rank; 0 without MoE */
    double fc1_outputs;    /* fc1 outputs per inner column: 2 when gated (gate, up), else 1 */
    double attn_weights;   /* h x q_cols + 2 h x kv_cols + q_cols x h */
    double attn_bias;      /* q_cols + 2 kv_cols + h; 0 without biases */
    double norms;          /* the two norms' weights (and biases for LayerNorm) */
    double mlp_weights;    /* the dense MLP, width ffn_hidden */
    double mlp_bias;       /* 0 without biases */
    double expert_weights; /* one expert's MLP, width moe.ffn_hidden; 0 without MoE */
    double expert_bias;
    double shared_cols;    /* the shared experts' inner columns per rank (all of them) */
    double shared_weights; /* the shared experts' MLPs; 0 without */
    double shared_bias;
    double router; /* h x experts, replicated; 0 without MoE */
} ppl_layer_shape;

void ppl_layer_shape_of(const ppl_model *model, int64_t tp, ppl_layer_shape *out);

/* MoE layers among the layers [first, first + count) (0-based): past the
 * first_dense_layers, every `every`-th one, counted from the first of them
 * (layer first_dense + every - 1 is the first MoE layer). */
int64_t ppl_moe_layers_in(const ppl_model *model, int64_t first, int64_t count);

const char *ppl_attention_name(ppl_attention_kind kind);

/* The busiest expert's load over the mean that the step waits for: the skew,
 * bounded by the capacity factor when tokens beyond it are dropped; 1 without MoE. */
double ppl_moe_load_factor(const ppl_model *model);

#endif
