# shellcheck shell=bash disable=SC2154 # sourced by scripts/lab-demo.sh, which sets build, keep, reports, work
# Shared by the lab-demo scenarios (scripts/lab-demo.sh sources this, then one scenario). Runs
# from the repository root with: $build (the build directory), $keep (1: leave the lab up),
# $reports (where each run's directory goes), $work (scratch: certificates, logs).

port=$((20000 + RANDOM % 20000))
# Absolute: agents in VMs run the host's binaries by the same path (guests see the host's root).
controller=$(cd "$build" && pwd)/controller/tusk-controller
agent=$(cd "$build" && pwd)/agent/tusk-agent

demo_say() { printf '\n== %s\n' "$*"; }

# Teardown steps, run in reverse at exit; with --keep only printed, so the lab can be explored.
demo_teardown=()
demo_last_run=""
demo_at_exit() { demo_teardown+=("$1"); }
demo_exit() {
  local status=$? step
  if ((keep)); then
    if [[ -n $demo_last_run ]]; then
      demo_say "--keep: the lab and its agents stay up; run a profile on them again with"
      echo "  $demo_last_run"
    fi
    demo_say "to take the lab down:"
    for ((step = ${#demo_teardown[@]} - 1; step >= 0; step--)); do echo "  ${demo_teardown[step]}"; done
    echo "  (scratch files: $work)"
  else
    for ((step = ${#demo_teardown[@]} - 1; step >= 0; step--)); do eval "${demo_teardown[step]}" >/dev/null 2>&1 || true; done
    rm -rf "$work"
  fi
  exit "$status"
}
trap demo_exit EXIT

# What the scenario set out to show: each claim checked against the report, and said.
demo_unproven=0
demo_prove() {
  local claim=$1
  shift
  if "$@"; then
    echo "  proven: $claim"
  else
    echo "  NOT proven: $claim"
    demo_unproven=$((demo_unproven + 1))
  fi
}
# demo_verdict SCENARIO [WHAT IT SHOWED]
demo_verdict() {
  if ((demo_unproven == 0)); then
    demo_say "$1: ${2:-found what was injected, and said where}"
    return 0
  fi
  demo_say "$1: $demo_unproven claim(s) not proven (see above)"
  return 1
}

# A value of a run's report.json (jq filter), e.g. demo_json "$dir" '.tests[0].passed'; nothing
# when the run left no such value (a run that never started has no streams).
demo_json() { jq -r "$2" "$1/report.json" 2>/dev/null || true; }

# "30 s", or --duration's length where it was given: what a scenario tells of its runs.
demo_length() { if [[ -n $duration ]]; then echo "$duration"; else echo "$1"; fi; }

# Certificates for the agents named, and the controller under every extra --controller-name.
demo_certs() { bash scripts/make-certs.sh "$work/certs" "$@" >/dev/null; }

# Runs PROFILE through tusk-controller with mutual TLS, its report in $reports/NAME; prints the
# controller's summary; returns the controller's exit code (0 pass, 1 fail, 2 refused, 3 lost).
# With --duration, each test of PROFILE runs for that long instead (a copy in the work directory).
demo_run() {
  local profile=$1 name=$2
  shift 2
  local status=0
  if [[ -n $duration ]]; then
    local copy="$work/$name-$(basename "$profile")"
    sed -E "s/^([[:space:]]*)duration:[[:space:]]*[^[:space:]#]+/\1duration: $duration/" "$profile" >"$copy"
    profile=$copy
  fi
  local command=("$controller" run "$profile" --listen "127.0.0.1:$port" --ca "$work/certs/ca.pem"
    --cert "$work/certs/controller.pem" --key "$work/certs/controller.key" --out "$reports/$name" --no-progress "$@")
  demo_last_run="${command[*]}"
  rm -rf "${reports:?}/$name"
  "${command[@]}" || status=$?
  echo "(exit $status; report: $reports/$name/report.html, report.json, junit.xml)"
  return "$status"
}

# A DPDK agent for a netns lab host on its port (net_af_packet). DPDK 22.11's af_packet PMD names
# its fanout group (pid ^ ifindex): two agents on one host can collide, and then the port does not
# open; such an agent is started again under a new pid.
demo_dpdk_agent() {
  local name=$1 iface=$2
  shift 2
  local pid log=$work/agent-$name.log
  for _ in 1 2 3 4 5; do
    "$agent" --controller "127.0.0.1:$port" --name "$name" --ca "$work/certs/ca.pem" --cert "$work/certs/$name.pem" \
      --key "$work/certs/$name.key" --dpdk-vdev "net_af_packet0,iface=$iface" --dpdk-file-prefix "demo$name$$" \
      --idle-sleep-us 50 "$@" >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do grep -q "agent '$name'" "$log" 2>/dev/null && break; sleep 0.1; done
    if grep -q "engines: dpdk" "$log"; then
      demo_at_exit "kill $pid"
      return 0
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "lab-demo: $name's DPDK port would not open:" >&2
  cat "$log" >&2
  return 1
}
