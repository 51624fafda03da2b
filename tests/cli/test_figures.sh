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

finish
