/**
 * A call's outcomes and their classes, written once. This file imports nothing: the domains the loop
 * itself stands on (orders, deliveries, team) read these classes too, and may import this one file of
 * calls/ besides its index.ts without a cycle (.dependency-cruiser.cjs, `calls-outcomes-imports-nothing`).
 */

export const OUTCOMES = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized', 'postponed', 'no-answer', 'failed'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The outcomes that settle the order's confirmation: its operation ends with them. */
export const FINAL_OUTCOMES: readonly Outcome[] = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized'];

/** The outcomes after which an operation may go on to the agent's fallback (the ladder). */
export const UNANSWERED_OUTCOMES: readonly Outcome[] = ['no-answer', 'failed'];

/** The outcomes that confirm an order ("confirmed-like"): its last such call names who confirmed it. */
export const CONFIRMING_OUTCOMES: readonly Outcome[] = ['confirmed', 'order-changed'];

/** Whether an outcome, or the order's status it became, confirms the order. */
export const isConfirming = (outcomeOrStatus: string): boolean => (CONFIRMING_OUTCOMES as readonly string[]).includes(outcomeOrStatus);

/** A class (of outcomes, or of the order statuses they become) as an SQL list of literals (`'confirmed', 'order-changed'`), for `IN (…)` in a statement's text. */
export const sqlList = (values: readonly string[]): string => values.map((value) => `'${value}'`).join(', ');

/** How many of the counted calls or orders confirmed (the sum over CONFIRMING_OUTCOMES). */
export const confirmedCount = (byOutcome: Readonly<Record<Outcome, number>>): number => CONFIRMING_OUTCOMES.reduce((n, outcome) => n + byOutcome[outcome], 0);
