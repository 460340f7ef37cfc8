#!/usr/bin/env bash
# deploy/slurm/tusk-burn-in.sbatch on a real single-node Slurm: this test writes a slurm.conf and a
# munge key into a temporary directory, starts its own munged, slurmctld and slurmd (other ports,
# sockets and state than a system Slurm's), and submits the shipped script with `sbatch --wait -N1`.
#
# The profile passes on one agent: a DPDK loopback test (topology loopback: the agent's port sends
# to itself) on one end of a veth pair whose other end, in a network namespace this test makes,
# sends every frame straight back (tc mirred), as a loopback plug would. A second job, with the
# reflection removed, must fail its loss threshold: the job's exit code is the controller's 1.
# Each time: the job's exit code, report.json's verdict, and no tusk-agent of the job left behind.
# Then `tusk-controller act --slurm` on the two reports: the failing one drains the node with its
# reason (not past the share cap, and not with --dry-run), the passing one resumes it, but never
# a drain of an operator's. Then a profile with `actions: {slurm: true}` drains the node itself
# as its failing run ends. Last, what no node may do: hold another node's key (the job refuses to
# start), or get this node drained by an agent with a certificate of its own that reports this
# node's hostname and fails.
#
#   slurm_test.sh AGENT_BIN_DIR CONTROLLER_BIN_DIR
# Exit 0 pass, 1 fail, 77 skipped (not root, or no slurm-wlm/munge), with the reason.
# TUSK_KEEP_TMP=1 keeps its scratch directory (/tmp/tusk-slurm-*: the jobs' reports, agents' logs and
# Slurm's logs) when it ends, passed or failed, to read a failed run's reports; else it is removed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: $0 AGENT_BIN_DIR CONTROLLER_BIN_DIR" >&2; exit 2; }
export PATH="$1:$2:$PATH"

skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "needs root (its own slurmd, munged and a veth pair)"
for tool in munged slurmctld slurmd sbatch scontrol squeue sinfo scancel ip tc; do
  command -v "$tool" >/dev/null || skip "no $tool: apt-get install slurm-wlm munge iproute2"
done
if ! command -v tusk-agent >/dev/null || ! command -v tusk-controller >/dev/null; then
  echo "FAIL: no tusk-agent or tusk-controller in $1, $2"
  exit 1
fi

started=$SECONDS
tmp=$(mktemp -d /tmp/tusk-slurm-XXXXXX)
chmod 0755 "$tmp"
host=$(hostname -s)
ns="tsl$$"
port_a="tsl$$a"
port_b="tsl$$b"
port_c="tsl$$c"
port_d="tsl$$d"
pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  SLURM_CONF=$tmp/slurm.conf scancel --full --quiet --user=root 2>/dev/null || true
  for (( i = ${#pids[@]} - 1; i >= 0; i-- )); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "${pids[i]}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$port_a" 2>/dev/null || true
  ip link del "$port_c" 2>/dev/null || true
  if [[ $status != 0 && $status != 77 ]]; then
    for log in "$tmp"/log/* "$tmp"/job-*.out "$tmp"/agents-*/*; do
      [[ -f $log ]] && { echo "---- $log"; tail -n 40 "$log"; }
    done
  fi
  [[ -n ${TUSK_KEEP_TMP:-} ]] || rm -rf "$tmp"
  echo "slurm_test: $(( SECONDS - started )) s, exit $status"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# Ports nobody else's Slurm uses: slurmctld, slurmd, and the jobs' controller (base + 2, one for
# every job). Below the kernel's ephemeral range: taken from within it (30000..49999 before), the
# port was once some other test's outgoing connection's by the fourth job, whose controller then
# could not listen (exit 2, "Address already in use").
ephemeral_low=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
base=$(( 10000 + RANDOM % (ephemeral_low - 10010) ))
mkdir -p "$tmp"/{state,spool,log,munge,certs}
chmod 0700 "$tmp/munge"

# --- munge, on its own socket and key
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$tmp/munge/munge.key"
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $tmp/munge/munge.socket ]] && break; sleep 0.1; done
[[ -S $tmp/munge/munge.socket ]] || fail "munged did not start"

# --- Slurm: one node, this host, everything under $tmp
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=tusktest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$(( base + 1 ))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 300); do
  [[ $(sinfo --noheader --nodes="$host" --format=%t 2>/dev/null) == idle ]] && break
  sleep 0.1
