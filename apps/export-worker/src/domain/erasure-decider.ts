import { type Command, type Decider, foldByEvolve } from '@udp/eventsourcing';
import type { ErasureEvent } from './aggregate';

export interface ErasureState {
  erasureId?: string;
  /** When the erasure was accepted (0 before). */
  requestedAt: number;
  participants: string[];
  confirmed: string[];
  completed: boolean;
}

export type RequestErasure = Command<'RequestErasure', { erasureId: string; userHash: string; participants: string[] }>;
export type ConfirmParticipant = Command<'ConfirmParticipant', { service: string; streamsDeleted: number; documentsDeleted: number }>;
export type CompleteErasure = Command<'CompleteErasure', Record<string, never>>;
export type ErasureCommand = RequestErasure | ConfirmParticipant | CompleteErasure;

export const allConfirmed = (state: ErasureState) => state.participants.every((p) => state.confirmed.includes(p));

/** Confirmations are idempotent: a redelivered one, or one from a service that is no participant, changes nothing. */
export function decide(command: ErasureCommand, state: ErasureState): ErasureEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'RequestErasure':
      if (state.erasureId) return [];
      return [{ type: 'ErasureRequested', data: { ...command.data, requestedAt: now } }];
    case 'ConfirmParticipant': {
      const { service } = command.data;
      if (!state.erasureId || state.completed || !state.participants.includes(service) || state.confirmed.includes(service)) return [];
      return [{ type: 'ErasureParticipantConfirmed', data: { ...command.data, confirmedAt: now } }];
    }
    case 'CompleteErasure':
      if (!state.erasureId || state.completed || !allConfirmed(state)) return [];
      return [{ type: 'ErasureCompleted', data: { completedAt: now } }];
  }
}

export function evolve(state: ErasureState, event: ErasureEvent): ErasureState {
  switch (event.type) {
    case 'ErasureRequested':
      return { ...state, erasureId: event.data.erasureId, participants: event.data.participants, requestedAt: event.data.requestedAt };
    case 'ErasureParticipantConfirmed':
      return { ...state, confirmed: [...state.confirmed, event.data.service] };
    case 'ErasureCompleted':
      return { ...state, completed: true };
  }
}

export const erasureDecider: Decider<ErasureCommand, ErasureEvent, ErasureState> = {
  decide,
  evolve,
  initialState: () => ({ requestedAt: 0, participants: [], confirmed: [], completed: false }),
  fold: foldByEvolve(evolve),
};
