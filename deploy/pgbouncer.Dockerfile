# PgBouncer from Debian, the same package `npm run cluster` uses.
FROM debian:12.11-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends pgbouncer \
  && rm -rf /var/lib/apt/lists/*
COPY pgbouncer.ini /etc/pgbouncer/pgbouncer.ini.template
COPY pgbouncer-entrypoint.sh /usr/local/bin/pgbouncer-entrypoint.sh
USER postgres
EXPOSE 6432
# The password comes from POSTGRES_PASSWORD at start (docker-compose.yml), never from the image.
ENTRYPOINT ["/bin/sh", "/usr/local/bin/pgbouncer-entrypoint.sh"]
