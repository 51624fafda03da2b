#!/bin/sh
# test_cli.sh PARPLAN SOURCE_ROOT - the parplan executable's behaviour, as TAP.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"

run "$P" --version
check "--version names the libraries" '[ $rc -eq 0 ] && has "$out" "parplan 0.1.0" && has "$out" jansson && has "$out" GLPK'

run "$P" --help
check "--help lists the commands and exit codes" '[ $rc -eq 0 ] && has "$out" "topology generate" && has "$out" validate && has "$out" "exit status:" && [ -z "$err" ]'

for cmd in plan estimate memory whatif size collective "topology show" "topology generate" \
    topologies models "model show" validate compare report; do
    # shellcheck disable=SC2086
    run "$P" $cmd --help
    check "$cmd --help: usage, options, examples, exit codes" '[ $rc -eq 0 ] && has "$out" "usage: parplan $cmd" && has "$out" "options:" && has "$out" "examples:" && has "$out" "exit status:" && [ -z "$err" ]'
done

# every example the help shows runs as written (exit 0), from a scratch folder that
# sees the source tree's catalogues and test data; -o files land there
mkdir -p "$tmp/ex" && ln -s "$ROOT/tests" "$tmp/ex/tests" && ln -s "$ROOT/topologies" "$tmp/ex/topologies"
for cmd in "" plan estimate memory whatif size collective "topology show" "topology generate" \
    topologies models "model show" validate compare report; do
    # shellcheck disable=SC2086
    "$P" $cmd --help | awk '/^examples:/ { f = 1; next } /^$/ { f = 0 } f' | sed 's/^  //' |
        awk '{ l = $0; if (buf != "") sub(/^ +/, "", l)
               if (sub(/ *\\$/, "", l)) { buf = buf l " "; next }
               print buf l; buf = "" }'
done >"$tmp/examples.txt"
check "the help shows at least 20 examples" '[ "$(grep -c "^parplan " "$tmp/examples.txt")" -ge 20 ]'
while IFS= read -r example <&3; do
    eval "set -- $example"
    shift # "parplan"
    case $example in
    *65536* | *--fit* | *--cv*) cd "$tmp/ex" && run_big "$P" "$@" ;;
    *) cd "$tmp/ex" && run "$P" "$@" ;;
    esac
    cd "$ROOT" || exit 1
    # (stderr may carry progress, as validate --fit's rounds; never a warning)
    check "help example runs: $example" '[ $rc -eq 0 ] && ! has "$err" "warning"'
done 3<"$tmp/examples.txt"

run "$P"
check "no command: the overview on stderr (a usage error), nothing on stdout, exit 2" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "usage: parplan"'
# typing slips are usage errors, not values: an empty or repeated sweep value
# (dropped or run twice), a hexadecimal number (strtod's 0x10 is 16), an empty
# output file name (exit 4 with no name)
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 64 --sweep 'gpus=64,,128'
check "whatif --sweep gpus=64,,128: exit 2, one line, the empty value" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--sweep: gpus: value 2 is empty"'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 64 --sweep 'gpus=64,64'
check "whatif --sweep gpus=64,64: exit 2, one line, the value given twice" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "'"'"'64'"'"' is given twice"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 8 --global-batch 8 --objective cost --gpu-hour-price 2 --within 0x10
check "plan --within 0x10: exit 2 naming --within" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--within: "'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 8 --global-batch 8 --memory-headroom 0x1p-4
check "plan --memory-headroom 0x1p-4: exit 2 naming it" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--memory-headroom: "'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 8 --global-batch 8 -o ''
check "plan -o '': exit 2, one line naming -o" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "-o: expected a file name"'
run "$P" plann
check "unknown command: exit 2, one line" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: unknown command"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 8 --tpp 8
check "unknown option: exit 2, names it" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--tpp"'
run "$P" estimate --model gpt3-175b --topology dgx-h100-superpod --global-batch 8 --pp 8 --mbs 1
check "missing required flag: exit 2, names it" '[ $rc -eq 2 ] && has "$err" "--tp: required"'
run "$P" estimate --model gpt3-175b --topology dgx-h100-superpod --global-batch 8 --tp 8 --pp 8 --mbs 0
check "bad value: exit 2, names the flag" '[ $rc -eq 2 ] && has "$err" "--mbs: expected a positive integer, found 0"'
run "$P" estimate --model mixtral-8x7b --topology dgx-h100-superpod --gpus 16 --tp 4 --pp 1 --cp 2 --ep 8 --etp 4 --mbs 1 --global-batch 16 --sequence-parallel
check "an expert fold that does not divide the stage: exit 2, names --etp" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --etp: etp*ep = 4*8 does not divide"'
# llama3-70b at tp 8 leaves each rank one key/value head: no all-to-all over 2 CP ranks
run "$P" estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 64 --tp 8 --pp 1 --cp 2 --mbs 1 --cp-comm a2a
check "a2a that cannot split the heads: exit 2, names --cp-comm" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "--cp-comm: a2a splits the attention heads"'
run "$P" estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 64 --tp 8 --pp 1 --cp 2 --mbs 1 --cp-comm ring
check "unknown CP algorithm: exit 2, lists the four" '[ $rc -eq 2 ] && has "$err" "--cp-comm" && has "$err" "a2a+p2p"'
run "$P" estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 64 --tp 2 --pp 8 --cp 4 --mbs 1 --zero 1 --flash-attention --sequence-parallel --cp-comm a2a
check "a2a estimate names its algorithm" '[ $rc -eq 0 ] && has "$out" "cp 4 (a2a)"'

# ---- the GPU catalogue and its precisions (issue 19 items 1-2)
for g in B300 GB300 MI300X MI325X MI355X; do
    gps=8
    [ "$g" = GB300 ] && gps=4
    run "$P" topology generate --gpu "$g" --servers 18 --gpus-per-server $gps --rails $gps --nic-bandwidth 400Gb/s --leaf-servers 18
    check "topology generate --gpu $g: a topology naming it" '[ $rc -eq 0 ] && has "$out" "\"gpu\": \"$g\""'
