# shellcheck shell=bash disable=SC2154 # sourced by scripts/lab-demo.sh, which sets build, keep, reports, work
# fabric: the routed leaf-spine lab (2 spines, 2 leaves, 2 DPDK hosts per leaf), every host to
# every other with IPv4/UDP flows spread over both spines and their paths traced; one uplink loses
# 2 % of its frames in one direction, and the run names that link as the suspect.
scenario_fabric() {
  export TUSK_LAB_ID="dm$(($$ % 10000))"
  local fabric="bash tests/lab/fabric-lab.sh" hosts=(l1h1 l1h2 l2h1 l2h2)
  demo_certs "${hosts[@]}"
  demo_say "the lab: $fabric up --spines 2 --leaves 2 --hosts 2"
  $fabric up --spines 2 --leaves 2 --hosts 2 >/dev/null
  demo_at_exit "TUSK_LAB_ID=$TUSK_LAB_ID bash tests/lab/fabric-lab.sh down"
  $fabric topology-file >"$work/topology.yaml"
  local host leaf
  for host in "${hosts[@]}"; do
    leaf=${host:1:1}
    demo_dpdk_agent "$host" "$($fabric port "$host")" \
      --dpdk-address "192.168.$((100 + leaf)).$((10 + ${host:3:1}))/24,gw=192.168.$((100 + leaf)).1"
  done
  cat >"$work/fabric.yaml" <<PROFILE
name: lab-fabric-mesh
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
tests:
  - name: mesh
    engine: dpdk
    duration: 12s
    topology: mesh
    rate: 2kpps
    frame_size: 256B
    encapsulation: ipv4_udp
    ecmp_paths: 2
    coverage: 99%
    trace_rate: 1500
    thresholds:
      max_ber: 1e-12
      max_lost_frames: 0
PROFILE

  local status=0
  demo_say "a mesh of the four hosts over both spines, with l1's uplink to s2 losing 2 % towards s2"
  $fabric impair l1-s2 up loss=2
  demo_run "$work/fabric.yaml" fabric --topology "$work/topology.yaml" || status=$?

  demo_say "what the run shows"
  local found='.tests[0].localisation'
  echo "  conclusion: $(demo_json "$reports/fabric" "$found.conclusion")"
  demo_prove "the run fails on the lost frames (exit 1)" test "$status" -eq 1
  demo_prove "the only suspect is l1's uplink to s2, in that direction" \
    test "$(demo_json "$reports/fabric" "[$found.suspects[].link] | join(\",\")")" = "l1:s2 -> s2:l1"
  demo_prove "it is named by its cable" \
    test "$(demo_json "$reports/fabric" "$found.top_suspect")" = "l1:s2 -> s2:l1, cable C-l1-s2"
  demo_verdict fabric
}
