#!/bin/sh
# test_files.sh PARPLAN SOURCE_ROOT - what -o does to the file it names, and what
# becomes of inputs that are not regular files (issue 12, items 2 and 6).  Works
# in a temp folder with mkfifo, ln and chmod; never touches a real device.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"
d="$tmp/files"
mkdir -p "$d"
left_temps() { find "$d" -name '*.parplan.tmp.*' | wc -l | tr -d ' '; }

# -o keeps a regular file's mode; the content is the new output
echo old >"$d/private"
chmod 600 "$d/private"
run "$P" models -o "$d/private"
check "-o on a mode-0600 file: replaced, still 0600" '[ $rc -eq 0 ] && [ "$(stat -c %a "$d/private")" = 600 ] && grep -q gpt3-175b "$d/private"'

# a symbolic link is followed: the target is written, the link stays a link
echo old >"$d/target"
ln -s target "$d/link"
run "$P" models -o "$d/link"
check "-o on a symlink: the link stays, its target is written" '[ $rc -eq 0 ] && [ -L "$d/link" ] && grep -q gpt3-175b "$d/target"'
ln -s made-by-parplan "$d/dangling"
run "$P" models -o "$d/dangling"
check "-o on a dangling symlink: creates what it names" '[ $rc -eq 0 ] && [ -L "$d/dangling" ] && grep -q gpt3-175b "$d/made-by-parplan"'

# hard links stay one file
echo old >"$d/one"
ln "$d/one" "$d/two"
run "$P" models -o "$d/one"
check "-o on a file with two names: both names see the output" '[ $rc -eq 0 ] && [ "$(stat -c %h "$d/one")" = 2 ] && grep -q gpt3-175b "$d/two"'

# a FIFO is written through, never replaced by a regular file
mkfifo "$d/fifo"
cat "$d/fifo" >"$d/from-fifo" &
reader=$!
run_once "$P" models -o "$d/fifo"
wait $reader
check "-o on a FIFO: written through, still a FIFO" '[ $rc -eq 0 ] && [ -p "$d/fifo" ] && grep -q gpt3-175b "$d/from-fifo"'

# -o - is standard output
run "$P" models -o -
check "-o -: standard output" '[ $rc -eq 0 ] && has "$out" gpt3-175b && [ ! -e ./- ]'

# a directory is a usage error, checked before any work
mkdir "$d/dir"
run "$P" plan --model gpt3-175b --topology dgx-h100-superpod --global-batch 1536 -o "$d/dir"
check "-o on a directory: exit 2, one line, the directory intact" '[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "is a directory" && [ -d "$d/dir" ]'

# -o naming an input is refused and the input stays as it was
cp "$ROOT/models/gpt3-175b.json" "$d/model.json"
run "$P" estimate --model "$d/model.json" --topology dgx-h100-superpod --tp 8 --pp 8 --mbs 1 --global-batch 64 -o "$d/model.json"
check "-o naming the --model file: exit 2, the model intact" '[ $rc -eq 2 ] && has "$err" "--model" && cmp -s "$d/model.json" "$ROOT/models/gpt3-175b.json"'
ln -s model.json "$d/model-link"
run "$P" model show "$d/model.json" -o "$d/model-link"
check "-o reaching an input through a symlink: exit 2, the input intact" '[ $rc -eq 2 ] && cmp -s "$d/model.json" "$ROOT/models/gpt3-175b.json"'
cp "$ROOT/topologies/dgx-h100-superpod.json" "$d/topo.json"
run "$P" plan --model gpt3-175b --topology "$d/topo.json" --global-batch 1536 --top 1 -o "$d/topo.json"
check "-o naming the --topology file: exit 2, the topology intact" '[ $rc -eq 2 ] && has "$err" "--topology" && cmp -s "$d/topo.json" "$ROOT/topologies/dgx-h100-superpod.json"'
run "$P" plan --model gpt3-175b --topology "$ROOT/topologies/dgx-h100-superpod.json" --global-batch 1536 --top 1 -o "$ROOT/topologies/dgx-h100-superpod.json"
check "-o naming a catalogue topology by path: exit 2" '[ $rc -eq 2 ]'
cp "$ROOT/tests/data/balanced_split_run.json" "$d/runs.json"
cp "$d/runs.json" "$d/runs.orig"
run "$P" validate --runs "$d/runs.json" -o "$d/runs.json"
check "-o naming the --runs file: exit 2, the runs intact" '[ $rc -eq 2 ] && has "$err" "--runs" && cmp -s "$d/runs.json" "$d/runs.orig"'

