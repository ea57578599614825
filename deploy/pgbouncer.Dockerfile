# PgBouncer from Debian, the same package `npm run cluster` uses.
FROM debian:bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends pgbouncer \
  && rm -rf /var/lib/apt/lists/*
COPY pgbouncer.ini /etc/pgbouncer/pgbouncer.ini
COPY pgbouncer-userlist.txt /etc/pgbouncer/userlist.txt
USER postgres
EXPOSE 6432
CMD ["pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]
