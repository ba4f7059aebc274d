import type { Knex } from 'knex';
import type { Config } from '../config';
import { AgentService } from './agents';
import { ApiKeyService } from './api-keys';
import { CreditService } from './credits';
import { IdempotencyService } from './idempotency';
import { OrderService } from './orders';
import { TokenService } from './tokens';
import { UserService } from './users';
import { WorkspaceService } from './workspaces';

export type Services = ReturnType<typeof createServices>;

/** Wires every service to one Knex instance; routes and the CLI receive this object. */
export function createServices(knex: Knex, config: Pick<Config, 'bcryptCost' | 'jwtSecret' | 'publicBaseUrl' | 'publishableKey'>) {
  const workspaces = new WorkspaceService(knex);
  return {
    workspaces,
    users: new UserService(knex, workspaces, config.bcryptCost),
    credits: new CreditService(knex),
    agents: new AgentService(knex),
    orders: new OrderService(knex, new IdempotencyService(knex)),
    apiKeys: new ApiKeyService(knex),
    tokens: new TokenService({
      secret: config.jwtSecret,
      issuer: config.publicBaseUrl,
      projectUrl: config.publicBaseUrl,
      publishableKey: config.publishableKey,
    }),
  };
}
