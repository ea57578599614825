import type { FastifyPluginAsync } from 'fastify';

export const estimateRoutes: FastifyPluginAsync = async () => {};
