export * from './service';
export * from './settings';
export * from './views';
export * from './ladder';
export * from './sweep';
