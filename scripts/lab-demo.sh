#!/usr/bin/env bash
# Tusk's main job on the built-in lab, no hardware needed: install, build, then bring up a
# controller and two agents on 127.0.0.1 over mutual TLS, list what they have, and validate and
# plan the shipped profiles. (The DPDK and RDMA labs join this script as their engines land.)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"

work=$(mktemp -d /tmp/tusk-lab-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

bash scripts/make-certs.sh "$work/certs" lab-a lab-b >/dev/null
port=$(( 20000 + RANDOM % 20000 ))

echo "== validate and plan the shipped profiles"
for profile in profiles/*.yaml; do
  build/controller/tusk-controller validate "$profile"
done
build/controller/tusk-controller plan profiles/lab-dpdk-ber.yaml

echo
echo "== control plane: two agents register with the controller over mutual TLS"
for agent in lab-a lab-b; do
  build/agent/tusk-agent --controller "127.0.0.1:$port" --name "$agent" \
    --ca "$work/certs/ca.pem" --cert "$work/certs/$agent.pem" --key "$work/certs/$agent.key" \
    >"$work/$agent.log" 2>&1 &
  pids+=($!)
done
build/controller/tusk-controller inventory --listen "127.0.0.1:$port" --expect 2 --wait 20s \
  --ca "$work/certs/ca.pem" --cert "$work/certs/controller.pem" --key "$work/certs/controller.key" \
  --json "$work/inventory.json"
echo
echo "lab demo done: the control plane works; traffic engines arrive with the DPDK and RDMA issues."
