# common.sh - shared by scripts/parplan and scripts/test (sourced, not run).
#
# parplan_deps PKG...   installs the Debian packages that are missing (apt, with a
#                       lock timeout; sudo when not root); progress goes to stderr
# parplan_build DIR [meson setup options...]
#                       configures DIR once (an existing DIR takes the options
#                       anew), then builds it; output to stderr

PARPLAN_BUILD_PACKAGES="gcc libc6-dev meson ninja-build pkg-config libjansson-dev libglpk-dev libltdl-dev"

parplan_deps() {
    missing=""
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $pkg"
        fi
    done
    [ -z "$missing" ] && return 0
    echo "parplan: installing missing packages:$missing" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "parplan: need root (or sudo) to install:$missing" >&2
            return 1
        fi
    fi
    apt="$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -q"
    # shellcheck disable=SC2086
    if ! $apt install -y --no-install-recommends $missing >&2; then
        # a fresh machine may have no package lists yet
        $apt update >&2 || return 1
        # shellcheck disable=SC2086
        $apt install -y --no-install-recommends $missing >&2 || return 1
    fi
}

parplan_build() {
    build_dir=$1
    shift
    if [ ! -f "$build_dir/build.ninja" ]; then
        meson setup "$build_dir" "$@" >&2 || return 1
    elif [ $# -gt 0 ]; then
        # e.g. build/ made by scripts/parplan (no unit tests), then scripts/test
        meson setup --reconfigure "$build_dir" "$@" >&2 || return 1
    fi
    meson compile -C "$build_dir" >&2 || return 1
}
