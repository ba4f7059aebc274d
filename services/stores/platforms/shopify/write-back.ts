import type { WriteBackOrder, WriteBackStep } from '../write-back';
import { transportFailure } from '../write-back';

/** Shopify's requests are built without the access token: the sender adds it (X-Shopify-Access-Token), refreshed as it expires. */
export interface ShopifyTarget {
  /** `https://atlas.myshopify.com`, or a test double's address. */
  origin: string;
  apiVersion: string;
}

const TAGS_ADD = `mutation ConfirmationTag($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) { node { id } userErrors { field message } }
}`;

/**
 * Shopify: the tag `confirmation:{status}` on the order. GraphQL answers 200 even when nothing was
 * done: top-level `errors` (a bad token's scope, throttling) or the mutation's `userErrors` are failures.
 */
export function shopifySteps(target: ShopifyTarget, order: WriteBackOrder): WriteBackStep[] {
  return [
    {
      request: {
        method: 'POST',
        url: `${target.origin}/admin/api/${target.apiVersion}/graphql.json`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: TAGS_ADD, variables: { id: `gid://shopify/Order/${order.externalId}`, tags: [`confirmation:${order.status}`] } }),
      },
      failure(result) {
        const failed = transportFailure('Shopify', result);
        if (failed) return failed;
        let answer: { errors?: unknown; data?: { tagsAdd?: { userErrors?: unknown[] } | null } };
        try {
          answer = JSON.parse(result.body);
        } catch {
          return { reason: 'unreadable', store: 'Shopify' };
        }
        if (Array.isArray(answer.errors) && answer.errors.length > 0) return { reason: 'errors', store: 'Shopify' };
        if (!answer.data?.tagsAdd) return { reason: 'unreadable', store: 'Shopify' };
        if ((answer.data.tagsAdd.userErrors ?? []).length > 0) return { reason: 'tagRefused', store: 'Shopify' };
        return null;
      },
    },
  ];
}
