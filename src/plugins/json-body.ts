import { isUtf8 } from 'node:buffer';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { AnsweredOnSocket, AppError, statusOf, validationError, type ErrorDetail } from '../errors.js';
import { FREE_FORM_MAX_CHARS, FREE_FORM_MAX_DEPTH } from '../shared/formats.js';
import { withExactNumbers } from '../shared/json-numbers.js';
import { fieldOfPath } from '../shared/validation.js';
import { answerOnSocket, misroutedLiteral } from './errors.js';

/**
 * Requests whose JSON text escapes a NUL character (`\\u0000`) or a UTF-16 surrogate (`\\ud800`): text
 * PostgreSQL cannot hold, or that may be half of a character (a lone surrogate, stored as U+FFFD), so that
 * what was stored would differ from what was answered.
 */
const withSuspectEscapes = new WeakSet<FastifyRequest>();
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
/** Text no stored string can hold as sent: a NUL character, or half of a surrogate pair. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A body that is no body (DECISIONS.md §8): only JSON's whitespace (RFC 8259: space, tab, CR, LF), after the
 * byte order mark the parser ignores. String.prototype.trim would also drop a no-break space, U+2028 or an
 * ideographic space, none of which JSON allows: such a body is malformed JSON, not an absent one.
 */
const NO_JSON_TEXT = /^\uFEFF?[ \t\r\n]*$/;

/**
 * How deep a body may nest: a free-form field nests at most FREE_FORM_MAX_DEPTH levels (§4) below a body a
 * few levels deep.
 */
const MAX_BODY_DEPTH = 2 * FREE_FORM_MAX_DEPTH;
/** How many fields a body's own object may have: far more than any request takes. */
const MAX_BODY_FIELDS = 1_000;
/** How many fields an object inside a body may have: what a free-form object's FREE_FORM_MAX_CHARS can hold. */
const MAX_OBJECT_FIELDS = Math.ceil(FREE_FORM_MAX_CHARS / 6);

/** What makes a JSON text too costly to parse for what any request may hold, and under which top-level field. */
export interface BodyShapeProblem {
  /**
   * The top-level field it is under; null outside any (the body's own object). For a duplicate, the full
   * path of the repeated field (`line_items[0].description`).
   */
  field: string | null;
  problem: 'depth' | 'fields' | 'duplicate';
}

/**
 * Reads the JSON text without parsing it, for nesting deeper than MAX_BODY_DEPTH or objects of more fields
 * than MAX_BODY_FIELDS (the body itself) or MAX_OBJECT_FIELDS (inside it). A megabyte of `[[[[...` or of
 * `"f1":1,"f2":1,...` costs a parse, a validation and their garbage far beyond what any request needs, on the
 * event loop every company shares (§11): such bodies are refused before they are parsed.
 * It also finds an object that names a field twice (`{"name":"a","name":"b"}`): JSON.parse would keep the
 * last silently while another reader of the same text keeps the first, so such a body is ambiguous and is
 * refused rather than read one way.
 */
