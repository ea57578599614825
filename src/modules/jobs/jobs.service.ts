import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { customers, jobs, locations, users } from '../../db/schema/index.js';
import { invalidField } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { bodyToColumns } from '../../shared/records.js';
import { requireReference, softDelete } from '../../shared/tenant-table.js';
import { getRecord, recordChanges, type RecordedType } from '../changes/change-recorder.js';
import { cancelVisitsOfJob, jobFeedFieldsChanged, touchVisitsMovedWithJob, visitsMovedWithJob } from '../visits/job-visits.js';
import { statusTimestamps } from './job-lifecycle.js';
import { toJobListItem, toJobResponse } from './jobs.mapper.js';
import * as repository from './jobs.repository.js';
import type {
  CreateJobBody,
  JobListItem,
  JobResponse,
  ListJobsQuery,
  UpdateJobBody,
} from './jobs.schemas.js';

const MONEY_FIELDS = ['estimated_amount', 'actual_amount'] as const;
/** Every id a job body refers to must be a live record of the actor's company (400 naming the field). */
async function requireReferences(db: Db, companyId: string, body: UpdateJobBody): Promise<void> {
  await requireReference(db, customers, companyId, 'customer_uuid', body.customer_uuid);
  await requireReference(db, locations, companyId, 'location_uuid', body.location_uuid);
  await requireReference(db, users, companyId, 'assigned_to_user_id', body.assigned_to_user_id);
}

async function create(db: Db, actor: Actor, body: CreateJobBody): Promise<JobResponse> {
  const uuid = newRecordId();
  return recordChanges(db, actor, async (changes) => {
    await requireReferences(changes.tx, actor.companyId, body);
    await repository.insertJob(changes.tx, {
      ...(bodyToColumns(body, { money: MONEY_FIELDS }) as Omit<repository.JobInsert, 'companyId' | 'uuid'>),
      // A job created directly in a status gets that status's timestamp.
      ...statusTimestamps(body.status ?? 'New', null),
      companyId: actor.companyId,
      uuid,
    });
    changes.created('job', uuid);
    return changes.answer('job', uuid);
  });
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateJobBody): Promise<JobResponse> {
  return recordChanges(db, actor, async (changes) => {
    const current = await changes.target<repository.JobRow>('job', uuid);
    await requireReferences(changes.tx, actor.companyId, body);
    // One customer per document (DECISIONS §8): a job whose invoices or estimates bill its customer keeps it.
    if (body.customer_uuid && body.customer_uuid !== current.customerUuid && (await repository.jobHasDocuments(changes.tx, actor.companyId, uuid))) {
      throw invalidField('customer_uuid', 'cannot change: the job has invoices or estimates of its customer', 'invalid');
    }
    const movedVisits = await touchVisitsMovedWithJob(changes, uuid, current, body);
    await repository.updateJob(changes.tx, actor.companyId, uuid, {
      ...bodyToColumns(body, { money: MONEY_FIELDS }),
      // Status moves are free; a timestamp already set is never re-stamped.
      ...(body.status ? statusTimestamps(body.status, current) : {}),
    });
    await visitsMovedWithJob(changes, movedVisits);
    await jobFeedFieldsChanged(changes, uuid, current, body);
    return changes.answer('job', uuid);
  });
}

/** A soft delete that cancels the job's open visits in the same transaction (DECISIONS §13). */
function remove(db: Db, actor: Actor, uuid: string): Promise<void> {
  return recordChanges(db, actor, async (changes) => {
    await changes.target('job', uuid);
    await softDelete(changes.tx, jobs, actor.companyId, uuid);
    await cancelVisitsOfJob(changes, uuid);
  });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    job: JobResponse;
  }
}

/** How a job is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const jobRecords: RecordedType<JobResponse> = {
  table: jobs,
  noun: 'Job',
  embeds: ['customer', 'location', 'assigned_user'],
  async find(db, companyId, uuid, includeDeleted) {
    const found = await repository.findJobWithRelations(db, companyId, uuid, includeDeleted);
    return found && toJobResponse(found);
  },
  async lockAndLoad(db, companyId, uuid, includeDeleted) {
    const found = await repository.lockJobWithRelations(db, companyId, uuid, includeDeleted);
    return found && { row: found.job, record: toJobResponse(found) };
  },
};

export const jobsService: CrudService<JobListItem, JobResponse, CreateJobBody, UpdateJobBody, ListJobsQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listJobs(db, companyId, query), toJobListItem),
  get: (db, companyId, uuid, includeDeleted) => getRecord(jobRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove,
};
