#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests (issue 62), shared by every test process of the ctest
# runs that use one build tree, also when several run at once (.ci/run runs the e2e and deploy
# tests beside the unit tests): `up DIR` starts it, or counts one more user of the one running
# there; `down DIR` counts one user less and stops it, removing DIR's cluster, when none is left.
# The count is kept under an flock. The cluster: initdb as user postgres when run as root (initdb
# refuses root), listening on a Unix socket in DIR only. ctest runs both as the `postgres` fixture
# (tests/CMakeLists.txt); a test process finds it through TUSK_TEST_POSTGRES=DIR, and starts a
# server of its own where that is unset (tests/support/throwaway_postgres.hpp).
set -euo pipefail
action=${1:?usage: throwaway-postgres.sh up|down DIR}
dir=${2:?usage: throwaway-postgres.sh up|down DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z $bin || ! -x $bin/pg_ctl ]]; then
  echo "no PostgreSQL server under /usr/lib/postgresql: install Debian's postgresql (scripts/install-deps.sh does)" >&2
  exit 1
fi
as_owner=()
[[ $(id -u) == 0 ]] && as_owner=(runuser -u postgres --)

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
users=$(cat "$dir/users" 2>/dev/null || echo 0)
running() { [[ -d $dir/data ]] && "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; }

case $action in
  up)
    if running; then
      echo $((users + 1)) >"$dir/users"
      echo "PostgreSQL for the tests on $dir (already running; $((users + 1)) users)"
      exit 0
    fi
    # No server (or one a killed run left half made): a fresh cluster.
    rm -rf "$dir/data" "$dir/users"
    chmod 0711 "$dir"
    [[ $(id -u) == 0 ]] && chown postgres "$dir"
    "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U tusk --no-sync --no-instructions >"$dir/initdb.log" 2>&1
    # 9>&-: the server must not hold the lock it was started under.
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -w -l "$dir/log" \
      -o "-k $dir -c listen_addresses='' -F -c max_connections=200" start >"$dir/pg_ctl.log" 2>&1 9>&-
    echo 1 >"$dir/users"
    echo "PostgreSQL for the tests on $dir"
    ;;
  down)
    if ((users > 1)); then
      echo $((users - 1)) >"$dir/users"
      exit 0
    fi
    if running; then "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir/data" "$dir/users"
    ;;
  *)
    echo "usage: throwaway-postgres.sh up|down DIR" >&2
    exit 2
    ;;
esac
