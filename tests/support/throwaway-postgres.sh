#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests (issue 62), shared by every test process of one ctest
# run: `up DIR` makes a cluster in DIR (initdb, as user postgres when run as root: initdb refuses
# root) and starts it listening on a Unix socket in DIR only; `down DIR` stops it and removes DIR.
# ctest runs both as the `postgres` fixture (tests/CMakeLists.txt); a test process finds it through
# TUSK_TEST_POSTGRES=DIR, and starts a server of its own where that is unset
# (tests/support/throwaway_postgres.hpp).
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

case $action in
  up)
    if [[ -d $dir/data ]]; then "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 0711 "$dir"
    [[ $(id -u) == 0 ]] && chown postgres "$dir"
    "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U tusk --no-sync --no-instructions >"$dir/initdb.log" 2>&1
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -w -l "$dir/log" \
      -o "-k $dir -c listen_addresses='' -F -c max_connections=200" start >"$dir/pg_ctl.log" 2>&1
    echo "PostgreSQL for the tests on $dir"
    ;;
  down)
    if [[ -d $dir/data ]]; then "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: throwaway-postgres.sh up|down DIR" >&2
    exit 2
    ;;
esac
