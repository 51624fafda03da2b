#!/bin/sh
# test_calibration.sh PARPLAN SOURCE_ROOT - honest calibration (issue 14): stack
# profiles from what ran, cross-validation, constants in one file with their record.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
d="$tmp/cal"
mkdir -p "$d"

# a run's software picks its stack profile; an unknown one is an assumption
run "$P" validate --runs "$ROOT/tests/data/runs-heldout.json" --json
check "validate maps software to profiles (megatron-lm 2021 -> megatron-lm-2021)" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = {x[\"id\"]: x for x in json.load(sys.stdin)[\"results\"]}
assert r[\"narayanan21_t1_529.6B\"][\"stack\"] == \"megatron-lm-2021\", r[\"narayanan21_t1_529.6B\"][\"stack\"]
assert r[\"mbridge26.04.01_h100_LLAMA3_70B_64gpu_FP8\"][\"stack\"] == \"nemo-2025\"
assert r[\"nemo2407_GPT3-175B_128gpu_gbs256\"][\"stack\"] == \"nemo-2024\"
assert r[\"mpt_13b_h100_80gb_128gpu_seq2048_mbs16\"][\"stack\"] == \"fsdp\"
assert not any(x[\"stack_assumed\"] for x in r.values())
"'
run "$P" validate --runs "$ROOT/tests/data/runs.json"
check "a run whose software parplan does not know is marked as an assumption" '[ $rc -eq 0 ] && has "$out" "megatron-core*" && has "$out" "* stack assumed"'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute full --stack megatron-lm-2021 --json
check "--stack takes a profile name" '[ $rc -eq 0 ] && has "$out" "\"stack\": \"megatron-lm-2021\""'
run "$P" estimate --model gpt3-175b --topology dgx-a100-superpod --gpus 1024 --tp 8 --pp 8 --mbs 1 --global-batch 1536 --recompute full --stack legacy --json
check "--stack legacy still names the oldest profile" '[ $rc -eq 0 ] && has "$out" "\"stack\": \"megatron-lm-2021\""'

# cross-validation: each fold predicted with constants fitted on the others
run_big "$P" validate --runs "$ROOT/tests/data/heldout_runs.json" --cv 2 --json
check "validate --cv 2: every run carries its fold, the aggregate says cross-validated" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"aggregate\"][\"constants\"] == \"cross-validated\" and d[\"aggregate\"][\"folds\"] == 2
assert all(r[\"fold\"] in (1, 2) for r in d[\"results\"])
assert 0 <= d[\"aggregate\"][\"within_10_percent\"] <= 1
"'

# leave one source family out: each family predicted from a fit on the others
python3 - "$ROOT/tests/data/heldout_runs.json" "$d/families.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))[:4]
runs[2]["family"] = "a benchmark round"  # named outright, beside two sources' families
json.dump(runs, open(sys.argv[2], "w"))
PY
run_big "$P" validate --runs "$d/families.json" --cv family --json
check "validate --cv family: one fold per family, the error per family and in aggregate" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
cv = d[\"cv\"]
fam = {r[\"id\"]: r[\"family\"] for r in d[\"results\"]}
names = [f[\"family\"] for f in cv[\"families\"]]
assert cv[\"by\"] == \"family\" and cv[\"folds\"] == len(names) == len(set(fam.values())), (cv, fam)
assert \"a benchmark round\" in names and \"arXiv:2104.04473\" in names, names
fold = {}
for r in d[\"results\"]:  # runs of one family share a fold; families do not
    assert fold.setdefault(r[\"family\"], r[\"fold\"]) == r[\"fold\"]
assert len(set(fold.values())) == len(fold)
errs = [abs(r[\"error\"]) for r in d[\"results\"]]
assert abs(cv[\"mean_abs_error\"] - sum(errs) / len(errs)) < 1e-9
assert abs(cv[\"mean_abs_error\"] - d[\"aggregate\"][\"mean_abs_error\"]) < 1e-12
for f in cv[\"families\"]:
    e = [abs(r[\"error\"]) for r in d[\"results\"] if r[\"family\"] == f[\"family\"]]
    assert f[\"runs\"] == len(e) and abs(f[\"mean_abs_error\"] - sum(e) / len(e)) < 1e-9
"'
run_big "$P" validate --runs "$d/families.json" --cv family
check "validate --cv family prints the table by source family" '[ $rc -eq 0 ] && has "$out" "by source family:" && has "$out" "a benchmark round" && has "$out" "leaving out each of"'
run "$P" validate --runs "$d/families.json" --cv families
check "--cv takes a fold count or family, nothing else (exit 2)" '[ $rc -eq 2 ] && has "$err" "--cv: expected a fold count from 2 to 1000 or '"'"'family'"'"'"'

# the committed constants are what the recorded fit returns (src/base/constants.c
# keeps them to four significant digits)
run_big "$P" validate --runs "$ROOT/tests/data/runs-fit.json" --fit --json -o "$d/committed.json"
check "validate --fit on tests/data/runs-fit.json returns the committed constants" '[ $rc -eq 0 ] && python3 -c "
import json, re, sys
src = open(sys.argv[2]).read()
block = src[src.index(\"static const ppl_constants committed = {\"):]
block = block[:block.index(\"};\")]
committed = {k: float(v) for k, v in re.findall(r\"\\.(\\w+) = ([-0-9.e]+),\", block)}
fitted = json.load(open(sys.argv[1]))[\"constants\"]
assert set(committed) == set(fitted), (committed, fitted)
bad = {k: (committed[k], fitted[k]) for k in fitted
       if abs(committed[k] - fitted[k]) > 5e-4 * max(abs(fitted[k]), 1e-3)}
assert not bad, bad
" "$d/committed.json" "$ROOT/src/base/constants.c"'

# a fit writes a constants file with its record; --constants reads it back
run_big "$P" validate --runs "$ROOT/tests/data/heldout_runs.json" --fit --json -o "$d/k.json"
check "validate --fit --json: the constants and how they were fitted" '[ $rc -eq 0 ] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d[\"constants\"]) == 14, d[\"constants\"]
f = d[\"fit\"]
assert f[\"start\"] == \"hand-set\" and len(f[\"runs_fnv1a64\"]) == 16 and f[\"mean_abs_error\"] >= 0
assert all(lo <= d[\"constants\"][k] <= hi for k, (lo, hi) in f[\"within_half_a_point\"].items())
" "$d/k.json"'
run_big "$P" validate --runs "$ROOT/tests/data/heldout_runs.json" --fit --json -o "$d/k2.json"
check "the fit is deterministic: the same file twice" '[ $rc -eq 0 ] && cmp -s "$d/k.json" "$d/k2.json"'
run "$P" validate --runs "$ROOT/tests/data/heldout_runs.json" --constants "$d/k.json" --json
check "validate --constants FILE reproduces the fit's error" '[ $rc -eq 0 ] && python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))[\"fit\"][\"mean_abs_error\"]
b = json.loads(sys.argv[2])[\"aggregate\"][\"mean_abs_error\"]
assert abs(a - b) < 1e-9, (a, b)
" "$d/k.json" "$out"'
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --top 1 --constants "$d/k.json"
check "plan --constants FILE costs with them" '[ $rc -eq 0 ] && has "$out" "gpt3-175b"'
printf '{"constants": {"h100_gemm": 0.7, "h100_gem": 0.6}}\n' >"$d/typo.json"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --constants "$d/typo.json"
check "a misspelt constant is exit 3 naming it" '[ $rc -eq 3 ] && has "$err" "constants.h100_gem: unknown constant"'
printf '{"constants": {"h100_gemm": 7}}\n' >"$d/range.json"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --constants "$d/range.json"
check "a constant outside its bounds is exit 3 naming it" '[ $rc -eq 3 ] && has "$err" "constants.h100_gemm"'
printf '{"constants": {"pp_overlap": 0.5}}\n' >"$d/retired.json"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --constants "$d/retired.json"
check "a constant no longer fitted (pp_overlap) is exit 3 saying so" '[ $rc -eq 3 ] && has "$err" "constants.pp_overlap: no longer fitted"'
printf '{"constants": {"hbm": 0.9}}\n' >"$d/retired.json"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --constants "$d/retired.json"
check "a constant no longer fitted (hbm) is exit 3 saying what replaced it" '[ $rc -eq 3 ] && has "$err" "constants.hbm: no longer fitted (element-wise kernels run at the streaming share"'
printf '{"constants": {"tp_overlap": 0.62}}\n' >"$d/retired.json"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 --constants "$d/retired.json"
check "a constant no longer fitted (tp_overlap) is exit 3 saying what replaced it" '[ $rc -eq 3 ] && has "$err" "constants.tp_overlap: no longer fitted (tensor-parallel collectives hide under the GEMMs"'

# Megatron-Core's own release numbers map to their era; the +10% memory retry
# still reports the real GPU
python3 - "$ROOT/tests/data/runs.json" "$d/mcore.json" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1])) if r["id"] == "megatron_llama_example_LLAMA3-70B_64gpu"]
a = dict(runs[0], id="old", software={"framework": "megatron-core", "version": "0.8.0"})
b = dict(runs[0], id="new", software={"framework": "megatron-core", "version": "v0.12.1"})
c = dict(runs[0], id="odd", software={"framework": "megatron-core", "version": "main"})
json.dump([a, b, c], open(sys.argv[2], "w"))
PY
run "$P" validate --runs "$d/mcore.json" --json
check "megatron-core 0.8 -> megatron-core, 0.12 -> nemo-2025, an unreadable version is an assumption" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = {x[\"id\"]: x for x in json.load(sys.stdin)[\"results\"]}
assert r[\"old\"][\"stack\"] == \"megatron-core\" and not r[\"old\"][\"stack_assumed\"]
assert r[\"new\"][\"stack\"] == \"nemo-2025\" and not r[\"new\"][\"stack_assumed\"]
assert r[\"odd\"][\"stack_assumed\"]
"'
run "$P" validate --runs "$ROOT/tests/data/runs.json" --json
check "a run predicted within the memory uncertainty reports the real GPU's capacity, not fitting" 'printf "%s" "$out" | python3 -c "
import json, sys
over = [x for x in json.load(sys.stdin)[\"results\"] if x[\"over_memory\"]]
assert over, \"no run over memory\"
for x in over:
    m = x[\"predicted\"][\"memory\"]
    assert m[\"fits\"] is False and m[\"total\"] > m[\"capacity\"], m
"'

# SPEC 1.1: validate never stops at one run it cannot predict
python3 - "$ROOT/tests/data/heldout_runs.json" "$d/with-bad.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
bad = dict(runs[0], id="cannot-fit")
bad["config"] = dict(bad["config"], gpus=8, tp=1, pp=1, dp=8, mbs=1, global_batch=8)
bad["model"] = "megatron-1t"
json.dump(runs[:2] + [bad], open(sys.argv[2], "w"))
PY
run "$P" validate --runs "$d/with-bad.json" --json
check "a run that cannot be predicted: predicted null with why, the others reported, exit 1" '[ $rc -eq 1 ] && printf "%s" "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"results\"]
assert len(r) == 3 and r[2][\"predicted\"] is None and r[2][\"error_message\"]
assert r[0][\"predicted\"] is not None
"'

# MLPerf Training's rounds (GPT-3, Llama 3.1 405B), never fitted (docs/accuracy.md): every run is
# predicted under the profile its software names, each round its own family, and
# the step times stay within 12% on average (8.8% over the 22 v4.0-v5.0 runs when they
# were added; 8.6% with v3.1's six)
run "$P" validate --runs "$ROOT/tests/data/runs-mlperf.json" --json
check "the MLPerf Training runs: every one predicted, by round, within 12% on average" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert len(r) >= 22 and all(x[\"predicted\"] is not None for x in r), [x[\"id\"] for x in r if x[\"predicted\"] is None]
assert all(x[\"family\"].startswith(\"mlperf-training-v\") for x in r), set(x[\"family\"] for x in r)
assert d[\"aggregate\"][\"constants\"] == \"as committed\"
assert d[\"aggregate\"][\"mean_abs_error\"] <= 0.12, d[\"aggregate\"]
"'

# AMD's published training throughput (docs/accuracy.md), never fitted: four runs on
# MI325X and MI355X, whose kernels take H100's fitted fractions (assumed); every one
# predicted, their own family, within 20% on average (11.0% when they were added)
run "$P" validate --runs "$ROOT/tests/data/runs-amd.json" --json
check "AMD's runs: every one predicted, one family, within 20% on average" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert len(r) == 4 and all(x[\"predicted\"] is not None for x in r), [x[\"id\"] for x in r if x[\"predicted\"] is None]
assert {x[\"family\"] for x in r} == {\"amd-rocm-performance-results\"}
assert d[\"aggregate\"][\"mean_abs_error\"] <= 0.20, d[\"aggregate\"]
"'

# The three ZeRO-3 rows of Narayanan et al.'s Table 2 the calibration does not hold
# (docs/accuracy.md), never fitted: every one predicted under deepspeed-zero3-2021,
# each within 15% and within 10% on average (7.7%, 13.0% max when they were added).
# Costed with the gathers hidden under the compute (prefetch), the two rows that
# compute four microbatches a GPU come out 19-33% too fast at the committed share
run "$P" validate --runs "$ROOT/tests/data/runs-zero3-2021.json" --json
check "the other ZeRO-3 rows of the 2021 paper: every one predicted, each within 15%" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert len(r) == 3 and all(x[\"predicted\"] is not None for x in r), [x[\"id\"] for x in r if x[\"predicted\"] is None]
assert all(x[\"stack\"] == \"deepspeed-zero3-2021\" for x in r), [x[\"stack\"] for x in r]
assert all(abs(x[\"error\"]) <= 0.15 for x in r), [(x[\"id\"], x[\"error\"]) for x in r]
assert d[\"aggregate\"][\"mean_abs_error\"] <= 0.10, d[\"aggregate\"]
"'

# Long sequences, never fitted (docs/accuracy.md): NeMo's long-sequence table, LLAMA2-7B
# in fp8 on DGX-H100 (NeMo 24.03.01) from 4K to 1,024K tokens on 4 to 1,024 GPUs, its
# context-parallel configurations; every run predicted, one family, within 20% each and
# 12% on average (7.3% mean, 10.2% max, all predicted fast, when their recipe's
# tensor-parallel overlap, off, was costed; 8.9% and 13.5% with it assumed on)
run "$P" validate --runs "$ROOT/tests/data/runs-long-context.json" --json
check "the long-sequence runs: every one predicted, one family, each within 20%" '[ $rc -eq 0 ] && printf "%s" "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d[\"results\"]
assert len(r) == 9 and all(x[\"predicted\"] is not None for x in r), [x[\"id\"] for x in r if x[\"predicted\"] is None]
assert {x[\"family\"] for x in r} == {\"NVIDIA/NeMo docs/source/performance/performance_long_sequence.md\"}
assert all(abs(x[\"error\"]) <= 0.20 for x in r), [(x[\"id\"], x[\"error\"]) for x in r]
assert d[\"aggregate\"][\"mean_abs_error\"] <= 0.12, d[\"aggregate\"]
"'
printf '%s\n' "$out" >"$d/long-off.json"
# the same rows without their recipe's "tp_overlap": false: the tensor-parallel
# collectives hidden again, so every row with tp > 1 is predicted faster, the others
# as before
python3 -c "
import json, sys
runs = json.load(open(sys.argv[1]))
for r in runs:
    del r[\"config\"][\"tp_overlap\"]
json.dump(runs, open(sys.argv[2], \"w\"))
" "$ROOT/tests/data/runs-long-context.json" "$d/long-on.json"
run "$P" validate --runs "$d/long-on.json" --json
check "a run's tp_overlap false is read: its TP collectives exposed, only where tp > 1" '[ $rc -eq 0 ] && python3 -c "
import json, sys
off = {x[\"id\"]: x for x in json.load(open(sys.argv[1]))[\"results\"]}
on = {x[\"id\"]: x for x in json.loads(sys.argv[2])[\"results\"]}
tp = {r[\"id\"]: r[\"config\"][\"tp\"] for r in json.load(open(sys.argv[3]))}
assert set(off) == set(on) == set(tp)
for k in tp:
    a, b = on[k][\"predicted\"][\"step_time_s\"], off[k][\"predicted\"][\"step_time_s\"]
    assert (a < b) if tp[k] > 1 else (a == b), (k, tp[k], a, b)
" "$d/long-off.json" "$out" "$ROOT/tests/data/runs-long-context.json"'

finish
