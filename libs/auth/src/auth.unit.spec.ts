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
    const foreign = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer('elsewhere').setExpirationTime('1h').sign(new TextEncoder().encode(secret));
    await expect(auth.authenticate(`Bearer ${foreign}`)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('verifies RS256 tokens against a JWKS address', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
    const server = await serve((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
    try {
      const jwks = new Authenticator({ jwksUrl: `${url(server)}/jwks`, audience: 'apps' });
      const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('erin').setAudience('apps').setExpirationTime('1h').sign(privateKey);
      expect(await jwks.authenticate(`Bearer ${token}`)).toEqual({ userId: 'erin' });
      const wrongAudience = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('erin').setAudience('web').setExpirationTime('1h').sign(privateKey);
      await expect(jwks.authenticate(`Bearer ${wrongAudience}`)).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      server.close();
    }
  });

  it('verifies sessionToken credentials with the identity provider, and caches the answer', async () => {
    let calls = 0;
    const server = await serve((req, res) => {
      calls++;
      if (req.headers.authorization === 'Bearer good-session') return res.setHeader('content-type', 'application/json').end(JSON.stringify({ sub: 'frank' }));
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