done
[[ $(sinfo --noheader --nodes="$host" --format=%t 2>/dev/null) == idle ]] || fail "node $host did not become idle: $(sinfo 2>&1)"
echo "slurm up in $(( SECONDS - started )) s: $(sinfo --noheader --format='%P %D %t %N')"

# --- a loopback plug: frames out of port_a come straight back to it
ip netns add "$ns"
ip link add "$port_a" type veth peer name "$port_b" netns "$ns"
sysctl -qw "net.ipv6.conf.$port_a.disable_ipv6=1" || true
ethtool -K "$port_a" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
ip link set "$port_a" up
# The hostile agent's port: its frames go nowhere (no reflection), so its loopback stream fails.
ip link add "$port_c" type veth peer name "$port_d" netns "$ns"
sysctl -qw "net.ipv6.conf.$port_c.disable_ipv6=1" || true
ip link set "$port_c" up
ip netns exec "$ns" ip link set "$port_d" up
ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$port_b.disable_ipv6=1" || true
ip netns exec "$ns" ip link set "$port_b" up
reflect() { ip netns exec "$ns" tc qdisc replace dev "$port_b" clsact
            ip netns exec "$ns" tc filter replace dev "$port_b" ingress pref 1 protocol all u32 match u32 0 0 \
              action mirred egress redirect dev "$port_b"; }
unreflect() { ip netns exec "$ns" tc qdisc del dev "$port_b" clsact; }
reflect

# --- certificates: the agent is named after its Slurm node, the controller named by it too. The
# node's own directory holds its own key and the controller's, nothing else; 'evil' is a host
# outside Slurm with a valid certificate of its own.
bash "$root/scripts/make-certs.sh" "$tmp/made" --controller-name "$host" "$host" evil >/dev/null
mkdir -p "$tmp/certs"
cp "$tmp/made"/{ca.pem,"$host".pem,"$host".key,controller.pem,controller.key} "$tmp/certs/"

cat >"$tmp/profile.yaml" <<EOF
name: slurm-loopback
description: one node, its DPDK port looped back through a veth pair
agents:
  patterns: ["*"]
  count: 1
  wait: 60s
safety:
  max_rate: 1Gbps
  max_duration: 1m
tests:
  - name: loopback-ber
    engine: dpdk
    topology: loopback
    duration: 5s
    sample_interval: 1s
    frame_size: 1000B
    rate: 5kpps
    pattern: prbs31
    thresholds:
      max_ber: 1e-12
      max_lost_frames: 0
      max_flaps: 0
EOF
tusk-controller validate "$tmp/profile.yaml" >/dev/null || fail "the test's profile is invalid"

export TUSK_CERTS=$tmp/certs
export TUSK_AGENT_ARGS="--dpdk-vdev net_af_packet0,iface=$port_a,qdisc_bypass=0 --dpdk-file-prefix tusk-slurm-$$ --idle-sleep-us 50"
export TUSK_PORT=$(( base + 2 ))
export XDG_DATA_HOME=$tmp/xdg  # the controller's run history, not root's
unset TUSK_INSECURE TUSK_AGENT_CONFIG TUSK_OUT TUSK_AGENT_LOGS TUSK_CONTROLLER_HOST

# json_values KEY FILE: every value of KEY (a string or a number) in FILE, in order (no jq needed).
json_values() { grep -oE "\"$1\": *(\"[^\"]*\"|[0-9]+)" "$2" | sed -E 's/^[^:]*: *"?//; s/"$//'; }

