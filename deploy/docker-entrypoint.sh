#!/bin/sh
# Starts one askbus service by name: gateway, router, retriever or ranker.
set -e
service="${1:-gateway}"
main="/app/services/${service}/src/main.ts"
if [ ! -f "$main" ]; then
  echo "unknown service '${service}'; one of: $(ls /app/services | tr '\n' ' ')" >&2
  exit 2
fi
shift || true
exec node /app/node_modules/tsx/dist/cli.mjs "$main" "$@"
