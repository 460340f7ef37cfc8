#!/usr/bin/env bash
# Makes a lab CA and certificates for Tusk's mutually authenticated control plane.
#
#   scripts/make-certs.sh DIR [--controller-name NAME]... [--hosts FILE] AGENT_NAME[:HOST]...
#
# --hosts FILE: the agents' names from FILE, one per line (the hosts' names, which each agent
# takes as its own by default); blank lines and '#' comments are skipped.
# AGENT:HOST  an agent not named as its host (one agent per NIC: gpu01-nic0:gpu01): its certificate
#             names the host too, which makes the host the node that actions name for it
#
# DIR/ca.pem, DIR/ca.key          the lab CA (keep ca.key off the hosts)
# DIR/controller.pem, .key        for tusk-controller; names localhost, 127.0.0.1, ::1 and every
#                                 --controller-name (the address agents dial must be among them)
# DIR/<agent>.pem, .key           one per agent; its CN is the agent's name, which the controller checks
# An existing CA is reused, so certificates for new agents can be added later.
set -euo pipefail

usage() { echo "usage: $0 DIR [--controller-name NAME]... [--hosts FILE] AGENT_NAME[:HOST]... (--help: more)" >&2; exit 2; }
help() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $# -ge 1 ]] || usage
case $1 in
  -h | --help) help ;;
  # Taken for DIR, an option made a directory of that name (or mkdir read it as its own option).
  -*) echo "make-certs.sh: the first argument is the directory to write to, not the option '$1'" >&2; usage ;;
esac
dir=$1; shift
controller_names=(localhost)
agents=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --controller-name) [[ $# -ge 2 ]] || usage; controller_names+=("$2"); shift 2 ;;
    --hosts)
      [[ $# -ge 2 ]] || usage
      [[ -r $2 ]] || { echo "make-certs.sh: --hosts $2: cannot read it" >&2; exit 2; }
      line_number=0
      while IFS= read -r line || [[ -n $line ]]; do
        line_number=$((line_number + 1))
        line=${line%%#*}
        line=${line//[[:space:]]/}
        [[ -z $line ]] && continue
        agents+=("$line")
      done <"$2"
      shift 2
      ;;
    -h | --help) help ;;
    -*) echo "make-certs.sh: unknown option '$1'" >&2; usage ;;
    *) agents+=("$1"); shift ;;
  esac
done

# A name becomes a file name and a certificate's CN: letters, digits, '.', '_' and '-' only. A
# host is a DNS name of the certificate, and the node the controller takes the agent to be on.
for entry in "${agents[@]}"; do
  agent=${entry%%:*}
  if [[ ! $agent =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$ || $agent == controller || $agent == ca ]]; then
    echo "make-certs.sh: '$agent' cannot be an agent's name (letters, digits, '.', '_', '-'; not 'ca' or 'controller')" >&2
    exit 2
  fi
  if [[ $entry == *:* && ! ${entry#*:} =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$ ]]; then
    echo "make-certs.sh: '${entry#*:}' (of '$entry') cannot be a host's name (letters, digits, '.', '-')" >&2
    exit 2
  fi
done
[[ ${#agents[@]} -gt 0 ]] || echo "make-certs.sh: no agent named: only the CA and the controller's certificate" >&2

mkdir -p -- "$dir"
umask 077
days=825

if [[ ! -f $dir/ca.pem || ! -f $dir/ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/O=Tusk lab/CN=Tusk lab CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  echo "made lab CA: $dir/ca.pem"
fi

# issue NAME EXTENSIONS
issue() {
  local name=$1 extensions=$2
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=Tusk lab/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days "$days" -extfile <(printf '%s\n' "$extensions") -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr"
  echo "made certificate: $dir/$name.pem"
}

sans="DNS:localhost,IP:127.0.0.1,IP:::1"
for name in "${controller_names[@]}"; do
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then sans+=",IP:$name"; else sans+=",DNS:$name"; fi
done
issue controller "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$sans"

for entry in "${agents[@]}"; do
  agent=${entry%%:*}
  agent_sans="DNS:$agent"
  [[ $entry == *:* ]] && agent_sans+=",DNS:${entry#*:}"
  issue "$agent" "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
subjectAltName=$agent_sans"
done
chmod 0644 "$dir"/*.pem
