import { webcrypto } from 'node:crypto';
import { SignJWT, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Identity } from './internal-identity';

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
  /** How long a verified credential is remembered (bounded cache, never past the token's own expiry). */
  cacheTtlMs?: number;
  fetchImpl?: typeof fetch;
}

export const DEV_ISSUER = 'udp-embedded';
const USER_ID = /^[A-Za-z0-9._:@|-]{1,128}$/;

/**
 * Verifies `Authorization: Bearer <JWT>` and `Authorization: sessionToken <token>` (the scheme the mobile
 * apps send). `Token-Type` names the scheme when the Authorization value carries none.
 */
export class Authenticator {
  // Imported once: handing jose the raw bytes would import a key on every verification (~0.4 ms each).
  private readonly secret?: Promise<webcrypto.CryptoKey>;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  private readonly cache = new Map<string, { identity: Identity; until: number }>();

  constructor(private readonly options: AuthenticatorOptions) {
    if (options.jwtSecret) {
      this.secret = webcrypto.subtle.importKey('raw', new TextEncoder().encode(options.jwtSecret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    }
    if (options.jwksUrl) this.jwks = createRemoteJWKSet(new URL(options.jwksUrl));
    if (!this.secret && !this.jwks) throw new Error('Authenticator needs a JWT secret or a JWKS address');
  }

  async authenticate(authorization: string | undefined, tokenType?: string): Promise<Identity> {
    if (!authorization || !authorization.trim()) throw new AuthenticationError('missing Authorization header');
    const { scheme, token } = splitCredentials(authorization.trim(), tokenType);
    const cacheKey = `${scheme}\u0000${token}`;
    const cached = this.cache.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached.identity;
    const { identity, expiresAt } =
      scheme === 'bearer' ? await this.verifyJwt(token) : await this.verifySessionToken(token);
    this.remember(cacheKey, identity, expiresAt);
    return identity;
  }

  private async verifyJwt(token: string): Promise<{ identity: Identity; expiresAt?: number }> {
    let payload: JWTPayload;
    try {
      const options = { issuer: this.options.issuer, audience: this.options.audience };
      payload = this.jwks
        ? (await jwtVerify(token, this.jwks, options)).payload
        : (await jwtVerify(token, await this.secret!, { ...options, algorithms: ['HS256'] })).payload;
    } catch (error) {
      throw new AuthenticationError(`invalid token: ${(error as Error).message}`);
    }
    if (!payload.sub || !USER_ID.test(payload.sub)) throw new AuthenticationError('token has no valid subject');
    return { identity: { userId: payload.sub }, expiresAt: payload.exp ? payload.exp * 1000 : undefined };
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
    const body = (await response.json()) as Record<string, unknown>;
    const id = body[this.options.userinfoIdField ?? 'sub'];
    const userId = typeof id === 'number' ? String(id) : id;
    if (typeof userId !== 'string' || !USER_ID.test(userId)) throw new AuthenticationError('session token has no valid user');
    return { identity: { userId } };
  }

  private remember(key: string, identity: Identity, expiresAt?: number): void {
    const ttl = this.options.cacheTtlMs ?? 60_000;
    const until = Math.min(Date.now() + ttl, expiresAt ?? Number.MAX_SAFE_INTEGER);
    if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value!);
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
export async function signDevToken(secret: string, userId: string, ttlSeconds = 30 * 24 * 3600): Promise<string> {
  if (!USER_ID.test(userId)) throw new Error(`user id must match ${USER_ID}`);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(DEV_ISSUER)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(new TextEncoder().encode(secret));
}
