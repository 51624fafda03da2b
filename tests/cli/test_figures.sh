#!/bin/sh
# test_figures.sh PARPLAN SOURCE_ROOT - only finite, physical figures in and out;
# no silent assumptions; validate checks its runs (issue 12, items 3, 5 and 7).
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
d="$tmp/fig"
mkdir -p "$d"
topo="$ROOT/topologies/dgx-h100-superpod.json"

# ---- item 3: a loaded figure outside its physical range is exit 3, naming the key
sed 's|"nic_bandwidth": "400 Gb/s"|"nic_bandwidth": 1e-300|' "$topo" >"$d/tiny-nic.json"
run "$P" estimate --model gpt3-175b --topology "$d/tiny-nic.json" --tp 8 --pp 8 --mbs 1 --global-batch 1536
check "a 1e-300 B/s NIC: exit 3 naming rails.nic_bandwidth, no -nan" '[ $rc -eq 3 ] && [ -z "$out" ] && has "$err" "rails.nic_bandwidth: expected at least" && ! has "$err" nan'
sed 's|"bf16": "989 TFLOP/s"|"bf16": 1e-300|' "$topo" >"$d/tiny-flops.json"
run "$P" estimate --model gpt3-175b --topology "$d/tiny-flops.json" --tp 8 --pp 8 --mbs 1 --global-batch 1536 --json
check "a 1e-300 FLOP/s GPU: exit 3 naming gpu.flops.bf16" '[ $rc -eq 3 ] && [ -z "$out" ] && has "$err" "gpu.flops.bf16"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep rails.nic_bandwidth=1e-300,400Gb/s
check "whatif with a 1e-300 B/s sweep point: exit 2 naming the point, nothing ranked" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "rails.nic_bandwidth: expected at least"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep rails.nic_bandwidth=800
check "whatif with a unit-less bandwidth: exit 2 with the hint to give a unit" '[ $rc -eq 2 ] && has "$err" "give a unit"'
run "$P" topology generate --servers 16 --gpus-per-server 8 --gpu H100 --rails 8 --nic-bandwidth 400 --leaf-servers 16
check "--nic-bandwidth 400 (no unit): exit 2 with a hint" '[ $rc -eq 2 ] && has "$err" "no unit" && has "$err" "400 Gb/s"'
run "$P" topology generate --servers 16 --gpus-per-server 8 --gpu H100 --rails 8 --nic-bandwidth 1e-300Gb/s --leaf-servers 16
check "--nic-bandwidth 1e-300Gb/s: exit 2, names the floor" '[ $rc -eq 2 ] && has "$err" "--nic-bandwidth: expected at least"'
run "$P" size --model gpt3-175b --topology dgx-h100-superpod --tokens 1e300 --days 10
check "--tokens 1e300: exit 2" '[ $rc -eq 2 ] && has "$err" "--tokens: expected at most"'

# every SPEC key of a result is present and a number
run "$P" estimate --model gpt3-175b --topology dgx-h100-superpod --tp 8 --pp 8 --mbs 1 --zero 1 --recompute full --global-batch 1536 --json
check "estimate --json: every SPEC figure present and finite" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys, math
r = json.load(sys.stdin)
keys = [\"step_time_s\", \"tokens_per_s\", \"model_tflops_per_gpu\", \"hardware_tflops_per_gpu\", \"mfu\"]
vals = [r[k] for k in keys] + [r[\"time\"][k] for k in (\"compute\", \"bubble\", \"tp_comm\", \"cp_comm\", \"pp_comm\", \"dp_comm\", \"ep_comm\", \"optimizer\", \"exposed_comm\")]
vals += [r[\"memory\"][k] for k in (\"weights\", \"gradients\", \"optimizer\", \"activations\", \"other\", \"total\", \"capacity\")]
vals += [r[\"traffic\"][k] for k in (\"nvlink\", \"rail\", \"spine\")]
assert all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in vals), vals
"'

# ---- item 5: no silent assumptions
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67
check "size without --global-batch: the assumed batch on stderr and in the answer" '[ $rc -eq 0 ] && has "$err" "assuming 512 sequences of 8192 tokens" && has "$out" "assumed global batch of 512"'
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --json
check "size --json without --global-batch: global_batch and global_batch_assumed" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"global_batch\"] == 512 and d[\"global_batch_assumed\"] is True, d
"'
# Llama 3 405B: 16,384 H100 at Meta's 2048 x 8192-token batch (Dubey et al. 2024, Table 4)
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --global-batch 2048 --json
check "size at Meta's batch: 16384 GPUs, batch not assumed" '[ $rc -eq 0 ] && [ -z "$err" ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"gpus\"] == 16384 and d[\"global_batch\"] == 2048 and d[\"global_batch_assumed\"] is False, d
"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --sweep gpus=1024
check "whatif without --global-batch: the batch column says assumed, stderr says it" '[ $rc -eq 0 ] && has "$out" "batch (assumed)" && has "$out" 2048 && has "$err" "assuming 2048 sequences"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --sweep gpus=1024 --json
check "whatif --json: global_batch and global_batch_assumed" '[ $rc -eq 0 ] && has "$out" "\"global_batch_assumed\": true" && has "$out" "\"global_batch\": 2048"'
# gpt3-175b at a batch of 1536: 1000 GPUs offer 960 that work (8 x 20 x 6)
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep gpus=1000
check "whatif gpus=1000: some count up to 1000 fits, not 'nothing fits'" '[ $rc -eq 0 ] && ! has "$out" "nothing fits" && [ "$(printf "%s\n" "$out" | awk "NR == 2 { print \$2 }")" -le 1000 ]'

# ---- item 7: validate checks a run's stage_layers
printf '%s\n' '[{"id": "r1", "model": "llama3-8b", "topology": "dgx-h100-superpod", "config": {"gpus": 64, "tp": 8, "pp": 4, "dp": 2, "mbs": 1, "global_batch": 512, "stage_layers": [10, 6, 6, 10]}, "measured": {"step_time_s": 1.0}}]' >"$d/split.json"
run "$P" validate --runs "$d/split.json" --json
check "validate predicts the stage_layers a run states" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"results\"][0][\"predicted\"][\"config\"][\"stage_layers\"] == [10, 6, 6, 10], d
"'
sed 's/\[10, 6, 6, 10\]/[10, 6, 6, -10]/' "$d/split.json" >"$d/split-bad.json"
run "$P" validate --runs "$d/split-bad.json"
check "validate with a negative stage: exit 3 naming the run and key" '[ $rc -eq 3 ] && has "$err" "stage_layers[3]" && has "$err" "run \"r1\""'

finish
