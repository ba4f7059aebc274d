import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Jobs } from '../db/jobs';
import { HostResolver } from '../integrations/dns';
import { SignedSender } from '../integrations/http';
import { secretsOf } from '../db/secrets-at-rest';
import { AgentService } from './agents';
import { AuditService } from './audit';
import { ApiKeyService, CreditService, DeviceService, InvitationService, MemberService, TokenService, UserService, WorkspaceService } from './accounts';
import {
  ANONYMISED_PHONE,
  BlockedPhoneService,
  CustomerService,
  ImportService,
  exportCsv,
  OperationService,
  OrderService,
  RetentionService,
  tidySearchIndex,
} from './orders';
import { CallSettingsService, CallViewService, CallService, SweepService } from './calls';
import { DeliveryService } from './deliveries';
import { FormTokenService, IdempotencyService } from './shared';
import type { Language } from './shared';
import type { OrderFilters, Order } from './orders';
import { AutoShipping, CarrierAccountService, CarrierNewsService, ParcelSender, ShipmentService } from './shipping';
import { StatsService } from './stats';
import { ShopifyAdmin, StoreConnectService, StoreConnectionService, StoreIntakeService, StoreWriteBackService } from './stores';
import { TeamService } from './team';
import { WebhookService } from './webhooks';
import { WhatsAppService } from './whatsapp';

export type Services = ReturnType<typeof createServices>;

type ServiceConfig = Pick<
  Config,
  | 'bcryptCost'
  | 'jwtSecret'
  | 'publicBaseUrl'
  | 'publishableKey'
  | 'calls'
  | 'isProduction'
  | 'stores'
  | 'whatsapp'
  | 'secretsKey'
  | 'secretsOldKeys'
  | 'carrierOrigins'
>;

