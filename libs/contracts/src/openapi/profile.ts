import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { Profile, PublicProfile, PublicUserIdParam, UpdateProfileData } from '../profile';
import { TokenTypeHeader } from '../common';
import { z } from '../zod';
import { commonErrors, json, problem, writeErrors } from './helpers';

export function registerProfile(registry: OpenAPIRegistry): void {
  const tags = ['profile'];
  const headers = z.object({
    'Token-Type': TokenTypeHeader.optional(),
  });
  registry.registerPath({
    method: 'get',
    path: '/api/profile/v3',
    tags,
    summary: "The caller's profile (created on the first call)",
    request: { headers },
    responses: { 200: json(Profile, 'the profile'), ...commonErrors },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/profile/v3',
    tags,
    summary: 'Update the profile: fields left out are kept, null clears one',
    request: { headers, body: { required: true, content: { 'application/json': { schema: UpdateProfileData } } } },
    responses: { 200: json(Profile, 'the updated profile'), ...writeErrors, 429: problem('concurrent updates; see Retry-After') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/profile/v3/public/{publicUserId}',
    tags,
    summary: 'A public profile: only the fields its owner made public',
    request: { params: PublicUserIdParam },
    responses: {
      200: json(PublicProfile, 'the public profile'),
      ...commonErrors,
      404: problem('no such public profile, or it is not public'),
      409: problem('public profiles are switched off'),
    },
  });
}