done
# the fp8 pins against each other, before any search (issue 19 item 2)
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --fp8-recipe tensorwise
check "plan --fp8-recipe without --precision fp8: exit 2 naming it, not 'nothing to plan'" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --fp8-recipe: tensorwise scaling is an fp8 recipe"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --precision fp8 --bf16-layers 1
check "plan --bf16-layers under delayed scaling: exit 2, pin a recipe" '[ $rc -eq 2 ] && has "$err" "parplan: --bf16-layers: Megatron-Core refuses" && has "$err" "--fp8-recipe tensorwise"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --cuda-graphs moe_router
check "plan --cuda-graphs moe_router on a dense model: exit 2 naming it" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --cuda-graphs: moe_router captures MoE routers, but the model has no experts"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --cuda-graphs attn --recompute full
check "plan --cuda-graphs attn with full recomputation: exit 2, Megatron-Core's rule" '[ $rc -eq 2 ] && has "$err" "parplan: --cuda-graphs: attn with full recomputation"'
run "$P" plan --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 16 --global-batch 512 --cuda-graphs attn+moe_router --top 2 --json
check "plan --cuda-graphs: every result carries the scope, Megatron-LM's flags and Bridge's fields for it" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
for r in d[\"results\"]:
    assert r[\"config\"][\"cuda_graphs\"] == \"attn+moe_router\", r[\"config\"]
    a = r[\"launch\"][\"megatron_args\"]
    i = a.index(\"--cuda-graph-impl\")
    assert a[i:i + 6] == [\"--cuda-graph-impl\", \"transformer_engine\", \"--cuda-graph-scope\", \"attn\", \"moe_router\", \"moe_preprocess\"], a[i:i + 6]
    assert r[\"launch\"][\"megatron_lm\"] >= \"core_v0.16\"
    s = dict(r[\"launch\"][\"megatron_bridge\"][\"set\"])
    assert s[\"model.cuda_graph_impl\"] == \"transformer_engine\" and s[\"model.cuda_graph_modules\"] == [\"attn\", \"moe_router\", \"moe_preprocess\"], s
    assert r[\"launch\"][\"deepspeed\"] is None
"'
run "$P" plan --model llama3-8b --topology mixed-h100-b200 --global-batch 256 --precision fp8 --fp8-recipe tensorwise --bf16-layers 1
check "plan --bf16-layers on a mixed cluster: exit 2, not yet across pools" '[ $rc -eq 2 ] && has "$err" "parplan: --bf16-layers: a pipeline across pools"'
# without --rails and --nic-bandwidth: a NIC per GPU, the platform's
run "$P" topology generate --gpu GB300 --servers 18 --gpus-per-server 4 --leaf-servers 18
check "topology generate --gpu GB300 without NIC flags: 4 rails of 800 Gb/s (ConnectX-8)" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"rails\"]
assert r[\"count\"] == 4 and r[\"nic_bandwidth\"] == \"800 Gb/s\", r"'
# AMD: a point-to-point mesh, its bandwidth the sum of 7 links of 64 GB/s
run "$P" topology generate --gpu MI300X --servers 2 --gpus-per-server 8 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 2 -o "$tmp/mi300x.json"
check "topology generate --gpu MI300X writes a mesh of 448 GB/s" '[ $rc -eq 0 ] && has "$(cat "$tmp/mi300x.json")" "\"fabric\": \"mesh\"" && has "$(cat "$tmp/mi300x.json")" "\"bandwidth\": \"448 GB/s\""'
"$P" topology generate --gpu MI355X --servers 8 --gpus-per-server 8 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 8 -o "$tmp/mi355x.json" 2>/dev/null
est70() { run "$P" estimate --model llama3-70b --gpus 64 --tp 4 --pp 4 --mbs 1 --global-batch 128 --flash-attention --sequence-parallel "$@"; }
est70 --topology dgx-h100-superpod --precision nvfp4
check "nvfp4 on H100: exit 2, one line naming --precision" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --precision: nvfp4 is not supported by H100-SXM5-80GB"'
est70 --topology dgx-h100-superpod --precision mxfp8
check "mxfp8 on H100: exit 2, names --precision" '[ $rc -eq 2 ] && has "$err" "--precision: mxfp8 is not supported"'
est70 --topology "$tmp/mi355x.json" --precision nvfp4
check "nvfp4 on MI355X: refused, not mapped to MXFP4" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--precision: nvfp4 is not supported by MI355X-OAM-288GB: it has MXFP4, not NVFP4"'
est70 --topology "$tmp/mi355x.json" --precision mxfp8
check "mxfp8 on MI355X: costed, the borrowed efficiencies said" '[ $rc -eq 0 ] && has "$out" "assumed     MI355X-OAM-288GB: no measured run" && has "$out" "mxfp8 GEMMs assumed at H100'"'"'s measured fp8 efficiency"'
est70 --topology gb200-nvl72 --precision fp8
fp8_step=$(printf '%s\n' "$out" | awk '/^step time/ { print $3 }')
est70 --topology gb200-nvl72 --precision nvfp4
nvfp4_step=$(printf '%s\n' "$out" | awk '/^step time/ { print $3 }')
check "nvfp4 on GB200: faster than fp8 (twice the GEMM peak), efficiency assumed from the Blackwell fp8 fit" '[ $rc -eq 0 ] && has "$out" "nvfp4 GEMMs assumed" && awk -v a="$nvfp4_step" -v b="$fp8_step" "BEGIN { exit !(a > 0 && a < b) }"'
est70 --topology gb200-nvl72 --precision nvfp4 --json
check "estimate --json carries efficiency_assumed where a part's kernels are partly assumed (GB200: FlashAttention-2's attention, HBM streaming share)" '[ $rc -eq 0 ] && has "$out" "\"efficiency_assumed\": \"B200-GB200-NVL72-186GB: GEMM efficiencies measured (16-bit, fp8, mxfp8); attention cuDNN'"'"'s measured share of peak (FlashAttention-2'"'"'s assumed" && has "$out" "HBM streaming share assumed B200'"'"'s measured 83%" && has "$out" "nvfp4 GEMMs assumed at the Blackwell kinds'"'"' measured fp8 efficiency"'
est70 --topology dgx-h100-superpod --precision fp8 --zero 1 --recompute selective --json
check "estimate --json: no efficiency_assumed on H100 (measured)" '[ $rc -eq 0 ] && ! has "$out" "efficiency_assumed"'

run "$P" models
check "models lists the catalogue" '[ $rc -eq 0 ] && has "$out" gpt3-175b && has "$out" megatron-1t && has "$out" mt-nlg-530b && has "$out" bloom-176b && has "$out" llama3-8b && has "$out" llama3-70b && has "$out" llama3-405b && has "$out" mixtral-8x7b'
run "$P" topologies
check "topologies lists the catalogue" '[ $rc -eq 0 ] && has "$out" dgx-a100-superpod && has "$out" dgx-h100-superpod && has "$out" meta-24k-roce && has "$out" "h100-64k " && has "$out" h100-64k-rail-only && has "$out" gb200-nvl72 && has "$out" gh200-nvl256'

# Narayanan et al. SC'21 Eq.2: 12Lh^2 + 13Lh + (V+s)h (derivations in tests/unit/test_model.c)
run "$P" model show gpt3-175b
check "gpt3-175b: Eq.2 count + the final LayerNorm (2h)" '[ $rc -eq 0 ] && has "$out" "174,615,846,912"'
run "$P" model show megatron-1t
check "megatron-1t: Eq.2 count (1008.0B) + the final LayerNorm" '[ $rc -eq 0 ] && has "$out" "1,008,038,758,400"'
run "$P" model show mt-nlg-530b
check "mt-nlg-530b: Eq.2 count (529.6B) + the final LayerNorm" '[ $rc -eq 0 ] && has "$out" "529,600,819,200"'
run "$P" model show llama3-405b
check "llama3-405b: 405.85B" '[ $rc -eq 0 ] && has "$out" "405,853,388,800" && has "$out" "405.85 B"'
run "$P" model show mixtral-8x7b
check "mixtral-8x7b: total and active" '[ $rc -eq 0 ] && has "$out" "46,702,792,704" && has "$out" "12,879,925,248"'

run "$P" model show gpt3-175b --json
printf '%s\n' "$out" >"$tmp/model.json"
check "model show --json is valid JSON with params" '[ $rc -eq 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"schema_version\"]==\"1.1\" and d[\"tool\"][\"name\"]==\"parplan\"; assert d[\"params\"]==174615846912 and d[\"active_params\"]==174615846912" "$tmp/model.json"'

run "$P" topology show dgx-h100-superpod
check "dgx-h100-superpod: 32 leaf and 16 spine switches (RA-11333-001)" '[ $rc -eq 0 ] && printf "%s\n" "$out" | grep -Eq "^leaf .* 32$" && printf "%s\n" "$out" | grep -Eq "^spine .* 16$" && has "$out" "switches   48"'
run "$P" topology show meta-24k-roce --json
printf '%s\n' "$out" >"$tmp/topo.json"
check "topology show --json: 1:7 above the pods" '[ $rc -eq 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); t=d[\"topology\"][\"tiers\"]; assert abs(t[2][\"gpu_bandwidth\"]-50e9/7)<1 and d[\"topology\"][\"gpus\"]==24576" "$tmp/topo.json"'
run "$P" topology show meta-24k-roce --json
check "output is byte-identical across runs" '[ "$out" = "$(cat "$tmp/topo.json")" ]'

(cd / && "$P" model show gpt3-175b >"$tmp/elsewhere" 2>&1)
rc=$?
out=$(cat "$tmp/elsewhere")
check "catalogue names work from any directory" '[ $rc -eq 0 ] && has "$out" "174,615,846,912"'
run "$P" model show "$ROOT/models/llama3-8b.json"
check "a path works where a name does" '[ $rc -eq 0 ] && has "$out" llama3-8b'
run "$P" model show gpt5
check "an unknown model name: exit 2, one line" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "neither a catalogue model nor a file"'

printf '{"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq_len": 16, "hiden": 3}\n' >"$tmp/warn.json"
run "$P" model show "$tmp/warn.json"
check "an unknown key warns and the command goes on" '[ $rc -eq 0 ] && has "$err" "warning:" && has "$err" "hiden: unknown key, ignored (did you mean '"'"'hidden'"'"'?)" && has "$out" "parameters"'

run "$P" model show gpt3-175b -o "$tmp/shown.txt"
check "-o writes the file and nothing to stdout" '[ $rc -eq 0 ] && [ -z "$out" ] && grep -q "174,615,846,912" "$tmp/shown.txt"'
run "$P" model show gpt3-175b -o "$tmp/no/such/dir/x.txt"
check "-o into a missing directory: exit 4, nothing written" '[ $rc -eq 4 ] && [ ! -e "$tmp/no" ] && has "$err" "cannot write"'
if [ -w /dev/full ]; then
    "$P" model show gpt3-175b >/dev/full 2>"$tmp/err"
    rc=$?
    err=$(cat "$tmp/err")
    check "a full stdout: exit 4" '[ $rc -eq 4 ] && has "$err" "cannot write to standard output"'
fi

# memory (derivations in tests/unit/test_memory.c)
run "$P" memory --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute selective --sequence-parallel --json
printf '%s\n' "$out" >"$tmp/mem.json"
check "memory --json: SPEC memory fields, every stage, fits" '[ $rc -eq 0 ] && python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); m=d[\"memory\"]
assert set(m) >= {\"weights\",\"gradients\",\"optimizer\",\"activations\",\"other\",\"total\",\"capacity\",\"fits\"}
assert m[\"fits\"] and m[\"worst_stage\"]==0 and len(d[\"stages\"])==8
assert abs(m[\"total\"]-sum(m[k] for k in (\"weights\",\"gradients\",\"optimizer\",\"activations\",\"other\")))<1
assert d[\"config\"][\"stage_layers\"]==[12]*8 and d[\"config\"][\"microbatches\"]==96" "$tmp/mem.json"'
run "$P" memory --model megatron-1t --topology dgx-a100-superpod --gpus 1 --tp 1 --pp 1 --mbs 1 --global-batch 1
check "memory: a 1T model on one GPU does not fit (exit 1, table printed)" '[ $rc -eq 1 ] && has "$out" "does not fit" && [ -z "$err" ]'
run "$P" memory --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --dp 8 --mbs 1 --global-batch 1536
check "memory: an impossible split is a usage error naming --dp" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "--dp: tp*pp*cp*dp"'
run "$P" memory --model llama3-405b --topology h100-64k --gpus 16384 --tp 8 --pp 16 --mbs 1 --global-batch 2048 --json
printf '%s\n' "$out" >"$tmp/mem405.json"
check "memory: 126 layers on 16 stages split 7, 8 x 14, 7" 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert d[\"config\"][\"stage_layers\"]==[7]+[8]*14+[7]" "$tmp/mem405.json"'

# estimate and validate
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute selective --sequence-parallel --json
printf '%s\n' "$out" >"$tmp/est.json"
check "estimate --json: SPEC result fields, consistent sums" '[ $rc -eq 0 ] && python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for k in (\"config\",\"step_time_s\",\"tokens_per_s\",\"model_tflops_per_gpu\",\"hardware_tflops_per_gpu\",\"mfu\",\"memory\",\"time\",\"traffic\",\"launch\"):
    assert k in d, k
t=d[\"time\"]
assert set(t) >= {\"compute\",\"bubble\",\"tp_comm\",\"cp_comm\",\"pp_comm\",\"dp_comm\",\"ep_comm\",\"optimizer\",\"exposed_comm\"}
s=t[\"compute\"]+t[\"bubble\"]+t[\"exposed_comm\"]+t[\"optimizer\"]+t[\"overhead\"]
assert abs(s-d[\"step_time_s\"]) < 1e-6*d[\"step_time_s\"], (s, d[\"step_time_s\"])
assert abs(d[\"tokens_per_s\"]*d[\"step_time_s\"]-1536*2048) < 1
a=d[\"launch\"][\"megatron_args\"]; assert \"--sequence-parallel\" in a and a[a.index(\"--tensor-model-parallel-size\")+1]==\"8\"
assert d[\"launch\"][\"deepspeed\"][\"gradient_accumulation_steps\"]==96" "$tmp/est.json"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536
check "estimate: names the bottleneck, exits 1 when it does not fit" '[ $rc -eq 1 ] && has "$out" "bottleneck:" && has "$out" "does not fit"'
run "$P" validate --runs "$ROOT/tests/data/calibration_runs.json" --json
printf '%s\n' "$out" >"$tmp/val.json"
# scored on their spans' centres (Megatron-LM's README runs leave vp unsaid: their
# centres are up to 21% slow), each tuned end within 20%
check "validate: calibration runs within 8% mean and 25% max, tuned ends within 20%" '[ $rc -eq 0 ] && python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); a=d[\"aggregate\"]
assert a[\"runs\"]==18 and a[\"mean_abs_error\"]<=0.08 and a[\"max_abs_error\"]<=0.25, a
r=d[\"results\"][0]; assert set(r)>={\"id\",\"predicted\",\"predicted_step_time_s\",\"span\",\"measured\",\"error\"}
tuned=[abs(r[\"predicted\"][\"step_time_s\"]/r[\"measured\"][\"step_time_s\"]-1) for r in d[\"results\"]]
assert max(tuned)<=0.20, max(tuned)" "$tmp/val.json"'
run "$P" validate --runs "$ROOT/tests/data/heldout_runs.json"
check "validate: held-out Narayanan runs within 8% each" '[ $rc -eq 0 ] && python3 -c "
import re,sys
errs=[abs(float(x)) for x in re.findall(r\"^narayanan\\S+ +\\S+ s +\\S+ s +([+-][0-9.]+)%\", sys.argv[1], re.M)]
assert len(errs)==5 and max(errs)<=8, errs" "$out"'
# a prediction with a balanced (uneven) stage split: the split outlives the search
# that chose it (a use after free under ASan and valgrind before)
run "$P" validate --runs "$ROOT/tests/data/balanced_split_run.json" --json
check "validate: a balanced split is reported whole" '[ $rc -eq 0 ] && python3 -c "
import json,sys
s=json.loads(sys.argv[1])[\"results\"][0][\"predicted\"][\"config\"][\"stage_layers\"]
assert len(s)==12 and sum(s)==70 and min(s)>=1 and max(s)-min(s)>0, s" "$out"'
run "$P" validate --runs "$ROOT/tests/bad/model-empty.json"
check "validate: a broken runs file is exit 3" '[ $rc -eq 3 ] && [ -z "$out" ]'

# plan
# pinned stage ends: either end binds, and the stage balancer keeps the pinned split
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 8 --global-batch 64 --pp 4 --last-stage-layers 31
check "plan: a --last-stage-layers no split can honour finds nothing (exit 1)" '[ $rc -eq 1 ] && [ -z "$out" ]'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 8 --global-batch 64 --pp 2 --first-stage-layers 28 --top 3 --json
check "plan: a pinned --first-stage-layers split is kept as pinned" '[ $rc -eq 0 ] && python3 -c "
import json,sys
r=json.loads(sys.argv[1])[\"results\"]
assert len(r)==3 and all(x[\"config\"][\"stage_layers\"]==[28,4] for x in r), r" "$out"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 5 --json
printf '%s\n' "$out" >"$tmp/plan.json"
check "plan --json: 5 ranked results, search figures, no wall time by default" '[ $rc -eq 0 ] && python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); r=d[\"results\"]
assert len(r)==5 and [x[\"rank\"] for x in r]==[1,2,3,4,5]
assert all(r[i][\"step_time_s\"]<=r[i+1][\"step_time_s\"] for i in range(4))
assert all(x[\"memory\"][\"fits\"] for x in r)
s=d[\"search\"]; assert s[\"evaluated\"]>0 and s[\"feasible\"]>0 and s[\"seconds\"] is None
assert sum(r[0][\"config\"][\"stage_layers\"])==96" "$tmp/plan.json"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 5 --json
check "plan: the same input gives byte-identical output" '[ "$out" = "$(cat "$tmp/plan.json")" ]'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 3
check "plan: a table with ranks, layout, step time and memory" '[ $rc -eq 0 ] && has "$out" "tp/pp/dp/cp/ep" && has "$out" "mem GiB" && [ "$(printf "%s\n" "$out" | grep -c "^[1-3] ")" -eq 3 ]'
run "$P" plan --model megatron-1t --topology dgx-h100-superpod --gpus 8 --global-batch 8
check "plan: nothing fits is exit 1 with the memory needed" '[ $rc -eq 1 ] && [ -z "$out" ] && has "$err" "nothing fits" && has "$err" "per GPU"'
# 1024 GPUs as tp 8 x pp 8 x cp 1 leave dp 16, which a batch of 7 sequences cannot feed
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 7 --tp 8 --pp 8 --cp 1
check "plan: an impossible batch says the rules emptied the space" '[ $rc -eq 1 ] && has "$err" "divisibility"'
scripts_dir="$ROOT/scripts"
run "$scripts_dir/launch-megatron" "$tmp/plan.json" --node-rank 1 --master-addr n0
check "launch-megatron: torchrun for a node of the plan, with the environment Megatron needs" '[ $rc -eq 0 ] && has "$out" "env CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 128 --node_rank 1 --master_addr n0" && has "$out" "--tensor-model-parallel-size" && has "$out" "--num-layers 96"'
run "$scripts_dir/launch-megatron" --help
check "launch-megatron --help: the usage on stdout, exit 0" '[ $rc -eq 0 ] && has "$out" "--node-rank R" && ! has "$out" "set -eu" && [ -z "$err" ]'
run "$scripts_dir/launch-megatron" "$tmp/plan.json" --rank 9
check "launch-megatron: a rank the plan lacks is refused" '[ $rc -ne 0 ] && has "$err" "the plan has 5 results"'

run "$P" estimate --model gpt3-175b --topology "$ROOT/tests/bad/topo-rtt-zero.json" --tp 8 --pp 8 --mbs 1 --global-batch 8
check "estimate: a broken topology file is exit 3 naming the key" '[ $rc -eq 3 ] && has "$err" "transport.rtt"'
run "$P" estimate --model gpt3-175b --topology dgx-h100-superpod --tp 8 --pp 8 --mbs 1 --global-batch 8 -o "$tmp/est.txt"
check "a command that fails writes no -o file" '[ $rc -ne 0 ] && [ ! -e "$tmp/est.txt" ]'
printf 'earlier plan\n' >"$tmp/keep.json"
run "$P" plan --model megatron-1t --topology dgx-a100-superpod --gpus 8 --global-batch 8 -o "$tmp/keep.json"
check "plan with nothing feasible leaves an existing -o file as it was" '[ $rc -eq 1 ] && [ "$(cat "$tmp/keep.json")" = "earlier plan" ] && has "$err" "nothing fits"'

# collective (derivations in tests/unit/test_comm.c)
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 1 --sizes 1MiB:1GiB
check "collective: nccl-tests table, 11 sizes doubling" '[ $rc -eq 0 ] && has "$out" "busbw" && [ "$(printf "%s\n" "$out" | grep -vc "^#")" -eq 11 ]'
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 8 --gpus-per-server 1 --sizes 8GiB --json
printf '%s\n' "$out" >"$tmp/coll.json"
check "collective --json: one 400G rail gives 46-49 GB/s busbw" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); r=d[\"results\"][0]
assert set(r)=={\"bytes\",\"time_s\",\"algbw\",\"busbw\",\"algorithm\"}
assert 46e9<=r[\"busbw\"]<=49e9 and abs(r[\"busbw\"]-r[\"algbw\"]*2*7/8)<1" "$tmp/coll.json"'
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 1 --algo tree
check "collective: tree inside one node is a usage error" '[ $rc -eq 2 ] && has "$err" "--algo: tree does not apply"'
run "$P" collective --topology dgx-h100-superpod --op alltoall --servers 999
check "collective: more servers than the topology has" '[ $rc -eq 2 ] && has "$err" "--servers: 999 exceeds"'

# topology generate, whatif, size (issue: what-if analysis and sizing)
run "$P" topology generate --servers 8192 --gpus-per-server 8 --gpu H100 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 32 -o "$tmp/g64k.json"
check "generate: 65,536 H100 in a radix-64 three-tier fat tree" '[ $rc -eq 0 ] && [ -z "$out" ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert [t[\"servers\"] for t in d[\"tiers\"]]==[32,128,8192]" "$tmp/g64k.json"'
run "$P" topology show "$tmp/g64k.json" --json
printf '%s\n' "$out" >"$tmp/g64k-show.json"
check "generate: 2,048 leaf, 2,048 spine and 1,024 core switches (5k^2/4 for k = 64)" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert [t[\"switches\"] for t in d[\"topology\"][\"tiers\"]]==[2048,2048,1024] and d[\"topology\"][\"gpus\"]==65536" "$tmp/g64k-show.json"'
run "$P" topology generate --servers 128 --gpus-per-server 8 --gpu H100 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 32 -o "$tmp/g4su.json"
run "$P" topology show "$tmp/g4su.json"
check "generate: a 4-SU DGX H100 SuperPOD has 32 leaf and 16 spine switches (RA-11333-001)" '[ $rc -eq 0 ] && printf "%s\n" "$out" | grep -Eq "^leaf .* 32$" && printf "%s\n" "$out" | grep -Eq "^spine .* 16$"'
run "$P" topology generate --servers 8192 --gpus-per-server 8 --gpu H100 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 32 --tiers 2
check "generate: too few tiers for the radix is a usage error" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "--tiers: 2 tiers of radix-64 switches hold at most 2048 servers"'
run "$P" topology generate --servers 16 --gpus-per-server 8 --gpu X900 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 16
check "generate: an unknown GPU kind names the known ones" '[ $rc -eq 2 ] && has "$err" "--gpu: unknown GPU kind" && has "$err" "H100"'

G64="$tmp/g64k.json"
for cmd in "plan --global-batch 4096 --top 1" "estimate --tp 8 --pp 8 --mbs 1 --global-batch 8192 --recompute full" "memory --tp 8 --pp 8 --mbs 1 --global-batch 8192 --recompute full" "whatif --global-batch 4096 --sweep gpus=65536" "size --global-batch 4096 --tokens 300e9 --days 30"; do
    # shellcheck disable=SC2086
    case $cmd in
    whatif*) run_big "$P" $cmd --model gpt3-175b --topology "$G64" ;;
    *) run "$P" $cmd --model gpt3-175b --topology "$G64" ;;
    esac
    check "the generated 65,536-GPU cluster works with ${cmd%% *}" '[ $rc -eq 0 ] && [ -n "$out" ]'
done
run "$P" collective --topology "$G64" --op allreduce --servers 8192 --sizes 1GiB
check "the generated 65,536-GPU cluster works with collective" '[ $rc -eq 0 ] && has "$out" "65536 ranks"'

run_big "$P" whatif --model gpt3-175b --topology h100-64k --global-batch 4096 --sweep gpus=1024,4096,16384,65536 --tokens 300e9 --json
printf '%s\n' "$out" >"$tmp/wg.json"
check "whatif: time to train falls as GPUs grow" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); t=[p[\"time_to_train_s\"] for p in d[\"points\"]]
assert len(t)==4 and all(t[i]>=t[i+1] for i in range(3)), t
assert d[\"points\"][0][\"values\"]=={\"gpus\":1024}" "$tmp/wg.json"'
run "$P" whatif --model llama3-70b --topology dgx-h100-superpod --global-batch 1024 --sweep rails.nic_bandwidth=100Gb/s,200Gb/s,400Gb/s,800Gb/s --csv
check "whatif: tokens/s does not fall as NIC bandwidth grows (CSV)" '[ $rc -eq 0 ] && printf "%s\n" "$out" | python3 -c "
import csv,sys; rows=list(csv.DictReader(sys.stdin)); v=[float(r[\"tokens/s\"]) for r in rows]
assert len(v)==4 and all(v[i]<=v[i+1] for i in range(3)), v"'
run "$P" whatif --model gpt3-175b --topology h100-64k --gpus 4096 --global-batch 2048 --sweep rail_only=false,true --json
printf '%s\n' "$out" >"$tmp/wr.json"
check "whatif: rail-only leaves a dense GPT within a few percent (Wang et al.)" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); a,b=[p[\"result\"][\"step_time_s\"] for p in d[\"points\"]]
assert b>=a and b<=a*1.05, (a,b)" "$tmp/wr.json"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep rails.nic_bandwith=400Gb/s
check "whatif: a misspelt key is a usage error naming it" '[ $rc -eq 2 ] && has "$err" "--sweep: unknown key '"'"'rails.nic_bandwith'"'"'"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep nvlink.domain_gpus=3
check "whatif: an impossible value is a usage error naming the path" '[ $rc -eq 2 ] && has "$err" "nvlink.domain_gpus"'
run "$P" whatif --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --sweep tiers[0].oversubscription=1,2,4 --plot "$tmp/w.svg"
check "whatif --plot writes an SVG chart" '[ $rc -eq 0 ] && grep -q "<svg" "$tmp/w.svg" && grep -q "polyline" "$tmp/w.svg"'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --tokens 1T --sweep gpus=64,128,512 --plot "$tmp/t.svg"
check "whatif --tokens --plot: days with failures and, dashed, without; tokens/s, MFU, step, memory" '[ $rc -eq 0 ] && [ "$(grep -c "<polyline" "$tmp/t.svg")" -eq 6 ] && [ "$(grep -c "<polyline[^>]*stroke-dasharray" "$tmp/t.svg")" -eq 1 ] && for f in days tokens/s "MFU (%)" s GiB; do grep -q "data-figure=\"$f\"" "$tmp/t.svg" || exit 1; done'
# issue 32: no list is cut.  256 values (1,493 characters, past the old 1,023) are
# all swept; longer than the sweep holds is refused naming it; --tiers too, and a
# count no integer holds is refused before any cast
big=$(python3 -c "print(\",\".join(str(256 * (i + 1)) for i in range(256)))")
run "$P" whatif --model llama3-8b --topology h100-64k --global-batch 2048 --sweep "gpus=$big" --json
check "whatif --sweep with 256 values of 1,493 characters: all 256 points, the last at 65,536 GPUs" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
p = json.load(sys.stdin)[\"points\"]
assert len(p) == 256 and p[-1][\"values\"][\"gpus\"] == 65536, len(p)"'
run "$P" whatif --model llama3-8b --topology h100-64k --global-batch 2048 --sweep "gpus=$(python3 -c "print(\",\".join([\"1\" * 40] * 250))")"
check "whatif --sweep longer than it holds: exit 2 naming the sweep, never cut" '[ $rc -eq 2 ] && [ -z "$out" ] && has "$err" "gpus: the values take 10249 characters, at most 8191"'
run "$P" topology generate --servers 16 --gpus-per-server 8 --gpu H100 --leaf-servers 8 --tiers 8,1e300 -o "$tmp/never.json"
check "topology generate --tiers 8,1e300: exit 2 naming --tiers, no file" '[ $rc -eq 2 ] && has "$err" "--tiers: expected whole numbers up to 1e15" && [ ! -e "$tmp/never.json" ]'
run "$P" topology generate --servers 16 --gpus-per-server 8 --gpu H100 --leaf-servers 8 --oversubscription "$(python3 -c "print(\",\".join([\"1\"] * 200))")" -o "$tmp/never.json"
check "topology generate: a list longer than it reads is refused, not cut" '[ $rc -eq 2 ] && has "$err" "--oversubscription: at most 255 characters"'

# a name taken from a directory is cut at a character's start (a cut in the middle
# of one made the JSON drop "model") and shows control characters as '?'
d="$tmp/a$(python3 -c "print(\"\\u6a21\\u578b\" * 20)")"
mkdir -p "$d" "$tmp/ctl$(printf '\033')[31m"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d.pop('_name_or_path', None)
for out in sys.argv[2:]:
    json.dump(d, open(out, 'w'))" "$ROOT/tests/data/hf/Llama-3.1-8B/config.json" "$d/config.json" "$tmp/ctl$(printf '\033')[31m/config.json"
run "$P" plan --model "$d/config.json" --topology dgx-h100-superpod --gpus 8 --global-batch 64 --top 1 --json
check "a 121-byte directory name of 3-byte characters: the model's name cut at a character (61 bytes), kept in the JSON" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
n = json.load(sys.stdin)[\"model\"]
assert n == \"a\" + \"\\u6a21\\u578b\" * 10, repr(n)"'
run "$P" model show "$tmp/ctl$(printf '\033')[31m/config.json"
check "a control character of a directory name is shown as ?" '[ $rc -eq 0 ] && has "$out" "ctl?[31m" && ! printf "%s" "$out" | grep -q "$(printf '\033')"'
run "$P" model show "$tmp/ctl$(printf '\033')[31m/missing.json"
check "... and in an error naming the file: shown as ?, never sent to the terminal" '[ $rc -eq 3 ] && has "$err" "ctl?[31m/missing.json" && ! printf "%s" "$err" | grep -q "$(printf '\033')"'
run "$P" plan --model "$d/config.json" --topology dgx-h100-superpod --gpus 8 --global-batch 64 --seq-len 4096 --top 1
check "an HF config with --seq-len: no note that a length was assumed" '[ $rc -eq 0 ] && ! has "$err" "max_position_embeddings"'

# issue 20 item 5: a GPU sweep on a log2 axis, each point at the GPUs its plan uses,
# every figure the JSON's (64 -> 128 is one step, 128 -> 512 two)
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --tokens 1T --sweep gpus=64,128,512 --json
check "whatif --plot: numeric log2 x, the JSON's figures, well-formed SVG" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, re, sys
import xml.etree.ElementTree as ET
pts = json.load(sys.stdin)[\"points\"]
svg = open(sys.argv[1]).read()
ET.fromstring(svg)
tok = svg.split(\"data-figure=\\\"tokens/s\\\"\")[1].split(\"</g>\")[0]
marks = [(float(x), float(cx), float(v)) for cx, x, v in re.findall(r\"cx=.([0-9.]+).[^>]*data-x=.([0-9.e+]+).[^>]*data-value=.([0-9.e+]+)\", tok)]
assert [x for x, _, _ in marks] == [p[\"result\"][\"config\"][\"gpus\"] for p in pts], marks
assert all(abs(v - p[\"result\"][\"tokens_per_s\"]) <= 1e-9 * v for (_, _, v), p in zip(marks, pts)), marks
(_, a, _), (_, b, _), (_, c, _) = marks
assert abs((c - b) - 2 * (b - a)) < 0.2, marks
" "$tmp/t.svg"'

run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 67 --global-batch 2048 --json
printf '%s\n' "$out" >"$tmp/size.json"
check "size: Llama 3 405B on 15.6T tokens in 67 days takes about 16K H100" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); g=d[\"gpus\"]
assert 12288<=g<=20480, g
assert d[\"days\"]<=67" "$tmp/size.json"'
run "$P" size --model megatron-1t --topology dgx-a100-superpod --tokens 450e9 --days 84 --global-batch 3072 --stack legacy --flash-attention=no --recompute full --zero 0 --sequence-parallel=no --json
printf '%s\n' "$out" >"$tmp/size1t.json"
check "size: the 1T model on 450B tokens in 84 days, 2021 settings, near Megatron's 3,072 A100" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); g=d[\"gpus\"]; assert 2048<=g<=4096, g" "$tmp/size1t.json"'
printf '{"name": "gpt-1.5t", "layers": 160, "hidden": 28160, "heads": 160, "vocab": 51200, "seq_len": 2048}\n' >"$tmp/m15.json"
run "$P" size --model "$tmp/m15.json" --topology dgx-h100-superpod --fit-only --offload-optimizer 0
check "size --fit-only: a 1.5T model needs a few hundred 80 GB GPUs" '[ $rc -eq 0 ] && python3 -c "
import re,sys; g=int(re.match(r\"(\d+) GPUs hold\", sys.argv[1]).group(1)); assert 256<=g<=640, g" "$out"'
# with its 12 bytes a parameter of optimizer state on the host (2 TB for 8 GPUs,
# offload.c), the same model fits on about a quarter of them: the GPU keeps 4 bytes
# a parameter (bf16 weights and gradients, nemo-2025) instead of 16
run "$P" size --model "$tmp/m15.json" --topology dgx-h100-superpod --fit-only
check "size --fit-only: the optimizer offloaded, the 1.5T model fits on under 128 GPUs" '[ $rc -eq 0 ] && has "$out" "optimizer 1 offloaded" && python3 -c "
import re,sys; g=int(re.match(r\"(\d+) GPUs hold\", sys.argv[1]).group(1)); assert 64<=g<128, g" "$out"'
run "$P" size --model megatron-1t --topology dgx-h100-superpod --tokens 1e15 --days 1 --global-batch 1024
check "size: impossible in time is exit 1 with the best time reachable" '[ $rc -eq 1 ] && has "$err" "at best"'

# time to train with failures (SPEC 1.1): days = days_failure_free / goodput; at
# 16,384 H100 the defaults give Meta's "> 90% effective training time"
check "size: days include failures, goodput above 0.9 at 16K H100" 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); g=d[\"goodput\"]
assert 0.9<g<1, g
assert abs(d[\"days\"]-d[\"days_failure_free\"]/g)<1e-9*d[\"days\"]
assert d[\"checkpoint_interval_s\"]>0" "$tmp/size.json"'
run_big "$P" whatif --model llama3-405b --topology h100-64k --global-batch 2048 --tokens 15.6T --sweep gpus=16384,65536 --json
printf '%s\n' "$out" >"$tmp/gp.json"
check "whatif --tokens: goodput falls from 16K to 64K GPUs" '[ $rc -eq 0 ] && python3 -c "
import json,sys; p=json.load(open(sys.argv[1]))[\"points\"]
assert p[1][\"goodput\"]<p[0][\"goodput\"]<1, p
assert all(q[\"days\"]>q[\"days_failure_free\"] for q in p)" "$tmp/gp.json"'
run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 --mtbf-gpu-hours 1 --restart-time 1d
check "size: failures faster than restarts is exit 1 saying goodput 0" '[ $rc -eq 1 ] && has "$err" "goodput 0"'
# at 250 GPU-hours between failures llama3-8b trains 1T tokens faster on 512 GPUs
# (goodput 0.66, 4.3 days) than on all 1,024: the answer names 512
run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 1 --global-batch 512 --mtbf-gpu-hours 250
check "size: when more GPUs stop paying, exit 1 names the fastest count" '[ $rc -eq 1 ] && has "$err" "512 of the 1024 GPUs" && has "$err" "at best"'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --tokens 1T --sweep gpus=64 --mtbf-gpu-hours 1 --restart-time 10min
check "whatif: a job that never finishes says never" '[ $rc -eq 0 ] && has "$out" "never"'
for bad in "--mtbf-gpu-hours 0" "--mtbf-gpu-hours x" "--checkpoint-bandwidth 2" "--checkpoint-bandwidth 1KB/s" "--restart-time -5" "--restart-time 30d"; do
    run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 $bad
    check "size $bad: usage error naming the flag" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "${bad%% *}"'
done
# hot spares (issue 17 item 4): 128 GPUs (16 servers) beside Llama 3 405B on
# 16,384 H100; with 12.1 servers in repair on average (0.78 x 16,384 / 50,677
# failures an hour x 48 h) a spare is free at 84% of server failures, so the run
# is shorter than without them and the GPU-hours count the spares
run "$P" size --model llama3-405b --topology h100-64k --tokens 15.6T --days 60 --global-batch 2048 --spares 128 --json
check "size --spares: fewer days than without, GPU-hours count the spares" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.loads(sys.argv[1])
assert d[\"spares\"]==128, d[\"spares\"]
assert 0.8<d[\"spare_free\"]<0.9, d[\"spare_free\"]
assert d[\"days\"]<d[\"days_without_spares\"], d
assert abs(d[\"gpu_hours\"]-(d[\"gpus\"]+128)*d[\"days\"]*24)<1e-6*d[\"gpu_hours\"]" "$out"'
# --spares 100% doubles the GPUs held: the job may take at most half the topology
run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 --global-batch 512 --spares 100% --json
check "size --spares 100%: as many spares as job GPUs, counted in the GPU-hours" '[ $rc -eq 0 ] && python3 -c "
import json,sys; d=json.loads(sys.argv[1])
assert d[\"spares\"]==d[\"gpus\"]<=512, d[\"gpus\"]
assert abs(d[\"gpu_hours\"]-2*d[\"gpus\"]*d[\"days\"]*24)<1e-6*d[\"gpu_hours\"]" "$out"'
run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 --spares 1024
check "size --spares: spares taking every GPU is exit 1 naming --spares" '[ $rc -eq 1 ] && has "$err" "--spares" && has "$err" "none are left"'
for bad in "--spares x" "--spares -8" "--spares 101%" "--spares 1.5" "--spares %" "--repair-time 0" "--repair-time 10" "--spare-restart-time -1"; do
    run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 $bad
    check "size $bad: usage error naming the flag" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "${bad%% *}"'
done
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --gpus 512 --sweep spares=0,64
check "whatif --sweep spares without --tokens is a usage error" '[ $rc -eq 2 ] && has "$err" "give --tokens"'
run "$P" whatif --model llama3-405b --topology h100-64k --global-batch 2048 --gpus 16384 --tokens 15.6T --sweep spares=0,128 --json
check "whatif --sweep spares: the same plan, fewer days with spares" '[ $rc -eq 0 ] && python3 -c "
import json,sys; p=json.loads(sys.argv[1])[\"points\"]
assert [q[\"spares\"] for q in p]==[0,128], p
assert p[1][\"days\"]<p[0][\"days\"] and p[1][\"days_failure_free\"]==p[0][\"days_failure_free\"]" "$out"'
run "$P" size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 30 --global-batch 512 --checkpoint-bandwidth 2TB/s --restart-time 600s --mtbf-gpu-hours 50677 --json
check "size: the three flags at their defaults change nothing" '[ $rc -eq 0 ] && python3 -c "
import json,sys; a=json.loads(sys.argv[1]); b=json.load(open(sys.argv[2]))
assert abs(a[\"goodput\"]-b[\"goodput\"])<1e-4, (a[\"goodput\"], b[\"goodput\"])" "$out" "$ROOT/tests/golden/size-llama3-8b.json"'


run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute-layers 3
check "--recompute-layers without --recompute full is a usage error" '[ $rc -eq 2 ] && has "$err" "--recompute-layers: needs full recomputation"'
# --seq-len overrides the model's sequence length: Llama 3 8B (8,192 tokens) on 8
# H100 at 32,768 tokens a sequence and a batch of 8 moves 8 x 32,768 tokens a step
run "$P" estimate --model llama3-8b --topology dgx-h100-superpod --gpus 8 --tp 8 --pp 1 --mbs 1 --global-batch 8 --flash-attention --sequence-parallel --seq-len 32768 --json
check "--seq-len: tokens/s is batch x the given length / step time" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert abs(d[\"tokens_per_s\"] - 8 * 32768 / d[\"step_time_s\"]) < 1e-6 * d[\"tokens_per_s\"], d[\"tokens_per_s\"]
"'
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --global-batch 64 --seq-len 0
check "--seq-len 0 is a usage error naming it" '[ $rc -eq 2 ] && has "$err" "--seq-len:"'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --sweep seq_len=8192,32768 --sweep gpus=64 --global-batch 64 --json
check "whatif sweeps seq_len: each point at its length" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
p = json.load(sys.stdin)[\"points\"]
assert [x[\"values\"][\"seq_len\"] for x in p] == [8192, 32768], p
r = [x[\"result\"] for x in p]
assert all(abs(q[\"tokens_per_s\"] - 64 * s / q[\"step_time_s\"]) < 1e-6 * q[\"tokens_per_s\"] for q, s in zip(r, (8192, 32768)))
"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute full --recompute-layers 3 --json
printf '%s\n' "$out" >"$tmp/blk.json"
check "block recomputation: Megatron-LM's block method and the layer count in the launch flags" '[ $rc -le 1 ] && python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); a=d[\"launch\"][\"megatron_args\"]
assert a[a.index(\"--recompute-method\")+1]==\"block\" and a[a.index(\"--recompute-num-layers\")+1]==\"3\"
assert d[\"config\"][\"recompute_layers\"]==3" "$tmp/blk.json"'

# faults: nothing half-written, no crash, clean errors
run "$P" model show gpt3-175b -o /proc/parplan-cannot-write
check "-o where nothing can be created: exit 4, names the path" '[ $rc -eq 4 ] && [ -z "$out" ] && has "$err" "/proc/parplan-cannot-write: cannot write"'
"$P" models >&- 2>"$tmp/err"
rc=$?
err=$(cat "$tmp/err")
check "a closed stdout: exit 4 with a message" '[ $rc -eq 4 ] && has "$err" "cannot write to standard output"'
( "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 2000 2>"$tmp/err"; echo $? >"$tmp/rc" ) | head -c 100 >/dev/null
rc=$(cat "$tmp/rc")
err=$(cat "$tmp/err")
check "a broken pipe (plan | head): no signal death, no noise" '{ [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; } && [ -z "$err" ]'
# --top is bounded (5000) and kept in O(n log K): the DeepSeek-V3 question that took
# over 10 minutes at --top 100000 (a sorted list moved on every insert)
run "$P" plan --model deepseek-v3 --topology dgx-h100-superpod --global-batch 4096 --top 5001
check "plan --top 5001: exit 2 naming the cap" '[ $rc -eq 2 ] && has "$err" "--top: expected an integer from 1 to 5000"'
run_big sh -c "ulimit -t 60; \"$P\" plan --model deepseek-v3 --topology dgx-h100-superpod --global-batch 4096 --top 5000 | grep -cE '^ *[0-9]+ +[0-9]+/'"
check "plan --top 5000 on DeepSeek-V3: 5000 ranked rows within a minute of CPU" '[ $rc -eq 0 ] && [ "$out" -eq 5000 ]'
if ( ulimit -v 12000; "$P" --version >/dev/null 2>&1 ); then
    ( ulimit -v 12000; "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 5000 >"$tmp/out" 2>"$tmp/err" ); rc=$?
    err=$(cat "$tmp/err")
    check "out of memory in a search (ulimit -v): exit 4, says so, writes nothing" '[ $rc -eq 4 ] && [ ! -s "$tmp/out" ] && has "$err" "out of memory"'
else
    skip "out of memory in a search (ulimit -v)" "this build cannot start in 12 MB of address space (sanitizers)"
fi
printf '{"gpu": "H100", "servers": 16777216, "gpus_per_server": 1024, "nvlink": {"bandwidth": "450 GB/s", "domain_gpus": 8}, "rails": {"count": 8, "nic_bandwidth": "400 Gb/s"}, "tiers": [{"servers": 32, "rail_optimized": true}, {"servers": 16777216}]}\n' >"$tmp/huge.json"
run "$P" plan --model gpt3-175b --topology "$tmp/huge.json" --global-batch 4096 --allow-tp-across-servers --top 1
check "17 billion GPUs: a clean nothing-to-plan, quickly" '[ $rc -eq 1 ] && has "$err" "divisibility"'
run "$P" estimate --model gpt3-175b --topology "$tmp/huge.json" --tp 8 --pp 8 --dp 1099511627776 --mbs 1 --global-batch 8
check "a split whose product overflows 64 bits is a usage error" '[ $rc -eq 2 ] && has "$err" "--dp:"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --gpus 1000000000000000000 --global-batch 8
check "1e18 GPUs on the command line is a usage error" '[ $rc -eq 2 ] && has "$err" "--gpus"'
run_big "$P" size --model gpt3-175b --topology "$tmp/huge.json" --global-batch 1099511627776 --tokens 1e15 --days 1
check "a 2^40-sequence batch on 2^34 GPUs: a number, not a crash" '[ $rc -eq 0 ] || [ $rc -eq 1 ]'
for cmd in "validate --runs $ROOT/tests/data/calibration_runs.json --json" "whatif --model llama3-70b --topology meta-24k-roce --global-batch 1024 --sweep transport.loss_rate=0,0.001 --json" "collective --topology meta-24k-roce --op alltoall --servers 512 --json" "size --model llama3-8b --topology dgx-h100-superpod --tokens 1T --days 10 --json"; do
    # shellcheck disable=SC2086
    run "$P" $cmd
    first=$out
    # shellcheck disable=SC2086
    run "$P" $cmd
    check "byte-identical output across runs: ${cmd%% *}" '[ $rc -eq 0 ] && [ "$out" = "$first" ]'
done

# in-switch reduction (issue 19 item 3): NVLS on one 8 x H100 server is costed at
# 517 GB/s bus bandwidth, within 10% of nccl-tests' ~480 (the ring: ~370); SHARP
# across servers; refused where the switches cannot reduce
G="--servers 16 --gpus-per-server 8 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 16"
run "$P" topology generate --gpu H100 $G --nvls --sharp -o "$tmp/nvls.json"
check "topology generate --nvls --sharp writes the switch reductions" '[ $rc -eq 0 ] && grep -q "\"sharp\": true" "$tmp/nvls.json"'
run "$P" collective --topology "$tmp/nvls.json" --op allreduce --servers 1 --sizes 8GiB
check "collective: NVLS all-reduce on 8 H100 within 10% of 480 GB/s busbw" '[ $rc -eq 0 ] && printf "%s\n" "$out" | awk "/nvls/ { if (\$4 >= 432 && \$4 <= 528) ok = 1 } END { exit !ok }"'
run "$P" collective --topology "$tmp/nvls.json" --op allreduce --servers 16 --sizes 8GiB
check "collective: SHARP across 16 servers beats the ring" '[ $rc -eq 0 ] && has "$out" "sharp"'
run "$P" collective --topology dgx-a100-superpod --op allreduce --servers 1 --sizes 8GiB --algo nvls
check "collective --algo nvls where the switches cannot reduce: exit 2 naming nvlink.sharp" '[ $rc -eq 2 ] && has "$err" "does not declare nvlink.sharp"'
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 4 --sizes 8GiB --algo nvls
check "collective --algo nvls across NVLink domains: exit 2 naming the group" '[ $rc -eq 2 ] && has "$err" "nvls does not apply to allreduce on a group across NVLink domains"'
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 4 --sizes 8GiB --algo sharp
check "collective --algo sharp where the fabric cannot reduce: exit 2 naming transport.sharp" '[ $rc -eq 2 ] && has "$err" "does not declare transport.sharp"'
# the catalogue DGX H100's third-generation NVSwitches reduce (NVLS)
run "$P" collective --topology dgx-h100-superpod --op allreduce --servers 1 --sizes 8GiB
check "collective: the catalogue DGX H100 reduces in its NVSwitches" '[ $rc -eq 0 ] && has "$out" "nvls"'
run "$P" topology generate --gpu A100 $G --nvls -o "$tmp/a100-nvls.json"
check "topology generate --nvls on A100 is refused, nothing written" '[ $rc -eq 2 ] && has "$err" "nvlink.sharp" && [ ! -e "$tmp/a100-nvls.json" ]'
# the schedules that split the backward (pipeline.h), pinned on GPT-3 175B over 1024
# A100s (tp 8, pp 16, 192 microbatches, ZeRO-1, SP, flash: every one fits): each reports its passes, refuses Megatron-LM
# and DeepSpeed saying why, and cuts 1F1B's bubble
SCHED="estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 16 --mbs 1 --global-batch 1536 --zero 1 --sequence-parallel --flash-attention --json"
bubble() { printf '%s\n' "$1" | sed -n 's/^ *"bubble": \([0-9.e+-]*\),*$/\1/p' | head -1; }
# shellcheck disable=SC2086
run "$P" $SCHED
b1f1b=$(bubble "$out")
check "estimate 1f1b: no pipeline object (its output unchanged)" '[ $rc -eq 0 ] && ! has "$out" "\"pipeline\""'
for s in zb-h1 zb-h2 zb-v dualpipe dualpipev; do
    # shellcheck disable=SC2086
    run "$P" $SCHED --schedule $s
    bs=$(bubble "$out")
    check "estimate --schedule $s: F, B, W, bubble and in-flight, under 1F1B's bubble" '[ $rc -eq 0 ] && has "$out" "\"schedule\": \"$s\"" && has "$out" "\"backward_weight_s\"" && has "$out" "\"in_flight_microbatches\"" && has "$out" "\"first_stage\": 15" && awk "BEGIN { exit !($bs < $b1f1b) }"'
    check "estimate --schedule $s: no Megatron-LM or DeepSpeed launch, and why" 'has "$out" "\"megatron_args\": null" && has "$out" "Megatron-LM has no" && has "$out" "\"deepspeed\": null"'
done
# shellcheck disable=SC2086
run "$P" $SCHED --schedule zb-v
check "zb-v runs two chunks a rank by default (vp 2)" '[ $rc -eq 0 ] && has "$out" "\"vp\": 2"'
# shellcheck disable=SC2086
run "$P" $SCHED --schedule dualpipe
check "dualpipe keeps p + 1 = 17 microbatches in flight" '[ $rc -eq 0 ] && has "$out" "\"in_flight_microbatches\": 17.0"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 16 --mbs 1 --global-batch 1536 --schedule zb-h1
check "estimate --schedule zb-h1 (text): the pipeline line" '[ $rc -eq 0 ] && has "$out" "pipeline    zb-h1: F "'
run "$P" memory --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 16 --mbs 1 --global-batch 1536 --zero 1 --sequence-parallel --flash-attention --schedule zb-h2 --json
check "memory --schedule zb-h2: 2p - 1 = 31 microbatches on stage 0" '[ $rc -eq 0 ] && has "$out" "\"in_flight_microbatches\": 31.0"'
run "$P" plan --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --global-batch 1536 --tp 8 --pp 16 --top 1 --schedule zb-v --json
check "plan --schedule zb-v: plans of two chunks a rank" '[ $rc -eq 0 ] && has "$out" "\"schedule\": \"zb-v\"" && has "$out" "\"vp\": 2"'
# bad combinations: one line, exit 2, the flag named
# shellcheck disable=SC2086
run "$P" $SCHED --schedule zb-h1 --vp 2
check "zb-h1 with --vp 2: exit 2, names --vp" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--vp: zb-h1 holds one model chunk"'
# shellcheck disable=SC2086
run "$P" $SCHED --schedule zb-v --vp 4
check "zb-v with --vp 4: exit 2, names --vp" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--vp: zb-v places two model chunks"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 768 --tp 8 --pp 12 --mbs 1 --global-batch 1536 --schedule dualpipe
check "dualpipe on pp 12: runs (even; 0 fits, 1 does not)" '[ $rc -le 1 ] && has "$out" "pipeline    dualpipe:"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 24 --tp 8 --pp 3 --mbs 1 --global-batch 64 --schedule dualpipe
check "dualpipe on odd pp: exit 2, names --pp" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--pp: dualpipe pairs rank k"'
# shellcheck disable=SC2086
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 16 --mbs 1 --global-batch 192 --schedule dualpipev
check "dualpipev with 24 < 2 pp microbatches: exit 2, names --global-batch" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--global-batch: dualpipev needs at least 2*pp = 32 microbatches"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 8 --tp 8 --pp 1 --mbs 1 --global-batch 8 --schedule zb-h1
check "zb-h1 without a pipeline: exit 2, names --schedule" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--schedule: zb-h1 is a pipeline schedule"'
# shellcheck disable=SC2086
run "$P" $SCHED --schedule zb-h3
check "unknown schedule: exit 2, lists the seven" '[ $rc -eq 2 ] && has "$err" "--schedule" && has "$err" "dualpipev"'
# hierarchical sharding and optimizer offload: the flags, their one-line errors
hs="estimate --model llama3-70b --topology dgx-h100-superpod --gpus 32 --tp 1 --pp 1 --mbs 1 --global-batch 32 --recompute full --flash-attention"
# shellcheck disable=SC2086
run "$P" $hs --zero 3 --shard-group 3
check "--shard-group that does not divide dp: exit 2, one line naming it" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --shard-group: 3 does not divide dp 32"'
# shellcheck disable=SC2086
run "$P" $hs --shard-group 8
check "--shard-group without ZeRO: exit 2, nothing to shard" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --shard-group: 8 needs ZeRO 1, 2 or 3"'
# shellcheck disable=SC2086
run "$P" $hs --zero 3 --shard-group 0
check "--shard-group 0: exit 2" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--shard-group"'
# shellcheck disable=SC2086
run "$P" $hs --zero 3 --offload-optimizer 1.5
check "--offload-optimizer above 1: exit 2, one line naming it" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --offload-optimizer: expected at most 1"'
# shellcheck disable=SC2086
run "$P" $hs --offload-optimizer 1
check "--offload-optimizer without ZeRO: exit 2 (the distributed optimizer's shard)" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --offload-optimizer: needs ZeRO 1, 2 or 3"'
# shellcheck disable=SC2086
run "$P" $hs --zero 1 --offload-optimizer 1 --optimizer sgd
check "--offload-optimizer with SGD: exit 2 (Megatron offloads Adam)" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: --offload-optimizer: needs --optimizer adam"'
# shellcheck disable=SC2086
run "$P" $hs --zero 3 --shard-group 8 --offload-optimizer 1
check "estimate in groups of 8 with the optimizer offloaded says so" '[ $rc -eq 0 ] && has "$out" "ZeRO 3 in groups of 8, optimizer 1 offloaded"'
# shellcheck disable=SC2086
run "$P" $hs --zero 3 --shard-group 32
check "--shard-group dp is every rank: no group in the config" '[ $rc -eq 0 ] && has "$out" "ZeRO 3, recompute" && ! has "$out" "in groups"'
run "$P" memory --model llama3-70b --topology dgx-h100-superpod --gpus 32 --tp 1 --pp 1 --mbs 1 --global-batch 32 --recompute full --flash-attention --zero 3 --shard-group 8 --offload-optimizer 1
check "memory shows the offloaded state against the host's share" '[ $rc -eq 0 ] && has "$out" "optimizer         0 B" && has "$out" "share of host memory"'

# --memory-headroom (issue 20 item 3): a share or a size kept free.  Llama 3 70B,
# tp 4 pp 1, ZeRO-2 needs 83.0 GiB unoffloaded; pinned with the optimizer offloaded
# it needs 79.9 GiB of an H100's 80: it fits with no headroom and not with 5%
# (4 GiB); a plan with 5% keeps every result at or under 76 GiB
HR="estimate --model llama3-70b --topology dgx-h100-superpod --gpus 256 --tp 4 --pp 1 --mbs 1 --global-batch 512 --zero 2 --offload-optimizer 1 --flash-attention --sequence-parallel --json"
# shellcheck disable=SC2086
run "$P" $HR
check "--memory-headroom default 0: the 79.9 GiB plan fits 80" '[ $rc -eq 0 ] && has "$out" "\"headroom\": 0.0" && has "$out" "\"fits\": true"'
# shellcheck disable=SC2086
run "$P" $HR --memory-headroom 5%
check "--memory-headroom 5%: 4 GiB kept, the same plan does not fit" 'has "$out" "\"headroom\": 4294967296.0" && has "$out" "\"fits\": false"'
# shellcheck disable=SC2086
run "$P" $HR --memory-headroom 4GiB
check "--memory-headroom 4GiB is the same 4 GiB" 'has "$out" "\"headroom\": 4294967296.0"'
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 256 --global-batch 512 --top 10 --memory-headroom 0.05 --json
check "plan --memory-headroom 0.05: every result keeps 4 GiB free" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
for r in json.load(sys.stdin)[\"results\"]:
    m = r[\"memory\"]
    assert m[\"total\"] <= 0.95 * m[\"capacity\"] + 1, m"'
for bad in "--memory-headroom 1.5" "--memory-headroom 100%" "--memory-headroom -1" "--memory-headroom x"; do
    # shellcheck disable=SC2086
    run "$P" $HR $bad
    check "$bad: exit 2, one line naming the flag" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--memory-headroom"'
done

# cost on every row (issue 20 item 8): with --gpu-hour-price, plan's table has a
# cost per million tokens for each row, and whatif's points carry it, and with
# --tokens the cost to train = GPU-hours x price
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 3 --gpu-hour-price 2.5
check "plan --gpu-hour-price: a cost/Mtok column on every row" '[ $rc -eq 0 ] && has "$out" "cost/Mtok" && [ "$(printf "%s\n" "$out" | grep -c "^[123]  .* 0\.0[0-9]*$")" -eq 3 ]'
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --sweep gpus=64,128 --gpu-hour-price 2.5 --tokens 1T --json
check "whatif --gpu-hour-price --tokens: each point's cost per Mtok and cost to train" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
for q in json.load(sys.stdin)[\"points\"]:
    r = q[\"result\"]
    assert abs(q[\"cost\"] - 2.5 * q[\"gpu_hours\"]) < 1e-9 * q[\"cost\"], q
    mt = 2.5 * r[\"config\"][\"gpus\"] / 3600 / r[\"tokens_per_s\"] * 1e6
    assert abs(q[\"cost_per_million_tokens\"] - mt) < 1e-9 * mt, q"'

# progress (issue 20 item 9): on a terminal stderr shows "parplan: whatif... N%"
# for a sweep that runs over half a second; without a terminal, nothing
# (the terminal run calls parplan directly, never under the valgrind wrapper: it
# needs a sweep of over half a second natively, with room for the search to get
# faster: the six GPU counts alone took 1.6 CPU s in a release build once, and
# 0.53 s after the search got faster (December 2026), when the check failed; with
# three NIC speeds the grid of 18 points takes about 1.8 s in a debugoptimized
# build today)
WI="whatif --model deepseek-v3 --topology h100-64k --global-batch 2048 --sweep gpus=2048,4096,8192,16384,32768,65536 --sweep rails.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s"
run "$P" whatif --model llama3-8b --topology dgx-h100-superpod --global-batch 512 --sweep gpus=64,128
check "whatif without a terminal: nothing on stderr" '[ $rc -eq 0 ] && [ -z "$err" ]'
if command -v script >/dev/null 2>&1; then
    tty_err=$(script -qec "$P $WI >/dev/null" /dev/null 2>&1 | tr '\r' '\n')
    check "whatif on a terminal: progress on stderr" 'printf "%s\n" "$tty_err" | grep -q "parplan: whatif\.\.\. *[0-9]*%"'
fi

# estimate and memory --from PLAN.json#K (issue 20 item 2): result K's
# configuration again, its step time (estimate) or its memory (memory) to the
# last digit on the same cluster; estimate on another one too (below)
run "$P" plan --model llama3-70b --topology dgx-h100-superpod --gpus 256 --global-batch 512 --top 3 --json -o "$tmp/plan3.json"
for cmd_key in estimate:step_time_s memory:memory.total; do
    for k in 1 2 3; do
        run "$P" "${cmd_key%%:*}" --from "$tmp/plan3.json#$k" --json
        check "${cmd_key%%:*} --from plan#$k: the plan's configuration and ${cmd_key#*:}" '[ $rc -eq 0 ] && python3 -c "
import json, sys
def at(d, path):
    for key in path.split(\".\"):
        d = d[key]
    return d
p = json.load(open(sys.argv[1]))[\"results\"][int(sys.argv[2]) - 1]
e = json.loads(sys.argv[3])
assert e[\"config\"] == p[\"config\"], (e[\"config\"], p[\"config\"])
assert at(e, sys.argv[4]) == at(p, sys.argv[4]), (at(e, sys.argv[4]), at(p, sys.argv[4]))" "$tmp/plan3.json" "$k" "$out" "${cmd_key#*:}"'
    done
done
# a plan at another sequence length and stack: both travel in the file, so the
# re-cost is of the same configuration, not of the model's own length
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 64 --seq-len 32768 --stack megatron-core --top 1 --json -o "$tmp/plan32k.json"
run "$P" estimate --from "$tmp/plan32k.json" --json
check "estimate --from a plan at --seq-len 32768 --stack megatron-core: the plan's step, length and stack" '[ $rc -eq 0 ] && python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
e = json.loads(sys.argv[2])
assert p[\"seq_len\"] == 32768 and p[\"stack\"] == \"megatron-core\", p
assert e[\"step_time_s\"] == p[\"results\"][0][\"step_time_s\"], (e[\"step_time_s\"], p[\"results\"][0][\"step_time_s\"])" "$tmp/plan32k.json" "$out"'
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d[\"seq_len\"] = -4
json.dump(d, open(sys.argv[2], \"w\"))" "$tmp/plan32k.json" "$tmp/planbad.json"
run "$P" estimate --from "$tmp/planbad.json"
check "estimate --from a plan whose seq_len is -4: exit 3 naming the key" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "planbad.json: seq_len"'
# a result's configuration read as every input is: an unknown key warned about,
# a derived count that disagrees refused
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d[\"results\"][0][\"config\"][\"tpp\"] = 8
json.dump(d, open(sys.argv[2], \"w\"))
d[\"results\"][0][\"config\"][\"microbatches\"] = -1
json.dump(d, open(sys.argv[3], \"w\"))" "$tmp/plan3.json" "$tmp/plantpp.json" "$tmp/planmb.json"
run "$P" estimate --from "$tmp/plantpp.json"
check "estimate --from a config with a misspelt key: costed, the key warned about" '[ $rc -eq 0 ] && has "$err" "results[0].config.tpp: unknown key, ignored (did you mean '"'"'tp'"'"'?)"'
run "$P" memory --from "$tmp/planmb.json"
check "memory --from a config whose microbatches is -1: exit 3 naming it (after the tpp warning)" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 2 ] && has "$err" "planmb.json: results[0].config.microbatches: expected global_batch / (dp x mbs)"'
run "$P" estimate --from "$tmp/plan3.json#2" --topology gh200-nvl256 --json
check "estimate --from with --topology: the same configuration on another cluster" '[ $rc -eq 0 ] && has "$out" "\"topology\": \"gh200-nvl256\""'
run "$P" estimate --from "$tmp/plan3.json#9"
check "estimate --from a missing result: exit 2, one line" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "has 3 results, not 9"'
for k in x 01 '+1' ' 1' 0; do
    run "$P" estimate --from "$tmp/plan3.json#$k"
    check "estimate --from plan#'$k': a result number as the table prints it, or exit 2" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--from: expected a result number"'
done
run "$P" estimate --from "$tmp/nothing.json"
check "estimate --from a missing file: exit 3, one line naming it" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "nothing.json"'
run "$P" memory --from "$tmp/plan3.json#9"
check "memory --from a missing result: exit 2, one line naming --from" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--from: " && has "$err" "has 3 results, not 9"'

# compare (issue 20 item 2): plan results side by side, the rows that differ
# marked, each against the first; two at least
run "$P" compare "$tmp/plan3.json#1" "$tmp/plan3.json#2" "$tmp/plan3.json#3"
check "compare: a column per result, differing rows marked, each against the first" '[ $rc -eq 0 ] && has "$out" "plan3.json#3" && printf "%s\n" "$out" | grep -q "^\* " && printf "%s\n" "$out" | grep -q "^ *model" && has "$out" "plan3.json#2 against"'
run "$P" compare "$tmp/plan3.json#2" "$tmp/plan3.json#2" --json
check "compare --json: the same result twice has no knob changed" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
c = json.load(sys.stdin)[\"configurations\"]
assert len(c) == 2 and c[1][\"versus_first\"][\"knobs\"] == {} and c[1][\"versus_first\"][\"step_delta_s\"] == 0, c[1]"'
run "$P" compare "$tmp/plan3.json#1"
check "compare with one configuration: exit 2" '[ $rc -eq 2 ] && has "$err" "two or more"'
run "$P" compare "$tmp/plan3.json#1" "$tmp/plan3.json#4"
check "compare with a missing result: exit 2, one line" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "has 3 results, not 4"'

# your own cluster in one line (issue 20 item 7): memory, scale-up, transport and
# loss overrides, each checked by the loader
run "$P" topology generate --gpu H100 --servers 16 --gpus-per-server 8 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 16 --gpu-memory 96GiB --nvlink-bandwidth 300GB/s --transport rocev2 --loss-rate 1e-4 -o "$tmp/own.json"
run "$P" topology show "$tmp/own.json" --json
check "topology generate overrides: 96 GiB, 300 GB/s NVLink, RoCE with 1e-4 loss" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
t = json.load(sys.stdin)[\"topology\"]
assert t[\"gpu\"][\"memory\"] == 96 * 2**30, t[\"gpu\"]
assert t[\"nvlink\"][\"bandwidth\"] == 300e9, t[\"nvlink\"]
assert t[\"transport\"][\"protocol\"] == \"rocev2\" and t[\"transport\"][\"loss_rate\"] == 1e-4, t[\"transport\"]"'
for bad in "--loss-rate 1.5" "--transport ethernet" "--gpu-memory 1KB" "--nvlink-bandwidth 0"; do
    # shellcheck disable=SC2086
    run "$P" topology generate --gpu H100 --servers 16 --gpus-per-server 8 --rails 8 --nic-bandwidth 400Gb/s --leaf-servers 16 $bad
    check "topology generate $bad: exit 2, one line naming the flag" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "${bad%% *}"'
done

# mixed clusters: a pool of one H100 server and one of one B200 server; the plan
# ranks the job on each pool and pipelines across them together (the B200 pool
# alone beats the H100 pool alone: only its plans make the 40 best), each result
# saying where its stages run
cat >"$tmp/mixed.json" <<'EOF'
{"name": "mix", "pools": [
 {"name": "h100", "gpu": "H100", "servers": 1, "gpus_per_server": 8, "nvlink": {"bandwidth": "450 GB/s"}, "rails": {"nic_bandwidth": "400 Gb/s"}},
 {"name": "b200", "gpu": "B200", "servers": 1, "gpus_per_server": 8, "nvlink": {"bandwidth": "900 GB/s"}, "rails": {"nic_bandwidth": "400 Gb/s"}}],
 "cross_pool": {"bandwidth": "12.5 GB/s"}}
EOF
run "$P" plan --model llama3-8b --topology "$tmp/mixed.json" --global-batch 16 --top 40 --json
check "plan on a mixed cluster --json: results ranked on each pool and across both, each saying where its stages run (and, across, Megatron-LM flags and each pool's nodes)" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert [x[\"rank\"] for x in r] == list(range(1, len(r) + 1)), r
assert all(a[\"step_time_s\"] <= b[\"step_time_s\"] for a, b in zip(r, r[1:])), r
assert {x[\"pools\"][0][\"pool\"] for x in r if len(x[\"pools\"]) == 1} == {\"b200\"}, r
across = [x for x in r if len(x[\"pools\"]) > 1]
assert across, r
for x in r:
    c, a = x[\"config\"], x[\"pools\"]
    assert sum(sum(s[\"layers\"]) for s in a) == 32 and sum(s[\"stages\"] for s in a) == c[\"pp\"], x
    assert c[\"stage_layers\"] == [n for s in a for n in s[\"layers\"]], x
    assert sum(s[\"gpus\"] for s in a) == c[\"gpus\"] == c[\"tp\"] * c[\"cp\"] * c[\"dp\"] * c[\"pp\"], x
    t = x[\"time\"]
    assert abs(t[\"compute\"] + t[\"bubble\"] + t[\"exposed_comm\"] + t[\"host\"] + t[\"optimizer\"] + t[\"overhead\"] - x[\"step_time_s\"]) < 1e-9 * x[\"step_time_s\"], x
for x in across:
    l = x[\"launch\"]
    assert x[\"cross_send_s\"] > 0 and l[\"megatron_args\"] and l[\"deepspeed\"] is None and l[\"deepspeed_error\"], x
    assert [(n[\"pool\"], n[\"gpus\"]) for n in l[\"nodes\"]] == [(s[\"pool\"], s[\"gpus\"]) for s in x[\"pools\"]], x
    assert sorted(s[\"pool\"] for s in x[\"pools\"]) == [\"b200\", \"h100\"], x"'
printf "%s" "$out" >"$tmp/mixed-plan.json"
run "$P" estimate --from "$tmp/mixed-plan.json#1"
check "estimate --from a mixed cluster's result without --topology: exit 3 naming its pools" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "results[0].pools"'
# the most pools a cluster may have (4; issue 32): Llama 3 405B across four pools of
# 512, 256, 512 and 256 GPUs took 39 s of CPU (every stage's lines, memory and pool
# layout built again for each of 3.3 million stage counts); a few seconds now
python3 - "$ROOT/topologies/mixed-h100-b200.json" "$tmp/four-pools.json" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
a, b = d["pools"]
c, e = copy.deepcopy(a), copy.deepcopy(b)
c["name"], e["name"] = "h100-2", "b200-2"
d["pools"], d["name"] = [a, b, c, e], "four-pools"
json.dump(d, open(sys.argv[2], "w"))
PY
run_big sh -c "ulimit -t 60; \"$P\" plan --model llama3-405b --topology '$tmp/four-pools.json' --global-batch 1024 --top 3 --json"
check "plan across four pools (405B): ranked within a minute of CPU, one result across all four" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"results\"]
assert len(r) == 3 and any(len(x[\"pools\"]) == 4 for x in r), r"'
run "$P" topology show "$tmp/mixed.json"
check "topology show on a mixed cluster: the first pool, and a warning saying so" '[ $rc -eq 0 ] && has "$out" "mix/h100" && has "$err" "takes pools[0]"'
# plan reads a mixed cluster's own keys as every command does: a misspelt key
# warned about, a bad schema_version refused (plan read only the pools' keys)
python3 - "$ROOT/topologies/mixed-h100-b200.json" "$tmp/mixed-misspelt.json" "$tmp/mixed-schema.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(dict(d, tranport={}), open(sys.argv[2], "w"))
json.dump(dict(d, schema_version=-1), open(sys.argv[3], "w"))
PY
run "$P" plan --model llama3-8b --topology "$tmp/mixed-misspelt.json" --global-batch 64 --top 1
check "plan on a mixed cluster with a misspelt key: planned, the key warned about" '[ $rc -eq 0 ] && has "$err" "tranport: unknown key, ignored (did you mean '"'"'transport'"'"'?)"'
run "$P" plan --model llama3-8b --topology "$tmp/mixed-schema.json" --global-batch 64 --top 1
check "plan on a mixed cluster whose schema_version is -1: exit 3, one line naming it" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "mixed-schema.json: schema_version: expected 1, found -1"'
# a mixed cluster is planned on its pools as they are: --gpus was ignored
# without a word (and bounded by the first pool's 512)
run "$P" plan --model llama3-8b --topology mixed-h100-b200 --gpus 64 --global-batch 64 --top 1
check "plan --gpus on a mixed cluster: exit 2, one line naming --gpus" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--gpus: does not apply to a mixed cluster"'

run "$P" whatif --model llama3-8b --topology "$tmp/mixed.json" --global-batch 16 --sweep 'pools[1].servers=1,2' --json
check "whatif on a mixed cluster: a pool's servers swept, the best plan at each point and where it runs" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
pts = json.load(sys.stdin)[\"points\"]
assert [p[\"gpus\"] for p in pts] == [16, 24], pts
assert [p[\"values\"][\"pools[1].servers\"] for p in pts] == [1, 2], pts
assert all(p[\"result\"] and p[\"result\"][\"pools\"] for p in pts), pts
assert pts[1][\"result\"][\"tokens_per_s\"] >= pts[0][\"result\"][\"tokens_per_s\"], pts"'
run "$P" whatif --model llama3-8b --topology "$tmp/mixed.json" --global-batch 16 --sweep 'pools[2].servers=1'
check "whatif on a mixed cluster: a pool it does not have is a usage error" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "2 pools"'

# --objective memory keeps to a floor on time: without it the least memory is a
# 64-way context-parallel, ZeRO-3 plan at a few percent of MFU
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --objective memory --top 3 --json
check "plan --objective memory: every result within 10% of the fastest step (step_ceiling_s)" '[ $rc -eq 0 ] && python3 -c "
import json, sys
d = json.loads(sys.argv[1])
c = d[\"step_ceiling_s\"]
assert c > 0 and d[\"results\"], d.keys()
assert all(r[\"step_time_s\"] <= c for r in d[\"results\"])
assert all(r[\"mfu\"] > 0.3 for r in d[\"results\"])
" "$out"'
printf '%s\n' "$out" >"$tmp/mem10.json"
run "$P" plan --model llama3-8b --topology dgx-h100-superpod --gpus 64 --global-batch 256 --objective memory --within 1000% --top 1 --json
check "plan --objective memory --within 1000%: 11 x the fastest step, for less memory" '[ $rc -eq 0 ] && python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(sys.argv[2])
assert abs(b[\"step_ceiling_s\"] / a[\"step_ceiling_s\"] - 10.0) < 1e-9
assert b[\"results\"][0][\"memory\"][\"total\"] < a[\"results\"][0][\"memory\"][\"total\"]
" "$tmp/mem10.json" "$out"'
for bad in 0 -5% abc 101; do
    run "$P" plan --model llama3-8b --topology dgx-h100-superpod --global-batch 256 --objective memory --within "$bad"
    check "--within $bad: a one-line usage error" '[ $rc -eq 2 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "--within"'
done

# an overlap no calibration run measures is said, and --conservative costs it exposed
run "$P" estimate --model mixtral-8x7b --topology dgx-h100-superpod --gpus 64 --tp 2 --pp 4 --ep 8 --global-batch 128 --mbs 1 --sequence-parallel --zero 1 --recompute full --schedule dualpipe --json
printf '%s\n' "$out" >"$tmp/dp-free.json"
check "estimate --schedule dualpipe: the all-to-all hidden under F&B is said to be assumed" '[ $rc -eq 0 ] && has "$out" "overlap_assumed"'
run "$P" estimate --model mixtral-8x7b --topology dgx-h100-superpod --gpus 64 --tp 2 --pp 4 --ep 8 --global-batch 128 --mbs 1 --sequence-parallel --zero 1 --recompute full --schedule dualpipe --conservative --json
check "estimate --conservative: the same plan, slower, nothing assumed" '[ $rc -eq 0 ] && ! has "$out" "overlap_assumed" && python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(sys.argv[2])
assert b[\"step_time_s\"] > a[\"step_time_s\"], (a[\"step_time_s\"], b[\"step_time_s\"])
assert b[\"step_time_s\"] >= b[\"floor_s\"]
" "$tmp/dp-free.json" "$out"'

# a recipe that leaves the tensor-parallel overlap off (--tp-overlap=no): the same
# collectives, exposed (slower by at most them), no --tp-comm-overlap launched; a stack
# that never overlaps them is unchanged; a mixed cluster's pools honour it.  tpo_pair
# runs a command as asked (a, kept in tpo-on.json) and with --tp-overlap=no (b, $out);
# tpo.py loads both and runs the assertions it is given
tpo_pair() { run "$P" "$@"; printf '%s\n' "$out" >"$tmp/tpo-on.json"; run "$P" "$@" --tp-overlap=no; }
cat >"$tmp/tpo.py" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(sys.argv[2])
exec(sys.argv[3])
PY
tpo_pair estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --tp 4 --pp 4 --mbs 1 --global-batch 128 --zero 1 --sequence-parallel --flash-attention --json
check "estimate --tp-overlap=no: the TP collectives exposed, no --tp-comm-overlap, tp_overlap false" '[ $rc -eq 0 ] && python3 "$tmp/tpo.py" "$tmp/tpo-on.json" "$out" "
assert abs(a[\"time\"][\"tp_comm\"] - b[\"time\"][\"tp_comm\"]) < 1e-9 * a[\"time\"][\"tp_comm\"]
assert a[\"step_time_s\"] < b[\"step_time_s\"] <= a[\"step_time_s\"] + 1.1 * b[\"time\"][\"tp_comm\"], (a[\"step_time_s\"], b[\"step_time_s\"])
assert b[\"time\"][\"exposed_comm\"] > a[\"time\"][\"exposed_comm\"]
assert \"--tp-comm-overlap\" in a[\"launch\"][\"megatron_args\"] and \"--tp-comm-overlap\" not in b[\"launch\"][\"megatron_args\"]
assert b[\"config\"][\"tp_overlap\"] is False and \"tp_overlap\" not in a[\"config\"]
"'
tpo_pair estimate --model llama3-70b --topology dgx-h100-superpod --gpus 64 --tp 4 --pp 8 --mbs 1 --global-batch 128 --zero 1 --sequence-parallel --flash-attention --json --stack megatron-lm-2023
check "--tp-overlap=no on a stack that never overlaps TP: the same step" '[ $rc -eq 0 ] && python3 "$tmp/tpo.py" "$tmp/tpo-on.json" "$out" "
assert a[\"step_time_s\"] == b[\"step_time_s\"], (a[\"step_time_s\"], b[\"step_time_s\"])
"'
tpo_pair plan --model llama3-70b --topology mixed-h100-b200 --global-batch 1024 --top 1 --json
check "plan --tp-overlap=no on a mixed cluster: the pools costed without the overlap" '[ $rc -eq 0 ] && python3 "$tmp/tpo.py" "$tmp/tpo-on.json" "$out" "
x, y = a[\"results\"][0], b[\"results\"][0]
assert y[\"step_time_s\"] > x[\"step_time_s\"], (x[\"step_time_s\"], y[\"step_time_s\"])
assert y[\"config\"][\"tp\"] == 1 or y[\"config\"][\"tp_overlap\"] is False
"'
# with the overlap off nothing is hidden beside Megatron-FSDP: no result says it assumes so
tpo_pair plan --model llama3-70b --topology dgx-h100-superpod --gpus 64 --global-batch 128 --top 2 --json
check "plan --tp-overlap=no: no result or left-out family assumes the TP overlap beside FSDP" '[ $rc -eq 0 ] && python3 "$tmp/tpo.py" "$tmp/tpo-on.json" "$out" "
said = lambda d: [r.get(\"overlap_assumed\", \"\") for r in d[\"results\"]] + [n[\"result\"].get(\"overlap_assumed\", \"\") for n in d.get(\"not_searched\", []) if n.get(\"result\")]
assert any(\"tensor-parallel\" in x for x in said(a)), said(a)
assert not any(\"tensor-parallel\" in x for x in said(b)), said(b)
"'


# serve (issue 33's first piece): an engine's layouts ranked by output tokens a second,
# each within 90% of a GPU, under the latency targets; the figures consistent
run "$P" serve --model llama3-70b --topology dgx-h100-superpod --gpus 8 --input-len 2048 --output-len 512 --json
check "serve --json: ranked layouts, each fitting, tokens/s the replicas' sum, tp within the server" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert d[\"kv_bytes_per_token\"] == 327680, d
assert r and [x[\"rank\"] for x in r] == list(range(1, len(r) + 1)), r
assert all(a[\"tokens_per_s\"] >= b[\"tokens_per_s\"] for a, b in zip(r, r[1:])), r
assert {x[\"mode\"] for x in r} == {\"aggregated\", \"disaggregated\"}, r
for x in r:
    m = x[\"memory\"]
    assert m[\"weights\"] + m[\"kv_cache\"] <= m[\"capacity\"], x
    b, o = x[\"batch\"], 512
    assert abs(x[\"tokens_per_s\"] - x[\"replicas\"] * x[\"replica_tokens_per_s\"]) <= 1e-9 * x[\"tokens_per_s\"], x
    if x[\"mode\"] == \"aggregated\":
        assert x[\"tp\"] <= 8 and x[\"gpus\"] == x[\"tp\"] * x[\"replicas\"] <= 8 and x[\"prefill_replicas\"] == 0, x
        # the prefills spread over the steps: batch / tpot = b o / (b share + o step)
        assert abs(x[\"tpot_s\"] - x[\"decode_step_s\"] - b / o * x[\"prefill_share_s\"]) <= 1e-9 * x[\"tpot_s\"], x
        assert abs(x[\"replica_tokens_per_s\"] - b / x[\"tpot_s\"]) <= 1e-9 * x[\"replica_tokens_per_s\"], x
        assert x[\"prefill_prompts\"] == min(8192 // 2048, b) and x[\"prefill_share_s\"] <= x[\"ttft_s\"], x
    else:
        p, d = x[\"prefill_replicas\"], x[\"replicas\"]
        assert p >= 1 and d >= 1 and x[\"gpus\"] == p * x[\"prefill_tp\"] + d * x[\"tp\"] <= 8, x
        # no prefill between decode steps; the rate the slower side allows
        assert x[\"tpot_s\"] == x[\"decode_step_s\"] and x[\"kv_transfer_s\"] > 0, x
        rate = min(p / x[\"prefill_share_s\"], d * b / (o * x[\"decode_step_s\"]))
        assert abs(x[\"tokens_per_s\"] - o * rate) <= 1e-9 * x[\"tokens_per_s\"], x"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --gpus 8 --input-len 1024 --output-len 256 --tpot 20ms --ttft 200ms --json
check "serve under --tpot 20ms --ttft 200ms: every layout within them" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"results\"]
assert r and all(x[\"tpot_s\"] <= 0.020 and x[\"ttft_s\"] <= 0.200 for x in r), r"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --input-len 1024 --output-len 256 --tpot 1us
check "serve with a target no layout meets: exit 1, saying which to loosen" '[ $rc -eq 1 ] && has "$err" "loosen --tpot or --ttft"'
run "$P" serve --model deepseek-v3 --topology dgx-h100-superpod --gpus 8 --input-len 1000 --output-len 1000
check "serve: DeepSeek-V3 in bf16 on one 8-GPU server does not fit: exit 1, nor in fp8 (78.1 GiB a GPU), nor with its experts spread" '[ $rc -eq 1 ] && has "$err" "156.2 GiB of bf16 weights a GPU at tensor-parallel size 8" && has "$err" "for pipeline stages of a server each or its experts spread over more GPUs"'
run "$P" serve --model llama3-405b --topology dgx-h100-superpod --gpus 8 --input-len 1000 --output-len 1000
check "serve: Llama 3 405B in bf16 does not fit 8 H100, fp8 would: exit 1 saying so" '[ $rc -eq 1 ] && has "$err" "use --precision fp8 (47.2 GiB a GPU)"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --input-len 1024
check "serve without --output-len: exit 2 naming it" '[ $rc -eq 2 ] && has "$err" "--output-len"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --input-len 1024 --output-len 8 --tpot -3ms
check "serve --tpot -3ms: exit 2 naming it" '[ $rc -eq 2 ] && has "$err" "--tpot"'
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --input-len 1024 --output-len 8 --precision fp4
check "serve --precision fp4: exit 2 (bf16 or fp8)" '[ $rc -eq 2 ] && has "$err" "--precision"'

# measured inference-engine runs (issue 33): predicted, reported per source, nothing fitted
run "$P" validate --runs "$ROOT/tests/data/serve-runs.json" --json
check "validate on serving runs: every run predicted, the error per source family and phase" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r, a = d[\"results\"], d[\"aggregate\"][\"serve\"]
assert d[\"aggregate\"][\"rl\"] is None and len(r) == 81 and a[\"runs\"] == 81 and a[\"not_predicted\"] == 0, a
key = {\"throughput\": \"output_tokens_per_s\", \"decode\": \"output_tokens_per_s_per_gpu\", \"prefill\": \"input_tokens_per_s_per_gpu\"}
for x in r:
    k = key[x[\"phase\"]]
    assert x[\"kind\"] == \"serve\", x
    assert abs(x[\"error\"] - (x[\"predicted\"][k] / x[\"measured\"][k] - 1)) < 1e-9, x
assert [x[\"phase\"] for x in r].count(\"prefill\") == 3 and [x[\"phase\"] for x in r].count(\"decode\") == 1, r
assert abs(a[\"mean_abs_error\"] - sum(abs(x[\"error\"]) for x in r) / len(r)) < 1e-9, a
assert [f[\"family\"] for f in a[\"families\"]] == [\"NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md\", \"LMSYS large-scale EP blog (2025-05-05)\"], a
assert sum(f[\"runs\"] for f in a[\"families\"]) == 81, a"'
# the serving error that serve --help and serve's not-costed note quote is what
# validate computes now: overall in the note, TensorRT-LLM's in the help
serve_validate=$out
run "$P" serve --help
serve_help=$out
run "$P" serve --model llama3-8b --topology dgx-h100-superpod --gpus 8 --input-len 1024 --output-len 256 --json
check "serve's quoted errors are validate's: overall in not_costed, TensorRT-LLM's in --help" '[ $rc -eq 0 ] && python3 -c "
import json, sys
a = json.loads(sys.argv[1])[\"aggregate\"][\"serve\"]
trt = next(f for f in a[\"families\"] if f[\"family\"].startswith(\"NVIDIA/TensorRT-LLM\"))
note = json.dumps(json.loads(sys.argv[3]))
assert \"off by %.1f%%\" % (100 * a[\"mean_abs_error\"]) in note, note
assert \"it is %.1f%% off\" % (100 * trt[\"mean_abs_error\"]) in sys.argv[2].replace(chr(10), \" \"), sys.argv[2]" "$serve_validate" "$serve_help" "$out"'
# a phase run needs its batch or chunk and measures its own figure
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
runs = d[\"runs\"] if isinstance(d, dict) else d
r = next(x for x in runs if x[\"config\"].get(\"phase\") == \"decode\")
del r[\"config\"][\"batch\"]
json.dump([r], open(sys.argv[2], \"w\"))
r[\"config\"][\"batch\"] = 256
r[\"measured\"] = {\"output_tokens_per_s\": 1000}
json.dump([r], open(sys.argv[3], \"w\"))" "$ROOT/tests/data/serve-runs.json" "$tmp/nobatch.json" "$tmp/wrongfigure.json"
run "$P" validate --runs "$tmp/nobatch.json"
check "validate: a decode run without its batch: exit 3, the key named" '[ $rc -eq 3 ] && has "$err" "config.batch"'
run "$P" validate --runs "$tmp/wrongfigure.json"
check "validate: a decode run measuring a replica's throughput: exit 3, the figure named" '[ $rc -eq 3 ] && has "$err" "output_tokens_per_s_per_gpu"'
run "$P" validate --runs "$ROOT/tests/data/rl-runs.json" --json
check "validate on RL steps: each predicted under its stated pins, the error per source" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r, a = d[\"results\"], d[\"aggregate\"][\"rl\"]
assert d[\"aggregate\"][\"serve\"] is None and len(r) == 10 and a[\"runs\"] == 10, a
for x in r:
    p = x[\"predicted\"]
    assert x[\"kind\"] == \"rl\" and abs(x[\"error\"] - (p[\"step_time_s\"] / x[\"measured\"][\"step_time_s\"] - 1)) < 1e-9, x
    on = \"on-policy\" in x[\"id\"]
    assert p[\"placement\"] == (\"colocated\" if on else \"disaggregated\"), x
    assert p[\"pipeline\"] == (\"sync\" if on else \"one-step-async\"), x
assert [p[\"predicted\"][\"engine_tp\"] for p in r] == [1, 1, 4, 2, 4, 4, 32, 32, 16, 8], r
assert [x[\"predicted\"][\"trainer\"][\"tp\"] for x in r][2:] == [2, 1, 4, 4, 1, 1, 2, 4], r
assert [f[\"family\"] for f in a[\"families\"]] == [\"NVIDIA-NeMo/RL docs/about/performance-summary.md\"], a"'
run "$P" validate --runs "$ROOT/tests/data/serve-runs.json" --fit
check "validate --fit on serving runs: exit 2, nothing to fit" '[ $rc -eq 2 ] && has "$err" "--fit: " && has "$err" "no fitted constant"'

# an RL post-training step (issue 33): both placements, the step's parts adding up
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --samples 8 --input-len 512 --output-len 1024 --output-max 4096 --reward-time 2s --json
check "rl: colocated and disaggregated plans, fastest first, each step its parts" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert d[\"workload\"][\"sequences\"] == 512 and d[\"splits_tried\"] == 3, d[\"workload\"]
assert [x[\"rank\"] for x in r] == list(range(1, len(r) + 1)), r
assert all(a[\"step_time_s\"] <= b[\"step_time_s\"] for a, b in zip(r, r[1:])), r
assert {x[\"placement\"] for x in r} == {\"colocated\", \"disaggregated\"}, r
for x in r:
    t = x[\"time_s\"]
    assert t[\"rollout\"] == max(t[\"rollout_work\"], t[\"rollout_tail\"]) and t[\"reward\"] == 2.0, x
    assert x[\"trainer\"][\"global_batch\"] == 512 and x[\"trainer\"][\"gpus\"] == x[\"train_gpus\"], x
    e = x[\"engine\"]
    assert e[\"tp\"] * e[\"replicas\"] == x[\"rollout_gpus\"], x
    assert e[\"memory\"][\"weights\"] + e[\"memory\"][\"kv_cache\"] <= e[\"memory\"][\"capacity\"], x
    if x[\"placement\"] == \"colocated\":
        assert x[\"rollout_gpus\"] == x[\"train_gpus\"] == 32 and x[\"pipeline\"] == \"sync\", x
    else:
        assert x[\"rollout_gpus\"] % 8 == 0 and x[\"rollout_gpus\"] + x[\"train_gpus\"] == 32, x
        assert x[\"sync_bytes\"] == x[\"rollout_gpus\"] * 8030261248 * 2, x
    parts = t[\"rollout\"] + t[\"reward\"]
    want = max(parts, t[\"train\"]) + t[\"sync\"] if x[\"pipeline\"] == \"one-step-async\" else parts + t[\"train\"] + t[\"sync\"] + t[\"offload\"]
    assert abs(x[\"step_time_s\"] - want) <= 1e-9 * want, x
assert d[\"best_colocated\"][\"placement\"] == \"colocated\" and d[\"best_disaggregated\"][\"placement\"] == \"disaggregated\", d
assert r[d[\"best_colocated\"][\"rank\"] - 1] == d[\"best_colocated\"], d
assert \"wins\" in d[\"why\"], d[\"why\"]"'
run "$P" rl --model qwen3-30b-a3b --topology dgx-h100-superpod --gpus 64 --prompts 128 --samples 16 --input-len 512 --output-len 4096 --output-max 16384 --off-policy=no
check "rl --off-policy=no: synchronous plans only, and why the winner wins" '[ $rc -eq 0 ] && ! has "$out" "one-step-async" && has "$out" "why       colocated wins"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 8 --prompts 16 --input-len 512 --output-len 512
check "rl on one server: colocated only, said" '[ $rc -eq 0 ] && has "$out" "only the colocated placement runs" && ! has "$out" "disaggregated  "'
run "$P" rl --model deepseek-v3 --topology dgx-h100-superpod --gpus 16 --prompts 16 --input-len 512 --output-len 512
check "rl: an engine that no layout of 16 GPUs holds: exit 1, the weights a GPU named" '[ $rc -eq 1 ] && [ -z "$out" ] && has "$err" "156.2 GiB of bf16 weights a GPU" && has "$err" "its experts spread over the GPUs did not fit either"'
run "$P" rl --model deepseek-v3 --topology dgx-h100-superpod --gpus 64 --prompts 16 --input-len 512 --output-len 512 --precision fp8
check "rl: DeepSeek-V3 in fp8 on 64 GPUs rolls out on engines with its experts spread" '[ $rc -eq 0 ] && has "$out" " ep"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --input-len 512 --output-len 512
check "rl without --prompts: exit 2 naming it" '[ $rc -eq 2 ] && has "$err" "--prompts"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --prompts 10 --samples 3 --updates 4 --input-len 512 --output-len 512
check "rl --updates that does not divide the sequences: exit 2" '[ $rc -eq 2 ] && has "$err" "--updates: 4 does not divide the 30 sequences"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --prompts 16 --input-len 512 --output-len 1024 --output-max 512
check "rl --output-max below --output-len: exit 2" '[ $rc -eq 2 ] && has "$err" "--output-max: 512 is below --output-len 1024"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --prompts 16 --input-len 512 --output-len 512 --reward-time -1s
check "rl --reward-time -1s: exit 2 naming it" '[ $rc -eq 2 ] && has "$err" "--reward-time"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --prompts 16 --input-len 512 --output-len 512 --precision nvfp4
check "rl --precision nvfp4: exit 2 (bf16 or fp8)" '[ $rc -eq 2 ] && has "$err" "--precision"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --prompts 16 --input-len 512 --output-len 512 --tp 2
check "rl --tp: not an rl option, exit 2" '[ $rc -eq 2 ] && has "$err" "--tp"'

run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --samples 8 --input-len 512 --output-len 1024 --placement disaggregated --rollout-gpus 12 --engine-tp 2 --json
check "rl --placement disaggregated --rollout-gpus 12 --engine-tp 2: that split and engine alone" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert d[\"best_colocated\"] is None and d[\"splits_tried\"] == 1 and \"--placement disaggregated\" in d[\"why\"], d[\"why\"]
assert r and all(x[\"rollout_gpus\"] == 12 and x[\"train_gpus\"] == 20 and x[\"engine\"][\"tp\"] == 2 for x in r), r"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --input-len 512 --output-len 1024 --placement colocated --rollout-gpus 8
check "rl --rollout-gpus with --placement colocated: exit 2" '[ $rc -eq 2 ] && has "$err" "--rollout-gpus: splits the GPUs"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --input-len 512 --output-len 1024 --rollout-gpus 32
check "rl --rollout-gpus all of them: exit 2" '[ $rc -eq 2 ] && has "$err" "--rollout-gpus: 32 leaves none of the 32 GPUs to train"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --input-len 512 --output-len 1024 --engine-tp 3
check "rl --engine-tp 3: exit 2, the heads named" '[ $rc -eq 2 ] && has "$err" "--engine-tp: 3 must divide llama3-8b'"'"'s 32 heads"'
run "$P" rl --model llama3-8b --topology dgx-h100-superpod --gpus 32 --prompts 64 --input-len 512 --output-len 1024 --placement sideways
check "rl --placement sideways: exit 2" '[ $rc -eq 2 ] && has "$err" "--placement"'

finish
