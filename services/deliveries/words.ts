import type { Knex } from 'knex';
import { ValidationError, msg } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';
import type { DeliveryWord } from '../orders';
import { DELIVERY_WORDS, isDeliveryWord } from '../orders';

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

/**
 * Moroccan carriers' words for each status, in French, Arabic and English (a shop adds its own on
 * /settings), and the words of an attempt: the courier came or called and could not deliver yet
 * (no answer, postponed, unreachable). An attempt is not a status: it changes the carrier's words
 * only, and the shop may save the parcel with one more call (docs/delivery.md).
 */
const BUILT_IN: Record<DeliveryWord, string[]> = {
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
    'en cours',
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
    // A COD parcel "cancelled" on a carrier's report is the customer cancelling at the door or on
    // the courier's call: the parcel goes back, as a refusal does.
    'annulé',
    'annulée',
    'cancelled',
    'canceled',
    'ملغى',
    'refused',
    'rejected',
    'رفض',
    'مرفوض',
    'رفض الاستلام',
  ],
  returned: ['retourné', 'retournée', 'retour', 'retour expéditeur', 'returned', 'return', 'مرتجع', 'تم الإرجاع'],
  lost: ['perdu', 'perdue', 'colis perdu', 'lost', 'ضائع', 'مفقود'],
  attempted: [
    'pas de réponse',
    'ne répond pas',
    'reporté',
    'reportée',
    'injoignable',
    'client injoignable',
    'tentative échouée',
    'tentative de livraison',
    'no answer',
    'postponed',
    'unreachable',
    'attempted delivery',
    'failed attempt',
    'لا يجيب',
    'لم يجب',
    'مؤجل',
    'تأجيل',
    'تعذر الوصول',
    'لا يمكن الوصول',
    'محاولة فاشلة',
  ],
};

const DICTIONARY = new Map<string, DeliveryWord>(
  (Object.entries(BUILT_IN) as Array<[DeliveryWord, string[]]>).flatMap(([status, words]) => words.map((word) => [wordKey(word), status] as const)),
);

/** The built-in dictionary, as /settings lists it. */
export function builtInWords(): Record<DeliveryWord, string[]> {
  return BUILT_IN;
}

/**
 * Reads a carrier's words: the shop's own first, then the built-in dictionary. A delivery status,
 * `attempted` (an attempt, not a status), or undefined when unknown.
 */
export type WordReader = (word: string) => DeliveryWord | undefined;

/** A shop's words for a delivery status (settings), and the reader that knows them. */
export class CarrierWords {
  constructor(private readonly knex: Knex) {}

  async list(workspaceId: string): Promise<Array<{ word: string; status: DeliveryWord }>> {
    return this.knex('carrier_words').where({ workspace_id: workspaceId }).orderBy('word').select('word', 'status');
  }

  /** Adds a word, or gives a known one another status. */
  async add(workspaceId: string, body: { word?: unknown; status?: unknown }): Promise<void> {
    const word = typeof body.word === 'string' ? body.word.trim() : '';
    const fields: FieldErrors = {};
    if (!word || word.includes('\u0000')) fields.word = msg('required', { label: 'Word' });
    else if (word.length > 200 || !wordKey(word)) fields.word = msg('tooLong', { label: 'Word', max: 200 });
    if (!isDeliveryWord(body.status)) fields.status = msg('deliveryStatusUnknown', { allowed: DELIVERY_WORDS.join(', ') });
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
    const own = new Map<string, DeliveryWord>((await this.list(workspaceId)).map((row) => [wordKey(row.word), row.status]));
    return (word) => {
      const key = wordKey(word);
      return own.get(key) ?? DICTIONARY.get(key);
    };
  }
}
