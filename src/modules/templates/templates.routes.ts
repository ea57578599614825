import type { FastifyPluginAsync } from 'fastify';

export const templateRoutes: FastifyPluginAsync = async () => {};
