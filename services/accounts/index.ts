export * from './users';
export * from './workspaces';
export * from './members';
export * from './invitations';
export * from './api-keys';
export * from './tokens';
export * from './credits';
export * from './sessions';
