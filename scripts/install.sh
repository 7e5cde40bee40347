#!/usr/bin/env bash
# Install mam from a release: detect OS, CPU and (on Linux) the C library the system runs on,
# download the binary and SHA256SUMS, verify the checksum, check that the binary runs
# (`mam --version`), and only then put it in place (default ~/.local/bin). A binary that does
# not run is refused and the installed one, if any, is kept.
#
#   curl -fsSL https://github.com/multi-agent-mux/mam/releases/latest/download/install.sh | bash
#   bash install.sh [--version 0.2.0] [--dir ~/bin] [--libc glibc|musl] [--cpu avx2|baseline]
#
# MAM_RELEASE_URL overrides where releases come from (a folder holding the artefacts and
# SHA256SUMS; https://, http:// or file://). MAM_GITHUB_REPO (owner/name) picks the GitHub repo.
# The libc is what `ldd --version` says, else `getconf GNU_LIBC_VERSION`, else the loader
# /bin/sh is linked against (a musl loader that merely exists, as on Debian with the musl
# package, does not count). The musl build needs musl's libstdc++ and libgcc at run time
# (Alpine: apk add libstdc++ libgcc).
# On x64 the default build needs a CPU with AVX2 (without it the binary dies of SIGILL): the CPU's
# flags decide (/proc/cpuinfo, or MAM_CPUINFO naming another file; sysctl on macOS), and a Linux
# glibc system without AVX2 gets the linux-x64-baseline build. --cpu overrides.
set -euo pipefail

version="latest"
dir="${HOME}/.local/bin"
libc=""
cpu=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="${2:?--version needs a value}"; shift 2 ;;
    --dir) dir="${2:?--dir needs a value}"; shift 2 ;;
    --libc) libc="${2:?--libc needs a value: glibc or musl}"; shift 2 ;;
    --cpu) cpu="${2:?--cpu needs a value: avx2 or baseline}"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

die() { echo "install.sh: $*" >&2; exit 1; }

os="$(uname -s)"
case "$os" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "unsupported OS: $os (mam ships linux and darwin binaries)" ;;
esac
arch="$(uname -m)"
case "$arch" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "unsupported CPU: $arch (mam ships x64 and arm64 binaries)" ;;
esac

# the C library of this system: glibc, musl or "" (unknown). Not "is a musl loader installed":
# Debian's musl package installs /lib/ld-musl-* next to glibc.
detect_libc() {
  local v interp
  v="$(ldd --version 2>&1 || true)"
  case "$v" in
    *musl*) echo musl; return ;;
    *GLIBC*|*"GNU libc"*|*"GNU C Library"*) echo glibc; return ;;
  esac
  if getconf GNU_LIBC_VERSION >/dev/null 2>&1; then echo glibc; return; fi
  # the program interpreter of /bin/sh (PT_INTERP is near the start of the file)
  interp="$(head -c 4096 /bin/sh 2>/dev/null | tr -c '[:print:]' '\n' | grep -m1 -E '/ld-(musl|linux)' || true)"
  case "$interp" in
    *ld-musl*) echo musl ;;
    *ld-linux*) echo glibc ;;
    *) echo "" ;;
  esac
}

# does this x64 CPU have AVX2: avx2, baseline or "" (unknown: the default build is tried)
detect_cpu() {
  local f="${MAM_CPUINFO:-/proc/cpuinfo}" flags v
  if [ "$os" = linux ]; then
    flags="$(grep -m1 '^flags' "$f" 2>/dev/null || true)"
    [ -n "$flags" ] || { echo ""; return; }
    case " $flags " in *" avx2 "*) echo avx2 ;; *) echo baseline ;; esac
  else
    v="$(sysctl -n machdep.cpu.leaf7_features 2>/dev/null || true)"
    case "$v" in "") echo "" ;; *AVX2*) echo avx2 ;; *) echo baseline ;; esac
  fi
}

case "$cpu" in
  ""|avx2|baseline) ;;
  *) echo "install.sh: --cpu must be avx2 or baseline, not '$cpu'" >&2; exit 2 ;;