# run_job NAME EXPECTED_EXIT EXPECTED_VERDICT [PROFILE]
run_job() {
  local name=$1 expected=$2 verdict=$3 profile=${4:-$tmp/profile.yaml} status=0 t0=$SECONDS
  export TUSK_OUT=$tmp/report-$name TUSK_AGENT_LOGS=$tmp/agents-$name
  sbatch --wait --nodes=1 --time=5 --output="$tmp/job-$name.out" \
    "$root/deploy/slurm/tusk-burn-in.sbatch" "$profile" >"$tmp/sbatch-$name.out" 2>&1 || status=$?
  echo "job $name: exit $status in $(( SECONDS - t0 )) s ($(head -1 "$tmp/sbatch-$name.out"))"
  [[ $status == "$expected" ]] || fail "job $name exited $status, expected $expected"
  [[ -f $TUSK_OUT/report.json ]] || fail "job $name left no $TUSK_OUT/report.json"
  local got
  got=$(json_values verdict "$TUSK_OUT/report.json" | paste -sd,)
  [[ $got == "$verdict" ]] || fail "job $name: verdict '$got', expected '$verdict'"
  [[ $(json_values exit_code "$TUSK_OUT/report.json") == "$expected" ]] || fail "job $name: report.json exit_code differs"
  [[ -s $TUSK_AGENT_LOGS/agent-$host.log ]] || fail "job $name: no agent log $TUSK_AGENT_LOGS/agent-$host.log"
  grep -q "tusk-burn-in: $host:" "$TUSK_AGENT_LOGS/agent-$host.log" || fail "job $name: agent not started by the script"
  # The job is over: no agent of it may be left (matched by this test's certificate directory).
  if pgrep -f -- "--cert $tmp/certs/" >/dev/null; then
    pgrep -af -- "--cert $tmp/certs/"
    fail "job $name: tusk-agent outlived the job"
  fi
  [[ -z $(squeue --noheader --jobs="$(grep -o '[0-9]*' "$tmp/sbatch-$name.out" | head -1)" 2>/dev/null) ]] ||
    fail "job $name still in the queue"
}

run_job pass 0 pass
# The pass is measured, not vacuous: the agent's frames came back to it and were checked.
received=$(json_values rx_frames "$tmp/report-pass/report.json" | sort -n | tail -1)
(( ${received:-0} > 0 )) || fail "job pass: no frame came back"
unreflect
run_job fail 1 fail
# A profile the controller refuses: a configuration error (2), no agent step left behind.
sed 's/topology: loopback/topology: pairs/' "$tmp/profile.yaml" >"$tmp/bad-profile.yaml"
status=0
TUSK_OUT=$tmp/report-bad sbatch --wait --nodes=1 --time=5 --output="$tmp/job-bad.out" \
  "$root/deploy/slurm/tusk-burn-in.sbatch" "$tmp/bad-profile.yaml" >/dev/null 2>&1 || status=$?
echo "job bad: exit $status"
[[ $status == 2 ]] || fail "job bad exited $status, expected 2 (the profile's topology needs two agents)"
! pgrep -f -- "--cert $tmp/certs/" >/dev/null || fail "job bad: tusk-agent outlived the job"

# --- act: the failing job's report blames this node (its own port's loopback stream failed); the
# passing one returns it to service, unless an operator drained it.
# sinfo's long state, with a '*' when slurmd has not answered lately, and the drain's reason.
node_state() { sinfo --noheader --Node --nodes="$host" --format='%T|%E' | head -1; }
act() { local status=0; tusk-controller act "$@" >"$tmp/act.out" 2>&1 || status=$?; cat "$tmp/act.out"; return $status; }
# What a failing loopback blames: the node's own port, whose plug returned nothing.
own_port="test loopback-ber: stream rx:self/1 of its own port failed"
fail_run=$(json_values run_id "$tmp/report-fail/report.json" | head -1)
status=0; act "$tmp/report-fail" --slurm || status=$?  # one node of one is over the default 5 % cap
[[ $status == 1 ]] || fail "act over the share cap exited $status, expected 1"
grep -q "acting on none" "$tmp/act.out" || fail "act over the share cap did not say so"
[[ $(node_state) == idle* ]] || fail "act over the share cap drained $host: $(node_state)"
act "$tmp/report-fail" --slurm --max-share 100% --dry-run || fail "act --dry-run failed"
grep -q "^would drain $host: tusk $fail_run: $own_port" "$tmp/act.out" || fail "act --dry-run did not say it"
[[ $(node_state) == idle* ]] || fail "act --dry-run drained $host: $(node_state)"
act "$tmp/report-fail" --slurm --max-share 100% || fail "act on the failing run failed"
[[ $(node_state) == drained*"|tusk $fail_run: $own_port"* ]] || fail "$host not drained by act: $(node_state)"
act "$tmp/report-pass" --slurm --max-share 100% || fail "act on the passing run failed"
grep -q "^resume $host" "$tmp/act.out" || fail "act did not resume $host"
[[ $(node_state) == idle* ]] || fail "$host not resumed by act: $(node_state)"
scontrol update NodeName="$host" State=DRAIN Reason="RMA 4411"
act "$tmp/report-pass" --slurm --max-share 100% || fail "act on the passing run failed"
grep -q "drained by an operator (RMA 4411): not resumed" "$tmp/act.out" || fail "act did not say why it left $host"
[[ $(node_state) == drained*"|RMA 4411" ]] || fail "act resumed an operator's drain: $(node_state)"
scontrol update NodeName="$host" State=RESUME

