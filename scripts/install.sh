#!/usr/bin/env bash
# Install mam from a release: detect OS/arch, download the binary and SHA256SUMS, verify the
# checksum, install to ~/.local/bin (or the given folder).
#
#   curl -fsSL https://github.com/multi-agent-mux/mam/releases/latest/download/install.sh | bash
#   bash install.sh [--version 0.2.0] [--dir ~/bin]
#
# MAM_RELEASE_URL overrides where releases come from (a folder holding the artefacts and
# SHA256SUMS; https://, http:// or file://). MAM_GITHUB_REPO (owner/name) picks the GitHub repo.
set -euo pipefail

version="latest"
dir="${HOME}/.local/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="${2:?--version needs a value}"; shift 2 ;;
    --dir) dir="${2:?--dir needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
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
suffix="$os-$arch"
if [ "$os" = linux ] && [ "$arch" = x64 ]; then
  if ls /lib/ld-musl-* >/dev/null 2>&1 || (ldd --version 2>&1 | grep -qi musl); then suffix="linux-x64-musl"; fi
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

fetch "$base/$name" "$tmp/mam" || die "cannot download $base/$name"
if command -v sha256sum >/dev/null; then got="$(sha256sum "$tmp/mam" | awk '{print $1}')"
else got="$(shasum -a 256 "$tmp/mam" | awk '{print $1}')"; fi
[ "$got" = "$want" ] || die "checksum mismatch for $name (got $got, want $want); nothing installed"

mkdir -p "$dir"
chmod 0755 "$tmp/mam"
mv -f "$tmp/mam" "$dir/mam"
echo "installed $("$dir/mam" --version) to $dir/mam"
case ":$PATH:" in *":$dir:"*) ;; *) echo "note: $dir is not on your PATH" >&2 ;; esac
