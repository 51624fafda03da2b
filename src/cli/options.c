/*
 * options.c - the option and command tables (options.h): one row per option,
 * declaratively, with its help line.
 */
#include "options.h"

#include "studies/goodput.h"
#include "cost/stack.h"
#include "hardware/topology.h"
#include "model/model.h"
#include "studies/rl.h"

const opt_def ppl_cli_options[] = {
    {O_MODEL, "--model", 0, K_STRING, CMDS_CONFIG | C(PPL_CMD_COMPARE) | CMDS_INFER,
     CMDS_CONFIG | CMDS_INFER, F(model), "M", 0, 0, NULL,
     "model: a catalogue name (see 'parplan models'), a model JSON file, or a Hugging Face "
     "config.json (llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, deepseek_v3, "
     "gpt_oss)"},
    {O_TOPOLOGY, "--topology", 0, K_STRING,
     CMDS_CONFIG | C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_COMPARE) | CMDS_INFER,
     CMDS_CONFIG | C(PPL_CMD_COLLECTIVE) | CMDS_INFER, F(topology), "T", 0, 0, NULL,
     "cluster: a catalogue name (see 'parplan topologies') or a JSON file"},
    {O_GPUS, "--gpus", 0, K_KNOB,
     C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY) | C(PPL_CMD_WHATIF) | CMDS_INFER, 0,
     NOFIELD, "N", 0, 0, NULL, "GPUs to use (default: all GPUs of the topology)"},
    {O_TP, "--tp", 0, K_KNOB, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), NOFIELD, "N", 0,
     0, NULL, "tensor-parallel size"},
    {O_PP, "--pp", 0, K_KNOB, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), NOFIELD, "N", 0,
     0, NULL, "pipeline-parallel stages"},
    {O_DP, "--dp", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "data-parallel replicas (default: gpus / (tp*pp*cp))"},
    {O_CP, "--cp", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL, "context-parallel size"},
    {O_CP_COMM, "--cp-comm", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "ALGO", 0, 0, NULL,
     "context-parallel algorithm (Megatron-Core --cp-comm-type): p2p ring, a2a (Ulysses), "
     "allgather or a2a+p2p; default: searched (plan, whatif, size), else p2p, Megatron's"},
    {O_EP, "--ep", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "expert-parallel size (MoE models): ranks the experts are spread over, out of a "
     "stage's tp*cp*dp"},
    {O_ETP, "--etp", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "expert tensor-parallel size (MoE models): ranks each expert is split over "
     "(default tp; etp*ep divides tp*cp*dp)"},
    {O_VP, "--vp", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "virtual pipeline stages per GPU (interleaved schedule)"},
    {O_SEQ_LEN, "--seq-len", 0, K_INT, CMDS_CONFIG, 0, F(seq_len), "N", 1, PPL_MAX_SEQ_LEN, NULL,
     "sequence length in tokens (default: the model's seq_len)"},
    {O_MBS, "--mbs", 0, K_KNOB, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), NOFIELD, "N",
     0, 0, NULL, "microbatch size, in sequences"},
    {O_GLOBAL_BATCH, "--global-batch", 0, K_KNOB, CMDS_CONFIG,
     C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), NOFIELD, "B", 0, 0, NULL,
     "global batch, in sequences per step"},
    {O_ZERO, "--zero", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "Z", 0, 0, NULL,
     "ZeRO stage: 0 none, 1 optimizer, 2 + gradients, 3 + weights"},
    {O_SHARD_GROUP, "--shard-group", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "ZeRO shards inside groups of N data-parallel ranks, replicated over dp/N groups (HSDP; "
     "Megatron-Core --num-distributed-optimizer-instances dp/N); N divides dp; default dp, "
     "searched (a server's or NVLink domain's ranks) by plan"},
    {O_OFFLOAD, "--offload-optimizer", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "F", 0, 0, NULL,
     "share of the optimizer state (fp32 master weights, Adam moments) held and stepped on "
     "the host, 0 to 1 (Megatron-Core --optimizer-cpu-offload); default 0, or 1 when searched "
     "and nothing fits without it"},
    {O_RECOMPUTE, "--recompute", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "MODE", 0, 0, NULL,
     "activation recomputation: none, selective or full"},
    {O_SP, "--sequence-parallel", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "[=yes|no]", 0, 0, NULL,
     "sequence parallelism (with tp > 1)"},
    {O_FLASH, "--flash-attention", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "[=yes|no]", 0, 0, NULL,
     "flash attention (no s x s score matrix kept)"},
    {O_EP_OVERLAP, "--ep-overlap", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "[=yes|no]", 0, 0, NULL,
     "MoE: Megatron-Core's 1F1B expert all-to-all overlap (--overlap-moe-expert-parallel-comm, "
     "core_v0.14; opt-in there and here, never searched)"},
    {O_TP_OVERLAP, "--tp-overlap", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "[=yes|no]", 0, 0, NULL,
     "tensor-parallel collectives under the GEMMs beside them (Transformer Engine's userbuffers, "
     "Megatron-Core --tp-comm-overlap, with sequence parallelism): on where the stack runs them "
     "(nemo-2025, nemo-2024, megatron-core, fsdp); =no costs them exposed, as a recipe that "
     "leaves the overlap off runs; never searched"},
    {O_RECOMPUTE_LAYERS, "--recompute-layers", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "with --recompute full: recompute only N layers of each stage (Megatron-LM "
     "--recompute-method block); default all, or the fewest that fit when searched"},
    {O_FIRST_LAYERS, "--first-stage-layers", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "layers on the first pipeline stage (Megatron-LM --decoder-first-pipeline-num-layers)"},
    {O_LAST_LAYERS, "--last-stage-layers", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "layers on the last pipeline stage (--decoder-last-pipeline-num-layers)"},
    {O_SCHEDULE, "--schedule", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "S", 0, 0, NULL,
     "pipeline schedule: 1f1b (default; interleaved with --vp > 1), gpipe, or, only when "
     "given, zb-h1, zb-h2, zb-v (--vp 2), dualpipe, dualpipev (--vp 2): no Megatron-LM or "
     "DeepSpeed flags for these; PyTorch pipelining runs zb-h1, zb-v and dualpipev, Sea AI "
     "Lab's Megatron fork zb-h2, deepseek-ai/DualPipe dualpipe"},
    {O_PRECISION, "--precision", 0, K_KNOB, CMDS_CONFIG | CMDS_INFER, 0, NOFIELD, "P", 0, 0, NULL,
     "bf16 (default), fp16, fp8, mxfp8 (Blackwell, MI355X) or nvfp4 (Blackwell): the linear "
     "layers' GEMMs; serve and rl cost an inference engine in bf16 or fp8 alone"},
    {O_FP8_RECIPE, "--fp8-recipe", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "R", 0, 0, NULL,
     "with --precision fp8: delayed (default; scales from earlier steps' amax), tensorwise "
     "(each tensor's own amax: one more read of it) or blockwise (an fp32 scale per 1x128 "
     "tile: 3% more activation bytes)"},
    {O_BF16_LAYERS, "--bf16-layers", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "N", 0, 0, NULL,
     "with fp8 (tensorwise or blockwise) or mxfp8: keep the first N and the last N layers in "
     "bf16 (Megatron-Core --first-last-layers-bf16)"},
    {O_CUDA_GRAPHS, "--cuda-graphs", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "SCOPE", 0, 0, NULL,
     "what each step launches as CUDA graphs, so the host launches one graph, not each "
     "kernel: none (default, never searched), attn (each self-attention block), moe_router "
     "(each MoE layer's router and token counts), attn+moe_router, layer (each dense "
     "layer) or iteration (the whole step); Megatron-Core --cuda-graph-impl and "
     "--cuda-graph-scope, core_v0.16"},
    {O_OPTIMIZER, "--optimizer", 0, K_KNOB, CMDS_CONFIG, 0, NOFIELD, "O", 0, 0, NULL,
     "adam (default) or sgd"},
    {O_STACK, "--stack", 0, K_ENUM, CMDS_CONFIG | C(PPL_CMD_RL), 0, F(stack), "S", 0, 0,
     ppl_stack_names,
     "training software, by what ran: nemo-2025 (default), megatron-core, nemo-2024, "
     "fsdp (overlap communication); megatron-lm-2023, megatron-lm-2022, megatron-lm-2021, "
     "megatron-deepspeed, deepspeed-zero3-2021 (do not); modern and legacy name the "
     "newest and the oldest"},
    {O_OVERHEAD, "--overhead-memory", 0, K_BYTES, CMDS_CONFIG, 0, NOFIELD, "SIZE", 0, 0, NULL,
     "fixed framework memory per GPU (default: CUDA context + NCCL per group)"},
    {O_FRAGMENTATION, "--fragmentation", 0, K_REAL, CMDS_CONFIG, 0, NOFIELD, "F", 0, 0, NULL,
     "allocator loss as a fraction of activations (default 0.05)"},
    {O_FROM, "--from", 0, K_STRING, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), 0, F(from_plan),
     "PLAN.json[#K]", 0, 0, NULL,
     "re-cost result K (default 1) of a plan's --json output; its model, topology, sequence "
     "length and stack unless --model, --topology, --seq-len or --stack says otherwise (e.g. "
     "another cluster); other pins are the plan's"},
    {O_HEADROOM, "--memory-headroom", 0, K_REAL, CMDS_CONFIG, 0, NOFIELD, "F|P%|SIZE", 0, 0, NULL,
     "GPU memory plans keep free, a share (0.05, 5%) or a size (4GiB); default 0: the memory "
     "model already errs high (measured runs that ran are predicted up to 10% over capacity, "
     "Meta's Llama 3 405B at 8K tokens among them), so a default margin would refuse runs "
     "that worked; give one for allocator spikes and workspaces the model does not count"},
    {O_TOP, "--top", 0, K_INT, C(PPL_CMD_PLAN) | C(PPL_CMD_REPORT) | CMDS_INFER, 0, F(top), "K", 1,
     PPL_TOP_MAX, NULL,
     "how many ranked configurations to print (default 10, at most 5000: a plan's JSON of "
     "5000 results stays within what its readers take)"},
    {O_OBJECTIVE, "--objective", 0, K_ENUM, CMDS_SEARCH, 0, F(objective), "OBJ", 0, 0,
     ppl_objective_names, "rank by time (default), cost or memory"},
    {O_WITHIN, "--within", 0, K_REAL, CMDS_SEARCH, 0, NOFIELD, "F|P%", 0, 0, NULL,
     "with --objective cost or memory: keep only plans whose step is within this share of "
     "the fastest plan's (default 10%; 1 or 100% allows twice its time)"},
    {O_ALLOW_TP, "--allow-tp-across-servers", 0, K_FLAG, CMDS_SEARCH, 0, F(allow_tp_across_servers),
     NULL, 0, 0, NULL, "let tensor parallelism leave the NVLink domain"},
    {O_PRICE, "--gpu-hour-price", 0, K_REAL, CMDS_SEARCH | C(PPL_CMD_REPORT), 0, NOFIELD, "USD", 0,
     0, NULL, "price of one GPU-hour, for cost figures"},
    {O_SWEEP, "--sweep", 0, K_SWEEP, C(PPL_CMD_WHATIF), C(PPL_CMD_WHATIF), NOFIELD, "KEY=V1,V2,...",
     0, 0, NULL,
     "a swept key and its values (at most 256, in 8,191 characters: longer is refused); repeat for "
     "a grid of at most 10,000 points"},
    {O_TOKENS, "--tokens", 0, K_COUNT, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), C(PPL_CMD_SIZE),
     NOFIELD, "N", 0, 0, NULL, "training tokens, e.g. 450e9 or 15.6T"},
    {O_DAYS, "--days", 0, K_REAL, C(PPL_CMD_SIZE), C(PPL_CMD_SIZE), NOFIELD, "D", 0, 0, NULL,
     "days allowed for training"},
    {O_MTBF, "--mtbf-gpu-hours", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "H", 0,
     0, NULL,
     "GPU-hours between job-interrupting failures over all the job's GPUs (default 50677: "
     "Llama 3 paper Table 5, 419 unexpected interruptions in 54 days on 16384 H100, "
     "54 x 24 h / 419 = 3.09 h x 16384)"},
    {O_CKPT_BW, "--checkpoint-bandwidth", 0, K_BANDWIDTH, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0,
     NOFIELD, "BW", 0, 0, NULL,
     "aggregate checkpoint write and read bandwidth to storage (default 2TB/s: Llama 3 "
     "paper 3.3.1, Tectonic's sustained throughput)"},
    {O_RESTART, "--restart-time", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "T",
     0, 0, NULL,
     "time to restart after a failure before reloading the checkpoint, e.g. 600 (seconds), "
     "10min (default 10min: an assumption for rescheduling, process start, NCCL init)"},
    {O_SPARES, "--spares", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "N|P%", 0, 0,
     NULL,
     "hot spare GPUs held beside the job, a count or a share of its GPUs (e.g. 64 or 1%), "
     "rounded up to whole servers; they shorten a hardware failure's restart and count in "
     "the GPU-hours"},
    {O_SPARE_RESTART, "--spare-restart-time", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0,
     NOFIELD, "T", 0, 0, NULL,
     "restart when a hot spare replaces the failed server (default 2min: an assumption, a "
     "warm standby skips reallocation)"},
    {O_REPAIR, "--repair-time", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "T", 0,
     0, NULL,
     "time a failed server is out before it can serve as a spare again (default 48h: an "
     "assumption)"},
    {O_FIT_ONLY, "--fit-only", 0, K_FLAG, C(PPL_CMD_SIZE), 0, F(fit_only), NULL, 0, 0, NULL,
     "the fewest GPUs that hold one replica at all"},
    {O_CSV, "--csv", 0, K_FLAG, C(PPL_CMD_WHATIF), 0, F(csv), NULL, 0, 0, NULL,
     "print CSV instead of a table"},
    {O_REPORT, "--report", 0, K_STRING, C(PPL_CMD_PLAN), 0, F(report_path), "FILE.html", 0, 0, NULL,
     "also write the plan as one HTML page with charts (as 'parplan report')"},
    {O_PLOT, "--plot", 0, K_STRING, C(PPL_CMD_WHATIF), 0, F(plot_path), "FILE.svg", 0, 0, NULL,
     "also draw the sweep as SVG charts on a numeric x axis (log2 for gpus, "
     "global_batch, seq_len): time to train (with --tokens), tokens/s, MFU, step, memory"},
    {O_SHARD, "--shard", 0, K_STRING, C(PPL_CMD_WHATIF), 0, F(shard), "K/N", 0, 0, NULL,
     "search only shard K of N of the sweep's points (dealt out in turn) and write them as "
     "JSON Lines for --merge, e.g. --shard 2/4 on the second of four machines"},
    {O_MERGE, "--merge", 0, K_STRING, C(PPL_CMD_WHATIF), 0, F(merge_path), "FILE", 0, 0, NULL,
     "read the JSON Lines every --shard wrote (concatenated; - for stdin) instead of "
     "searching, and print the table, CSV, JSON or plot one run gives; the other options as "
     "the shards had them"},
    {O_OP, "--op", 0, K_ENUM, C(PPL_CMD_COLLECTIVE), 0, F(op), "OP", 0, 0, ppl_collective_op_names,
     "allreduce, allgather, reducescatter, alltoall or sendrecv"},
    {O_ALGO, "--algo", 0, K_ENUM, C(PPL_CMD_COLLECTIVE), 0, F(algo), "A", 0, 0, ppl_algo_names,
     "auto (default), ring, tree, hierarchical, nvls (all-reduce in the NVSwitches), sharp "
     "(all-reduce in the fabric's switches), direct or pxn (all-to-all)"},
    {O_SERVERS, "--servers", 0, K_INT, C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE), F(servers), "S", 1, MAX_SERVERS_ARG,
     NULL, "servers taking part / in the cluster"},
    {O_GPS, "--gpus-per-server", 0, K_INT, C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_TOPOLOGY_GENERATE), F(gpus_per_server), "G", 1, 1024, NULL,
     "GPUs per server (collective: taking part, default all)"},
    {O_SIZES, "--sizes", 0, K_SIZES, C(PPL_CMD_COLLECTIVE), 0, NOFIELD, "SIZE|LO:HI", 0, 0, NULL,
     "message size, or a range doubling from LO to HI (e.g. 1MiB:8GiB)"},
    {O_GPU, "--gpu", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), C(PPL_CMD_TOPOLOGY_GENERATE),
     F(gpu_name), "NAME", 0, 0, NULL,
     "GPU kind: A100, H100, H800, H200, GH200, B200, GB200, B300, GB300, MI300X, MI325X, MI355X"},
    {O_RAILS, "--rails", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(rails), "R", 1, 1024, NULL,
     "NICs (rails) per server; default one per GPU"},
    {O_NIC_BW, "--nic-bandwidth", 0, K_BANDWIDTH, C(PPL_CMD_TOPOLOGY_GENERATE), 0, NOFIELD, "BW", 0,
     0, NULL,
     "per NIC, e.g. 400Gb/s; default the GPU platform's NIC (400 Gb/s on H100, 800 Gb/s on "
     "B300, GB300), its bandwidth per GPU shared over the rails"},
    {O_LEAF_SERVERS, "--leaf-servers", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_TOPOLOGY_GENERATE), F(leaf_servers), "K", 1, MAX_SERVERS_ARG, NULL,
     "servers under one leaf group"},
    {O_TIERS, "--tiers", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(tiers), "N|S1,S2,..", 0, 0,
     NULL, "number of switch tiers, or servers per group of each tier"},
    {O_OVERSUB, "--oversubscription", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0,
     F(oversubscription), "X|X1,X2,..", 0, 0, NULL,
     "down:up at each tier's uplinks (one value for all, or one per tier)"},
    {O_NVLINK_DOMAIN, "--nvlink-domain", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), 0,
     F(nvlink_domain), "D", 1, 1LL << 20, NULL,
     "GPUs per NVLink domain (default: GPUs per server)"},
    {O_RAIL_ONLY, "--rail-only", 0, K_OPTBOOL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(rail_only),
     "[=yes|no]", 0, 0, NULL, "no switch joins different rails"},
    {O_NVLS, "--nvls", 0, K_OPTBOOL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(nvls), "[=yes|no]", 0, 0,
     NULL, "the NVSwitches reduce in the switch (NVLink SHARP; H100 and later)"},
    {O_SHARP, "--sharp", 0, K_OPTBOOL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(sharp), "[=yes|no]", 0, 0,
     NULL, "the InfiniBand switches reduce in the network (SHARP)"},
    {O_GPU_MEMORY, "--gpu-memory", 0, K_REAL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, NOFIELD, "SIZE", 0,
     0, NULL, "GPU memory instead of the kind's, e.g. 96GiB"},
    {O_NVLINK_BW, "--nvlink-bandwidth", 0, K_REAL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, NOFIELD, "BW",
     0, 0, NULL, "scale-up bandwidth per GPU per direction instead of the kind's, e.g. 450GB/s"},
    {O_TRANSPORT, "--transport", 0, K_ENUM, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(transport), "T", 0,
     0, ppl_transport_names, "infiniband (default) or rocev2"},
    {O_LOSS, "--loss-rate", 0, K_REAL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, NOFIELD, "P", 0, 0, NULL,
     "packet loss rate of the fabric, 0 (default) to below 1"},
    {O_RADIX, "--switch-radix", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(switch_radix), "R", 4,
     4096, NULL, "ports per switch (default 64)"},
    {O_NAME, "--name", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(name), "NAME", 0, 0, NULL,
     "name written into the topology"},
    {O_RUNS, "--runs", 0, K_STRING, C(PPL_CMD_VALIDATE), C(PPL_CMD_VALIDATE), F(runs), "FILE", 0, 0,
     NULL, "measured runs (JSON array, SPEC format)"},
    {O_CONSTANTS, "--constants", 0, K_STRING, CMDS_CONFIG | C(PPL_CMD_VALIDATE) | C(PPL_CMD_RL), 0,
     F(constants_path), "FILE", 0, 0, NULL,
     "fitted constants to cost with (what validate --fit --json writes); default the "
     "committed ones"},
    {O_CV, "--cv", 0, K_INT, C(PPL_CMD_VALIDATE), 0, F(cv_folds), "K|family", 2, 1000, NULL,
     "cross-validation: K folds (run i in fold i mod K), or one fold per source family "
     "(leave one family out); fit on the other folds, predict each run held out"},
    {O_FIT, "--fit", 0, K_FLAG, C(PPL_CMD_VALIDATE), 0, F(fit), NULL, 0, 0, NULL,
     "fit the efficiency constants to the runs and print them"},
    {O_TIMING, "--timing", 0, K_FLAG, C(PPL_CMD_PLAN) | C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0,
     F(timing), NULL, 0, 0, NULL,
     "report the search's wall time in the table and in --json (else null there); output "
     "then varies run to run"},
    {O_CONSERVATIVE, "--conservative", 0, K_FLAG, CMDS_CONFIG, 0, F(conservative), NULL, 0, 0, NULL,
     "cost as exposed the overlaps no calibration run measures (the expert all-to-all "
     "hidden under another microbatch: --ep-overlap, DualPipe's F&B) or Megatron-LM warns "
     "about (tensor parallelism beside Megatron-FSDP before Blackwell); results that count on "
     "one say so in overlap_assumed"},
    {O_JSON, "--json", 0, K_FLAG, CMDS_DATA & ~C(PPL_CMD_REPORT), 0, F(json), NULL, 0, 0, NULL,
     "write JSON instead of a table"},
    {O_OUTPUT, "--output", 'o', K_STRING, CMDS_ALL, 0, F(output_path), "FILE", 0, 0, NULL,
     "write the output to FILE (atomically) instead of stdout"},
    {O_HELP, "--help", 'h', K_FLAG, CMDS_ALL, 0, F(help), NULL, 0, 0, NULL, "show this help"},
    {O_INPUT_LEN, "--input-len", 0, K_INT, CMDS_INFER, CMDS_INFER, F(input_len), "TOKENS", 1,
     PPL_MAX_SEQ_LEN, NULL, "tokens of a request's prompt"},
    {O_OUTPUT_LEN, "--output-len", 0, K_INT, CMDS_INFER, CMDS_INFER, F(output_len), "TOKENS", 1,
     PPL_MAX_SEQ_LEN, NULL, "tokens of a request's response (rl: the mean)"},
    {O_TPOT, "--tpot", 0, K_REAL, C(PPL_CMD_SERVE), 0, NOFIELD, "T", 0, 0, NULL,
     "the longest time per output token a layout may take, e.g. 50ms"},
    {O_TTFT, "--ttft", 0, K_REAL, C(PPL_CMD_SERVE), 0, NOFIELD, "T", 0, 0, NULL,
     "the longest time to the first token (the prompt's prefill, unqueued), e.g. 2s"},
    {O_PROMPTS, "--prompts", 0, K_INT, C(PPL_CMD_RL), C(PPL_CMD_RL), F(prompts), "N", 1, 1LL << 24,
     NULL, "prompts a step"},
    {O_SAMPLES, "--samples", 0, K_INT, C(PPL_CMD_RL), 0, F(samples), "K", 1, 1024, NULL,
     "responses a prompt (GRPO's group size; default 1)"},
    {O_OUTPUT_MAX, "--output-max", 0, K_INT, C(PPL_CMD_RL), 0, F(output_max), "TOKENS", 1,
     PPL_MAX_SEQ_LEN, NULL,
     "the longest response a step waits for (default --output-len: no tail)"},
    {O_UPDATES, "--updates", 0, K_INT, C(PPL_CMD_RL), 0, F(updates), "N", 1, 1024, NULL,
     "optimizer steps a rollout feeds (PPO mini-batches; default 1); divides prompts x "
     "samples"},
    {O_FORWARD_PASSES, "--forward-passes", 0, K_INT, C(PPL_CMD_RL), 0, F(forward_passes), "N", 0,
     16, NULL,
     "forward-only passes over the batch before the update: old-policy and reference "
     "log-probs (default 2)"},
    {O_REWARD_TIME, "--reward-time", 0, K_REAL, C(PPL_CMD_RL), 0, NOFIELD, "T", 0, 0, NULL,
     "scoring a step's responses, off the GPUs, e.g. 5s (default 0: a rule)"},
    {O_OFF_POLICY, "--off-policy", 0, K_OPTBOOL, C(PPL_CMD_RL), 0, F(off_policy), "[=yes|no]", 0, 0,
     NULL,
     "weigh one-step off-policy pipelines (the next rollout beside this update; default yes); "
     "=no keeps every step on-policy"},
    {O_PLACEMENT, "--placement", 0, K_ENUM, C(PPL_CMD_RL), 0, F(placement), "P", 0, 0,
     ppl_rl_placement_names,
     "colocated (every GPU rolls out, then trains) or disaggregated (the GPUs split); default "
     "both, weighed"},
    {O_ENGINE_TP, "--engine-tp", 0, K_INT, C(PPL_CMD_RL), 0, F(engine_tp), "N", 1, 1024, NULL,
     "the inference engine's tensor-parallel size (default: the best within one server); a "
     "multiple of a server's GPUs runs it across servers, the all-reduces on the network"},
    {O_ROLLOUT_GPUS, "--rollout-gpus", 0, K_INT, C(PPL_CMD_RL), 0, F(rollout_gpus), "N", 1,
     MAX_GPUS, NULL,
     "disaggregated: the GPUs the engine takes, the rest training (default: k/16 of the "
     "servers, k = 1..15, weighed)"},
};
const size_t ppl_cli_noptions = sizeof ppl_cli_options / sizeof ppl_cli_options[0];