export function bodyShapeProblem(text: string): BodyShapeProblem | undefined {
  // Fields seen in each open object (-1: an array) from the outermost in.
  const open: number[] = [];
  // Per open container, the same way: an object's names so far and the name being read, or an array's index.
  const names: Array<Set<string> | null> = [];
  const at: Array<string | number> = [];
  let nameStart = -1;
  let inString = false;
  let escaped = false;
  let keyStart = -1;
  let key: string | null = null;
  let last = 0;
  const found = (problem: BodyShapeProblem['problem']): BodyShapeProblem => {
    let field: string | null = null;
    try {
      field = key === null || open.length === 1 ? null : (JSON.parse(key) as string);
    } catch {
      field = null;
    }
    return { field, problem };
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) {
        inString = false;
        last = c;
        if (keyStart >= 0) {
          key = text.slice(keyStart, i + 1);
          keyStart = -1;
        }
        if (nameStart >= 0) {
          const name = fieldName(text.slice(nameStart, i + 1));
          nameStart = -1;
          const seen = names[names.length - 1];
          if (name !== undefined && seen) {
            if (seen.has(name)) return { field: fieldOfPath([...at.slice(0, -1), name]), problem: 'duplicate' };
            seen.add(name);
            at[at.length - 1] = name;
          }
        }
      }
      continue;
    }
    if (c === 0x22) {
      inString = true;
      // A string right after an object's `{` or `,` is one of its field names.
      if (open.length > 0 && open[open.length - 1] >= 0 && (last === 0x7b || last === 0x2c)) {
        nameStart = i;
        // The root object's, which names the field a problem is under.
        if (open.length === 1) keyStart = i;
      }
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      open.push(c === 0x7b ? 0 : -1);
      names.push(c === 0x7b ? new Set() : null);
      at.push(c === 0x7b ? '' : 0);
      if (open.length > MAX_BODY_DEPTH) return found('depth');
    } else if (c === 0x7d || c === 0x5d) {
      open.pop();
      names.pop();
      at.pop();
    } else if (c === 0x2c && open.length > 0 && open[open.length - 1] < 0) (at[at.length - 1] as number)++;
    else if (c === 0x3a && open.length > 0 && open[open.length - 1] >= 0) {
      // A colon outside strings ends a field name: one field more in the innermost object.
      const fields = ++open[open.length - 1];
      if (fields > (open.length === 1 ? MAX_BODY_FIELDS : MAX_OBJECT_FIELDS)) return found('fields');
    }
    if (c > 0x20) last = c;
  }
  return undefined;
}

/** A field name as JSON.parse reads its quoted text (escapes decoded); undefined if the text is not a JSON string. */
function fieldName(quoted: string): string | undefined {
  if (!quoted.includes('\\')) return quoted.slice(1, -1);
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

/** The charset a Content-Type declares, if any (`application/json; charset="utf-8"` gives `utf-8`). */
function declaredCharset(contentType: string | undefined): string | undefined {
  return contentType === undefined ? undefined : /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType)?.[1];
}

/**
 * The key that made fastify's parser refuse valid JSON: a `__proto__` key, or a `constructor` holding a
 * `prototype`, which could reach an object's prototype. Undefined when the text is not valid JSON at all.
 */
function poisoningKey(text: string): string | undefined {
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  return /"__proto__"\s*:/.test(text) ? '__proto__' : 'constructor';
}

/** Answers `error` on the request's socket and closes it; the rest of the body, if it comes, is ignored. */
function cutBody(request: FastifyRequest, error: AppError): void {
  request.answeredOnSocket = statusOf(error.code);
  request.errorCode = error.code;
  answerOnSocket(request.raw.socket, error, request.id);
}

/**
 * The JSON body parser of every route: a body of `Content-Type: application/json` that is empty or only
 * whitespace is no body at all (DECISIONS.md §8), so a route whose body is optional, or that takes none
 * (share_link, send, DELETE, retry), answers as if none was sent, and a route that needs one answers the
 * usual 400 "body is required". Anything else goes to fastify's own parser, with the server's settings for
 * prototype poisoning. Registered at the root, before any route.
 */
