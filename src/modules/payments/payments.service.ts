import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { payments } from '../../db/schema/index.js';
import { invalidField, missingReference, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { centsToDecimal, toCents, type Cents } from '../../shared/money.js';
import { bodyToColumns } from '../../shared/records.js';
import { newRow } from '../../shared/record-rows.js';
import { createCheckedRecord, getRecord, recordChanges, type Changes, type RecordedType } from '../changes/change-recorder.js';
import {
  insertWithSettlement,
  lockInvoice,
  lockInvoiceForChange,
  readInvoiceToSettle,
  settleInvoice,
  settlesInStatement,
  settlingGuard,
  type LockedInvoice,
} from '../invoices/invoice-settlement.js';
import { withNumber } from '../numbering/numbering.service.js';
import { checkPaymentTransition, processedAtFor } from './payment-status.js';
import { toPaymentListItem, toPaymentResponse } from './payments.mapper.js';
import * as repository from './payments.repository.js';
import type {
  CreatePaymentBody,
  ListPaymentsQuery,
  PaymentListItem,
  PaymentResponse,
  UpdatePaymentBody,
} from './payments.schemas.js';

const MONEY_FIELDS = ['amount', 'processing_fee'] as const;

/** net_amount = amount - processing_fee; the fee may not exceed the amount. */
function netAmount(amount: Cents, fee: Cents): Cents {
  if (fee > amount) throw invalidField('processing_fee', 'must not exceed amount', 'out_of_range');
  return amount - fee;
}

/** Money may move only on a live, issued invoice. */
function requireIssued(invoice: LockedInvoice, field: string): void {
  if (invoice.deletedAt !== null) {
    throw invalidField(field, 'refers to a deleted invoice; its payments can no longer change its balance', 'invalid_reference');
  }
  if (invoice.status === 'Draft') {
    throw invalidField(field, 'refers to a Draft invoice; issue it (status Pending) before taking payments');
  }
}

/**
 * A payment create. The usual one, Completed on a Pending invoice that keeps a balance, is one statement
 * (createSettling); any other, and one whose invoice changed otherwise since it was read, is a transaction
 * (createLocking). Either way the number is the one the payment got at commit.
 */
async function create(db: Db, actor: Actor, body: CreatePaymentBody) {
  const amount = toCents(body.amount);
  const net = netAmount(amount, toCents(body.processing_fee ?? 0));
  const status = body.status ?? 'Completed';
  const processedAt = processedAtFor(status, body.processed_at, null);
  const values = {
    ...(bodyToColumns(body, { money: MONEY_FIELDS, skip: ['status', 'processed_at'] }) as Omit<repository.PaymentInsert, 'companyId' | 'uuid'>),
    companyId: actor.companyId,
    uuid: newRecordId(),
    netAmount: centsToDecimal(net),
    status,
    processedAt,
    createdByUserId: actor.userId,
  };
  const added = status === 'Completed' ? amount : 0;
  const created = (await createSettling(db, actor, values, added)) ?? (await createLocking(db, actor, values, added));
  return withNumber(db, actor.companyId, 'payment', created);
}

type NewPayment = Omit<repository.PaymentInsert, 'customerUuid'>;

/**
 * The payment, its invoice's settlement under the invoice's row lock, the payment.created and invoice.updated
 * events and a keyed request's key, in one statement after an unlocked read of the invoice (settlingGuard):
 * concurrent payments of one invoice wait on its row for one statement each. Null when the payment is not
 * one it settles (settlesInStatement) or the invoice changed otherwise meanwhile: nothing was written.
 */
async function createSettling(db: Db, actor: Actor, values: NewPayment, added: Cents): Promise<PaymentResponse | null> {
  // A payment that adds nothing (not Completed) leaves the invoice as it is: the transaction path, without a read first.
  if (added <= 0) return null;
  const read = await readInvoiceToSettle(db, actor.companyId, values.invoiceUuid);
  if (!read || !settlesInStatement(read, added)) return null;
  const now = new Date();
  const row = newRow<repository.PaymentRow>(payments, { ...values, customerUuid: read.invoice.customerUuid }, now);
  const record = toPaymentResponse({ payment: row, invoice: { ...read.invoice, shownStatus: read.shownStatus }, customer: read.customer });
  const { guard, balance } = settlingGuard(read, added, now);
  // The recorded record holds the balance's mark until the statement settles it.
  const marked = { ...record, invoice: { ...record.invoice, balance_amount: balance.mark } } as unknown as PaymentResponse;
  const settled = await createCheckedRecord(db, actor, 'payment', row, marked, guard);
  if (!settled) return null;
  return { ...record, invoice: { ...record.invoice, balance_amount: Number(settled[balance.mark]) } };
}

/**
 * Locks the invoice, writes the payment and settles the invoice in one transaction, so concurrent
 * payments never overshoot the total nor lose an update; a payment the rules refuse is refused here.
 */
async function createLocking(db: Db, actor: Actor, values: NewPayment, added: Cents) {
  return recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const detail = await lockInvoiceForChange(changes, values.invoiceUuid);
    if (!detail) throw missingReference('invoice_uuid');
    const { invoice, customer } = detail;
    requireIssued(invoice, 'invoice_uuid');
    // The payment and its invoice's settlement in one statement (invoice-settlement.ts).
    const { row: payment, settled } = await insertWithSettlement(changes, detail, added, (settlement) =>
      repository.insertPaymentSettling(tx, { ...values, customerUuid: invoice.customerUuid }, settlement),
    );
    // Its GET form from the rows in hand: the payment as written, its invoice as settled, the invoice's customer.
    changes.created(
      'payment',
      values.uuid,
      toPaymentResponse({
        payment,
        invoice: { ...settled.invoice, shownStatus: settled.shownStatus },
        customer: { uuid: customer.uuid, firstName: customer.firstName, lastName: customer.lastName },
      }),
    );
    return changes.answer('payment', values.uuid);
  });
}

