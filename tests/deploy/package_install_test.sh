#!/usr/bin/env bash
# Builds the Debian packages and installs them the way a user would, in a fresh Debian root.
#
#   tests/deploy/package_install_test.sh BUILD_DIR VERSION [TARGET]...
#
# 1. builds TARGETs (what the install rules ship) and runs `cpack -G DEB` on BUILD_DIR's
#    CPackConfig.cmake, into a scratch folder;
# 2. checks both packages with dpkg-deb: paths under /usr only, no /etc/tusk/agent.yaml, no
#    maintainer scripts but tusk-agent's postinst, which makes the unit's user and enables or
#    starts nothing, no -dev package in Depends;
# 3. makes a minimal root of the host's Debian release with mmdebstrap (variant apt, no
#    recommends, from the host's Debian sources), and inside it (chroot) runs
#    `apt-get install -y ./tusk-agent_*.deb ./tusk-controller_*.deb`, so apt resolves the
#    dependencies from the archive; then checks --version, `tusk-controller validate` on every
#    shipped profile, that every shared library resolves, the DPDK drivers and verbs providers,
#    where the files landed and that the unit is not enabled.
# Exit 77 (skipped) only when not root (mmdebstrap --mode=root and chroot) or when the Debian
# archive cannot be reached; anything else missing is a failure. The scratch folder and the root
# are removed on exit.
set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR VERSION [TARGET]..." >&2; exit 2; }
build_dir=$(realpath "$1")
version=$2
shift 2
targets=()
for t in "$@"; do [[ -n $t ]] && targets+=("$t"); done

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root (mmdebstrap --mode=root and chroot into the new root)"
  exit 77
fi
for tool in cmake cpack dpkg-deb dpkg-shlibdeps mmdebstrap chroot; do
  command -v "$tool" >/dev/null || {
    echo "FAIL: $tool is not installed (Debian: apt-get install cmake dpkg-dev mmdebstrap)"
    exit 1
  }
done

start=$SECONDS
phase_start=$SECONDS
timings=()
phase_done() { timings+=("$1: $((SECONDS - phase_start)) s"); phase_start=$SECONDS; }

