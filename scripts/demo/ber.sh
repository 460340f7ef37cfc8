# shellcheck shell=bash disable=SC2154 # sourced by scripts/lab-demo.sh, which sets build, keep, reports, work
# ber: the cable BER test between two lab hosts (DPDK over net_af_packet on veth links through a
# switch namespace), on a clean cable, then with 1 % of the frames towards lab-b hit by a one-bit
# flip: the run fails on that direction only, and the BER bound moves.
scenario_ber() {
  export TUSK_LAB_ID="demo$(($$ % 100000))"
  demo_certs lab-a lab-b
  demo_say "the lab: $(bash tests/lab/netns-lab.sh up --switch)"
  demo_at_exit "TUSK_LAB_ID=$TUSK_LAB_ID bash tests/lab/netns-lab.sh down"
  demo_dpdk_agent lab-a "$(bash tests/lab/netns-lab.sh port a)"
  demo_dpdk_agent lab-b "$(bash tests/lab/netns-lab.sh port b)"

  local clean=0 fault=0
  demo_say "1/2 profiles/lab-dpdk-ber.yaml on a clean cable: lab-a <-> lab-b, PRBS-31, $(demo_length "30 s")"
  demo_run profiles/lab-dpdk-ber.yaml ber-clean || clean=$?
  demo_say "2/2 the same with 1 % of the frames on their way to lab-b hit by a one-bit flip (a tc BPF program)"
  bash tests/lab/netns-lab.sh impair b corrupt=1
  demo_run profiles/lab-dpdk-ber.yaml ber-fault || fault=$?

  demo_say "what the two runs show"
  local rx='.tests[0].streams[] | select(.kind == "rx")'
  demo_prove "the clean cable passes" test "$clean" -eq 0
  demo_prove "the corrupted cable fails (exit 1)" test "$fault" -eq 1
  demo_prove "the failing direction is lab-a -> lab-b, with bit errors" \
    test "$(demo_json "$reports/ber-fault" "[$rx | select(.passed | not) | \"\(.sender)->\(.receiver)\"] | join(\",\")")" = "lab-a->lab-b"
  demo_prove "lab-b -> lab-a still passes" \
    test "$(demo_json "$reports/ber-fault" "$rx | select(.receiver == \"lab-a\") | .passed")" = true
  demo_prove "every errored frame carries one flipped bit, in its payload or its header (bit_errors + bad_headers = errored_frames > 0)" \
    test "$(demo_json "$reports/ber-fault" "$rx | select(.receiver == \"lab-b\") | (.counters.bit_errors + .counters.bad_headers == .counters.errored_frames and .counters.bit_errors > 0)")" = true
  demo_prove "corruption is no loss: no frame of lab-a -> lab-b lost" \
    test "$(demo_json "$reports/ber-fault" "$rx | select(.receiver == \"lab-b\") | .counters.lost_frames")" = 0
  local before after
  before=$(demo_json "$reports/ber-clean" "$rx | select(.receiver == \"lab-b\") | .ber.upper_bound")
  after=$(demo_json "$reports/ber-fault" "$rx | select(.receiver == \"lab-b\") | .ber.upper_bound")
  printf '  lab-a -> lab-b BER at 95 %% confidence: below %.2g clean, below %.2g with the fault\n' "$before" "$after"
  demo_prove "the BER bound moves up with the fault" awk -v a="$before" -v b="$after" 'BEGIN { exit !(b > 100 * a) }'
  demo_verdict ber
}
