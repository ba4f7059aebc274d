import type { StorePlatform } from '../types';
import { custom as reader } from './reader';

/** A custom sender (a spreadsheet's script, a home-made store): our own order body, signed as our webhooks are, with the key we make. */
export const custom = {
  kind: 'custom' as const,
  reader,
  signingKey: 'us',
  manual: true,
  intakeDoc:
    'Custom: Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the key we made, body `{type: order.created | order.updated | order.cancelled, data: {external_id, external_ref?, client_name, phone, products_name, address?, total_amount?, currency?, paid?}}`.',
  guide: {
    heading: 'storeGuide.headingCustom',
    secretHint: 'storeNew.secretHint',
    text: ({ url, code }) => ({
      steps: [
        [
          'storeGuide.custom1',
          {
            post: code('POST'),
            url,
            headers: { html: '<bdi dir="ltr"><code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code></bdi>' },
          },
        ],
        [
          'storeGuide.custom2',
          {
            body: code('{"type": "order.created", "data": {"external_id", "client_name", "phone", "products_name", "address", "total_amount"}}'),
            updated: code('order.updated'),
            cancelled: code('order.cancelled'),
          },
        ],
      ],
      after: [['storeGuide.customSheets', { folder: code('examples/google-sheets/'), readme: code('README.md') }]],
    }),
  },
} satisfies StorePlatform;
