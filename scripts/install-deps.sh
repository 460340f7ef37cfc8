#!/usr/bin/env bash
# Installs everything Tusk's build, tests, benchmarks and labs need, from Debian packages only.
# (libclang-rt-14-dev: libFuzzer and the sanitizers' runtimes, only recommended by clang.
# Deployment: help2man for the man pages, dpkg-dev for the packages' dependencies, mmdebstrap for
# the install test's fresh Debian root, systemd for systemd-analyze, slurm-wlm and munge for the
# real single-node Slurm the sbatch script is tested on. jq: the lab demo reads its reports.)
# libisal-dev: ISA-L's CRC-32C (folding with carry-less multiply), what checks every RDMA message.
# lld: the scripts link with it (scripts/build-env.sh). clang-format: the layout test (tests/style/).
# lldpd, snmpd, snmp: the fabric lab's switches serve LLDP-MIB and IF-MIB over SNMP, as real ones do
# (tests/lab/fabric-lab.sh); libsnmp-dev: the controller reads them with net-snmp's library.
# kubernetes-client: kubectl, which the controller's Kubernetes actions run (tested against a
# replayed API server); left out where another package already installed a kubectl.
# Idempotent: packages already present are left alone; safe to run on every CI start.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache lld pkg-config git
  libboost-dev libboost-program-options-dev
  libyaml-cpp-dev libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  prometheus-cpp-dev prometheus
  libgtest-dev libgmock-dev libssl-dev openssl
  clang libclang-rt-14-dev clang-format libbpf-dev
  libibverbs-dev librdmacm-dev libmnl-dev ibverbs-utils rdma-core libisal-dev
  libdpdk-dev dpdk-dev
  iproute2 procps ethtool iputils-ping
  qemu-system-x86 busybox-static kmod xz-utils perftest rdmacm-utils
  libsqlitecpp-dev libsqlite3-dev sqlite3 libpq-dev postgresql
  curl chromium fonts-dejavu-core jq
  help2man dpkg-dev mmdebstrap systemd slurm-wlm munge
  lldpd snmpd snmp libsnmp-dev
)

if ! command -v kubectl >/dev/null 2>&1; then packages+=(kubernetes-client); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  # Debian starts lldpd once installed: the fabric lab runs one per switch, and one in the root
  # namespace would speak LLDP on the lab hosts' ports.
  if [[ " ${missing[*]} " == *" lldpd "* && -d /run/systemd/system ]]; then
    "${sudo_cmd[@]}" systemctl disable --now lldpd || true
  fi
fi

bash "$(dirname "$0")/install-web-libs.sh"
