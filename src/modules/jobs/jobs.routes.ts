import type { FastifyPluginAsync } from 'fastify';

export const jobRoutes: FastifyPluginAsync = async () => {};
