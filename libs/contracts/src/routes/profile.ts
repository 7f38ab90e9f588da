import { Profile, PublicProfile, PublicUserIdParam, UpdateProfileData } from '../profile';
import { TokenTypeHeader } from '../common';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { commonErrors, json, problem, writeErrors } from './helpers';

const tags = ['profile'];
const headers = z.object({
  'Token-Type': TokenTypeHeader.optional(),
});

/** profile-svc: `/api/profile/v3`. */
export const profileApi = {
  read: defineRoute({
    operationId: 'getProfile',
    method: 'get',
    path: '/api/profile/v3',
    tags,
    summary: "The caller's profile (created on the first call)",
    request: { headers },
    responses: { 200: json(Profile, 'the profile'), ...commonErrors },
  }),
  update: defineRoute({
    operationId: 'updateProfile',
    method: 'put',
    path: '/api/profile/v3',
    tags,
    summary: 'Update the profile: fields left out are kept, null clears one',
    request: { headers, body: UpdateProfileData },
    responses: { 200: json(Profile, 'the updated profile'), ...writeErrors, 429: problem('concurrent updates; see Retry-After') },
  }),
  readPublic: defineRoute({
    operationId: 'getPublicProfile',
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
  }),
};
