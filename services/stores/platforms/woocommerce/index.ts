import { z } from 'zod';
import { msg } from '../../../../services/shared';
import { openedWriteBack } from '../../records';
import { siteOf, siteUrl } from '../addresses';
import type { StorePlatform } from '../types';
import { wooAuthorizeUrl } from './api';
import { APP_NAME, wooReturn } from './connect';
import { woocommerce as reader } from './reader';
import { pathSegment, wooCommerceSteps } from './write-back';

/** WooCommerce: its order webhooks, one click by its REST keys' approval (or a webhook made by hand), a note and the status written back. */
export const woocommerce = {
  kind: 'woocommerce' as const,
  title: 'WooCommerce',
  reader,
  signingKey: 'store-or-us',
  manual: true,
  address: { schema: siteUrl, oneClick: siteOf, label: 'storeNew.siteAddress', apiLabel: 'Site address', example: 'https://atlas.ma' },
  pingsWhilePending: true,
  writeBack: {
    credentials: z.strictObject({
      consumer_key: z.string().trim().min(1).max(500),
      consumer_secret: z.string().trim().min(1).max(500),
      set_status: z.boolean().optional(),
    }),
    wrongCredentials: () => msg('wbWoo'),
    steps(target, order, { settings, secrets }) {
      if (settings.httpsOnly && !target.shop.startsWith('https://')) return msg('wbHttpsOnly');
      if (pathSegment(order.externalId) === null) return msg('wbOrderId');
      return wooCommerceSteps({ shop: target.shop, credentials: openedWriteBack(secrets, target.write_back) }, order);
    },
  },
  connect: {
    available: () => true,
    // WooCommerce posts the keys to an address naming the connection: it exists, pending, from the start.
    connectionFirst: true,
    approvalUrl: (connector, { shop, nonce, connectionId }) =>
      wooAuthorizeUrl(shop!, APP_NAME, nonce, connector.url('/stores/woocommerce/return'), connector.url(`/hooks/stores/${connectionId}/keys`)),
    back: 'return',
    step: 'wooReturn' as const,
    finish: wooReturn,
    approveWords: {
      prompt: { strong: 'Order Confirmation would like to connect to your store' },
      access: { strong: 'Read/Write' },
      button: { strong: 'Approve' },
    },
  },
  intakeDoc:
    "WooCommerce: `X-WC-Webhook-Signature` (base64 HMAC-SHA256 of the body), `X-WC-Webhook-Topic` (`order.created`, `order.updated`, `order.deleted`), a delivery named by the order's `id` and `date_modified`; its unsigned activation ping `webhook_id=<n>` is answered 200 and recorded nowhere.",
  guide: {
    secretHint: 'storeNew.secretHintWoo',
    text: ({ t, url, admin }) => ({
      steps: [
        ['storeGuide.woo1', { menu: admin('wooMenu'), add: admin('wooAdd') }],
        [
          'storeGuide.woo2',
          {
            statusField: t('storeGuide.admin.wooStatus'),
            active: admin('wooActive'),
            topicField: t('storeGuide.admin.wooTopic'),
            created: admin('wooOrderCreated'),
            urlField: t('storeGuide.admin.wooDeliveryUrl'),
            url,
            versionField: t('storeGuide.admin.wooApiVersion'),
            version: { strong: 'WP REST API Integration v3' },
          },
        ],
        ['storeGuide.woo3', { secretField: admin('wooSecret'), save: admin('wooSave'), updated: admin('wooOrderUpdated'), deleted: admin('wooOrderDeleted') }],
      ],
      after: [],
    }),
  },
} satisfies StorePlatform;
