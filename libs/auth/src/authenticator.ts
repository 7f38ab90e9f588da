import { createVerifier } from 'fast-jwt';
import { SignJWT, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { Identity } from './internal-identity';
import { LRUCache } from 'lru-cache';

/** Why a request could not be authenticated; the gateway answers 401 with this detail. */
export class AuthenticationError extends Error {
  override readonly name = 'AuthenticationError';
}

export interface AuthenticatorOptions {
  /** HS256 secret for Bearer JWTs (embedded mode: the file secret in DATA_DIR). */
  jwtSecret?: string;
  /** JWKS address for Bearer JWTs signed by an identity provider (RS256/ES256...). */
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
  /** Identity-provider userinfo address that vouches for `sessionToken` credentials. */
  userinfoUrl?: string;
  /** The field of the userinfo answer that holds the user id. */
  userinfoIdField?: string;
  /** Longest lifetime a JWT may have (`exp` - `iat`, and `exp` - now), in seconds; longer-lived tokens are refused. */
  maxTokenLifetimeS?: number;
  /**
   * How long a verified session token is remembered (the identity provider may revoke it meanwhile). A verified JWT
   * is remembered until its own `exp`: its signature and claims cannot change before then.
   */
  cacheTtlMs?: number;
  /** How many verified credentials are remembered, least recently used dropped first (default 10,000). */
  cacheSize?: number;
  fetchImpl?: typeof fetch;
}

export const DEV_ISSUER = 'udp-embedded';
/** Default for `maxTokenLifetimeS` (AUTH_MAX_TOKEN_LIFETIME_S): one day. */
export const DEFAULT_MAX_TOKEN_LIFETIME_S = 24 * 3600;
/** User ids as the gateway accepts them: no `/`, `%`, spaces or control characters, at most 128 characters. */
export const USER_ID = /^[A-Za-z0-9._:@|-]{1,128}$/;
/**
 * The namespace of the system's own principals (`udp:gateway`, the identity the gateway signs for calls that read no
 * one's data): no credential may name a user in it, in any letter case.
 */
export const RESERVED_PRINCIPAL_PREFIX = 'udp:';
export const GATEWAY_PRINCIPAL = `${RESERVED_PRINCIPAL_PREFIX}gateway`;
const isReserved = (userId: string) => userId.toLowerCase().startsWith(RESERVED_PRINCIPAL_PREFIX);
const RESERVED_MESSAGE = `sub names a principal of the system (${RESERVED_PRINCIPAL_PREFIX}...), not a user`;
/** Tolerated clock difference between the token issuer and us, in seconds. */
const CLOCK_SKEW_S = 60;

const NumericDate = z.number().finite().nonnegative();
const StringOrStrings = z.union([z.string(), z.array(z.string())]);

/**
 * The claims of a JWT as we accept them (RFC 7519 types), checked after the signature: a subject that is not a
 * user id (a number, an array, an object...) is refused, never coerced into one. `exp` is required.
 */
export const JwtClaims = z.looseObject({
  sub: z
    .string({ error: 'sub must be a string' })
    .regex(USER_ID, 'sub is not a valid user id')
    .refine((sub) => !isReserved(sub), RESERVED_MESSAGE),
  exp: NumericDate,
  iat: NumericDate.optional(),
  nbf: NumericDate.optional(),
  iss: z.string().optional(),
  aud: StringOrStrings.optional(),
  jti: z.string().optional(),
});
export type JwtClaims = z.infer<typeof JwtClaims>;

/** The userinfo answer of the identity provider: an object whose id field is a user id (a number is taken as text). */
export const userinfoSchema = (idField: string) =>
  z.looseObject({
    [idField]: z.union([
      z
        .string()
        .regex(USER_ID)
        .refine((id) => !isReserved(id), RESERVED_MESSAGE),
      z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String),
    ]),
  });

const describeIssues = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.') || 'claims'}: ${i.message}`).join('; ');

/**
 * Verifies `Authorization: Bearer <JWT>` and `Authorization: sessionToken <token>` (the scheme the mobile
 * apps send). `Token-Type` names the scheme when the Authorization value carries none.
 */
export class Authenticator {
  /**
   * HS256 tokens are checked by fast-jwt, on this thread (node:crypto's HMAC, some 5 µs): jose checks them through
   * WebCrypto, a job on libuv's thread pool and a promise, some 100 µs of this thread's time a token, paid on every
   * request of an audience whose tokens outnumber the remembered ones (docs/performance.md, "Authentication").
   * Tokens of an identity provider's keys (JWKS) stay with jose.
   */
  private readonly hs256?: (token: string) => JWTPayload;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  private readonly cache: LRUCache<string, { identity: Identity; until: number }>;

  constructor(private readonly options: AuthenticatorOptions) {
    this.cache = new LRUCache({ max: options.cacheSize ?? 10_000 });
    if (options.jwtSecret) {
      const verify = createVerifier({
        key: options.jwtSecret,
        algorithms: ['HS256'],
        ...(options.issuer !== undefined && { allowedIss: options.issuer }),
        ...(options.audience !== undefined && { allowedAud: options.audience }),
        cache: false,
      });
      this.hs256 = (token) => verify(token) as JWTPayload;
    }
    if (options.jwksUrl) this.jwks = createRemoteJWKSet(new URL(options.jwksUrl));
    if (!this.hs256 && !this.jwks) throw new Error('Authenticator needs a JWT secret or a JWKS address');
  }

