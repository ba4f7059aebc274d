import type { Knex } from 'knex';
import { ValidationError, msg } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';
import type { DeliveryStatus } from '../orders';
import { DELIVERY_STATUSES, isDeliveryStatus } from '../orders';

/**
 * A carrier's word as we compare it: case, accents (French é, Arabic harakat and tatweel), the
 * forms of alef, punctuation and runs of spaces aside. `Livrée`, ` LIVREE ` and `livrée.` are one word.
 */
function wordKey(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/\u0640/g, '')
    .replace(/[أإآٱ]/g, 'ا')
    .toLowerCase()
    .replace(/[\s_.,;:!'’"()\-/]+/g, ' ')
    .trim();
}

/** Moroccan carriers' words for each status, in French, Arabic and English (a shop adds its own on /settings). */
const BUILT_IN: Record<DeliveryStatus, string[]> = {
  shipped: [
    'expédié',
    'expédiée',
    'expedie',
    'ramassé',
    'ramassée',
    'ramasse',
    'pris en charge',
    'shipped',
    'picked up',
    'envoyé',
    'تم الشحن',
    'تم الاستلام من المرسل',
  ],
  in_transit: [
    'en transit',
    'transit',
    'reçu',
    'reçue',
    'arrivé au centre',
    'arrivée au centre',
    'en cours d’acheminement',
    'in transit',
    'received',
    'في الطريق',
    'قيد النقل',
  ],
  out_for_delivery: ['en cours de livraison', 'mise en distribution', 'en distribution', 'en livraison', 'out for delivery', 'قيد التوصيل', 'خرج للتوصيل'],
  delivered: ['livré', 'livrée', 'livre', 'livraison effectuée', 'delivered', 'تم التسليم', 'تم التوصيل', 'مسلم'],
  refused: [
    'refusé',
    'refusée',
    'refus',
    'annulé par client',
    'annulée par client',
    'injoignable',
    'client injoignable',
    'refused',
    'rejected',
    'unreachable',
    'رفض',
    'مرفوض',
    'رفض الاستلام',
  ],
  returned: ['retourné', 'retournée', 'retour', 'retour expéditeur', 'returned', 'return', 'مرتجع', 'تم الإرجاع'],
  lost: ['perdu', 'perdue', 'colis perdu', 'lost', 'ضائع', 'مفقود'],
};

const DICTIONARY = new Map<string, DeliveryStatus>(
  (Object.entries(BUILT_IN) as Array<[DeliveryStatus, string[]]>).flatMap(([status, words]) => words.map((word) => [wordKey(word), status] as const)),
);

/** The built-in dictionary, as /settings lists it. */
export function builtInWords(): Record<DeliveryStatus, string[]> {
  return BUILT_IN;
}

/** Reads a carrier's words: the shop's own first, then the built-in dictionary; undefined when unknown. */
export type WordReader = (word: string) => DeliveryStatus | undefined;

/** A shop's words for a delivery status (settings), and the reader that knows them. */
export class CarrierWords {
  constructor(private readonly knex: Knex) {}

  async list(workspaceId: string): Promise<Array<{ word: string; status: DeliveryStatus }>> {
    return this.knex('carrier_words').where({ workspace_id: workspaceId }).orderBy('word').select('word', 'status');
  }

  /** Adds a word, or gives a known one another status. */
  async add(workspaceId: string, body: { word?: unknown; status?: unknown }): Promise<void> {
    const word = typeof body.word === 'string' ? body.word.trim() : '';
    const fields: FieldErrors = {};
    if (!word || word.includes('\u0000')) fields.word = msg('required', { label: 'Word' });
    else if (word.length > 200 || !wordKey(word)) fields.word = msg('tooLong', { label: 'Word', max: 200 });
    if (!isDeliveryStatus(body.status)) fields.status = msg('deliveryStatusUnknown', { allowed: DELIVERY_STATUSES.join(', ') });
    if (Object.keys(fields).length > 0) throw new ValidationError(fields);
    await this.knex('carrier_words')
      .insert({ workspace_id: workspaceId, word_key: wordKey(word), word, status: body.status })
      .onConflict(['workspace_id', 'word_key'])
      .merge(['word', 'status']);
  }

  async remove(workspaceId: string, word: string): Promise<void> {
    await this.knex('carrier_words')
      .where({ workspace_id: workspaceId, word_key: wordKey(word) })
      .delete();
  }

  async reader(workspaceId: string): Promise<WordReader> {
    const own = new Map<string, DeliveryStatus>((await this.list(workspaceId)).map((row) => [wordKey(row.word), row.status]));
    return (word) => {
      const key = wordKey(word);
      return own.get(key) ?? DICTIONARY.get(key);
    };
  }
}
