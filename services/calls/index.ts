export * from './service';
export * from './reports';
export * from './settings';
export * from './views';
export * from './ladder';
export * from './sweep';