/**
 * Locks the payment's invoice, then the payment, re-read under that lock and checked against If-Match:
 * the lock order invoice -> payment is the one every payment write takes.
 */
async function lockPaymentAndInvoice(changes: Changes, paymentUuid: string) {
  const { tx, companyId } = changes;
  const unlocked = await repository.findPayment(tx, companyId, paymentUuid);
  if (!unlocked) throw notFound(paymentRecords.noun);
  const invoice = await lockInvoice(tx, companyId, unlocked.invoiceUuid, { includeDeleted: true });
  if (!invoice) throw notFound(paymentRecords.noun);
  const payment = await changes.target<repository.PaymentRow>('payment', paymentUuid);
  return { payment, invoice };
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdatePaymentBody) {
  const { companyId } = actor;
  return recordChanges(db, actor, async (changes) => {
    const { payment, invoice } = await lockPaymentAndInvoice(changes, uuid);
    const status = body.status ?? payment.status;
    checkPaymentTransition(payment.status, status);
    if (status === 'Completed' && payment.status !== 'Completed') requireIssued(invoice, 'status');
    if (status === 'Completed' && (body.amount !== undefined || body.processing_fee !== undefined)) {
      requireIssued(invoice, body.amount !== undefined ? 'amount' : 'processing_fee');
    }
    const amount = body.amount !== undefined ? toCents(body.amount) : toCents(payment.amount);
    const fee = body.processing_fee !== undefined ? toCents(body.processing_fee) : toCents(payment.processingFee);
    await repository.updatePayment(changes.tx, companyId, uuid, {
      ...bodyToColumns(body, { money: MONEY_FIELDS, skip: ['status', 'processed_at'] }),
      netAmount: centsToDecimal(netAmount(amount, fee)),
      status,
      processedAt: processedAtFor(status, body.processed_at, payment.processedAt),
    });
    await settleInvoice(changes, invoice);
    return changes.answer('payment', uuid);
  });
}

/** A deleted Completed payment stops counting: the invoice is settled again. */
async function remove(db: Db, actor: Actor, uuid: string) {
  await recordChanges(db, actor, async (changes) => {
    const { invoice } = await lockPaymentAndInvoice(changes, uuid);
    await repository.softDeletePayment(changes.tx, actor.companyId, uuid);
    await settleInvoice(changes, invoice);
  });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    payment: PaymentResponse;
  }
}

/** How a payment is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const paymentRecords: RecordedType<PaymentResponse> = {
  table: payments,
  noun: 'Payment',
  embeds: ['invoice', 'customer'],
  async find(db, companyId, uuid, includeDeleted) {
    const row = await repository.findPaymentDetail(db, companyId, uuid, includeDeleted);
    return row && toPaymentResponse(row);
  },
};

export const paymentsService: CrudService<PaymentListItem, PaymentResponse, CreatePaymentBody, UpdatePaymentBody, ListPaymentsQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listPayments(db, companyId, query), toPaymentListItem),
  get: (db, companyId, uuid, includeDeleted) => getRecord(paymentRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove,
};