# --- the profile's own `actions:`: the failing run drains its node as it ends, with the same
# reason as act gives (the job still runs then: "draining", "drained" once it is over).
{ cat "$tmp/profile.yaml"; printf 'actions:\n  slurm: true\n  max_share: 100%%\n'; } >"$tmp/acting-profile.yaml"
tusk-controller validate "$tmp/acting-profile.yaml" >/dev/null || fail "the acting profile is invalid"
run_job acting 1 fail "$tmp/acting-profile.yaml"
acting_run=$(json_values run_id "$tmp/report-acting/report.json" | head -1)
grep -q "^drain $host: tusk $acting_run: $own_port" "$tmp/job-acting.out" ||
  fail "the acting profile's run did not say it drained $host: $(grep -i 'drain\|act' "$tmp/job-acting.out")"
[[ $(node_state) == drain*"|tusk $acting_run: $own_port"* ]] ||
  fail "$host not drained by the profile's actions: $(node_state)"
act "$tmp/report-pass" --slurm --max-share 100% || fail "act on the passing run failed"
[[ $(node_state) == idle* ]] || fail "$host not resumed after the profile's drain: $(node_state)"
# --- least privilege: a node that can read another node's key (or the CA's) runs nothing. Before,
# the documented layout was this very directory, shared by every node.
status=0
TUSK_OUT=$tmp/report-shared TUSK_CERTS=$tmp/made sbatch --wait --nodes=1 --time=5 --output="$tmp/job-shared.out" \
  "$root/deploy/slurm/tusk-burn-in.sbatch" "$tmp/profile.yaml" >/dev/null 2>&1 || status=$?
echo "job shared-keys: exit $status"
[[ $status == 2 ]] || fail "a job whose certificate directory holds every key exited $status, expected 2"
grep -q "holds keys that are not its own: ca.key evil.key" "$tmp/job-shared.out" ||
  fail "the job did not name the keys: $(cat "$tmp/job-shared.out")"

# --- a hostile agent: 'evil' holds a valid certificate of its own, runs on this host (so it
# reports the Slurm node's hostname) and fails its stream. Its failure must not drain the node:
# the run takes it as the node its certificate proves, 'evil', which Slurm does not have.
reflect  # this node's loopback passes again; only evil's fails
sed 's/count: 1/count: 2/' "$tmp/profile.yaml" >"$tmp/two-profile.yaml"
tusk-agent --controller "127.0.0.1:$TUSK_PORT" --name evil --ca "$tmp/made/ca.pem" --cert "$tmp/made/evil.pem" \
  --key "$tmp/made/evil.key" --dpdk-vdev "net_af_packet1,iface=$port_c,qdisc_bypass=0" \
  --dpdk-file-prefix "tusk-slurm-evil-$$" --idle-sleep-us 50 >"$tmp/log/evil-agent.log" 2>&1 &
pids+=($!)
run_job hostile 1 fail "$tmp/two-profile.yaml"
grep -q "it reported the hostname of agent '$host''s node '$host'" "$tmp/report-hostile/report.json" ||
  fail "the hostile agent's claim is not a fault of the run"
act "$tmp/report-hostile" --slurm --max-share 100% || true
grep -q "drain $host" "$tmp/act.out" && fail "act drained $host on the hostile agent's word"
grep -q "evil: blamed (.*), but the scheduler has no such node" "$tmp/act.out" || fail "act did not say it blamed evil"
[[ $(node_state) == idle* ]] || fail "$host is not in service after the hostile run: $(node_state)"
echo "PASS: slurm_sbatch ($(( SECONDS - started )) s)"