# a write that fails part way leaves neither a truncated file nor a temp file
echo "earlier output" >"$d/kept"
(ulimit -f 1 && exec "$P" models --json -o "$d/kept") >"$tmp/out" 2>"$tmp/err"
rc=$? out=$(cat "$tmp/out") err=$(cat "$tmp/err")
check "-o past the file-size limit: exit 4, the old file whole, no temp file" '[ $rc -eq 4 ] && has "$err" "cannot write" && [ "$(cat "$d/kept")" = "earlier output" ] && [ "$(left_temps)" = 0 ]'
(ulimit -f 1 && exec "$P" models --json -o "$d/new") >"$tmp/out" 2>"$tmp/err"
rc=$? out=$(cat "$tmp/out") err=$(cat "$tmp/err")
check "-o of a new file past the file-size limit: exit 4, no file, no temp" '[ $rc -eq 4 ] && [ ! -e "$d/new" ] && [ "$(left_temps)" = 0 ]'
echo "earlier output" >"$d/linked"
ln "$d/linked" "$d/linked2"
(ulimit -f 1 && exec "$P" models --json -o "$d/linked") >"$tmp/out" 2>"$tmp/err"
rc=$? out=$(cat "$tmp/out") err=$(cat "$tmp/err")
check "-o on a hard-linked file past the limit: exit 4, the old content whole" '[ $rc -eq 4 ] && [ "$(cat "$d/linked2")" = "earlier output" ]'

# /dev/stdout and /dev/fd/N are written through their descriptor, as the shell
# opened it: appending stays appending, a pipe stays a pipe
echo "earlier line" >"$d/appended"
"$P" models -o /dev/stdout >>"$d/appended" 2>"$tmp/err"
rc=$? err=$(cat "$tmp/err") out=""
check "-o /dev/stdout into >>: appended, the earlier line kept" '[ $rc -eq 0 ] && [ "$(head -n 1 "$d/appended")" = "earlier line" ] && grep -q gpt3-175b "$d/appended"'
run sh -c "\"$P\" models -o /dev/stdout | head -n 1"
check "-o /dev/stdout into a pipe: written through" '[ $rc -eq 0 ] && has "$out" model'

# ---- pipes are read (process substitution, /dev/stdin); a FIFO no one writes ends
# in an error within seconds, never a hang (issue 32, item 5)
M="$ROOT/models/llama3-8b.json" T="$ROOT/topologies/dgx-h100-superpod.json"
run sh -c "cat '$M' | '$P' plan --model /dev/stdin --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 1"
check "a model from a pipe (/dev/stdin): planned" '[ $rc -eq 0 ] && has "$out" "llama3-8b on dgx-h100-superpod"'
# plan reads --topology twice (as pools, then as one topology): the pipe's document is kept
run sh -c "cat '$T' | '$P' plan --model llama3-8b --topology /dev/stdin --gpus 64 --global-batch 512 --top 1"
check "a topology from a pipe: planned (the pipe read once)" '[ $rc -eq 0 ] && has "$out" "on dgx-h100-superpod"'
run sh -c "cat '$T' | '$P' whatif --model llama3-8b --topology /dev/stdin --sweep gpus=64,128 --global-batch 512"
check "whatif's topology from a pipe: both points" '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c "^ *[0-9]* *[0-9]* *512 ")" -eq 2 ]'
run sh -c "cat '$ROOT/tests/data/runs.json' | '$P' validate --runs /dev/stdin"
check "validate's runs from a pipe: predicted" '[ $rc -eq 0 ] && has "$out" "mean abs"'
run sh -c "printf '{' | '$P' model show /dev/stdin"
check "a pipe of broken JSON: exit 3, the syntax error" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "invalid JSON"'
mkfifo "$d/in-fifo"
start=$(date +%s)
run timeout 30 "$P" plan --model "$d/in-fifo" --topology dgx-h100-superpod --global-batch 64
check "a FIFO no one writes as --model: exit 3 within seconds, one line" '[ $rc -eq 3 ] && [ $(($(date +%s) - start)) -le 20 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "no data from the pipe"'
# a character device: /dev/zero is only read (opened, refused), never written
run timeout 10 "$P" topology show /dev/zero
check "a character device as a topology: exit 3 at once" '[ $rc -eq 3 ] && has "$err" "not a regular file"'

# a missing path: exit 3 and one line, whatever the command
for cmd in "model show" "topology show" plan estimate memory whatif size validate; do
    case $cmd in
    "model show") run "$P" model show "$d/missing.json" ;;
    "topology show") run "$P" topology show "$d/missing.json" ;;
    plan) run "$P" plan --model "$d/missing.json" --topology dgx-h100-superpod --global-batch 64 ;;
    estimate | memory) run "$P" $cmd --model gpt3-175b --topology "$d/missing.json" --tp 8 --pp 8 --mbs 1 --global-batch 64 ;;
    whatif) run "$P" whatif --model "$d/missing.json" --topology dgx-h100-superpod --sweep gpus=64 ;;
    size) run "$P" size --model gpt3-175b --topology "$d/missing.json" --tokens 1e9 --days 10 ;;
    validate) run "$P" validate --runs "$d/missing.json" ;;
    esac
    check "$cmd with a missing file: exit 3, one line naming it" '[ $rc -eq 3 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "missing.json"'
