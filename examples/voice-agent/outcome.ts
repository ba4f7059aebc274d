/** What the reference agent reports in its call.ended, chosen by the phone's last digit. */
export interface CallResult {
  outcome: 'confirmed' | 'unconfirmed' | 'no-answer' | 'postponed' | 'order-changed' | 'unrecognized' | 'failed';
  duration_seconds: number;
  summary: string;
  callback_at: string | null;
  changes: string | null;
}

const CALLBACK_DELAY_MS = 10 * 60_000;

/**
 * 0–3 confirmed, 4 unconfirmed, 5 no-answer, 6 postponed (10 minutes later), 7 order-changed,
 * 8 unrecognized, 9 failed: anyone can pick the outcome they want to watch by choosing the phone.
 */
export function resultFor(phone: string, now = new Date()): CallResult {
  const digit = Number(phone.trim().slice(-1));
  const result = (outcome: CallResult['outcome'], duration: number, summary: string, extra: Partial<CallResult> = {}): CallResult => ({
    outcome,
    duration_seconds: duration,
    summary,
    callback_at: null,
    changes: null,
    ...extra,
  });
  switch (digit) {
    case 4:
      return result('unconfirmed', 25, 'The customer declined the order');
    case 5:
      return result('no-answer', 0, 'Nobody answered');
    case 6:
      return result('postponed', 18, 'Asked to be called back in 10 minutes', {
        callback_at: new Date(now.getTime() + CALLBACK_DELAY_MS).toISOString(),
      });
    case 7:
      return result('order-changed', 52, 'The customer wants another quantity', { changes: 'Quantity 3 instead of 2' });
    case 8:
      return result('unrecognized', 15, 'The customer does not know this order');
    case 9:
      return result('failed', 0, 'The number could not be reached');
    default:
      return result('confirmed', 34, 'The customer confirmed the order and the address');
  }
}