const command_def ppl_cli_commands[] = {
    {PPL_CMD_PLAN, "plan", NULL, "search the configuration space and rank the best plans"},
    {PPL_CMD_ESTIMATE, "estimate", NULL, "predict one configuration's step time in detail"},
    {PPL_CMD_MEMORY, "memory", NULL, "per-GPU memory of one configuration, broken down"},
    {PPL_CMD_WHATIF, "whatif", NULL, "best plan at every point of a sweep (GPUs, NICs, ...)"},
    {PPL_CMD_SIZE, "size", NULL, "fewest GPUs that train N tokens within D days"},
    {PPL_CMD_COLLECTIVE, "collective", NULL, "predict one collective, nccl-tests style"},
    {PPL_CMD_TOPOLOGY_SHOW, "topology", "show", "describe a topology: tiers, bandwidths, switches"},
    {PPL_CMD_TOPOLOGY_GENERATE, "topology", "generate",
     "write a topology for a parametric cluster"},
    {PPL_CMD_TOPOLOGIES, "topologies", NULL, "list the topology catalogue"},
    {PPL_CMD_MODELS, "models", NULL, "list the model catalogue with derived figures"},
    {PPL_CMD_MODEL_SHOW, "model", "show", "show a model's parameters and FLOPs per token"},
    {PPL_CMD_VALIDATE, "validate", NULL, "predict measured runs and report the error"},
    {PPL_CMD_COMPARE, "compare", NULL, "plans' results side by side, the differences marked"},
    {PPL_CMD_REPORT, "report", NULL, "a plan as one HTML page: step, memory, pipeline, traffic"},
    {PPL_CMD_SERVE, "serve", NULL,
     "an inference engine's layout: tp, batch, replicas (first piece)"},
    {PPL_CMD_RL, "rl", NULL,
     "an RL post-training step: rollout, update, weight sync; colocated or split"},
};
const size_t ppl_cli_ncommands = sizeof ppl_cli_commands / sizeof ppl_cli_commands[0];
