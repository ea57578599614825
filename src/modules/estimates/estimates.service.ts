import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { customers, estimates, locations, type EstimateStatus, type Tier } from '../../db/schema/index.js';
import { AppError, invalidField, missingReference } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { centsToDecimal, decimalText, fromCents, toCents } from '../../shared/money.js';
import { mapPage } from '../../shared/list-query.js';
import { bodyToColumns } from '../../shared/records.js';
import { requireReference } from '../../shared/tenant-table.js';
import { getRecord, recordChanges, removeRecord, type RecordedType } from '../changes/change-recorder.js';
import { withNumber } from '../numbering/numbering.service.js';
import { requireOneCustomer, requirePreviewReferences } from '../customers/one-customer.js';
import { findJobCustomer } from '../jobs/jobs.repository.js';
import { findTemplate } from '../templates/templates.repository.js';
import { templatePrices } from '../templates/templates.service.js';
import {
  ADJUSTABLE_AMOUNTS,
  priceEstimate,
  type Adjustments,
  type EstimateAmounts,
  type EstimatePricing,
  type PricingInput,
} from './estimate-pricing.js';
import { statusChange } from './estimate-status.js';
import { adjustmentsOut, toEstimateListItem, toEstimateResponse } from './estimates.mapper.js';
import * as repository from './estimates.repository.js';
import type {
  CreateEstimateBody,
  EstimateListItem,
  EstimatePreview,
  EstimateResponse,
  ListEstimatesQuery,
  PreviewEstimateBody,
  UpdateEstimateBody,
} from './estimates.schemas.js';

/** Body fields that feed the arithmetic; sending any of them recomputes the amounts. */
const PRICING_FIELDS = ['selected_tier', 'quantity', 'selected_addons', 'adjustments'] as const;
/** Body fields stored by hand rather than copied by bodyToColumns. */
const CONVERTED_FIELDS = ['quantity', 'adjustments'];

type StoredAdjustments = Partial<Record<(typeof ADJUSTABLE_AMOUNTS)[number], string>>;

function storedAdjustments(adjustments: Adjustments | null): StoredAdjustments | null {
  if (adjustments === null) return null;
  const stored: StoredAdjustments = {};
  for (const key of ADJUSTABLE_AMOUNTS) {
    const value = adjustments[key];
    if (value !== undefined) stored[key] = centsToDecimal(toCents(value));
  }
  return stored;
}

function amountColumns(amounts: EstimateAmounts) {
  return {
    baseAmount: centsToDecimal(amounts.base_amount),
    addonsAmount: centsToDecimal(amounts.addons_amount),
    taxAmount: centsToDecimal(amounts.tax_amount),
    totalAmount: centsToDecimal(amounts.total_amount),
  };
}

/** A template given in a body must be a live template of the company (400 otherwise). */
async function requireTemplate(db: Db, companyId: string, uuid: string) {
  const template = await findTemplate(db, companyId, uuid);
  if (!template) throw missingReference('template_uuid');
  return template;
}

/**
 * The job and location a body names must be live records of the company, and a job that is new to the
 * estimate one of its customer's (DECISIONS.md §8): on create the customer_uuid is wrong, on an update
 * (the customer is fixed) the job_uuid.
 */
async function requireJobAndLocation(
  db: Db,
  companyId: string,
  body: Pick<CreateEstimateBody, 'job_uuid' | 'location_uuid'>,
  estimate: { customerUuid: string } | Pick<repository.EstimateRow, 'customerUuid' | 'jobUuid'>,
) {
  if (body.job_uuid) {
    // Share-locked: the job's customer cannot change until the estimate is written.
    const jobCustomer = await findJobCustomer(db, companyId, body.job_uuid, { lock: 'share' });
    if (jobCustomer === null) throw missingReference('job_uuid');
    const existing = 'jobUuid' in estimate;
    if (!existing || body.job_uuid !== estimate.jobUuid) {
      requireOneCustomer('estimate', estimate.customerUuid, [{ field: 'job_uuid', customerUuid: jobCustomer }], existing ? 'source' : 'customer_uuid');
    }
  }
  await requireReference(db, locations, companyId, 'location_uuid', body.location_uuid);
}

function pricingInputOf(body: Pick<PreviewEstimateBody, (typeof PRICING_FIELDS)[number]>): PricingInput {
  return {
    selectedTier: body.selected_tier ?? null,
    quantity: body.quantity ?? 1,
    selectedAddons: body.selected_addons ?? null,
    adjustments: body.adjustments ?? null,
  };
}

/** The stored pricing inputs with the ones the update sends laid over them. */
function mergedPricingInput(existing: repository.EstimateRow, body: UpdateEstimateBody): PricingInput {
  const given = <T, S>(value: T | undefined, stored: S): T | S => (value === undefined ? stored : value);
  return {
    selectedTier: given(body.selected_tier, existing.selectedTier as Tier | null),
    quantity: given(body.quantity, existing.quantity),
    selectedAddons: given(body.selected_addons, existing.selectedAddons as string[] | null),
    adjustments: given(body.adjustments, existing.adjustments as StoredAdjustments | null),
  };
}

/** Column values for the body's fields, with quantity and adjustments in their stored form. */
function bodyColumns(body: CreateEstimateBody | UpdateEstimateBody): Partial<repository.EstimateInsert> {
  const columns = bodyToColumns(body, { skip: CONVERTED_FIELDS }) as Partial<repository.EstimateInsert>;
  if (body.quantity !== undefined) columns.quantity = decimalText(body.quantity);
  if (body.adjustments !== undefined) columns.adjustments = storedAdjustments(body.adjustments);
  return columns;
}

