export * from './companies.js';
export * from './locations.js';
export * from './customers.js';
export * from './jobs.js';
export * from './estimates.js';
export * from './invoices.js';
export * from './numbering.js';
export * from './idempotency.js';
