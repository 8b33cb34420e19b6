# Pinned by digest (the multi-arch index of the 2.9.6 tag): a re-pushed tag can't change the image.
# Named with its registry: Podman with Debian's defaults resolves no short name.
# A mirror of the same image may be named with --build-arg DENO_IMAGE=… (tests/container_test.ts
# builds on a stand-in where the registry can't be reached).
ARG DENO_IMAGE=docker.io/denoland/deno:2.9.6@sha256:2014dc167ece617ef7e7ba40631ac2234c59e75ce693e7cc2dc2602b3c87859d
FROM ${DENO_IMAGE}

WORKDIR /app

# The store and the generated APP_KEY live here: the service writes it without root, nobody else reads it.
# `admin` is the admin CLI as one command (docker exec chat admin …).
RUN mkdir -p /app/data && chown deno:deno /app/data && chmod 700 /app/data \
  && printf '#!/bin/sh\nexport ADMIN_PROGRAM=admin\nexec deno run --cached-only --allow-all --config /app/deno.json /app/cli/admin.ts "$@"\n' \
    > /usr/local/bin/admin && chmod 755 /usr/local/bin/admin

USER deno

# Only what the service and the admin CLI read (.dockerignore): the tests, their packages (a
# browser driver, payment SDKs), the bench, docs/ and examples/ stay out.
COPY . .
RUN deno cache --frozen main.ts cli/admin.ts

# A container is reached from outside it: listen on every interface. SERVICE_IN_CONTAINER makes a
# start without BASE_URL say that the links it gives out name the container's own address.
ENV KV_PATH=/app/data/kv.sqlite3 PORT=8080 HOST=0.0.0.0 SERVICE_IN_CONTAINER=true
VOLUME /app/data
EXPOSE 8080

# The image has no curl: the probe is a one-line Deno script, with its own timeout so a frozen
# service fails it rather than hanging it (not every engine enforces --timeout).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('PORT') ?? 8080}/up`, { signal: AbortSignal.timeout(4000) }); Deno.exit(r.ok ? 0 : 1)"]

# --cached-only, here and in `admin`: a start reads what the build cached and never the npm registry,
# so it works offline and says nothing of downloads (Deno fetches a package's metadata again whenever
# its cached copy is missing, though the lock file and the package's files are all it needs).
CMD ["run", "--cached-only", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"]