/** Wires every service to one Knex instance and one job sender; routes, the worker and the CLI receive this object. */
export function createServices(knex: Knex, config: ServiceConfig, jobs: Jobs) {
  // Third-party secrets are sealed with SECRETS_KEY before they are stored, opened as they are read (db/secrets-at-rest.ts).
  const secrets = secretsOf(config);
  const workspaces = new WorkspaceService(knex);
  const invitations = new InvitationService(knex, config.publicBaseUrl);
  const operations = new OperationService(knex, jobs);
  const callSettings = new CallSettingsService(knex);
  const calls = new CallService(knex, jobs, callSettings, config.calls, secrets);
  const idempotency = new IdempotencyService(knex);
  // Voice agents and webhook endpoints: the same rule for where we may send.
  const urlPolicy = { allowPrivateUrls: config.calls.allowPrivateUrls, httpsOnly: config.isProduction, resolver: new HostResolver(config.calls.dnsServers) };
  const orders = new OrderService(knex, idempotency, operations);
  const stats = new StatsService(knex);
  const deliveries = new DeliveryService(knex, orders, config.publicBaseUrl, secrets);
  const users = new UserService(knex, workspaces, invitations, config.bcryptCost);
  const webhooks = new WebhookService(knex, jobs, urlPolicy, secrets);
  const blockedPhones = new BlockedPhoneService(knex);
  const stores = new StoreConnectionService(knex, config.publicBaseUrl, secrets);
  const formTokens = new FormTokenService(knex);
  // Connecting a store talks to the platform from the web process, through the same outbound guard.
  const storeConnect = new StoreConnectService(
    knex,
    new SignedSender(config.calls.allowPrivateUrls, config.calls.deliveryTimeoutMs, urlPolicy.resolver),
    // Each platform reads its own settings (its app's keys, its origins).
    { publicBaseUrl: config.publicBaseUrl, isProduction: config.isProduction, ...config.stores },
    secrets,
  );
  const whatsapp = new WhatsAppService(knex, jobs, calls, config.whatsapp, secrets);
  const audit = new AuditService(knex);
  // Carriers are called from the web process (an account's check, its cities) and the worker (parcels).
  const carrierAccounts = new CarrierAccountService(
    knex,
    new SignedSender(config.calls.allowPrivateUrls, config.calls.deliveryTimeoutMs, urlPolicy.resolver),
    config.carrierOrigins,
    secrets,
    config.publicBaseUrl,
    jobs,
  );
  const shipments = new ShipmentService(knex, jobs, carrierAccounts);
  return {
    carrierAccounts,
    shipments,
    autoShipping: new AutoShipping(knex, carrierAccounts, shipments),
    parcels: new ParcelSender(knex, jobs, carrierAccounts),
    carrierNews: new CarrierNewsService(knex, carrierAccounts),
    /** Shifts, assignment, pay (docs/team.md). */
    team: new TeamService(knex, (workspaceId, period) => stats.deliveredByConfirmer(workspaceId, period, 'human')),
    workspaces,
    invitations,
    members: new MemberService(knex, calls),
    users,
    devices: new DeviceService(knex),
    audit,
    credits: new CreditService(knex),
    agents: new AgentService(knex, urlPolicy, config.publicBaseUrl, secrets),
    webhooks,
    orders,
    deliveries,
    blockedPhones,
    customers: new CustomerService(knex),
    /** What the order and call pages say about a risky order: the orders it looks like, its number's block-list entry, its refused parcels. */
    riskOf: async (workspaceId: string, order: Order) => {
      // An anonymised order's phone is every anonymised order's: nothing to compare it with.
      if (order.phone === ANONYMISED_PHONE) return { lookalikes: [], blocked: null, refusals: null };
      const [lookalikes, blocked, refusals] = await Promise.all([
        orders.lookalikes(workspaceId, order),
        order.flags.includes('blocked_phone') ? blockedPhones.find(workspaceId, order.phone) : null,
        order.flags.includes('refused_before') ? deliveries.refusalsOf(workspaceId, order) : null,
      ]);
      return { lookalikes, blocked, refusals };
    },
    /** The worker's minute job: what expires or piles up, deleted or folded. */
    housekeeping: async () => ({
      sessions: await users.pruneExpiredSessions(),
      idempotencyKeys: await idempotency.pruneExpired(),
      statusCounts: await stats.compactStatusCounts(),
      deliveryCounts: await stats.compactDailyCounts(),
      webhookLog: await webhooks.prune(),
      storeLog: await stores.prune(),
      formTokens: await formTokens.pruneExpired(),
      storeApprovals: await storeConnect.prune(),
      whatsappEarlyStatuses: await whatsapp.pruneEarlyStatuses(),
      auditEvents: await audit.prune(),
    }),
    formTokens,
    /** Retention: the workspace setting, and the worker's daily pass that anonymises what is past it. */
    retention: new RetentionService(knex),
    imports: new ImportService(knex, idempotency, orders),
    exportCsv: (workspaceId: string, filters: OrderFilters, language?: Language) => exportCsv(knex, workspaceId, filters, language),
    stats,
    stores,
    storeConnect,
    storeIntake: new StoreIntakeService(knex, orders, operations, secrets),
    storeWriteBack: new StoreWriteBackService(
      knex,
      jobs,
      {
        shopifyApiVersion: config.stores.shopifyApiVersion,
        shopifyApiOrigin: config.stores.shopifyApiOrigin,
        retrySeconds: config.stores.writeBackRetrySeconds,
        httpsOnly: config.isProduction,
      },
      new ShopifyAdmin(knex, secrets, { app: config.stores.shopifyApp, apiOrigin: config.stores.shopifyApiOrigin }),
      secrets,
    ),
    operations,
    callSettings,
    calls,
    callViews: new CallViewService(knex),
    whatsapp,
    sweep: new SweepService(knex, jobs, calls),
    /** The sweep's merge of the search index's pending list (services/orders/search.ts). */
    tidySearchIndex: () => tidySearchIndex(knex),
    apiKeys: new ApiKeyService(knex),
    tokens: new TokenService({
      secret: config.jwtSecret,
      issuer: config.publicBaseUrl,
      projectUrl: config.publicBaseUrl,
      publishableKey: config.publishableKey,
    }),
  };
}