export const jsonParserPlugin = fp<{ requestTimeoutMs: number }>(
  async (app, { requestTimeoutMs }) => {
    // JSON bodies still arriving, each with the request that reads it: cut when the server shuts down.
    const reading = new Map<Readable, FastifyRequest>();
    app.addHook('preParsing', (request, _reply, payload, done) => {
      if (!/^application\/json/i.test(request.headers['content-type'] ?? '')) return done(null, payload);
      // Node bounds a request's headers by REQUEST_TIMEOUT_MS but not a body trickled after them: a JSON body
      // not read whole within the bound is cut (uploads have their own bound, UPLOAD_TIMEOUT_MS), answered
      // as Node answers headers that come too slowly: the envelope on the socket, then closed.
      const timer =
        requestTimeoutMs > 0
          ? setTimeout(() => cutBody(request, new AppError('validation_error', 'The request was not received in time.')), requestTimeoutMs)
          : undefined;
      timer?.unref();
      reading.set(payload, request);
      const finished = () => {
        clearTimeout(timer);
        reading.delete(payload);
      };
      payload.once('end', finished);
      payload.once('close', finished);
      done(null, payload);
    });
    // A body still trickling in when the server shuts down is not waited for until the forced exit: its request
    // has done nothing yet, so it is answered 503 and can be sent again.
    app.addHook('preClose', (done) => {
      for (const [payload, request] of reading) {
        reading.delete(payload);
        // An injected request (tests, light-my-request) has no connection to answer on.
        if (!(request.raw.socket instanceof Socket)) continue;
        cutBody(request, new AppError('service_unavailable', 'The server is shutting down; send the request again.'));
      }
      done();
    });
    const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
    const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
      // Answered already: a body that arrives whole after its request was cut must not be acted on.
      if (request.answeredOnSocket !== undefined) {
        done(new AnsweredOnSocket(), undefined);
        return;
      }
      // JSON is UTF-8 (RFC 8259): a body declared in another charset, or whose bytes are not UTF-8, would be
      // read as something else than the client meant, so it is refused rather than stored changed.
      const charset = declaredCharset(request.headers['content-type']);
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
        done(validationError([{ field: 'Content-Type', code: 'invalid', message: `must be application/json in UTF-8 (charset=utf-8 or none), not charset=${charset.slice(0, 40)}` }], 'headers'), undefined);
        return;
      }
      if (!isUtf8(raw as Buffer)) {
        done(validationError([{ field: 'body', code: 'invalid_format', message: 'must be UTF-8 text' }], 'body'), undefined);
        return;
      }
      const body = (raw as Buffer).toString('utf8');
      if (NO_JSON_TEXT.test(body)) {
        done(null, undefined);
        return;
      }
      const shape = bodyShapeProblem(body);
      if (shape) {
        if (shape.problem === 'duplicate') {
          const message = 'is named more than once in its object; send each field once';
          done(validationError([{ field: shape.field ?? 'body', code: 'invalid', message }], 'body'), undefined);
          return;
        }
        const message =
          shape.problem === 'depth'
            ? `must nest at most ${FREE_FORM_MAX_DEPTH} levels deep`
            : shape.field === null
              ? `must have at most ${MAX_BODY_FIELDS} fields`
              : `must have objects of at most ${MAX_OBJECT_FIELDS} fields`;
        done(validationError([{ field: shape.field ?? 'body', code: 'out_of_range', message }], 'body'), undefined);
        return;
      }
      // A raw NUL byte is not JSON at all; its escape is, and is refused by field once the route is known.
      if (SUSPECT_ESCAPE.test(body)) withSuspectEscapes.add(request);
      parse(request, withExactNumbers(body), (error, parsed) => {
        // Valid JSON, but a key no body may use: say which, rather than "not valid JSON".
        const poisoning = error ? poisoningKey(body) : undefined;
        if (poisoning) {
          done(validationError([{ field: poisoning, code: 'invalid', message: 'is a name no field of a body may have' }], 'body'), undefined);
          return;
        }
        done(error, parsed);
      });
    });
  },
  { name: 'json-parser' },
);

/**
 * A request body must be a JSON object (DECISIONS.md §1, §4): `null`, an array, a string, a number or a
 * boolean is 400 on every route, whatever its body schema says, before validation and the handler run.
 * Bodies are strict (§4): on a route that takes no body (a DELETE, a calendar link), each field sent is
 * 400 unknown_field; `{}` is no body.
 * An absent body stays absent, so routes that take none, or an optional one, keep working. Multipart
 * uploads are read by their handler and never reach this check as a parsed body.
 */
