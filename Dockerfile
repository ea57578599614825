# syntax=docker/dockerfile:1
FROM node:24.11.1-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# The runtime image: compiled dist/, production dependencies only (no tsx, esbuild or TypeScript).
# `npm run admin -- <command>` and `npm start` run dist/ here (bin/run.mjs).
FROM node:24.11.1-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# The Node flags of scripts/server-node-flags.ts (V8 reads them only at startup).
CMD ["node", "--max-semi-space-size=8", "dist/server.js"]
