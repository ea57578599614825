import type { FastifyPluginAsync } from 'fastify';

export const invoiceRoutes: FastifyPluginAsync = async () => {};