work=$(mktemp -d /tmp/tusk-package-test.XXXXXX)
cleanup() {
  # mmdebstrap unmounts what it mounted, also on failure; this is for a test killed half-way.
  local mounts
  mounts=$(awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r)
  for m in $mounts; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

# --- 1. the packages ---------------------------------------------------------------------------
if [[ ${#targets[@]} -gt 0 ]]; then
  cmake --build "$build_dir" --target "${targets[@]}" || fail "building ${targets[*]}"
fi
[[ -f $build_dir/CPackConfig.cmake ]] || fail "$build_dir/CPackConfig.cmake is missing (cmake/packaging.cmake)"
mkdir "$work/packages"
cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/packages" > "$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"
  fail "cpack -G DEB"
}
shopt -s nullglob
agent_debs=("$work"/packages/tusk-agent_*.deb)
controller_debs=("$work"/packages/tusk-controller_*.deb)
shopt -u nullglob
[[ ${#agent_debs[@]} -eq 1 && ${#controller_debs[@]} -eq 1 ]] || {
  ls -l "$work/packages"
  fail "expected one tusk-agent_*.deb and one tusk-controller_*.deb"
}
phase_done "cpack -G DEB"

# --- 2. the packages' metadata and contents ----------------------------------------------------
for deb in "${agent_debs[0]}" "${controller_debs[0]}"; do
  name=$(basename "$deb")
  echo "--- $name"
  dpkg-deb -I "$deb"
  control=$(dpkg-deb -f "$deb")
  depends=$(dpkg-deb -f "$deb" Depends)
  [[ -n $depends ]] || fail "$name: no Depends (dpkg-shlibdeps did not run?)"
  if grep -Eq -- '-dev([ ,(]|$)' <<<"$depends"; then fail "$name depends on a -dev package: $depends"; fi
  grep -q '^Section: net$' <<<"$control" || fail "$name: Section is not net"
  grep -q "^Version: $version" <<<"$control" || fail "$name: Version is not $version"
  grep -q '^Maintainer: .*<.*@.*>' <<<"$control" || fail "$name: no Maintainer"
  mkdir "$work/control-$name"
  dpkg-deb -e "$deb" "$work/control-$name"
  for script in preinst postinst prerm postrm; do
    [[ $name == tusk-agent_* && $script == postinst ]] && continue
    [[ ! -e $work/control-$name/$script ]] || fail "$name has a $script: the packages must not enable or start anything"
  done
  dpkg-deb -c "$deb" | awk '{ print $NF }' > "$work/contents-$name"
  cat "$work/contents-$name"
  outside=$(grep -Ev '^\./$|^\./usr/' "$work/contents-$name" || true)
  [[ -z $outside ]] || fail "$name ships files outside /usr: $outside"
  ! grep -q '^\./usr/local/' "$work/contents-$name" || fail "$name ships files under /usr/local"
done
grep -qx './usr/bin/tusk-agent' "$work/contents-$(basename "${agent_debs[0]}")" || fail "tusk-agent package lacks /usr/bin/tusk-agent"
# tusk-agent's postinst makes the unit's user (checked in the root below) and touches no service.
agent_postinst="$work/control-$(basename "${agent_debs[0]}")/postinst"
[[ -x $agent_postinst ]] || fail "tusk-agent has no executable postinst to make the unit's user _tusk"
! grep -Eq 'systemctl|deb-systemd|invoke-rc\.d|update-rc\.d' "$agent_postinst" ||
  fail "tusk-agent's postinst enables or starts a service: $(cat "$agent_postinst")"
grep -qx './usr/bin/tusk-controller' "$work/contents-$(basename "${controller_debs[0]}")" ||
  fail "tusk-controller package lacks /usr/bin/tusk-controller"
# Each package carries its program's man page and bash completion.
for program in tusk-agent tusk-controller; do
  debs_var="${program#tusk-}_debs[0]"
  contents="$work/contents-$(basename "${!debs_var}")"
  grep -qx "./usr/share/man/man1/$program.1.gz" "$contents" || fail "$program package lacks its man page"
  grep -qx "./usr/share/bash-completion/completions/$program" "$contents" || fail "$program package lacks its completion"
done
grep -qx './usr/share/man/man5/tusk-profile.5.gz' "$work/contents-$(basename "${controller_debs[0]}")" ||
  fail "tusk-controller package lacks tusk-profile(5), the profile reference"
phase_done "dpkg-deb checks"

# --- 3. a fresh Debian root ----------------------------------------------------------------------
suite=$( . /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $suite ]] || suite=bookworm
# The host's own Debian sources (deb822 or one-line), without third-party repositories.
mirrors=()
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] && grep -Eq '^URIs:.*\.debian\.org' "$f" && mirrors+=("$f")
done
grep -Ehs '^deb .*\.debian\.org' /etc/apt/sources.list /etc/apt/sources.list.d/*.list > "$work/host.list" || true
[[ -s $work/host.list ]] && mirrors+=("$work/host.list")
if [[ ${#mirrors[@]} -eq 0 ]]; then
  printf 'deb http://deb.debian.org/debian %s main\ndeb http://deb.debian.org/debian %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
    "$suite" "$suite" "$suite" > "$work/default.list"
  mirrors=("$work/default.list")
fi
# Is the archive there? The first URI of the sources, through apt's own downloader (proxies too).
uri=$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' \
        "${mirrors[@]}" | head -n 1)
if ! timeout 60 /usr/lib/apt/apt-helper download-file "${uri%/}/dists/$suite/Release" "$work/Release" \
       > "$work/reach.log" 2>&1; then
  cat "$work/reach.log"
  echo "SKIP: the Debian archive ($uri) cannot be reached"
  exit 77
fi

cp "${agent_debs[0]}" "${controller_debs[0]}" "$work/"
# Runs on the host after mmdebstrap made the root, with the root as $1; mmdebstrap has /proc,
# /sys and /dev mounted in it and /etc/resolv.conf copied in.
cat > "$work/inside.sh" <<'HOOK'
#!/usr/bin/env bash
set -euo pipefail
root=$1 work=$2 version=$3
fail() { echo "FAIL: $*"; exit 1; }
in_root() { chroot "$root" "$@"; }

mkdir -p "$root/tmp/tusk-debs"
cp "$work"/tusk-agent_*.deb "$work"/tusk-controller_*.deb "$root/tmp/tusk-debs/"
# What a user types. Recommends are off in this root (--aptopt), as in a minimal install.
in_root sh -c 'cd /tmp/tusk-debs && apt-get install -y ./tusk-agent_*.deb ./tusk-controller_*.deb' ||
  fail "apt-get install of the packages"
date +%s > "$work/installed-at"

for bin in tusk-agent tusk-controller; do
  line=$(in_root "/usr/bin/$bin" --version 2>&1 | head -n 1) || fail "$bin --version: $line"
  [[ $line == "$bin $version" || $line == "$bin $version "* ]] || fail "$bin --version printed '$line', not '$bin $version'"
  echo "ok: $line"
  missing=$(in_root ldd "/usr/bin/$bin" | grep 'not found' || true)
  [[ -z $missing ]] || fail "$bin: shared libraries not found: $missing"
done

shopt -s nullglob
profiles=("$root"/usr/share/tusk/profiles/*.yaml)
[[ ${#profiles[@]} -gt 0 ]] || fail "no profiles in /usr/share/tusk/profiles"
for p in "${profiles[@]}"; do
  in_root tusk-controller validate "${p#"$root"}" > /dev/null || fail "tusk-controller validate ${p#"$root"}"
done
echo "ok: tusk-controller validate on ${#profiles[@]} shipped profiles"

# The plugins the agent loads at run time come with the package's Depends.
pmds=("$root"/usr/lib/*/dpdk/pmds-*)
[[ ${#pmds[@]} -eq 1 ]] || fail "no DPDK driver directory (usr/lib/*/dpdk/pmds-*)"
for driver in librte_mempool_ring librte_bus_vdev librte_net_af_packet; do
  drivers=("${pmds[0]}/$driver".so*)
  [[ ${#drivers[@]} -gt 0 ]] || fail "DPDK driver $driver is not installed"
done
providers=("$root"/usr/lib/*/libibverbs/*.so)
[[ ${#providers[@]} -gt 0 ]] || fail "no verbs providers (ibverbs-providers)"
echo "ok: DPDK drivers in ${pmds[0]#"$root"}, ${#providers[@]} verbs providers"

for f in /usr/lib/systemd/system/tusk-agent.service /usr/share/doc/tusk-agent/examples/agent.yaml \
         /usr/share/tusk/models /usr/share/tusk/grafana /usr/share/tusk/prometheus; do
  [[ -e $root$f ]] || fail "$f is missing"
done
[[ -x $root/usr/share/tusk/make-certs.sh ]] || fail "/usr/share/tusk/make-certs.sh is missing or not executable"
[[ ! -e $root/etc/tusk/agent.yaml ]] || fail "/etc/tusk/agent.yaml must not be shipped"
enabled=$(find "$root/etc/systemd" -name 'tusk-agent*' 2>/dev/null || true)
[[ -z $enabled ]] || fail "tusk-agent.service is enabled: $enabled"
# The unit's user (User=_tusk): a system user with no login and no home, made by the postinst.
unit_user=$(sed -n 's/^User=//p' "$root/usr/lib/systemd/system/tusk-agent.service")
[[ $unit_user == _tusk ]] || fail "tusk-agent.service runs as '${unit_user:-root}', not _tusk"
entry=$(in_root getent passwd _tusk) || fail "the postinst did not make the user _tusk"
IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
((uid > 0 && uid < 1000)) || fail "_tusk is uid $uid, not a system user: $entry"
[[ $shell == */nologin || $shell == /bin/false ]] || fail "_tusk can log in: $entry"
[[ ! -e $root$home ]] || fail "_tusk has a home directory $home: $entry"
in_root getent group _tusk >/dev/null || fail "the postinst did not make the group _tusk"
# adm, which may run lldpcli (this root has no lldpd, so no _lldpd group to join).
in_root id -nG _tusk | grep -qw adm || fail "_tusk is not in group adm: $(in_root id -nG _tusk)"
# Configured again (an upgrade, dpkg-reconfigure): the same user, no error.
in_root /var/lib/dpkg/info/tusk-agent.postinst configure 0.0.0 || fail "tusk-agent's postinst fails when run again"
[[ $(in_root getent passwd _tusk) == "$entry" ]] || fail "the postinst changed _tusk on a second run"
# lldpd installed afterwards, as a user would: the file trigger on its lldpcli puts _tusk in its
# group _lldpd, so that the agent may ask it (lldpcli is for adm and _lldpd).
in_root apt-get install -y lldpd > "$work/lldpd-install.log" 2>&1 || { cat "$work/lldpd-install.log"; fail "apt-get install lldpd"; }
groups=$(in_root id -nG _tusk)
grep -qw _lldpd <<<"$groups" || fail "_tusk did not join _lldpd when lldpd came after tusk-agent: $groups"
echo "ok: $entry; groups: $groups"
dev=$(in_root dpkg-query -W -f '${Package}\n' | grep -E -- '-dev$' || true)
[[ -z $dev ]] || fail "-dev packages were installed: $dev"
echo "ok: files in place, unit not enabled, no -dev packages"
HOOK

# The .deb files of the last run's root are kept and offered to the next, as mmdebstrap's manual
# shows: apt still fetches fresh indices and checks every file's hash against them, so the root is
# as fresh as without it, but a rerun does not download the same packages again. The cache holds
# only the last run's files (emptied before it is written).
deb_cache=${TUSK_DEPLOY_TEST_CACHE:-/var/cache/tusk-deploy-test}/archives
mkdir -p "$deb_cache"
mmdebstrap_at=$(date +%s)
echo "--- mmdebstrap $suite (variant apt) from ${mirrors[*]}, $(find "$deb_cache" -name '*.deb' | wc -l) .deb files cached"
mmdebstrap --mode=root --variant=apt --quiet --skip=essential/unlink \
  --setup-hook="mkdir -p \"\$1\"/var/cache/apt/archives/" \
  --setup-hook="sync-in '$deb_cache' /var/cache/apt/archives/" \
  --aptopt='APT::Install-Recommends "false"' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="date +%s > '$work/bootstrapped-at'" \
  --customize-hook="bash '$work/inside.sh' \"\$1\" '$work' '$version'" \
  --customize-hook="find '$deb_cache' -name '*.deb' -delete" \
  --customize-hook="sync-out /var/cache/apt/archives '$deb_cache'" \
  "$suite" "$work/root" "${mirrors[@]}" || fail "mmdebstrap or the checks in the new root (see above)"
bootstrapped_at=$(cat "$work/bootstrapped-at")
installed_at=$(cat "$work/installed-at")
timings+=("mmdebstrap (fresh root): $((bootstrapped_at - mmdebstrap_at)) s")
timings+=("apt-get install in the root: $((installed_at - bootstrapped_at)) s")
phase_done "mmdebstrap + install + checks, in all"

echo "--- timings"
printf '  %s\n' "${timings[@]}" "total: $((SECONDS - start)) s"
echo "PASS"
