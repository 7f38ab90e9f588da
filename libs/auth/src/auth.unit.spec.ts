import { createServer, type Server } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, Authenticator, DEV_ISSUER, signDevToken } from './authenticator';
import { InternalIdentity } from './internal-identity';
import { fileSecret } from './secrets';

const secret = 'a'.repeat(40);

describe('InternalIdentity', () => {
  const identity = new InternalIdentity('s'.repeat(32), 1000);

  it('verifies what it signed', () => {
    expect(identity.verify(identity.sign({ userId: 'alice' }, 0), 500)).toEqual({ userId: 'alice' });
  });

  it('refuses expired, forged, tampered or foreign values', () => {
    const value = identity.sign({ userId: 'alice' }, 0);
    expect(identity.verify(value, 1001)).toBeNull();
    expect(identity.verify(value.replace('YWxpY2U', 'Ym9i'), 500)).toBeNull();
    expect(identity.verify(`${value.slice(0, -2)}xx`, 500)).toBeNull();
    expect(new InternalIdentity('t'.repeat(32)).verify(identity.sign({ userId: 'alice' }))).toBeNull();
    expect(identity.verify(undefined)).toBeNull();
    expect(identity.verify('garbage')).toBeNull();
  });
});

describe('Authenticator', () => {
  const auth = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER });

  it('accepts a dev Bearer token and names its subject', async () => {
    expect(await auth.authenticate(`Bearer ${await signDevToken(secret, 'alice')}`)).toEqual({ userId: 'alice' });
  });

  it('signs a dev token whose lifetime is exactly the one asked, even when the clock passes a second while it signs', async () => {
    const RealDate = Date;
    // A clock that moves on by 1 ms at each reading, from 1 ms before a second ends.
    let nowMs = 1_800_000_000_999;
    class TickingDate extends RealDate {
      constructor(...args: [] | [number]) {
        super(args.length ? args[0] : nowMs++);
      }
      static override now() {
        return nowMs++;
      }
    }
    globalThis.Date = TickingDate as DateConstructor;
    let token: string;
    try {
      token = await signDevToken(secret, 'alice', 86_400);
    } finally {
      globalThis.Date = RealDate;
    }
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBe(86_400);
  });

  it("will not sign a dev token for a principal of the system's namespace", async () => {
    await expect(signDevToken(secret, 'udp:gateway')).rejects.toThrow(/udp:/);
  });

  it('takes the scheme from Token-Type when Authorization carries none', async () => {
    const token = await signDevToken(secret, 'bob');
    expect(await auth.authenticate(token, 'Bearer')).toEqual({ userId: 'bob' });
    expect(await auth.authenticate(token, 'sessionToken')).toEqual({ userId: 'bob' });
  });

  it.each([
    ['missing', undefined],
    ['empty', '  '],
    ['no scheme', 'abc'],
    ['unknown scheme', 'Basic abc'],
    ['garbage token', 'Bearer abc'],
  ])('refuses a %s credential', async (_case, value) => {
    await expect(auth.authenticate(value)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('refuses a token signed with another secret, expired, or from another issuer', async () => {
    await expect(auth.authenticate(`Bearer ${await signDevToken('b'.repeat(40), 'alice')}`)).rejects.toBeInstanceOf(AuthenticationError);
    await expect(auth.authenticate(`Bearer ${await signDevToken(secret, 'alice', -10)}`)).rejects.toBeInstanceOf(AuthenticationError);
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer('elsewhere')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    await expect(auth.authenticate(`Bearer ${foreign}`)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('verifies RS256 tokens against a JWKS address', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
    const server = await serve((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
    try {
      const jwks = new Authenticator({ jwksUrl: `${url(server)}/jwks`, audience: 'apps' });
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('erin')
        .setAudience('apps')
        .setExpirationTime('1h')
        .sign(privateKey);
      expect(await jwks.authenticate(`Bearer ${token}`)).toEqual({ userId: 'erin' });
      const wrongAudience = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('erin')
        .setAudience('web')
        .setExpirationTime('1h')
        .sign(privateKey);
      await expect(jwks.authenticate(`Bearer ${wrongAudience}`)).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      server.close();
    }
  });

  describe('remembers a verified JWT', () => {
    afterEach(() => jest.useRealTimers());
    const at = (iso: string) => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'], now: new Date(iso) });

    it('until its expiry, not past it', async () => {
      at('2026-01-01T00:00:00Z');
      const cached = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER, cacheTtlMs: 1000 });
      const token = `Bearer ${await signDevToken(secret, 'alice', 3600)}`;
      const first = await cached.authenticate(token);
      jest.setSystemTime(new Date('2026-01-01T00:59:00Z'));
      expect(await cached.authenticate(token)).toBe(first); // the same answer, not verified again
      jest.setSystemTime(new Date('2026-01-01T01:00:01Z'));
      await expect(cached.authenticate(token)).rejects.toBeInstanceOf(AuthenticationError);
    });

    it('in a bounded cache, least recently used dropped first', async () => {
      const small = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER, cacheSize: 2 });
      const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (u) => `Bearer ${await signDevToken(secret, u)}`));
      const first = await small.authenticate(a);
      const second = await small.authenticate(b);
      expect(await small.authenticate(a)).toBe(first);
      await small.authenticate(c);
      expect(await small.authenticate(a)).toBe(first);
      expect(await small.authenticate(b)).not.toBe(second);
    });
  });

  it('verifies sessionToken credentials with the identity provider, and caches the answer', async () => {
    let calls = 0;
    const server = await serve((req, res) => {
      calls++;
      if (req.headers.authorization === 'Bearer good-session')
        return res.setHeader('content-type', 'application/json').end(JSON.stringify({ sub: 'frank' }));
      res.statusCode = 401;
      res.end();
    });
    try {
      const idp = new Authenticator({ jwtSecret: secret, userinfoUrl: `${url(server)}/userinfo` });
      expect(await idp.authenticate('sessionToken good-session')).toEqual({ userId: 'frank' });
      expect(await idp.authenticate('sessionToken good-session')).toEqual({ userId: 'frank' });
      expect(calls).toBe(1);
      await expect(idp.authenticate('sessionToken bad')).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      server.close();
    }
  });
});

