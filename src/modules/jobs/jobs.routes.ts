import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import { JOB_STATUSES } from '../../db/schema/index.js';
import { CreateJobBody, JobListItem, JobResponse, ListJobsQuery, UpdateJobBody } from './jobs.schemas.js';
import { jobsService } from './jobs.service.js';

const STATUS_TIMESTAMPS =
  'The service sets started_at on the first move to (or create in) In Progress, completed_at on Complete, invoiced_at on ' +
  'Invoiced and paid_at when an invoice of the job becomes Paid; a timestamp already set is never re-stamped.';

export const jobRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'jobs',
    tag: 'Jobs',
    noun: 'Job',
    plural: 'jobs',
    listItem: JobListItem,
    record: JobResponse,
    createBody: CreateJobBody,
    updateBody: UpdateJobBody,
    listQuery: ListJobsQuery,
    service: jobsService,
    descriptions: {
      list:
        'Newest first, each job with its customer. Filters combine with AND: status (comma-separated for several), ' +
        'location_uuid, customer_uuid, assigned_to_user_id, priority, search (title, description, job_number).',
      get: 'The job with its customer, location and assigned user. A soft-deleted job is 404 unless include_deleted=true.',
      create:
        `Required customer_uuid and title. status defaults to New (one of: ${JOB_STATUSES.join(', ')}), priority to Normal. ` +
        `References must be live records of the company (400 naming the field). ${STATUS_TIMESTAMPS}`,
      update:
        'Partial update: absent fields are unchanged, null clears a nullable field. Status moves are free among the ' +
        `allowed values. ${STATUS_TIMESTAMPS}`,
    },
  });
  app.get('/jobs', crud.list('listJobs'));
  app.get('/jobs/:uuid', crud.get('getJob'));
  app.post('/jobs', crud.create('createJob'));
  app.put('/jobs/:uuid', crud.update('updateJob'));
  app.patch('/jobs/:uuid', crud.patch('patchJob'));
  app.delete('/jobs/:uuid', crud.remove('deleteJob'));
};