esac
[ "$arch" = x64 ] && [ -z "$cpu" ] && cpu="$(detect_cpu)"
suffix="$os-$arch"
if [ "$os" = linux ]; then
  case "$libc" in
    "") libc="$(detect_libc)"; [ -n "$libc" ] || libc=glibc ;;
    glibc|musl) ;;
    *) echo "install.sh: --libc must be glibc or musl, not '$libc'" >&2; exit 2 ;;
  esac
  if [ "$libc" = musl ]; then
    suffix="linux-$arch-musl"
    [ "$arch" = x64 ] && [ "$cpu" = baseline ] && die "mam's musl build for x64 needs a CPU with AVX2 and this one has none; on a glibc system pass --libc glibc (its baseline build runs on any x64 CPU)"
  elif [ "$arch" = x64 ] && [ "$cpu" = baseline ]; then
    suffix="linux-x64-baseline"
  fi
elif [ "$arch" = x64 ] && [ "$cpu" = baseline ]; then
  die "mam's macOS x64 build needs a CPU with AVX2 and this one has none"
fi

repo="${MAM_GITHUB_REPO:-multi-agent-mux/mam}"
if [ -n "${MAM_RELEASE_URL:-}" ]; then
  base="${MAM_RELEASE_URL%/}"
elif [ "$version" = latest ]; then
  base="https://github.com/$repo/releases/latest/download"
else
  base="https://github.com/$repo/releases/download/v${version#v}"
fi

fetch() { # url dest
  case "$1" in
    file://*) cp "${1#file://}" "$2" ;;
    *) if command -v curl >/dev/null; then curl -fsSL "$1" -o "$2"
       elif command -v wget >/dev/null; then wget -q "$1" -O "$2"
       else die "neither curl nor wget found"; fi ;;
  esac
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || die "cannot download $base/SHA256SUMS"

if [ "$version" = latest ]; then
  name="$(awk '{print $2}' "$tmp/SHA256SUMS" | grep -E "^mam-[0-9][^ ]*-${suffix}\$" | head -n1 || true)"
else
  name="mam-${version#v}-$suffix"
fi
[ -n "$name" ] || die "no mam binary for $suffix in $base/SHA256SUMS"
want="$(awk -v n="$name" '$2 == n {print $1}' "$tmp/SHA256SUMS")"
[ -n "$want" ] || die "$name is not listed in SHA256SUMS"

echo "install.sh: $name (${os}${libc:+, $libc}${cpu:+, $cpu})" >&2
fetch "$base/$name" "$tmp/mam" || die "cannot download $base/$name"
if command -v sha256sum >/dev/null; then got="$(sha256sum "$tmp/mam" | awk '{print $1}')"
else got="$(shasum -a 256 "$tmp/mam" | awk '{print $1}')"; fi
[ "$got" = "$want" ] || die "checksum mismatch for $name (got $got, want $want); nothing installed"

# try the binary where it will live (a noexec /tmp must not fail a good binary), then rename it
# over the old one in one step; a binary that does not run never replaces anything
mkdir -p "$dir" || die "cannot create $dir"
new="$dir/.mam-install.$$"
trap 'rm -rf "$tmp"; rm -f "$new"' EXIT
cp "$tmp/mam" "$new" && chmod 0755 "$new" || die "cannot write $new"
if ! out="$("$new" --version 2>&1)" || [ "${out#mam }" = "$out" ]; then
  hint="download the right build by hand from $base"
  [ "$suffix" = linux-x64-musl ] && hint="the musl build needs musl's libstdc++ and libgcc (Alpine: apk add libstdc++ libgcc); on a glibc system pass --libc glibc"
  [ "$suffix" = linux-x64 ] && hint="if this CPU has no AVX2 (a SIGILL), pass --cpu baseline"
  kept="nothing installed"
  [ -e "$dir/mam" ] && kept="kept the installed $dir/mam"
  die "$name does not run on this system ($(printf '%s' "$out" | head -n1)); $kept; $hint"
fi
mv -f "$new" "$dir/mam"
echo "installed $out to $dir/mam"
case ":$PATH:" in *":$dir:"*) ;; *) echo "note: $dir is not on your PATH" >&2 ;; esac
