import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { templates, type PricingType, type StoredAddon, type StoredTiers, type Tier } from '../../db/schema/index.js';
import { invalidField } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { centsToDecimal, decimalText, toCents, type Cents } from '../../shared/money.js';
import { mapPage } from '../../shared/list-query.js';
import { bodyToColumns } from '../../shared/records.js';
import { changeRecord, createRecord, getRecord, removeRecord, type RecordedType } from '../changes/change-recorder.js';
import { toTemplateResponse } from './templates.mapper.js';
import * as repository from './templates.repository.js';
import type {
  AddonInput,
  CreateTemplateBody,
  ListTemplatesQuery,
  TemplateResponse,
  TiersInput,
  UpdateTemplateBody,
} from './templates.schemas.js';

/** A template's prices in integer cents: what estimate pricing needs. */
export interface TemplatePrices {
  pricingType: PricingType;
  basePrice: Cents | null;
  tiers: Record<Tier, Cents> | null;
  addons: Array<{ id: string; name: string; price: Cents }>;
  /** Percent as its exact decimal text. */
  taxRate: string;
}

export function templatePrices(row: repository.TemplateRow): TemplatePrices {
  const { tiers } = row;
  return {
    pricingType: row.pricingType,
    basePrice: row.basePrice === null ? null : toCents(row.basePrice),
    tiers: tiers && { good: toCents(tiers.good), better: toCents(tiers.better), best: toCents(tiers.best) },
    addons: row.addons.map((addon) => ({ ...addon, price: toCents(addon.price) })),
    taxRate: row.taxRate,
  };
}

const storedMoney = (value: number) => centsToDecimal(toCents(value));

function storedTiers(tiers: TiersInput | null): StoredTiers | null {
  return tiers && { good: storedMoney(tiers.good), better: storedMoney(tiers.better), best: storedMoney(tiers.best) };
}

function storedAddons(addons: AddonInput[]): StoredAddon[] {
  return addons.map((addon) => ({ id: addon.id, name: addon.name, price: storedMoney(addon.price) }));
}

/** The columns a validated body sets; absent fields are left out so an update keeps them. */
function toColumns(body: UpdateTemplateBody): Partial<repository.TemplateInsert> {
  const columns = bodyToColumns(body, { money: ['base_price'], skip: ['tiers', 'addons', 'tax_rate'] }) as Partial<repository.TemplateInsert>;
  if (body.tiers !== undefined) columns.tiers = storedTiers(body.tiers);
  if (body.addons !== undefined) columns.addons = storedAddons(body.addons);
  if (body.tax_rate !== undefined) columns.taxRate = decimalText(body.tax_rate);
  return columns;
}

/** The pricing fields of the template as it will be stored must fit its pricing type. */
function checkPricingFields(template: Pick<repository.TemplateInsert, 'pricingType' | 'basePrice' | 'tiers'>) {
  if (template.pricingType === 'flat' && (template.basePrice === null || template.basePrice === undefined)) {
    throw invalidField('base_price', 'is required when pricing_type is flat', 'required');
  }
  if (template.pricingType === 'tiered' && (template.tiers === null || template.tiers === undefined)) {
    throw invalidField('tiers', 'is required when pricing_type is tiered (good, better and best)', 'required');
  }
}

async function create(db: Db, actor: Actor, body: CreateTemplateBody) {
  const columns = toColumns(body);
  checkPricingFields({ pricingType: body.pricing_type, basePrice: columns.basePrice, tiers: columns.tiers });
  // One statement: the row, its event and a keyed request's key (createRecord).
  return createRecord(db, actor, 'template', { ...columns, name: body.name, pricingType: body.pricing_type, uuid: newRecordId() });
}

/** Two round trips: the row read, then the new row and its event written if no other write came between (changeRecord). */
async function update(db: Db, actor: Actor, uuid: string, body: UpdateTemplateBody) {
  return changeRecord(db, actor, 'template', uuid, (existing: repository.TemplateRow) => {
    const columns = toColumns(body);
    checkPricingFields({ ...existing, ...columns });
    return columns;
  });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    template: TemplateResponse;
  }
}

/** How a template is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const templateRecords: RecordedType<TemplateResponse> = {
  table: templates,
  noun: 'Template',
  embeds: [],
  fromRow: toTemplateResponse,
  async find(db, companyId, uuid, includeDeleted) {
    const row = await repository.findTemplate(db, companyId, uuid, includeDeleted);
    return row && toTemplateResponse(row);
  },
};

export const templatesService: CrudService<TemplateResponse, TemplateResponse, CreateTemplateBody, UpdateTemplateBody, ListTemplatesQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listTemplates(db, companyId, query), toTemplateResponse),
  get: (db, companyId, uuid, includeDeleted) => getRecord(templateRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove: (db, actor, uuid) => removeRecord(db, actor, 'template', uuid),
};