describe('userinfo answers (sessionToken) are validated', () => {
  it.each<[string, unknown, string | null]>([
    ['a string id', { sub: 'gina' }, 'gina'],
    ['a numeric id, taken as text', { sub: 42 }, '42'],
    ['an array id', { sub: ['gina'] }, null],
    ['an object id', { sub: { id: 'gina' } }, null],
    ['an empty id', { sub: '' }, null],
    ['no id', { name: 'Gina' }, null],
    ['an array instead of an object', [{ sub: 'gina' }], null],
    ['a negative or fractional number', { sub: -1.5 }, null],
    ["the gateway's own principal", { sub: 'udp:gateway' }, null],
    ["an id in the system's namespace, in capitals", { sub: 'UDP:other' }, null],
  ])('%s', async (_case, answer, expected) => {
    const server = await serve((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify(answer)));
    try {
      const idp = new Authenticator({ jwtSecret: secret, userinfoUrl: `${url(server)}/userinfo` });
      const result = idp.authenticate('sessionToken s-1');
      if (expected === null) await expect(result).rejects.toBeInstanceOf(AuthenticationError);
      else expect(await result).toEqual({ userId: expected });
    } finally {
      server.close();
    }
  });

  it('takes an identity provider that answers no JSON as unavailable (503 at the gateway), not as a user', async () => {
    const server = await serve((_req, res) => res.setHeader('content-type', 'text/html').end('<html>'));
    try {
      const idp = new Authenticator({ jwtSecret: secret, userinfoUrl: `${url(server)}/userinfo` });
      const failure = await idp.authenticate('sessionToken s-1').catch((error: Error) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(failure).not.toBeInstanceOf(AuthenticationError);
    } finally {
      server.close();
    }
  });
});

describe('fileSecret', () => {
  it('creates a secret once and returns the same one afterwards', () => {
    const dir = mkdtempSync(join(tmpdir(), 'udp-secret-'));
    const first = fileSecret(dir, 'jwt-signing');
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(fileSecret(dir, 'jwt-signing')).toBe(first);
    expect(fileSecret(dir, 'internal-identity')).not.toBe(first);
  });
});

function serve(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
function url(server: Server): string {
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}
