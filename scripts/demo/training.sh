# shellcheck shell=bash disable=SC2154 # sourced by scripts/lab-demo.sh, which sets build, keep, reports, work
# training: three Soft-RoCE VMs replay the gradient all-reduce of a small model's training step,
# its bytes worked out by `tusk-controller model` from the shipped model file and scaled to the
# lab: every rank sends the ring all-reduce's 2(G-1)/G x S per step, in the step's rhythm, and
# the report gives busbw and the slowest rank.
scenario_training() {
  local lab="bash tests/lab/rxe-vm-lab.sh" id="demo$(($$ % 100000))" model=models/gpt2-small-lab.yaml
  demo_say "the model: tusk-controller model $model"
  "$controller" model "$model" | sed -n '1,12p'
  local bytes scale=0.5%
  bytes=$("$controller" model "$model" --json | jq -r '.training[] | select(.kind == "dp gradient all-reduce") | .bytes_per_op')
  [[ $bytes =~ ^[0-9]+$ ]] || { echo "lab-demo: no dp gradient all-reduce in $model" >&2; return 1; }
  echo "  S, the gradient all-reduce per rank and step: $bytes B; replayed at $scale of it in the lab"
  cat >"$work/training.yaml" <<PROFILE
# The dp gradient all-reduce of $model (tusk-controller model), scaled for three VMs.
name: lab-training-replay
agents:
  hosts: [vm1, vm2, vm3]
  wait: 90s
tests:
  - name: gradient-all-reduce
    engine: rdma
    collective: all_reduce
    collective_bytes: ${bytes}B
    scale: $scale
    steps: 5
    step_period: 4s
    compute_time: 1s
    message_size: 64KiB
    outstanding: 8
    ack_timeout: 1s
    data_check: true
    thresholds:
      max_integrity_errors: 0
      max_completion_errors: 0
PROFILE
  demo_certs --controller-name 10.0.2.2 vm1 vm2 vm3
  demo_say "the lab: three VMs with Soft-RoCE (qemu, TCG), a link between every two"
  $lab up "$id" 3
  demo_at_exit "bash tests/lab/rxe-vm-lab.sh down $id"
  local vm
  for vm in 1 2 3; do
    $lab exec "$id" "$vm" --background --name agent -- "$agent" --controller "10.0.2.2:$port" --name "vm$vm" \
      --ca "$work/certs/ca.pem" --cert "$work/certs/vm$vm.pem" --key "$work/certs/vm$vm.key" --idle-sleep-us 100 \
      >/dev/null
  done

  local status=0
  demo_say "the replay: 5 training steps of 4 s (1 s compute, then the all-reduce), ring vm1 -> vm2 -> vm3 -> vm1"
  demo_run "$work/training.yaml" training --lease 10s || status=$?

  demo_say "what the run shows"
  local collective='.tests[0].collective'
  demo_prove "the replay ran and passed" test "$status" -eq 0
  demo_prove "every rank sent the model's bytes per step, within 2 %" \
    test "$(demo_json "$reports/training" "[$collective.per_rank[] | ((.bytes_per_step / .model_bytes_per_step) - 1) | fabs < 0.02] | all and length == 3")" = true
  echo "  $(demo_json "$reports/training" "$collective | \"\(.ranks) ranks, \(.time_per_step_s * 1000 | floor) ms of communication per step; algbw \(.algbw_bytes_per_s * 8 / 1e6 | floor) Mbit/s, busbw \(.busbw_bytes_per_s * 8 / 1e6 | floor) Mbit/s; slowest rank \(.slowest_rank)\"")"
  demo_prove "busbw and the slowest rank are reported" \
    test "$(demo_json "$reports/training" "$collective | (.busbw_bytes_per_s > 0 and (.slowest_rank | length) > 0)")" = true
  demo_verdict training "replayed the model's gradient all-reduce byte for byte, with busbw and the slowest rank"
}
