/**
 * The message template a shop submits to Meta for approval, in French and Arabic (Moroccan usage):
 * five body parameters in the order we send them ({{1}} client name, {{2}} products, {{3}} amount
 * to collect, {{4}} store name, {{5}} order reference) and two quick-reply buttons, Confirm then
 * Cancel (their payloads carry the call, so their words may be anything).
 */
export const TEMPLATE_TEXTS = [
  {
    language: 'fr',
    body: 'Bonjour {{1}}, merci pour votre commande {{5}} chez {{4}} : {{2}}. Montant à payer à la livraison : {{3}}. Confirmez-vous la commande ?',
    confirm: 'Confirmer',
    cancel: 'Annuler',
  },
  {
    language: 'ar',
    body: 'السلام {{1}}، شكرا على الطلبية ديالك {{5}} من {{4}}: {{2}}. المبلغ اللي غادي تخلص عند التوصيل: {{3}}. واش كتأكد الطلبية؟',
    confirm: 'تأكيد',
    cancel: 'إلغاء',
  },
] as const;
