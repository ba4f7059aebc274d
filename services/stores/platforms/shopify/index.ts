import { z } from 'zod';
import { msg, ValidationError } from '../../../../services/shared';
import type { StorePlatform } from '../types';
import { NON_EXPIRING_UNTIL, nonExpiring } from './admin';
import { SHOPIFY_SHOP, shopifyAuthorizeUrl } from './api';
import { shopifyCallback, shopifyOrigin } from './connect';
import { isShopRecordOf, shopify as reader, sentForShop } from './reader';
import { shopifySteps } from './write-back';

/** A shop's myshopify.com name, as a manual connection gives it. */
const shopName = z
  .string({ error: msg('notText', { label: 'shop' }) })
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9-]{0,60}\.myshopify\.com$/, msg('shopifyShop', { label: 'shop' }));

/** Shopify: its order and fulfilment webhooks, one click by our app (or a webhook made by hand), the outcome tagged on the order. */
export const shopify = {
  kind: 'shopify' as const,
  title: 'Shopify',
  reader,
  signingKey: 'store',
  manual: true,
  address: {
    schema: shopName,
    // The form takes the shop's address as the owner copies it (`https://atlas.myshopify.com/admin`).
    oneClick(given) {
      const name = (given ?? '')
        .trim()
        .toLowerCase()
        .replace(/^https?:\/\//, '')
        .replace(/\/.*$/, '');
      if (!SHOPIFY_SHOP.test(name) || name.length > 100) throw new ValidationError({ shop: msg('shopifyShop', { label: 'shop' }) });
      return name;
    },
    label: 'storeNew.shopAddress',
    apiLabel: 'Shop address',
    example: 'atlas.myshopify.com',
  },
  writeBack: {
    credentials: z.strictObject({ access_token: z.string().trim().min(1).max(500) }),
    wrongCredentials: () => msg('wbShopify'),
    steps: (target, order, { settings }) =>
      shopifySteps({ origin: settings.shopifyApiOrigin ?? `https://${target.shop}`, apiVersion: settings.shopifyApiVersion }, order),
    // Its requests carry the connection's token, refreshed as it expires.
    send: (context, connectionId, request, send) => context.shopifyAdmin.send(connectionId, request, send),
  },
  connect: {
    available: (config) => !!config.shopifyApp,
    connectionFirst: false,
    approvalUrl: (connector, { shop, nonce }) =>
      shopifyAuthorizeUrl(shopifyOrigin(connector.config, shop!), connector.config.shopifyApp!.clientId, connector.url('/stores/shopify/callback'), nonce),
    back: 'callback',
    step: 'shopifyCallback' as const,
    finish: shopifyCallback,
    reconnects: true,
    approveWords: { button: { strong: 'Install' } },
  },
  reconnectBefore: (connection) => (connection.connected_by === 'oauth' && nonExpiring(connection.write_back) ? NON_EXPIRING_UNTIL : null),
  // One client secret signs for every shop our app is in: the shop it names must be this connection's.
  sentFor: (headers, connection) => connection.connected_by !== 'oauth' || sentForShop(headers, connection.shop),
  uninstalls: isShopRecordOf,
  intakeDoc:
    "Shopify: `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the body), `X-Shopify-Topic` (`orders/create`, `orders/updated`, `orders/cancelled`, and `fulfillments/create` / `fulfillments/update`: `tracking_company` and `tracking_number` become the order's delivery carrier and tracking number with status `shipped`, `shipment_status` `in_transit`, `out_for_delivery`, `delivered` its status and `failure` `refused`, any other shipment status changes only the carrier's words; others are answered 200 and ignored), `X-Shopify-Webhook-Id` (a retry is a `duplicate`).",
  guide: {
    secretHint: 'storeNew.secretHint',
    text: ({ t, url, admin }) => ({
      steps: [
        ['storeGuide.shopify1', { menu: admin('shopifyMenu'), create: admin('shopifyCreate') }],
        [
          'storeGuide.shopify2',
          {
            eventField: t('storeGuide.admin.shopifyEvent'),
            created: admin('shopifyOrderCreation'),
            formatField: t('storeGuide.admin.shopifyFormat'),
            json: { strong: 'JSON' },
            urlField: t('storeGuide.admin.shopifyUrl'),
            url,
            versionField: admin('shopifyVersion'),
            save: admin('shopifySave'),
            updated: admin('shopifyOrderUpdate'),
            cancelled: admin('shopifyOrderCancellation'),
          },
        ],
        ['storeGuide.shopify3', { signedWith: t('storeGuide.admin.shopifySignedWith'), clientSecret: admin('shopifyClientSecret') }],
      ],
      after: [],
    }),
  },
} satisfies StorePlatform;
