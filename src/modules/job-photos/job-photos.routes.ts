import type { FastifyPluginAsync } from 'fastify';

export const jobPhotoRoutes: FastifyPluginAsync = async () => {};
