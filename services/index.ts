import type { Knex } from 'knex';
import type { Config } from '../config';
import { CreditService } from './credits';
import { UserService } from './users';
import { WorkspaceService } from './workspaces';

export type Services = ReturnType<typeof createServices>;

/** Wires every service to one Knex instance; routes and the CLI receive this object. */
export function createServices(knex: Knex, config: Pick<Config, 'bcryptCost'>) {
  const workspaces = new WorkspaceService(knex);
  return {
    workspaces,
    users: new UserService(knex, workspaces, config.bcryptCost),
    credits: new CreditService(knex),
  };
}
