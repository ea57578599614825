/**
 * OpenAPI helpers shared by the route files. The security requirement of every /api/v1 operation:
 * a Bearer key, or the same key in X-API-Key (DECISIONS §2). The scope each operation needs is documented
 * when the document is finished (src/plugins/openapi-finish.ts).
 */
export const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/**
 * Marks an operation with the scope its route declares (config.scope); the document keeps it as this
 * extension and says it in the operation's description.
 */
export const SCOPE_OPERATION_MARK = 'x-required-scope';