async function create(db: Db, actor: Actor, body: CreateEstimateBody) {
  const { companyId } = actor;
  const uuid = newRecordId();
  const created = await recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    await requireReference(tx, customers, companyId, 'customer_uuid', body.customer_uuid);
    const template = await requireTemplate(tx, companyId, body.template_uuid);
    await requireJobAndLocation(tx, companyId, body, { customerUuid: body.customer_uuid });
    const pricing = priceEstimate(templatePrices(template), pricingInputOf(body));
    await repository.insertEstimate(tx, {
      ...bodyColumns(body),
      ...amountColumns(pricing.amounts),
      companyId,
      uuid,
      customerUuid: body.customer_uuid,
      templateUuid: body.template_uuid,
      createdByUserId: actor.userId,
      status: 'Pending',
      templateName: template.name,
      pricingType: template.pricingType,
    });
    changes.created('estimate', uuid);
    return changes.answer('estimate', uuid);
  });
  return withNumber(db, companyId, 'estimate', created);
}

/** New amounts when the update sends a pricing input; a template deleted since still prices its estimates. */
async function repricedAmounts(tx: Db, existing: repository.EstimateRow, body: UpdateEstimateBody) {
  if (!PRICING_FIELDS.some((field) => body[field] !== undefined)) return {};
  const template = await findTemplate(tx, existing.companyId, existing.templateUuid, true);
  // The estimate keeps the pricing type it was made with; a template switched since cannot re-price it.
  if (template!.pricingType !== existing.pricingType) {
    const field = PRICING_FIELDS.find((name) => body[name] !== undefined)!;
    throw invalidField(field, `the template is now priced ${template!.pricingType}, not ${existing.pricingType}; amounts cannot be recomputed`);
  }
  return amountColumns(priceEstimate(templatePrices(template!), mergedPricingInput(existing, body)).amounts);
}

/** A customer's answer on the share page: it must find the estimate Pending, and may store a signature. */
export interface EstimateAnswer {
  requireStatus: EstimateStatus;
  signature?: { signatureName: string; signedAt: Date };
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateEstimateBody, answer?: EstimateAnswer) {
  const { companyId } = actor;
  return recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const existing = await changes.target<repository.EstimateRow>('estimate', uuid);
    // Checked under the row lock: of two simultaneous answers, the second finds the first's status.
    if (answer && existing.status !== answer.requireStatus) {
      throw new AppError('invalid_status_transition', `The estimate is already ${existing.status}.`, [
        { field: 'status', code: 'invalid', message: `is ${existing.status}, not ${answer.requireStatus}` },
      ]);
    }
    await requireJobAndLocation(tx, companyId, body, existing);
    const change = statusChange(existing.status as EstimateStatus, body.status, new Date());
    const amounts = await repricedAmounts(tx, existing, body);
    await repository.updateEstimate(tx, companyId, uuid, { ...bodyColumns(body), ...change, ...amounts, ...answer?.signature });
    return changes.answer('estimate', uuid);
  });
}

function previewOf(pricing: EstimatePricing, body: PreviewEstimateBody, taxRate: string): EstimatePreview {
  const amounts = Object.fromEntries(
    Object.entries(pricing.amounts).map(([key, cents]) => [key, fromCents(cents)]),
  ) as EstimatePreview['preview'];
  return {
    preview: amounts,
    breakdown: {
      base_amount: fromCents(pricing.computedBase),
      unit_price: fromCents(pricing.unitPrice),
      quantity: body.quantity ?? 1,
      tax_rate: Number(taxRate),
      addons: pricing.addons.map((addon) => ({ id: addon.id, name: addon.name, price: fromCents(addon.price) })),
      adjustments: adjustmentsOut(body.adjustments ?? null) ?? {},
    },
  };
}

/** The amounts create would store for this input; nothing is written. */
export async function previewEstimate(db: Db, companyId: string, body: PreviewEstimateBody): Promise<EstimatePreview> {
  const template = await requireTemplate(db, companyId, body.template_uuid);
  const jobCustomer = body.job_uuid ? await findJobCustomer(db, companyId, body.job_uuid) : null;
  if (body.job_uuid && jobCustomer === null) throw missingReference('job_uuid');
  await requirePreviewReferences(db, companyId, 'estimate', body, [jobCustomer === null ? null : { field: 'job_uuid', customerUuid: jobCustomer }]);
  const pricing = priceEstimate(templatePrices(template), pricingInputOf(body));
  return previewOf(pricing, body, template.taxRate);
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    estimate: EstimateResponse;
  }
}

/** How an estimate is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const estimateRecords: RecordedType<EstimateResponse> = {
  table: estimates,
  noun: 'Estimate',
  embeds: ['customer', 'job', 'template', 'location'],
  async find(db, companyId, uuid, includeDeleted) {
    const detail = await repository.findEstimateDetail(db, companyId, uuid, includeDeleted);
    return detail && toEstimateResponse(detail);
  },
};

export const estimatesService: CrudService<EstimateListItem, EstimateResponse, CreateEstimateBody, UpdateEstimateBody, ListEstimatesQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listEstimates(db, companyId, query), toEstimateListItem),
  get: (db, companyId, uuid, includeDeleted) => getRecord(estimateRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove: (db, actor, uuid) => removeRecord(db, actor, 'estimate', uuid),
};

/** The same update path, for the customer's answer on the share page (status rules, pricing and all). */
export const updateEstimateWithAnswer = update;
