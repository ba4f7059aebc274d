import type { StorePlatform } from '../types';
import { YOUCAN_ADMIN, youcanAuthorizeUrl } from './api';
import { youcanCallback } from './connect';
import { youcan as reader } from './reader';

/** YouCan: its order events, to an approved app only (one click, no manual way); nothing is written back. */
export const youcan = {
  kind: 'youcan' as const,
  title: 'YouCan',
  reader,
  signingKey: 'store',
  manual: false,
  connect: {
    available: (config) => !!config.youcanApp,
    connectionFirst: false,
    approvalUrl: (connector, { nonce }) =>
      youcanAuthorizeUrl(
        connector.config.youcanAdminOrigin ?? YOUCAN_ADMIN,
        connector.config.youcanApp!.clientId,
        connector.url('/stores/youcan/callback'),
        nonce,
      ),
    back: 'callback',
    step: 'youcanCallback' as const,
    finish: youcanCallback,
    approveWords: { button: { strong: 'Authorize' } },
  },
  intakeDoc: 'YouCan: `x-youcan-signature` (hex HMAC-SHA256 of the exact bytes YouCan sent), `order.create` per order and `order.update` where offered.',
  guide: {
    secretHint: 'storeNew.secretHint',
    oneClickOnly: { connected: 'storeConnect.youcanNoManual', heading: 'storeConnect.youcanHeading', unavailable: 'storeConnect.notConfigured.youcan' },
    text: ({ t }) => ({ steps: [], after: [['storeGuide.youcanNone', { connect: { strong: t('storeConnect.heading') } }]] }),
  },
} satisfies StorePlatform;
