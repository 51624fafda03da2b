#!/bin/sh
# test_bad_inputs.sh PARPLAN SOURCE_ROOT - every file in tests/bad/ is refused with
# exit 3 and one line on stderr that names the file and the key (tests/bad/EXPECTED).
# model-* files go through 'model show', runs-* through 'validate --runs', plan-*
# through 'estimate --from', the rest through 'topology show'.
P=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$2
. "$ROOT/tests/cli/tap.sh"

while IFS='	' read -r file expect; do
    case "$file" in '' | '#'*) continue ;; esac
    path="$ROOT/tests/bad/$file"
    case "$file" in
    model-*) run "$P" model show "$path" ;;
    runs-*) run "$P" validate --runs "$path" ;;
    plan-*) run "$P" estimate --from "$path" ;;
    *) run "$P" topology show "$path" ;;
    esac
    check "$file: exit 3, one line naming the file and '$expect'" '[ $rc -eq 3 ] && [ -z "$out" ] && [ "$(lines "$err")" -eq 1 ] && has "$err" "parplan: $path" && has "$err" "$expect"'
done <"$ROOT/tests/bad/EXPECTED"

# every bad file is listed, and there are at least 30
listed=$(grep -c '\.json	' "$ROOT/tests/bad/EXPECTED")
present=$(ls "$ROOT/tests/bad/" | grep -c '\.json$')
check "EXPECTED lists all $present bad files (at least 30)" '[ "$listed" -eq "$present" ] && [ "$present" -ge 30 ]'

finish
