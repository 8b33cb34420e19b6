# Pinned by digest (the multi-arch index of the 2.9.6 tag): a re-pushed tag can't change the image.
FROM denoland/deno:2.9.6@sha256:2014dc167ece617ef7e7ba40631ac2234c59e75ce693e7cc2dc2602b3c87859d

WORKDIR /app

# The store and the generated APP_KEY live here: the service writes it without root, nobody else reads it.
RUN mkdir -p /app/data && chown deno:deno /app/data && chmod 700 /app/data

USER deno

# Only what the service and the admin CLI import: the tests' packages (a browser driver, payment
# SDKs) stay out of the image.
COPY . .
RUN deno cache --frozen main.ts cli/admin.ts

# A container is reached from outside it: listen on every interface.
ENV KV_PATH=/app/data/kv.sqlite3 PORT=8080 HOST=0.0.0.0
VOLUME /app/data
EXPOSE 8080

# The image has no curl: the probe is a one-line Deno script.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('PORT') ?? 8080}/up`); Deno.exit(r.ok ? 0 : 1)"]

CMD ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "main.ts"]