  async authenticate(authorization: string | undefined, tokenType?: string): Promise<Identity> {
    if (!authorization || !authorization.trim()) throw new AuthenticationError('missing Authorization header');
    const { scheme, token } = splitCredentials(authorization.trim(), tokenType);
    const cacheKey = `${scheme}\u0000${token}`;
    const cached = this.cache.get(cacheKey);
    if (cached) {
      if (cached.until > Date.now()) return cached.identity;
      this.cache.delete(cacheKey);
    }
    const { identity, expiresAt } = scheme === 'bearer' ? await this.verifyJwt(token) : await this.verifySessionToken(token);
    const ttl = this.options.cacheTtlMs ?? 60_000;
    this.remember(
      cacheKey,
      identity,
      scheme === 'bearer' || !this.options.userinfoUrl ? expiresAt : Math.min(Date.now() + ttl, expiresAt ?? Infinity),
    );
    return identity;
  }

  private async verifyJwt(token: string): Promise<{ identity: Identity; expiresAt?: number }> {
    let payload: JWTPayload;
    try {
      const options = { issuer: this.options.issuer, audience: this.options.audience };
      payload = this.jwks ? (await jwtVerify(token, this.jwks, options)).payload : this.hs256!(token);
    } catch (error) {
      throw new AuthenticationError(`invalid token: ${(error as Error).message}`);
    }
    const claims = JwtClaims.safeParse(payload);
    if (!claims.success) throw new AuthenticationError(`invalid token claims: ${describeIssues(claims.error)}`);
    const { sub, exp, iat } = claims.data;
    const max = this.options.maxTokenLifetimeS ?? DEFAULT_MAX_TOKEN_LIFETIME_S;
    const now = Date.now() / 1000;
    if ((iat !== undefined && exp - iat > max) || exp - now > max + CLOCK_SKEW_S) {
      throw new AuthenticationError(`token lifetime exceeds the maximum of ${max} s`);
    }
    return { identity: { userId: sub }, expiresAt: exp * 1000 };
  }

  private async verifySessionToken(token: string): Promise<{ identity: Identity; expiresAt?: number }> {
    // Without an identity provider (embedded mode) a session token is a dev JWT like the Bearer ones.
    if (!this.options.userinfoUrl) return this.verifyJwt(token);
    const fetchImpl = this.options.fetchImpl ?? fetch;
    let response: Response;
    try {
      response = await fetchImpl(this.options.userinfoUrl, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(5000),
      });
    } catch (error) {
      throw new Error(`identity provider unreachable: ${(error as Error).message}`);
    }
    if (response.status === 401 || response.status === 403) throw new AuthenticationError('session token rejected');
    if (!response.ok) throw new Error(`identity provider answered ${response.status}`);
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new Error('identity provider answered with a body that is not JSON');
    }
    const idField = this.options.userinfoIdField ?? 'sub';
    const parsed = userinfoSchema(idField).safeParse(body);
    if (!parsed.success) throw new AuthenticationError('session token has no valid user');
    return { identity: { userId: parsed.data[idField] as string } };
  }

  /** Verified credentials, never kept past `until` (a credential without a known end is not kept). */
  private remember(key: string, identity: Identity, until: number | undefined): void {
    if (until === undefined || until <= Date.now()) return;
    this.cache.set(key, { identity, until });
  }
}

function splitCredentials(value: string, tokenType?: string): { scheme: 'bearer' | 'sessiontoken'; token: string } {
  const space = value.indexOf(' ');
  const [rawScheme, token] = space === -1 ? [tokenType ?? '', value] : [value.slice(0, space), value.slice(space + 1).trim()];
  const scheme = rawScheme.toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'sessiontoken') {
    throw new AuthenticationError(
      space === -1 && !tokenType
        ? 'Authorization has no scheme: send "Bearer <token>", "sessionToken <token>", or name it in Token-Type'
        : `unsupported authorization scheme "${rawScheme}" (use Bearer or sessionToken)`,
    );
  }
  if (!token) throw new AuthenticationError('empty token');
  return { scheme, token };
}

/** Signs a development token the embedded gateway accepts (`npm run token -- <userId>`). */
export async function signDevToken(secret: string, userId: string, ttlSeconds = DEFAULT_MAX_TOKEN_LIFETIME_S): Promise<string> {
  if (!USER_ID.test(userId)) throw new Error(`user id must match ${USER_ID}`);
  if (isReserved(userId))
    throw new Error(`user id must not begin with ${RESERVED_PRINCIPAL_PREFIX}: the system's own principals are named so`);
  // The clock read once: jose reads it anew for each claim, and a second boundary between the two reads made
  // `exp - iat` one more than the lifetime, which the gateway refuses at the maximum.
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(DEV_ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
