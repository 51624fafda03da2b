/*
 * help.c - `--help` for every command: usage, what it does, its options (from the
 * option table in args.c, so they cannot drift), examples and exit codes.
 */
#include <glpk.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct help_text {
    ppl_command cmd;
    const char *usage;
    const char *about;
    const char *examples;
} help_text;

static const help_text texts[] = {
    {PPL_CMD_PLAN,
     "parplan plan --model M --topology T --global-batch B [--gpus N] [--top K] [pins...]",
     "Searches tensor, pipeline, data, context and expert parallelism, virtual stages,\n"
     "microbatch size, ZeRO stage, recomputation, sequence parallelism and flash\n"
     "attention, and prints the K best configurations ranked by predicted step time,\n"
     "with memory and time breakdowns.  Every configuration flag given pins that\n"
     "dimension; the search covers the rest.  With cp > 1 it tries each context-\n"
     "parallel algorithm the stack runs (--cp-comm: p2p ring, a2a Ulysses all-to-all,\n"
     "allgather of K/V, a2a+p2p all-to-all inside the NVLink domain and a ring across).\n"
     "On a mixed cluster (a topology with pools, e.g. mixed-h100-b200) it ranks the\n"
     "whole job on each pool and pipelines across the pools together, each pool's\n"
     "stages holding layers in proportion to its speed and memory, and says where\n"
     "each result's stages run.\n",
     "  parplan plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536\n"
     "  parplan plan --model llama3-405b --topology h100-64k --gpus 16384 --global-batch 2048 --tp "
     "8\n"
     "  parplan plan --model megatron-1t --topology dgx-a100-superpod --gpus 3072 \\\n"
     "      --global-batch 3072 --json -o plan.json\n"
     "  parplan plan --model llama3-70b --topology dgx-h100-superpod --gpus 128 --global-batch 64 "
     "\\\n"
     "      --seq-len 65536 --tp 2 --cp-comm a2a+p2p\n"},
    {PPL_CMD_ESTIMATE,
     "parplan estimate --model M --topology T --tp a --pp b --mbs m --global-batch B [options]",
     "Predicts one configuration's step time with a full breakdown: compute, pipeline\n"
     "bubble, communication at each level of the network, the GPUs' wait for the\n"
     "host's kernel launches (small per-GPU work), memory per GPU.  Unstated\n"
     "knobs default to --zero 0, --recompute none, no sequence parallelism, no flash\n"
     "attention, --vp 1, --cp-comm p2p (Megatron's default, with --cp > 1); --dp\n"
     "defaults to gpus / (tp*pp*cp).  MoE layers split the same tp*cp*dp ranks of a\n"
     "stage again, as Megatron-Core does: --etp ranks share each expert's weights\n"
     "(default tp), --ep ranks share the experts, etp*ep dividing tp*cp*dp; the rest\n"
     "replicate them.\n",
     "  parplan estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 \\\n"
     "      --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute selective --sequence-parallel\n"
     "  parplan estimate --model llama3-405b --topology h100-64k --gpus 16384 --tp 8 --pp 16 \\\n"
     "      --cp 16 --cp-comm allgather --mbs 1 --global-batch 128 --seq-len 131072 --zero 1 \\\n"
     "      --sequence-parallel --flash-attention\n"
     "  parplan estimate --model mixtral-8x7b --topology dgx-h100-superpod --gpus 64 --tp 4 \\\n"
     "      --pp 1 --ep 8 --etp 1 --mbs 1 --global-batch 256 --zero 1 --recompute full \\\n"
     "      --sequence-parallel --flash-attention\n"},
    {PPL_CMD_MEMORY,
     "parplan memory --model M --topology T --tp a --pp b --mbs m --global-batch B [options]",
     "Prints the per-GPU memory of one configuration for its worst pipeline stage,\n"
     "and every stage in a table (and in --json).  Exit 1 when it does not fit.\n"
     "--from PLAN.json#K takes result K of a plan's --json output, as estimate does.\n"
     "\n"
     "terms (bytes per GPU; the table shows GiB):\n"
     "  weights      16-bit weights of the stage's layers, split by tp (norms and\n"
     "               row-parallel biases replicated); the embedding on the first stage,\n"
     "               the output layer (or a tied embedding's copy) on the last; sharded\n"
     "               over dp with --zero 3; fp8, mxfp8 and nvfp4 add Transformer Engine's\n"
     "               weight caches (two copies at 1, 1 + 1/32 and 9/16 bytes)\n"
     "  gradients    2 bytes per parameter where the stack reduces them in bf16\n"
     "               (nemo-2025, the default, and nemo-2024), else fp32 main\n"
     "               gradients, 4 (fp16 training: 2); sharded with --zero 2 or 3\n"
     "  optimizer    Adam: fp32 master weights, momentum and variance, 12 bytes per\n"
     "               parameter (SGD: 8), sharded with --zero 1, 2 or 3 (ZeRO, SC'20)\n"
     "  activations  Korthikanti et al. 2022 Table 2 per layer, generalised to GQA,\n"
     "               gated MLPs, MoE, flash attention, fp8/mxfp8/nvfp4 GEMM inputs and\n"
     "               context parallelism, times\n"
     "               the stage's layers, times the microbatches in flight: p - k on\n"
     "               stage k with 1F1B, x(1 + (p-1)/(pv)) interleaved, all m with GPipe;\n"
     "               the last stage adds fp32 logits (4sbV/t)\n"
     "  other        CUDA context and NCCL buffers per parallel group (or\n"
     "               --overhead-memory), ZeRO-3 gather buffers, the layer being\n"
     "               recomputed, and allocator fragmentation (--fragmentation)\n",
     "  parplan memory --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 "
     "\\\n"
     "      --mbs 1 --global-batch 1536 --recompute selective --sequence-parallel\n"
     "  parplan memory --model llama3-405b --topology h100-64k --gpus 16384 --tp 8 --pp 16 \\\n"
     "      --mbs 1 --global-batch 2048 --first-stage-layers 7 --last-stage-layers 7 \\\n"
     "      --sequence-parallel --flash-attention --recompute full --json\n"
     "  parplan memory --from plan.json#2\n"},
    {PPL_CMD_WHATIF,
     "parplan whatif --model M --topology T --sweep KEY=V1,V2,... [--sweep ...] [--tokens N]",
     "For every point of the sweep grid, finds the best plan.  KEY is gpus,\n"
     "global_batch or a topology path such as rails.nic_bandwidth, nvlink.domain_gpus,\n"
     "tiers[1].oversubscription, rail_only, transport.loss_rate; with --tokens, also\n"
     "the time to train.  gpus=N offers up to N GPUs: the best plan may use fewer\n"
     "(GPUs column).  Without --global-batch the batch is about 4M tokens per step,\n"
     "a power of two of sequences; the table, stderr and the JSON say so.\n"
     "The time to train counts failures, checkpoints and restarts: see size --help.\n"
     "On a mixed cluster KEY is a topology path, a pool's as pools[I].KEY\n"
     "(pools[1].servers=8,16,32): the best plan at each point, on one pool or\n"
     "across the pools.\n"
     "A sweep splits over machines: each runs it with --shard K/N and writes its\n"
     "points as JSON Lines; 'cat part*.jsonl | parplan whatif ... --merge -' with\n"
     "the same arguments prints what one run prints.\n",
     "  parplan whatif --model gpt3-175b --topology h100-64k --global-batch 4096 \\\n"
     "      --sweep gpus=1024,4096,16384,65536 --tokens 300e9\n"
     "  parplan whatif --model llama3-70b --topology dgx-h100-superpod --global-batch 1024 \\\n"
     "      --sweep rails.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s\n"
     "  parplan whatif --model llama3-70b --topology dgx-h100-superpod --global-batch 1024 \\\n"
     "      --sweep rails.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s --shard 1/2 -o part1.jsonl\n"},
    {PPL_CMD_SIZE, "parplan size --model M --topology T --tokens N --days D [--global-batch B]",
     "Finds the smallest GPU count of the topology whose best plan trains N tokens\n"
     "within D days, and prints that plan.  --fit-only instead finds the fewest GPUs\n"
     "that hold one replica of the model at all.  Without --global-batch the batch\n"
     "is about 4M tokens per step, a power of two of sequences, and the output says\n"
     "so; the answer depends on it (Llama 3 405B trained at 2048 x 8192 tokens).\n"
     "\n"
     "The days count failures, checkpoint saves and restarts (goodput; the failure-\n"
     "free days are shown too), so at very large scale more GPUs can stop paying:\n"
     "  failures   job MTBF = --mtbf-gpu-hours / GPUs; default 50677 GPU-hours from\n"
     "             the Llama 3 paper (Dubey et al. 2024, 3.3.4, Table 5): 419\n"
     "             unexpected interruptions in 54 days on 16384 H100, 54 x 24 h / 419\n"
     "             = 3.09 h per job, x 16384 GPUs\n"
     "  checkpoint 14 B per parameter (bf16 weights, fp32 master weights and Adam\n"
     "             moments; Megatron-Core distributed checkpoint), written by every\n"
     "             rank with ZeRO >= 1, by one replica with ZeRO 0, at min(\n"
     "             --checkpoint-bandwidth, writers x 25 GB/s); default 2 TB/s, the\n"
     "             Llama 3 paper's Tectonic sustained throughput (3.3.1); 25 GB/s per\n"
     "             GPU to host is an assumption.  nemo-2025 and megatron-core save\n"
     "             asynchronously (--async-save, Megatron-Core 0.7): only the copy\n"
     "             to host stalls; older stacks stall for the whole write\n"
     "  restart    --restart-time (plain seconds or 10min), default 10 min, an\n"
     "             assumption, plus reading the checkpoint back\n"
     "  goodput    1 - delta/tau - (tau/2 + R)/M at Young's interval tau =\n"
     "             sqrt(2 delta M) (Young 1974; Daly 2006): delta the stall per save,\n"
     "             M the job MTBF, R the restart plus the reload\n"
     "  spares     --spares N|P%: hot spare servers beside the job.  78% of the\n"
     "             interruptions were hardware (Llama 3, 3.3.4), each taking a\n"
     "             server out for --repair-time (default 48 h, an assumption); one\n"
     "             that finds a spare free restarts in --spare-restart-time (default\n"
     "             2 min, an assumption) instead of --restart-time.  Servers in\n"
     "             repair are Poisson (mean: failure rate x repair time), so a spare\n"
     "             is free with P(N < spares).  The spares count in the GPU-hours;\n"
     "             the output shows the days saved.  whatif --sweep spares=0,64,128\n"
     "             shows the trade\n",
     "  parplan size --model megatron-1t --topology dgx-a100-superpod --tokens 450e9 --days 84 \\\n"
     "      --global-batch 3072\n"
     "  parplan size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 \\\n"
     "      --global-batch 2048\n"},
    {PPL_CMD_COLLECTIVE,
     "parplan collective --topology T --op OP --servers S [--gpus-per-server g] [--algo A] "
     "[--sizes SIZE|LO:HI]",
     "Predicts one collective among S servers x g GPUs each (g defaults to all; g=1 is\n"
     "one GPU per server, all on one rail) as an nccl-tests style table: size, time,\n"
     "algorithm bandwidth, bus bandwidth, chosen algorithm.\n",
     "  parplan collective --topology dgx-h100-superpod --op allreduce --servers 1 --sizes 8GiB\n"
     "  parplan collective --topology dgx-a100-superpod --op allreduce --servers 8 "
     "--gpus-per-server 1 \\\n"
     "      --sizes 1MiB:8GiB\n"},
    {PPL_CMD_TOPOLOGY_SHOW, "parplan topology show T [--json]",
     "Describes a topology: GPUs, NVLink domain, rails, each switch tier with its group\n"
     "size, per-GPU bandwidth after oversubscription, switch and cable counts, and the\n"
     "bisection bandwidth of the network.  T is a catalogue name or a JSON file.\n",
     "  parplan topology show dgx-h100-superpod\n"
     "  parplan topology show topologies/meta-24k-roce.json --json\n"},
    {PPL_CMD_TOPOLOGY_GENERATE,
     "parplan topology generate --servers N --gpus-per-server G --gpu NAME \\\n"
     "    --leaf-servers K [--rails R] [--nic-bandwidth BW] [--tiers ...] \\\n"
     "    [--oversubscription X] \\\n"
     "    [--nvlink-domain D] [--rail-only] [--nvls] [--sharp] [--gpu-memory SIZE] \\\n"
     "    [--nvlink-bandwidth BW] [--transport infiniband|rocev2] [--loss-rate P]",
     "Writes a topology file for a parametric cluster.\n",
     "  parplan topology generate --servers 8192 --gpus-per-server 8 --gpu H100 --rails 8 \\\n"
     "      --nic-bandwidth 400Gb/s --leaf-servers 32 --tiers 3 -o h100-64k.json\n"},
    {PPL_CMD_TOPOLOGIES, "parplan topologies [--json]",
     "Lists the topology catalogue with each cluster's size and network.\n",
     "  parplan topologies\n"},
    {PPL_CMD_MODELS, "parplan models [--json]",
     "Lists the model catalogue with derived figures: parameters (total and active\n"
     "for mixture-of-experts models) and training FLOPs per token.\n",
     "  parplan models\n  parplan models --json\n"},
    {PPL_CMD_MODEL_SHOW, "parplan model show M [--json]",
     "Shows a model's architecture and derived figures: parameters (total, active,\n"
     "per layer, embedding and output), FLOPs per token (forward, training, training\n"
     "with full recomputation) and bytes of weights and training state.  Parameters\n"
     "follow Narayanan et al. SC'21 Eq.2, generalised to grouped-query attention,\n"
     "gated MLPs, untied embeddings and mixture-of-experts; FLOPs Korthikanti et al.\n"
     "2022 Eq.7.  M is a catalogue name or a JSON file.\n",
     "  parplan model show gpt3-175b\n  parplan model show mixtral-8x7b --json\n"},
    {PPL_CMD_COMPARE,
     "parplan compare PLAN.json#K PLAN.json#K [...] [--topology T] [--model M] [--json]",
     "Costs two to eight results of plans' --json output (K: the rank, default 1)\n"
     "and sets them side by side: knobs, step time and its parts, memory; rows that\n"
     "differ are marked '*', and each configuration after the first says how it\n"
     "differs from it (knobs changed, the step's parts that moved).  Each takes its\n"
     "plan's model and topology unless --model or --topology names one for all.\n",
     "  parplan plan --model llama3-70b --topology dgx-h100-superpod --gpus 256 \\\n"
     "      --global-batch 512 --json -o plan.json\n"
     "  parplan compare plan.json#1 plan.json#2 plan.json#3\n"
     "  parplan compare plan.json#1 plan.json#1 --topology gh200-nvl256\n"},
    {PPL_CMD_REPORT,
     "parplan report PLAN.json[#K] [-o report.html] [--top K] [--gpu-hour-price USD]",
     "Writes a plan's --json output as one self-contained HTML page (inline SVG and\n"
     "CSS, nothing fetched, light and dark mode).  For result K (default 1): the step\n"
     "time by part and the communication before overlap, memory per pipeline stage\n"
     "stacked (weights, gradients, optimizer, activations, other) against capacity,\n"
     "one step's pipeline (each stage's forward and backward blocks; the gaps are the\n"
     "bubble), traffic per network level; then the ranked table, each result against\n"
     "#1.  Each result is costed again on the plan's model and topology, as 'estimate\n"
     "--from' does; one whose step time differs from the file's is named on stderr.\n"
     "'plan --report FILE' writes the same page without the JSON in between.\n",
     "  parplan plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --pp 4 \\\n"
     "      --global-batch 256 --top 5 --json -o plan.json\n"
     "  parplan report plan.json -o report.html\n"
     "  parplan report plan.json#2 -o report2.html\n"
     "  parplan plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --pp 4 \\\n"
     "      --global-batch 256 --top 3 --report report.html\n"},
    {PPL_CMD_SERVE,
     "parplan serve --model M --topology T --input-len N --output-len N [--gpus G] [--tpot T]\n"
     "              [--ttft T] [--precision bf16|fp8] [--top K]",
     "Ranks inference engine layouts for a model and a workload of N-token prompts\n"
     "and N-token responses on G GPUs (default: all): tensor parallelism within one\n"
     "NVLink domain, the batch of sequences decoded together, and as many replicas\n"
     "as the GPUs hold, by output tokens a second, under the latency targets.  Each\n"
     "replica holds the weights and its batch's KV cache within 90% of a GPU (vLLM's\n"
     "default); TTFT is one prompt's prefill under the training kernel model; TPOT\n"
     "a decode step at the mean context (its HBM read of the weights its tokens touch\n"
     "and the KV cache, or its GEMMs, whichever is longer, plus the tensor-parallel\n"
     "all-reduces) and, under continuous batching, the prefills of new prompts spread\n"
     "over the steps.  Disaggregated layouts put prefill on replicas of their own,\n"
     "which send each prompt's KV cache to decode replicas: a shorter TPOT for some\n"
     "throughput.  Pipeline stages of a server each (tp x pp) hold a model too large\n"
     "for one server: capacity, not speed, since each token crosses every stage.  A\n"
     "MoE's experts spread over ep GPUs (the ep column) hold it in less memory, the\n"
     "attention at tp in ep / tp groups of `batch` sequences each, every MoE layer\n"
     "sending its tokens to their experts and back as DeepEP does.  A first piece\n"
     "(cost-model.md#serving-a-first-piece): no host time or queueing yet; against\n"
     "TensorRT-LLM's published throughput it is 20.7% off on average (validate\n"
     "--runs tests/data/serve-runs.json).  With --json each layout carries its\n"
     "launch: every server's vllm serve and sglang.launch_server processes (a\n"
     "disaggregated one: SGLang's prefill and decode servers and a router over them;\n"
     "rl: the rollout engine's, too).\n",
     "  parplan serve --model llama3-70b --topology dgx-h100-superpod --gpus 8 \\\n"
     "      --input-len 2048 --output-len 512\n"
     "  parplan serve --model llama3-8b --topology dgx-h100-superpod --gpus 8 \\\n"
     "      --input-len 1024 --output-len 256 --tpot 20ms --ttft 200ms --json\n"
     "  parplan serve --model deepseek-v3 --topology dgx-h100-superpod --gpus 64 \\\n"
     "      --precision fp8 --input-len 2000 --output-len 1000\n"},
    {PPL_CMD_RL,
     "parplan rl --model M --topology T --prompts N --input-len N --output-len N\n"
     "           [--samples K] [--output-max N] [--updates N] [--forward-passes N]\n"
     "           [--reward-time T] [--off-policy=no] [--placement colocated|disaggregated]\n"
     "           [--rollout-gpus N] [--engine-tp N] [--gpus G] [--precision bf16|fp8]\n"
     "           [--stack S] [--top K]",
     "Plans one step of RL post-training (GRPO, PPO): N prompts of --input-len tokens,\n"
     "K responses each of --output-len tokens on average and --output-max at most,\n"
     "scored off the GPUs in --reward-time, then --forward-passes forward-only passes\n"
     "(old-policy and reference log-probs) and --updates optimizer steps, then the\n"
     "new weights moved to the engine.  Weighs every GPU doing both in turn\n"
     "(colocated: the engine asleep while training; the trainer's states kept beside\n"
     "the engine or moved to the host) against the GPUs split in whole servers\n"
     "between engine and trainer (disaggregated), synchronous or one step\n"
     "off-policy.  The engine is serve's (tensor parallelism within a server, a MoE's\n"
     "experts spread over ep GPUs, no pipeline stages); the\n"
     "trainer is plan's best on its GPUs, sequences packed to prompt + mean response.\n"
     "Prints the ranked plans and why the winning placement wins.  With --json each\n"
     "plan carries its launch: the rollout engine's vllm serve and\n"
     "sglang.launch_server commands, and the whole step as verl v0.7.0's overrides\n"
     "(colocated synchronous on main_ppo, disaggregated one step off-policy on its\n"
     "recipe), or why verl cannot run it.\n",
     "  parplan rl --model llama3-8b --topology dgx-h100-superpod --gpus 64 \\\n"
     "      --prompts 256 --samples 8 --input-len 1024 --output-len 2048 --output-max 8192\n"
     "  parplan rl --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 64 \\\n"
     "      --prompts 128 --samples 16 --input-len 512 --output-len 4096 --json\n"},
    {PPL_CMD_VALIDATE,
     "parplan validate --runs FILE [--fit | --cv K | --cv family] [--constants FILE] [--json]",
     "Predicts every run of a measured-runs file (SPEC format) and reports the error\n"
     "of each and in aggregate (mean, max, share within 10%).  Unknown configuration\n"
     "fields are searched over; a run's software picks its stack profile.  Where a run\n"
     "leaves recomputation, sequence parallelism, ZeRO, flash attention or vp unsaid\n"
     "and its software could have run another value than its own default, the\n"
     "prediction is a span from the tuned end (the fastest) to the software's\n"
     "defaults, and the run is scored on its centre.  --fit fits\n"
     "the constants from hand-set values (--json writes a constants file with the\n"
     "record of the fit, for --constants); --cv K predicts each of K folds with the\n"
     "constants fitted on the others; --cv family does so leaving out one source\n"
     "family at a time (a paper, a vendor's document or a benchmark round: a run's\n"
     "`family` key, else its arXiv id or the repository and file its `source` names),\n"
     "the honest measure of how the model carries to runs it was not tuned on.  Both\n"
     "report the error per family.  A run that cannot be predicted is reported as\n"
     "such, and the exit status is then 1.  A serving runs file (every entry \"kind\":\n"
     "\"serve\": an engine's tp, precision, prompt and response lengths and measured\n"
     "output tokens a second; or \"kind\": \"rl\": an RL step's GPUs, workload, stated\n"
     "placement and layouts, and measured step time) is predicted with serve's engine\n"
     "model at its best batch or rl's fastest plan and reported by kind and source\n"
     "family; nothing is fitted on it.\n",
     "  parplan validate --runs tests/data/runs-heldout.json\n"
     "  parplan validate --runs tests/data/serve-runs.json\n"
     "  parplan validate --runs tests/data/rl-runs.json\n"
     "  parplan validate --runs tests/data/runs-heldout.json --json\n"
     "  parplan validate --runs tests/data/heldout_runs.json --cv 2\n"
     "  parplan validate --runs tests/data/heldout_runs.json --fit --json\n"},
};

