# shellcheck shell=bash disable=SC2154 # sourced by scripts/lab-demo.sh, which sets build, keep, reports, work
# rdma: two Soft-RoCE VMs (tests/lab/rxe-vm-lab.sh), checked RDMA WRITEs both ways, then 1 % loss
# on vm1's link to vm2: the retransmit and out-of-sequence counters climb on that link's ports,
# and the run fails naming them.
scenario_rdma() {
  local lab="bash tests/lab/rxe-vm-lab.sh" id="demo$(($$ % 100000))"
  # The guests dial the host at 10.0.2.2, so the controller's certificate names it.
  demo_certs --controller-name 10.0.2.2 vm1 vm2
  demo_say "the lab: two VMs with Soft-RoCE (qemu, TCG), one link between them"
  $lab up "$id" 2
  demo_at_exit "bash tests/lab/rxe-vm-lab.sh down $id"
  # Both agents at once: each start is a guest exec, some 1.5 s under TCG.
  local vm pid starts=()
  for vm in 1 2; do
    $lab exec "$id" "$vm" --background --name agent -- "$agent" --controller "10.0.2.2:$port" --name "vm$vm" \
      --ca "$work/certs/ca.pem" --cert "$work/certs/vm$vm.pem" --key "$work/certs/vm$vm.key" --idle-sleep-us 100 \
      >/dev/null &
    starts+=($!)
  done
  for pid in "${starts[@]}"; do wait "$pid"; done

  local clean=0 fault=0
  demo_say "1/2 profiles/lab-rdma-write.yaml: checked RDMA WRITEs vm1 <-> vm2, 64 KiB messages, $(demo_length "20 s")"
  demo_run profiles/lab-rdma-write.yaml rdma-clean --lease 10s || clean=$?
  demo_say "2/2 the same with 1 % of vm1's packets to vm2 lost (netem in vm1)"
  $lab impair "$id" 1 peer2 loss 1%
  demo_run profiles/lab-rdma-write.yaml rdma-fault --lease 10s || fault=$?

  demo_say "what the two runs show"
  local nic='.tests[0].streams[] | select(.kind == "nic")'
  demo_prove "the clean link passes" test "$clean" -eq 0
  demo_prove "the lossy link fails (exit 1)" test "$fault" -eq 1
  local failing
  failing=$(demo_json "$reports/rdma-fault" "[$nic | select(.passed | not) | \"\(.agent) \(.stream_id)\"] | join(\", \")")
  echo "  failing NIC ports: $failing"
  demo_prove "a NIC port on the lossy link fails" test -n "$failing"
  demo_prove "vm1's port (whose packets were lost) retransmitted" \
    test "$(demo_json "$reports/rdma-fault" "[$nic | select(.agent == \"vm1\") | .counters.retransmits // 0] | add")" -gt 0
  demo_prove "vm2's port saw packets out of sequence" \
    test "$(demo_json "$reports/rdma-fault" "[$nic | select(.agent == \"vm2\") | .counters.out_of_sequence // 0] | add")" -gt 0
  demo_prove "no message arrived damaged (RDMA's transport resent what was lost)" \
    test "$(demo_json "$reports/rdma-fault" '[.tests[0].streams[] | .counters.integrity_errors // 0] | add')" -eq 0
  demo_verdict rdma
}
