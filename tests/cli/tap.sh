# tap.sh - a tiny TAP producer for the CLI tests (sourced by test_*.sh).
#
# run CMD...      runs a command; sets $rc, $out (stdout) and $err (stderr); when
#                 PARPLAN_WRAPPER is set (valgrind ...), parplan runs again under it
#                 when it ran in under 0.2 s without
# run_once CMD... the same, under the wrapper whenever it is set, run once: for a
#                 command a second run would see differently (writing through a FIFO)
# run_big CMD...  the same, never under the wrapper: for the few runs of over 2 s
#                 of CPU (64K-GPU sweeps, fits), which memcheck would slow to minutes
#                 while smaller runs take the same code paths under it
# check DESC EXPR runs EXPR (a shell command list); prints ok/not ok with context
# skip DESC WHY   records a check that cannot run here
# finish          prints the plan and exits non-zero when a check failed
tap_n=0
tap_failed=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/parplan-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

run() {
    if [ -n "${PARPLAN_WRAPPER:-}" ] && [ "$1" = "${P:-}" ]; then
        # under the wrapper only what runs in under 0.2 s here: memcheck slows a
        # run some 50-fold, and the longer runs (wide searches, sweeps, sizes) take
        # the code paths the short ones take over more configurations; the
        # sanitizer build runs them all
        t0=$(date +%s%N)
        run_big "$@"
        t1=$(date +%s%N)
        [ $((t1 - t0)) -ge 200000000 ] && return
    fi
    run_once "$@"
}

run_once() {
    if [ -n "${PARPLAN_WRAPPER:-}" ] && [ "$1" = "${P:-}" ]; then
        # shellcheck disable=SC2086
        set -- $PARPLAN_WRAPPER "$@"
    fi
    run_big "$@"
}

run_big() {
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}

lines() {
    # number of lines in $1 (0 for an empty string)
    if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l | tr -d ' '; fi
}

has() {
    case "$1" in *"$2"*) return 0 ;; *) return 1 ;; esac
}

check() {
    tap_n=$((tap_n + 1))
    desc=$1
    shift
    if eval "$*"; then
        echo "ok $tap_n - $desc"
    else
        tap_failed=$((tap_failed + 1))
        echo "not ok $tap_n - $desc"
        echo "#   check: $*"
        echo "#   rc=$rc"
        printf '%s\n' "$out" | head -5 | sed 's/^/#   out: /'
        printf '%s\n' "$err" | head -5 | sed 's/^/#   err: /'
    fi
}

skip() {
    tap_n=$((tap_n + 1))
    echo "ok $tap_n - $1 # SKIP $2"
}

finish() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
    exit $?
}