static const char exit_codes[] =
    "exit status:\n"
    "  0  success\n"
    "  1  ran, but nothing feasible (no configuration fits, constraint unmet)\n"
    "  2  usage error (unknown flag, bad value)\n"
    "  3  invalid input file (parse or schema error)\n"
    "  4  internal failure (solver error, out of memory, write failure)\n";

static void print_option(void *ctx, const ppl_option_info *o)
{
    ppl_buf *out = ctx;
    char left[64];
    if (!o->metavar)
        snprintf(left, sizeof left, "%s%s", strcmp(o->name, "--output") == 0 ? "-o, " : "",
                 o->name);
    else if (o->metavar[0] == '[')
        snprintf(left, sizeof left, "%s%s", o->name, o->metavar);
    else
        snprintf(left, sizeof left, "%s%s %s", strcmp(o->name, "--output") == 0 ? "-o, " : "",
                 o->name, o->metavar);
    if (strlen(left) > 28)
        ppl_buf_printf(out, "  %s\n  %-28s  %s\n", left, "", o->help);
    else
        ppl_buf_printf(out, "  %-28s  %s\n", left, o->help);
}

void cli_help(ppl_command cmd, ppl_buf *out)
{
    if (cmd == PPL_CMD_NONE) {
        ppl_buf_printf(out,
                       "usage: parplan <command> [options]\n\n"
                       "Plans the parallel layout of large transformer training on GPU clusters:\n"
                       "tensor, pipeline, data, context and expert parallelism, ZeRO,\n"
                       "recomputation and microbatching, costed on a JSON description of the\n"
                       "network.\n\ncommands:\n");
        for (int k = PPL_CMD_PLAN; k < PPL_CMD_COUNT; k++)
            ppl_buf_printf(out, "  %-19s %s\n", ppl_command_name((ppl_command)k),
                           ppl_command_summary((ppl_command)k));
        ppl_buf_printf(
            out,
            "\nRun 'parplan <command> --help' for a command's options.\n\n"
            "examples:\n"
            "  parplan models\n"
            "  parplan model show llama3-405b\n"
            "  parplan topology show dgx-h100-superpod\n"
            "  parplan plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536\n"
            "\n"
            "Quantities take units: \"80 GiB\", \"400 Gb/s\", \"450 GB/s\", \"2 us\",\n"
            "\"989 TFLOP/s\", \"15.6T\" tokens.\n\n%s",
            exit_codes);
        return;
    }
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (texts[i].cmd != cmd)
            continue;
        ppl_buf_printf(out, "usage: %s\n\n%s\noptions:\n", texts[i].usage, texts[i].about);
        ppl_command_options(cmd, print_option, out);
        ppl_buf_printf(out, "\nexamples:\n%s\n%s", texts[i].examples, exit_codes);
        return;
    }
}

void cli_version(ppl_buf *out)
{
    ppl_buf_printf(out, "parplan %s (jansson %s, GLPK %s)\n", ppl_version(), jansson_version_str(),
                   glp_version());
}
