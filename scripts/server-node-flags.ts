/**
 * The Node flags every start of the server passes: the Dockerfile's CMD and `npm start` write them out
 * (test/server-node-flags.test.ts holds the three together), the bench and the local cluster start their
 * instances with them. V8 reads them only at startup, so the server cannot set them itself.
 *
 * --max-semi-space-size=8: V8's young generation at 2 x 8 MiB. Node 20 lets it grow to 2 x 16 MiB and
 * Node 24, the image's runtime, to 2 x 64 MiB, which took an instance to 300 MiB under the bench's reads and
 * 350 MiB after a burst of uploads (170 and 230 with the flag); on Node 20 the flag keeps D1 after U1 under
 * 200 MiB (bench/README.md, "The young generation").
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
