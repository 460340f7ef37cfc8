#!/usr/bin/env bash
# The JavaScript libraries report.html embeds, from the npm registry, pinned by version and by the
# registry's sha512 integrity. They are read at build time (cmake: TUSK_WEB_LIBS_DIR) and copied
# into every report.html, so a report opens offline; they are never committed to this repo.
# Idempotent: a library already unpacked is left alone.
set -euo pipefail

prefix=${TUSK_WEB_LIBS_DIR:-/usr/local/share/tusk/web}
registry=${NPM_REGISTRY:-https://registry.npmjs.org}

# name version sha512-integrity
libraries=(
  "uplot 1.6.32 KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="
)

sudo_cmd=()
if [[ $(id -u) -ne 0 && ! -w $(dirname "$prefix") ]]; then sudo_cmd=(sudo); fi

for entry in "${libraries[@]}"; do
  read -r name version integrity <<<"$entry"
  target="$prefix/$name-$version"
  if [[ -f $target/package.json ]]; then
    echo "install-web-libs: $name $version present in $target"
    continue
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  url="$registry/$name/-/$name-$version.tgz"
  echo "install-web-libs: fetching $url"
  curl -fsSL --retry 3 -o "$work/package.tgz" "$url"
  got=$(openssl dgst -sha512 -binary "$work/package.tgz" | openssl base64 -A)
  if [[ $got != "$integrity" ]]; then
    echo "install-web-libs: $url has sha512 $got, expected $integrity; not installed" >&2
    exit 1
  fi
  tar -xzf "$work/package.tgz" -C "$work"
  "${sudo_cmd[@]}" mkdir -p "$target"
  "${sudo_cmd[@]}" cp -r "$work/package/." "$target/"
  rm -rf "$work"
  trap - EXIT
  echo "install-web-libs: $name $version installed in $target"
done
