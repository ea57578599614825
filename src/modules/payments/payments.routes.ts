import type { FastifyPluginAsync } from 'fastify';

export const paymentRoutes: FastifyPluginAsync = async () => {};