export const jsonBodyPlugin = fp(
  async (app) => {
    // A body is read as sent: one whose Content-Encoding (gzip, br) or transfer coding other than chunked asks
    // for a decoding the server does not do is refused, not read as if it were plain.
    app.addHook('preParsing', (request, _reply, payload, done) => {
      const encoding = request.headers['content-encoding'];
      const transfer = request.headers['transfer-encoding'];
      const encoded = encoding !== undefined && !/^\s*identity\s*$/i.test(encoding);
      const coded = transfer !== undefined && !/^\s*chunked\s*$/i.test(transfer);
      if ((!encoded && !coded) || request.is404 || misroutedLiteral(request)) return done(null, payload);
      const detail: ErrorDetail = encoded
        ? { field: 'Content-Encoding', code: 'invalid', message: `must be identity or absent (request bodies are read uncompressed), not ${encoding}` }
        : { field: 'Transfer-Encoding', code: 'invalid', message: `must be chunked or absent, not ${transfer}` };
      done(validationError([detail], 'headers'), payload);
    });
    // Synchronous: a request without a body (every GET) passes at the cost of one comparison.
    app.addHook('preValidation', (request, _reply, done) => {
      const query = request.query as Record<string, unknown> | undefined;
      if (query && !request.is404) {
        const unstorable = unstorableQueryFields(query);
        if (unstorable.length > 0) return done(validationError(unstorable, 'query'));
      }
      const body: unknown = request.body;
      // No route answers it, or it names a literal route with another method: the 404 or 405 comes first
      // (DECISIONS.md §1's order of checks).
      if (body === undefined || request.is404 || misroutedLiteral(request)) return done();
      if (isEmptyOtherBody(request)) {
        request.body = undefined;
        return done();
      }
      try {
        checkBody(request.headers['content-type'] ?? '', body);
        if (withSuspectEscapes.has(request)) refuseUnstorable(body);
        if (request.routeOptions.schema?.body === undefined) refuseFields(body as Record<string, unknown>);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
  },
  { name: 'json-body' },
);

/** An empty body of a type other than JSON (fetch's `body: ''` is text/plain) is no body, as an empty JSON one is. */
export function isEmptyOtherBody(request: FastifyRequest): boolean {
  return request.body === '' && !/json/i.test(request.headers['content-type'] ?? '');
}

/** Throws the 400 for a body that is not a JSON object (see jsonBodyPlugin). */
function checkBody(contentType: string, body: unknown): void {
  if (typeof body === 'string' && !/json/i.test(contentType)) {
    // fastify reads text/plain as a string: say what to send instead of "not an object".
    const sent = contentType.split(';')[0].trim();
    throw validationError([{ field: 'Content-Type', code: 'invalid', message: `must be application/json, not ${sent}` }], 'headers');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const received = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
    throw validationError([{ field: 'body', code: 'invalid_type', message: `must be a JSON object, not ${received}` }], 'body');
  }
}

/** The query parameters whose text no query can search or compare (a NUL character, a lone surrogate). */
function unstorableQueryFields(query: Record<string, unknown>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const [field, value] of Object.entries(query)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((item) => typeof item === 'string' && UNSTORABLE.test(item))) {
      details.push({ field, code: 'invalid_format', message: 'must be text without NUL characters or lone surrogates' });
    }
  }
  return details;
}

/** The 400 naming every field of a body sent to a route that takes none (see jsonBodyPlugin). */
function refuseFields(body: Record<string, unknown>): void {
  const fields = Object.keys(body);
  if (fields.length === 0) return;
  throw validationError(
    fields.map((field) => ({ field, code: 'unknown_field' as const, message: 'is not a field of this request; it takes no body' })),
    'body',
  );
}

/** The 400 naming each field whose text (or name) holds a NUL character or a lone surrogate (see UNSTORABLE). */
function refuseUnstorable(body: unknown): void {
  const details: ErrorDetail[] = [];
  const message = 'must be text without NUL characters (\\u0000) or lone surrogates (\\ud800-\\udfff)';
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) details.push({ field: fieldOfPath(path) || 'body', code: 'invalid_format', message });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...path, index]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (UNSTORABLE.test(key)) details.push({ field: fieldOfPath([...path, JSON.stringify(key).slice(1, -1)]), code: 'invalid_format', message });
        else walk(item, [...path, key]);
      }
    }
  };
  walk(body, []);
  if (details.length > 0) throw validationError(details, 'body');
}
