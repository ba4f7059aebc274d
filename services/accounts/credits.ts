import type { Knex } from 'knex';
import { NotFoundError, ValidationError, msg } from '../../services/shared';

export interface CreditBalance {
  credits: number;
  totalCredits: number;
  totalSpent: number;
}

/** Credits belong to the workspace owner; every member reads the owner's ledger. */
export class CreditService {
  constructor(private readonly knex: Knex) {}

  async balance(workspace: { owner_id: string }): Promise<CreditBalance> {
    const row = await this.knex('credit_ledger')
      .where({ user_id: workspace.owner_id })
      .first(
        this.knex.raw("coalesce(sum(amount) FILTER (WHERE kind = 'grant'), 0) AS total_credits"),
        this.knex.raw("coalesce(sum(amount) FILTER (WHERE kind = 'spend'), 0) AS total_spent"),
      );
    const totalCredits = Number(row.total_credits);
    const totalSpent = Number(row.total_spent);
    return { credits: round(totalCredits - totalSpent), totalCredits, totalSpent };
  }

  /** Operator grant: the email must belong to a workspace owner; the amount is positive. */
  async grant(ownerEmail: string, amount: number, note?: string): Promise<CreditBalance> {
    if (!Number.isFinite(amount) || amount <= 0 || round(amount) !== amount || amount >= 1e12) {
      throw new ValidationError({ amount: msg('creditAmount') });
    }
    const owner = await this.knex('users as u')
      .join('workspaces as w', 'w.owner_id', 'u.id')
      .whereRaw('lower(u.email) = lower(?)', [ownerEmail.trim()])
      .first('u.id');
    if (!owner) throw new NotFoundError(msg('noOwner', { email: ownerEmail }));
    await this.knex('credit_ledger').insert({ user_id: owner.id, kind: 'grant', amount, note: note ?? null });
    return this.balance({ owner_id: owner.id });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
