import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { createVia, makeCustomer, makeLocation } from './factories.js';

/** A real 1x1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** A hand-written multipart/form-data body with one PNG in `photos` and the given text fields. */
export function photoUploadPayload(fields: Record<string, string> = { photo_type: 'before' }, boundary = '----seed-all') {
  const parts = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  const payload = Buffer.concat([
    ...parts,
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Uploads one PNG to a job; fails the test on anything but 200 and returns the uploaded photo. */
export async function uploadPhoto(app: FastifyInstance, key: string, jobUuid: string) {
  const { payload, contentType } = photoUploadPayload();
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/jobs/${jobUuid}/photos`,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    payload,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.photos[0];
}

export type SeededCompany = Awaited<ReturnType<typeof seedAll>>;

/**
 * One record of every resource for the company of `key`: a location, a customer, a job, a template, an
 * estimate, an invoice with a line item, a payment, a photo, a visit and a time-off entry. `byCollection` maps each collection path
 * (as documented, with `{job_uuid}` for photos) to the id of its record.
 */
/** The first event of a record, once the feed shows it (after every earlier transaction has ended). */
async function firstEventOf(app: FastifyInstance, key: string, objectUuid: string): Promise<{ uuid: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await app.inject({
      method: 'GET',
      url: `/api/v1/events?object_uuid=${objectUuid}&limit=1`,
      headers: { authorization: `Bearer ${key}` },
    });
    const [event] = response.json().data.events;
    if (event || Date.now() > deadline) return event;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function seedAll(app: FastifyInstance, key: string) {
  const location = await makeLocation(app, key);
  const customer = await makeCustomer(app, key);
  const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Fix the boiler', actual_amount: 250 });
  const template = await createVia(app, key, '/templates', { name: 'Tune-up', pricing_type: 'flat', base_price: 120 });
  const estimate = await createVia(app, key, '/estimates', { customer_uuid: customer.uuid, template_uuid: template.uuid });
  const invoice = await createVia(app, key, '/invoices', {
    job_uuid: job.uuid,
    customer_uuid: customer.uuid,
    due_date: '2030-01-31',
    line_items: [{ description: 'Labor', quantity: 2, unit_price: 100 }],
  });
  const payment = await createVia(app, key, '/payments', {
    invoice_uuid: invoice.uuid,
    payment_type: 'cash',
    amount: 10,
    payment_date: '2026-11-20',
  });
  const photo = await uploadPhoto(app, key, job.uuid);
  // Disabled, so it never sends anything; a public address literal passes the address check without DNS.
  const webhookEndpoint = await createVia(app, key, '/webhook_endpoints', { url: 'https://93.184.215.14/hooks', events: ['*'], enabled: false });
  const event = await firstEventOf(app, key, location.uuid);
  const apiKey = await createVia(app, key, '/api_keys', { name: 'Seeded reader', scopes: ['customers:read'] });
  const users = await app.inject({ method: 'GET', url: '/api/v1/users', headers: { authorization: `Bearer ${key}` } });
  const userId: string = users.json().data.users[0].id;
  const visit = await createVia(app, key, '/visits', {
    job_uuid: job.uuid,
    starts_at: '2030-01-07T14:00:00Z',
    ends_at: '2030-01-07T16:00:00Z',
    assigned_user_ids: [userId],
  });
  const timeOff = await createVia(app, key, '/time_off', { user_id: userId, starts_at: '2030-01-08T00:00:00Z', ends_at: '2030-01-09T00:00:00Z' });
  return {
    records: { location, customer, job, template, estimate, invoice, payment, photo, webhookEndpoint, apiKey, visit, timeOff },
    byCollection: {
      '/api/v1/locations': location.uuid,
      '/api/v1/customers': customer.uuid,
      '/api/v1/jobs': job.uuid,
      '/api/v1/templates': template.uuid,
      '/api/v1/estimates': estimate.uuid,
      '/api/v1/invoices': invoice.uuid,
      '/api/v1/payments': payment.uuid,
      '/api/v1/jobs/{job_uuid}/photos': photo.uuid,
      '/api/v1/webhook_endpoints': webhookEndpoint.uuid,
      '/api/v1/events': event.uuid,
      '/api/v1/api_keys': apiKey.uuid,
      '/api/v1/visits': visit.uuid,
      '/api/v1/time_off': timeOff.uuid,
    } as Record<string, string>,
    jobUuid: job.uuid as string,
    customerUuid: customer.uuid as string,
    locationUuid: location.uuid as string,
    templateUuid: template.uuid as string,
    invoiceUuid: invoice.uuid as string,
    estimateUuid: estimate.uuid as string,
    apiKeyUuid: apiKey.uuid as string,
    paymentUuid: payment.uuid as string,
    photoUuid: photo.uuid as string,
    /** A user of the company (the one the visit and the time off hold): the `{user_id}` of calendar_link. */
    userId,
  };
}
