import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { audit } from '../audit';

/** A device's cookie: 32 random bytes, 43 base64url characters. */
const DEVICE_RE = /^[A-Za-z0-9_-]{43}$/;
const hashDevice = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** What a sign-in leaves the device with. */
export interface DeviceSignIn {
  /** The value the device's cookie keeps (the one it sent, or a new one). */
  token: string;
  /** The device was not one this user signed in from before. */
  isNew: boolean;
}

/**
 * The devices a user signs in from: a long-lived random cookie per browser (`ocs.device`), of which
 * only the SHA-256 is kept, per user (`user_devices`). A sign-in from a device the user never
 * signed in from is written to their workspace's audit log.
 */
export class DeviceService {
  constructor(private readonly knex: Knex) {}

  /**
   * The user signed in from the device whose cookie is `token` (undefined: none, or one we never
   * gave). The device is remembered (or seen again); when it is new to the user and `record`, a
   * `sign_in_new_device` event goes to the user's workspace, in the same transaction.
   */
  async signedIn(userId: string, token: string | undefined, record: boolean): Promise<DeviceSignIn> {
    const device = token && DEVICE_RE.test(token) ? token : crypto.randomBytes(32).toString('base64url');
    return this.knex.transaction(async (trx) => {
      const {
        rows: [row],
      } = await trx.raw(
        `INSERT INTO user_devices (user_id, device_hash) VALUES (?, ?)
         ON CONFLICT (user_id, device_hash) DO UPDATE SET last_seen_at = now()
         RETURNING (xmax = 0) AS inserted`,
        [userId, hashDevice(device)],
      );
      const isNew = Boolean(row.inserted);
      if (isNew && record) {
        const member = await trx('workspace_members as m')
          .join('users as u', 'u.id', 'm.user_id')
          .where('m.user_id', userId)
          .first('m.workspace_id', 'u.email');
        if (member)
          await audit.record(trx, {
            workspaceId: member.workspace_id,
            action: 'sign_in_new_device',
            actorId: userId,
            target: { type: 'member', id: userId, label: member.email },
          });
      }
      return { token: device, isNew };
    });
  }
}
