/**
 * OpenAPI helpers shared by the route files. The security requirement of every /api/v1 operation:
 * a Bearer key, or the same key in X-API-Key (DECISIONS §2).
 */
export const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