done

# ---- plan files are inputs like any other (issue 32, item 2): a plan embeds the
# model, topology and constants it was costed on and is costed again on them
sed 's/"layers": 32/"layers": 48/' "$ROOT/models/llama3-8b.json" >"$d/llama3-8b.json"
run "$P" plan --model "$d/llama3-8b.json" --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 2 --json -o "$d/p48.json"
check "a plan from a 48-layer model file named llama3-8b" '[ $rc -eq 0 ] && grep -q "\"layers\": 48" "$d/p48.json"'
stated=$(sed -n 's/.*"step_time_s": \([0-9.e+-]*\).*/\1/p' "$d/p48.json" | head -n 1)
rm "$d/llama3-8b.json"
run "$P" estimate --from "$d/p48.json" --json
got=$(printf '%s\n' "$out" | sed -n 's/.*"step_time_s": \([0-9.e+-]*\).*/\1/p' | head -n 1)
check "costed again on the plan's 48 layers, not the catalogue's 32: the plan's step time" '[ $rc -eq 0 ] && [ -n "$stated" ] && [ "$got" = "$stated" ]'
check "... and a warning names the key where the catalogue's differs" 'has "$err" "inputs.model.layers" && has "$err" "not the catalogue"'
run "$P" compare "$d/p48.json#1" "$d/p48.json#2"
check "compare costs the plan's model too" '[ $rc -eq 0 ] && has "$err" "inputs.model.layers"'
run "$P" report "$d/p48.json" -o "$d/p48.html"
check "report costs the plan's model too, without warning of another step time" '[ $rc -eq 0 ] && has "$err" "inputs.model.layers" && ! has "$err" "costs"'
sed 's/"name": "llama3-8b"/"name": "my-model"/' "$ROOT/models/llama3-8b.json" >"$d/mine.json"
run "$P" plan --model "$d/mine.json" --topology dgx-h100-superpod --gpus 64 --global-batch 512 --top 1 --json -o "$d/pmine.json"
rm "$d/mine.json"
run "$P" estimate --from "$d/pmine.json"
check "a plan of a model no catalogue holds, its file gone: costed again" '[ $rc -eq 0 ] && has "$out" "my-model on dgx-h100-superpod" && [ -z "$err" ]'
# the constants the plan was costed with, said where they differ
sed 's/"h100_gemm": [0-9.e+-]*/"h100_gemm": 0.5/' "$d/pmine.json" >"$d/pk.json"
run "$P" estimate --from "$d/pk.json"
check "a plan costed with other constants: costed again with them, said" '[ $rc -eq 0 ] && has "$err" "inputs.constants.h100_gemm" && has "$err" "0.5"'
# a plan made before plans embedded their inputs: names are catalogue names only
python3 - "$d/pmine.json" "$d/old.json" "$d/traversal.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["inputs"]
d["model"] = "llama3-8b"
json.dump(d, open(sys.argv[2], "w"))
d["model"] = "../../../../etc/passwd"
json.dump(d, open(sys.argv[3], "w"))
PY
run "$P" estimate --from "$d/old.json"
check "a plan without inputs: its catalogue names costed" '[ $rc -eq 0 ] && has "$out" "llama3-8b on dgx-h100-superpod"'
run "$P" estimate --from "$d/traversal.json"
check "a plan field is never opened as a path: exit 3 naming the key, nothing read" '[ $rc -eq 3 ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "traversal.json: model:" && has "$err" "not a catalogue model" && ! has "$err" "JSON"'
# the plan read is never the -o file
cp "$d/pmine.json" "$d/keep.json"
for cmd in estimate compare report; do
    case $cmd in
    estimate) run "$P" estimate --from "$d/pmine.json#1" -o "$d/pmine.json" ;;
    compare) run "$P" compare "$d/pmine.json#1" "$d/pk.json#1" -o "$d/pmine.json" ;;
    report) run "$P" report "$d/pmine.json#1" -o "$d/pmine.json" ;;
    esac
    check "$cmd -o naming the plan it reads: exit 2, the plan kept" '[ $rc -eq 2 ] && has "$err" "the plan this command reads" && cmp -s "$d/pmine.json" "$d/keep.json"'
done
run sh -c "cat '$d/pmine.json' | '$P' estimate --from /dev/stdin"
check "a plan from a pipe: costed" '[ $rc -eq 0 ] && has "$out" "my-model"'

# repeated warnings are capped, with a count of the rest
{
    printf '{"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq_len": 32'
    i=0
    while [ $i -lt 500 ]; do printf ', "junk%d": 1' $i; i=$((i + 1)); done
    printf '}\n'
} >"$d/noisy.json"
run "$P" model show "$d/noisy.json"
check "500 unknown keys: a few warnings and a count of the rest" '[ $rc -eq 0 ] && [ "$(lines "$err")" -le 21 ] && has "$err" "more warnings not shown"'

finish
